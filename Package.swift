// swift-tools-version:6.2
// tmm-bridge: GNSS receivers to Trimble Mobile Manager clients. Targets and tiers follow
// docs/ARCHITECTURE.md: the pure tier (ByteCoding, NMEA0183, GNSS, Input, TMMProtocol, HTTP1, WebSocket,
// Logging, Corrections) imports only the standard library; dependencies point down only. Data flows receiver →
// input (Input, InputLoop) → core (BridgeCore) → clients (TMMProtocol's bytes, Bridge's server).
import PackageDescription

/// Settings every target shares: Swift 6 mode is implied by tools 6.2; `Lifetimes` lets the NMEA
/// sentence view hold a `Span` into the caller's buffer (`~Escapable`), as swift-nio does.
let common: [SwiftSetting] = [
    .enableExperimentalFeature("Lifetimes"),
    .enableUpcomingFeature("MemberImportVisibility"),
]
/// The pure tier also opts into strict memory safety: it has no `unsafe` code at all.
let pure: [SwiftSetting] = common + [.strictMemorySafety()]
/// `sqrt` and `rounded()` lower to libm calls; pure targets import no Glibc, so link libm here.
let libm: [LinkerSetting] = [.linkedLibrary("m")]

let package = Package(
    name: "tmm-bridge",
    products: [
        .executable(name: "tmm-bridge", targets: ["tmm-bridge"])
    ],
    targets: [
        // Pure tier.
        .target(name: "ByteCoding", swiftSettings: pure),
        .target(name: "NMEA0183", dependencies: ["ByteCoding"], swiftSettings: pure),
        .target(name: "GNSS", dependencies: ["NMEA0183"], swiftSettings: pure, linkerSettings: libm),
        // The input side's rules (pure): the receiver model (gpsd's devices and events, Bluetooth addresses), which
        // stream a receiver's epochs come from, which receiver is served, and the input state machine (InputTracker).
        .target(
            name: "Input", dependencies: ["ByteCoding", "NMEA0183", "GNSS"], swiftSettings: pure, linkerSettings: libm),
        .target(
            name: "TMMProtocol", dependencies: ["GNSS", "Input", "ByteCoding"], swiftSettings: pure,
            linkerSettings: libm),
        .target(name: "HTTP1", dependencies: ["ByteCoding"], swiftSettings: pure),
        .target(name: "WebSocket", dependencies: ["ByteCoding", "HTTP1"], swiftSettings: pure),
        .target(name: "Logging", swiftSettings: pure),
        // RTK corrections (issue 23): the NTRIP client's protocol as a state machine, RTCM 3 framing, the GGA it sends
        // upstream. Pure: the Bridge owns the socket, DNS, TLS and the clock.
        .target(
            name: "Corrections", dependencies: ["ByteCoding", "NMEA0183", "GNSS", "HTTP1", "Logging"],
            swiftSettings: pure, linkerSettings: libm),
        // Platform tier: all C and unsafe code lives here.
        .target(name: "CLinux", cSettings: [.define("_GNU_SOURCE")]),
        .target(name: "CGPS", linkerSettings: [.linkedLibrary("gps")]),
        .target(name: "Posix", dependencies: ["CLinux", "Logging"], swiftSettings: common),
        .target(name: "GPSD", dependencies: ["CGPS", "Posix", "GNSS", "Input", "ByteCoding"], swiftSettings: common),
        .systemLibrary(
            name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .target(name: "TLS", dependencies: ["ByteCoding", "COpenSSL", "Posix"], swiftSettings: common),
        .systemLibrary(
            name: "CMosquitto", path: "Sources/CMosquitto", pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]),
        .target(name: "Fleet", dependencies: ["CMosquitto", "Posix", "Logging", "ByteCoding"], swiftSettings: common),
        .systemLibrary(name: "CUdev", path: "Sources/CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        .target(name: "CRFCOMM"),
        .target(
            name: "Discovery", dependencies: ["CUdev", "CRFCOMM", "CLinux", "Posix", "ByteCoding", "Input"],
            swiftSettings: common),
        // Core tier (pure): the server's rules, without sockets, threads or clocks.
        .target(
            name: "BridgeCore",
            dependencies: [
                "ByteCoding", "NMEA0183", "GNSS", "Input", "TMMProtocol", "HTTP1", "WebSocket", "Logging",
                "Corrections",
            ],
            swiftSettings: pure),
        // Assembly tier. The input side's executor: the gpsd sessions and their decoding, discovery, the replayed
        // capture, the one InputTracker on the caller's loop (ReceiverInput); `tmm-bridge watch` and `devices` use it
        // without a server.
        .target(
            name: "InputLoop",
            dependencies: ["GNSS", "Input", "TMMProtocol", "BridgeCore", "Posix", "GPSD", "Discovery", "Logging"],
            swiftSettings: common),
        // The server: clients' connections, the hub, the registry; its receiver side is InputLoop's.
        .target(
            name: "Bridge",
            dependencies: [
                "GNSS", "Input", "InputLoop", "TMMProtocol", "HTTP1", "WebSocket", "BridgeCore", "Posix",
                "Discovery", "TLS", "Logging", "Corrections", "GPSD", "Fleet", "ByteCoding",
            ],
            // The operator dashboard's page, built into the binary (no files to install, no
            // network at run time): SwiftPM writes each as a byte array, `PackageResources.NAME`.
            resources: [
                .embedInCode("Dashboard/Assets/index.html"), .embedInCode("Dashboard/Assets/dashboard.css"),
                .embedInCode("Dashboard/Assets/dashboard.js"),
            ],
            swiftSettings: common),
        .executableTarget(
            name: "tmm-bridge",
            dependencies: [
                "ByteCoding", "NMEA0183", "GNSS", "Input", "InputLoop", "TMMProtocol", "Posix", "GPSD", "Discovery",
                "BridgeCore", "Bridge",
                "TLS", "Logging",
            ],
            swiftSettings: common),
        // Benchmarks (make bench).
        .target(name: "BenchSupport", path: "Benchmarks/BenchSupport", swiftSettings: common),
        .executableTarget(
            name: "tmm-bench", dependencies: ["BenchSupport", "NMEA0183", "GNSS", "TMMProtocol", "CAllocationCounter"],
            path: "Benchmarks/tmm-bench", swiftSettings: common),
        .executableTarget(
            name: "tmm-inputcost", dependencies: ["BenchSupport", "GNSS", "GPSD", "Input", "CAllocationCounter"],
            path: "Benchmarks/tmm-inputcost", swiftSettings: common),
        .executableTarget(
            name: "tmm-latency", dependencies: ["InputLoop", "Input", "GPSD", "Posix", "GNSS", "Logging"],
            path: "Benchmarks/tmm-latency",
            swiftSettings: common),
        .executableTarget(
            name: "tmm-fanout", dependencies: ["ByteCoding", "GPSD", "Posix", "TLS", "WebSocket", "Logging"],
            path: "Benchmarks/tmm-fanout",
            swiftSettings: common),
        // Fleet publishing at scale (issue 24): N MQTTLinks against a local mosquitto (scripts/bench-fleet.sh).
        .executableTarget(
            name: "tmm-fleetload", dependencies: ["BenchSupport", "Fleet", "CMosquitto", "Posix", "Logging"],
            path: "Benchmarks/tmm-fleetload", swiftSettings: common),
        // Tests.
        // DWARF 4: the toolchain's clang writes DWARF 5 by default, whose forms Debian 12's
        // valgrind (3.19) cannot read, and callgrind then refuses the whole tmm-bench binary.
        .target(
            name: "CAllocationCounter", path: "Tests/Support/CAllocationCounter",
            cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        .target(
            name: "TestSupport", dependencies: ["CAllocationCounter"], path: "Tests/Support/TestSupport",
            swiftSettings: common),
        // The echo server of the WebSocket conformance suite (tmmtools/conformance): the daemon's
        // BridgeServer answering data messages with themselves. Never shipped (docs/websocket.md).
        .executableTarget(
            name: "tmm-wsecho",
            dependencies: ["Bridge", "InputLoop", "BridgeCore", "Posix", "TMMProtocol", "WebSocket"],
            path: "Tests/Support/tmm-wsecho", swiftSettings: common),
        .testTarget(name: "ByteCodingTests", dependencies: ["ByteCoding", "TestSupport"], swiftSettings: common),
        .testTarget(name: "NMEA0183Tests", dependencies: ["NMEA0183", "TestSupport"], swiftSettings: common),
        .testTarget(name: "GNSSTests", dependencies: ["GNSS", "NMEA0183", "TestSupport"], swiftSettings: common),
        // The input side's rules, without a platform library: links no libgps, libudev or OpenSSL.
        .testTarget(name: "InputTests", dependencies: ["Input", "GNSS", "TestSupport"], swiftSettings: common),
        .testTarget(
            name: "DiscoveryTests", dependencies: ["Discovery", "Input", "Posix", "TestSupport"],
            swiftSettings: common),
        .testTarget(
            name: "GPSDTests", dependencies: ["GPSD", "Input", "InputLoop", "Posix", "GNSS", "Logging", "TestSupport"],
            swiftSettings: common),
        .testTarget(name: "LoggingTests", dependencies: ["Logging", "Posix", "TestSupport"], swiftSettings: common),
        .testTarget(name: "PosixTests", dependencies: ["Posix", "TestSupport"], swiftSettings: common),
        .testTarget(name: "TLSTests", dependencies: ["TLS", "TestSupport"], swiftSettings: common),
        .testTarget(name: "HTTP1Tests", dependencies: ["HTTP1", "TestSupport"], swiftSettings: common),
        .testTarget(
            name: "WebSocketTests", dependencies: ["WebSocket", "HTTP1", "ByteCoding", "TestSupport"],
            swiftSettings: common),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "tmm-bridge", "tmm-wsecho", "Bridge", "InputLoop", "BridgeCore", "Discovery", "Posix", "Logging",
                "TestSupport",
            ],
            swiftSettings: common),
        .testTarget(
            name: "BridgeCoreTests",
            dependencies: [
                "BridgeCore", "ByteCoding", "GNSS", "Input", "TMMProtocol", "HTTP1", "WebSocket", "Logging",
                "TestSupport",
            ],
            swiftSettings: common),
        .testTarget(
            name: "BridgeTests",
            dependencies: [
                "Bridge", "InputLoop", "Input", "BridgeCore", "ByteCoding", "TMMProtocol", "HTTP1", "WebSocket",
                "Posix", "GPSD",
                "Discovery", "TLS", "Logging", "TestSupport",
            ],
            swiftSettings: common),
        .testTarget(
            name: "CorrectionsTests",
            dependencies: ["Corrections", "ByteCoding", "NMEA0183", "GNSS", "HTTP1", "Logging", "TestSupport"],
            swiftSettings: common),
        .testTarget(
            name: "FleetTests", dependencies: ["Fleet", "CMosquitto", "Posix", "Logging", "ByteCoding", "TestSupport"],
            swiftSettings: common),
        .testTarget(
            name: "TMMProtocolTests", dependencies: ["TMMProtocol", "Input", "ByteCoding", "GNSS", "TestSupport"],
            swiftSettings: common),
    ]
)
