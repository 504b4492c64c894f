// The harness of the end-to-end suite (EndToEndTests.swift): the real `tmm-bridge run` with a pty
// receiver, fresh directories and free ports, and the independent clients in tmmtools/endtoend/
// (Python with Debian's python3-websockets, and curl) run against it.
import Foundation
import Glibc
import Posix
import Synchronization
import TestSupport
import Testing

/// What the suite needs and where its scripts are.
enum EndToEnd {
    static let python = PythonTools.python

    /// gpsd, curl and /usr/bin/python3 with `websockets` are all there.
    static let isAvailable: Bool = {
        guard findExecutable("gpsd") != nil, findExecutable("curl") != nil,
            FileManager.default.isExecutableFile(atPath: python)
        else { return false }
        return (try? runTool(python, ["-c", "import websockets"]))?.status == 0
    }()

    static let capture = Fixtures.path("nmea-rtk.log")

    /// A system gpsd on 127.0.0.1:2947 would be used instead of a private one (then there is no
    /// private gpsd to check for).
    static var systemGPSDAnswers: Bool { connects(to: 2947) }

    /// A fresh directory under the temporary directory, removed by the caller.
    static func makeDirectory(_ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "tmm-e2e-\(getpid())-\(name)-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Output collected as it comes: TestSupport's one collector.
typealias OutputBuffer = ChildOutput

/// Waits until `condition` holds or `seconds` pass; returns whether it held. TestSupport's
/// `waitUntil`, polling every 20 ms: conditions here read /proc, files and child output.
func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    waitUntil(timeout: .seconds(seconds), pollInterval: .milliseconds(20), condition)
}

/// True when something accepts TCP connections on 127.0.0.1:`port`.
func connects(to port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopback(port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    } == 0
}

private func loopback(_ port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
}

/// A TCP listener on 127.0.0.1 that the test holds (to make a base port busy), closed on deinit.
final class HeldPort {
    let port: UInt16
    private let fd: CInt

    init(_ port: UInt16) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = loopback(port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard fd >= 0, bound == 0, listen(fd, 8) == 0 else {
            if fd >= 0 { close(fd) }
            throw HarnessError("cannot hold port \(port): \(String(cString: strerror(errno)))")
        }
        self.port = port
        self.fd = fd
    }

    deinit { close(fd) }
}

/// The bridge's start-up race, fixed in GPSDSession.restoreWanted and pinned by
/// EndToEndTests.receiverIsHandedToGPSDOnceAtStartup: the gpsd session's WATCH reached gpsd before
/// the `+device` hand-off, so gpsd's first device list was empty; the bridge re-added the device,
/// gpsd refused (it already had it), and the bridge logged that gpsd "could not open the device".
struct StartupRace: Error, CustomStringConvertible {
    var name: String
    var log: String
    var description: String {
        "\(name): tmm-bridge start-up race: the receiver's hand-off to gpsd was refused as a duplicate:\n\(log)"
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A daemon or tool of these tests: TestSupport's `SpawnedChild` (its output and errors together,
/// every other descriptor closed in it), with its end as Posix's `ChildProcess.Termination`.
final class Spawned {
    private let child: SpawnedChild

    init(_ executable: String, _ arguments: [String]) throws {
        do { child = try SpawnedChild(executable, arguments) } catch { throw HarnessError("\(error)") }
    }

    var pid: pid_t { child.pid }
    var output: ChildOutput { child.output }

    /// How it ended, once it has (reaped by the first call that sees it).
    var termination: ChildProcess.Termination? {
        switch child.termination {
        case .exited(let status): .exited(status)
        case .signalled(let signal): .signalled(signal)
        case nil: nil
        }
    }

    var isRunning: Bool { !child.hasEnded }

    /// Waits up to `seconds` for the end; nil when it is still running.
    func wait(seconds: Double) -> ChildProcess.Termination? {
        _ = child.wait(timeout: .milliseconds(Int(seconds * 1000)))
        return termination
    }

    /// SIGKILL and reap.
    func killNow() {
        child.killAndReap()
        _ = waitUntil(2) { output.isComplete }
    }

    deinit { killNow() }
}

/// Runs a short-lived tool to the end (at most `seconds`): its exit status and output.
func runTool(
    _ executable: String, _ arguments: [String], seconds: Double = 20
) throws -> (status: Int32?, output: String) {
    let tool = try Spawned(executable, arguments)
    guard case .exited(let status) = tool.wait(seconds: seconds) else {
        tool.killNow()
        return (nil, tool.output.text)
    }
    return (status, tool.output.text)
}

/// The six base ports and a fallback start, all free now. Taken from 20000-32767, below Linux's
/// ephemeral range, so no client connection of the machine can take one in the meantime.
struct PortSet {
    static let keys = [
        "locationPort", "locationSecurePort", "apiPort", "apiSecurePort", "locationV2Port",
        "locationV2SecurePort",
    ]
    static let options = [
        "location-port", "location-secure-port", "api-port", "api-secure-port", "location-v2-port",
        "location-v2-secure-port",
    ]

    var base: [String: UInt16]
    /// The first of `fallbackCount` consecutive free ports.
    var fallbackStart: UInt16
    static let fallbackCount: UInt16 = 8

    static func pick() throws -> PortSet {
        for _ in 0..<200 {
            let start = UInt16.random(in: 20_000...32_000) & ~0x1F
            let block = (0..<UInt16(32)).map { start + $0 }
            guard block.allSatisfy({ (try? HeldPort($0)) != nil }) else { continue }
            var base: [String: UInt16] = [:]
            for (index, key) in keys.enumerated() { base[key] = start + UInt16(index) }
            return PortSet(base: base, fallbackStart: start + 16)
        }
        throw HarnessError("no free block of 32 ports in 20000-32767")
    }

    var arguments: [String] {
        zip(Self.keys, Self.options).flatMap { ["--\($0.1)", String(base[$0.0]!)] }
            + ["--fallback-port-start", String(fallbackStart)]
    }
}

/// A pseudo-terminal receiver: plays the capture's epochs (GGA + RMC) into the pty at 10 Hz, as
/// the receiver wrote them, in a loop, from its own thread. Writes are non-blocking: while nobody
/// reads the pty (gpsd not yet there, or disconnected) epochs are dropped, as on a serial line.
final class PtyReceiver {
    private let pty: Pseudoterminal
    private let feeder: Feeder
    var devicePath: String { pty.devicePath }

    private final class Feeder: Sendable {
        let fd: CInt
        let epochs: [[UInt8]]
        let silence: Int64
        let stopping = Mutex(false)
        let done = DispatchSemaphore(value: 0)

        init(fd: CInt, epochs: [[UInt8]], silence: Int64) {
            self.fd = fd
            self.epochs = epochs
            self.silence = silence
        }

        func run() {
            // Silent at first (the behaviour some tests need), unless stopped meanwhile.
            var next = monotonicNanoseconds() + silence
            _ = waitUntil(timeout: .nanoseconds(silence), pollInterval: .milliseconds(20)) { stopping.withLock { $0 } }
            while true {
                for epoch in epochs {
                    if stopping.withLock({ $0 }) {
                        done.signal()
                        return
                    }
                    _ = epoch.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                    next += 100_000_000
                    sleep(for: .nanoseconds(next - monotonicNanoseconds()))  // a 10 Hz receiver's pace
                }
            }
        }
    }

    /// `silentFor` seconds pass before the first epoch (a receiver that is still starting up).
    convenience init(silentFor seconds: Double = 0) throws {
        var epochs: [[UInt8]] = []
        for line in try Fixtures.lines("nmea-rtk.log") where line.first == UInt8(ascii: "$") {
            if line[3...5].elementsEqual("GGA".utf8) { epochs.append([]) }
            epochs[epochs.count - 1] += line + [13, 10]
        }
        try self.init(epochs: epochs, silentFor: seconds)
    }

    /// A receiver at `latitude` (NMEA ddmm.mmmmmmm, north), playing a minute of TestNMEA's
    /// cycles: several of them tell apart whose positions a client gets.
    convenience init(latitude: String) throws {
        try self.init(
            epochs: (0..<600).map { TestNMEA.cycle($0, latitude: latitude).flatMap { $0 + [13, 10] } }, silentFor: 0)
    }

    /// Closing the pty (dropping the receiver) is unplugging it: gpsd keeps the device open and
    /// hears nothing more.
    init(epochs: [[UInt8]], silentFor seconds: Double) throws {
        pty = try Pseudoterminal()
        try pty.controller.setNonBlocking(true)
        feeder = Feeder(fd: pty.controller.rawValue, epochs: epochs, silence: Int64(seconds * 1e9))
        Thread.detachNewThread { [feeder] in feeder.run() }
    }

    deinit {
        feeder.stopping.withLock { $0 = true }
        feeder.done.wait()
    }
}

/// One run of `tmm-bridge run`.
final class BridgeDaemon {
    struct Setup {
        var name: String
        /// Holds `state/` and `runtime/`; kept across restarts.
        var directory: String
        var ports: PortSet
        var registration = "allowlist"
        var allowedIDs: [String] = []
        var devicePath: String?
        var extraArguments: [String] = []
        /// Variables added to the daemon's environment (set through /usr/bin/env, which execs the
        /// daemon in its own process: `pid` is the daemon's).
        var environment: [String: String] = [:]

        var stateDirectory: String { directory + "/state" }
        var runtimeDirectory: String { directory + "/runtime" }
        var registryPath: String { stateDirectory + "/registry.json" }
    }

    let setup: Setup
    private let spawned: Spawned
    /// The real ports, from the `ports:` line.
    private(set) var ports: [String: Int] = [:]
    /// The private gpsd's pid, from the `private gpsd started` line.
    private(set) var gpsdPID: pid_t?

    /// Everything it logged so far (stderr; its stdout is empty).
    var log: String { spawned.output.text }
    /// The daemon's process id.
    var pid: pid_t { spawned.pid }
    var hasExited: Bool { !spawned.isRunning }

    /// Starts the daemon and waits for `tmm-bridge: ready` (and, with a device, for gpsd to have
    /// it open).
    init(_ setup: Setup, waitForReceiver: Bool = true) throws {
        self.setup = setup
        var arguments =
            [
                "run", "--no-discovery", "--registration", setup.registration,
                "--state-dir", setup.stateDirectory, "--runtime-dir", setup.runtimeDirectory,
                "--listen", "127.0.0.1",
            ] + setup.ports.arguments
        for id in setup.allowedIDs { arguments += ["--allow-app-id", id] }
        if let device = setup.devicePath { arguments += ["--device", device] }
        arguments += setup.extraArguments
        if setup.environment.isEmpty {
            spawned = try Spawned(try bridgeBinary().path, arguments)
        } else {
            let variables = setup.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            spawned = try Spawned("/usr/bin/env", variables + [try bridgeBinary().path] + arguments)
        }

        guard waitUntil(20, { log.contains("tmm-bridge: ready\n") || hasExited }), !hasExited else {
            spawned.killNow()
            throw HarnessError(
                "\(setup.name): tmm-bridge did not get ready (\(spawned.termination.map { "\($0)" } ?? "")):\n\(log)")
        }
        let text = log
        if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("tmm-bridge: ports: ") }) {
            for pair in line.dropFirst("tmm-bridge: ports: ".count).split(separator: " ") {
                let parts = pair.split(separator: "=")
                if parts.count == 2, let port = Int(parts[1]) { ports[String(parts[0])] = port }
            }
        }
        gpsdPID = text.split(separator: "\n").first { $0.contains("private gpsd started: pid ") }
            .flatMap { Int32($0.split(separator: " ")[5].dropLast()) }
        if let device = setup.devicePath, waitForReceiver {
            let opened = waitUntil(10) { receiverState(device) != nil || hasExited }
            if receiverState(device) == .refused {
                _ = stop()
                throw StartupRace(name: setup.name, log: log)
            }
            guard opened, !hasExited else {
                _ = stop()
                throw HarnessError("\(setup.name): gpsd did not open the pty receiver \(device) within 10 s:\n\(log)")
            }
        }
    }

    enum ReceiverState { case opened, refused }

    /// What the log says about `device` so far: gpsd has it, the hand-off was refused, or nothing yet.
    func receiverState(_ device: String) -> ReceiverState? {
        let text = log
        if text.contains("cannot hand \(device) to gpsd") || text.contains("cannot re-add \(device) to gpsd") {
            return .refused
        }
        if text.contains("gpsd has \(device)") || text.contains("gpsd reads \(device)")
            || text.contains("gpsd opened \(device)")
        {
            return .opened
        }
        return nil
    }

    /// The JSON context every script gets (see tmmtools/client/tmmclient.py).
    func context(_ extra: [String: Any] = [:]) -> [String: Any] {
        var context: [String: Any] = [
            "bridge": (try? bridgeBinary().path) ?? "", "runtimeDir": setup.runtimeDirectory,
            "stateDir": setup.stateDirectory, "host": "127.0.0.1", "ports": ports, "allowedIds": setup.allowedIDs,
            "capture": EndToEnd.capture,
        ]
        context.merge(extra) { $1 }
        return context
    }

    /// SIGTERM, and how it ended (nil when it had to be killed after 15 s).
    func stop() -> ChildProcess.Termination? {
        if let ended = spawned.termination { return ended }
        kill(spawned.pid, SIGTERM)
        guard let ended = spawned.wait(seconds: 15) else {
            spawned.killNow()
            return nil
        }
        return ended
    }

    /// Checks a clean SIGTERM stop: exit 0, "stopped" logged, and the private gpsd gone.
    func stopAndExpectCleanExit(sourceLocation: SourceLocation = #_sourceLocation) {
        let ended = stop()
        #expect(
            ended == .exited(0),
            "\(setup.name): tmm-bridge after SIGTERM: \(ended.map { "\($0)" } ?? "still running after 15 s")\n\(log)",
            sourceLocation: sourceLocation)
        #expect(log.contains("signal 15: stopping"), "\(setup.name):\n\(log)", sourceLocation: sourceLocation)
        #expect(log.contains("tmm-bridge: stopped: "), "\(setup.name):\n\(log)", sourceLocation: sourceLocation)
        if let pid = gpsdPID {
            #expect(
                kill(pid, 0) == -1 && errno == ESRCH, "\(setup.name): private gpsd \(pid) still running after the stop",
                sourceLocation: sourceLocation)
        } else {
            #expect(
                EndToEnd.systemGPSDAnswers, "\(setup.name): no private gpsd was started:\n\(log)",
                sourceLocation: sourceLocation)
        }
    }

    /// SIGKILL (no clean-up at all), then ends the private gpsd it leaves behind.
    func killHard() {
        spawned.killNow()
        if let pid = gpsdPID { kill(pid, SIGKILL) }
    }

    deinit {
        if spawned.isRunning { killHard() }
    }
}

/// One run of a script of tmmtools/endtoend, its output collected as it comes.
final class ScriptRun {
    let name: String
    private let spawned: Spawned

    /// Starts `python3 -m tmmtools.endtoend.<script> <context JSON>` (PythonTools); `script` is
    /// the file's name, "rest.py".
    init(_ script: String, context: [String: Any]) throws {
        name = script
        let json = String(
            decoding: try JSONSerialization.data(withJSONObject: context, options: [.sortedKeys]), as: UTF8.self)
        let module = PythonTools.command("endtoend." + script.replacingOccurrences(of: ".py", with: ""), [json])
        spawned = try Spawned(module.executable, module.arguments)
    }

    /// Standard output and error.
    var output: String { spawned.output.text }
    var isRunning: Bool { spawned.isRunning }

    /// Waits for the end (SIGKILL after `seconds`); returns the exit status, nil on a time-out.
    @discardableResult
    func wait(seconds: Double) -> Int32? {
        guard let ended = spawned.wait(seconds: seconds) else {
            spawned.killNow()
            return nil
        }
        if case .exited(let status) = ended { return status }
        return nil
    }

    /// `all N checks passed` from the last line, if the script got there.
    var passedChecks: Int? {
        guard let last = output.split(separator: "\n").last, last.hasPrefix("all "), last.hasSuffix(" checks passed")
        else { return nil }
        return Int(last.split(separator: " ")[1])
    }

    var transcript: String { "--- \(name):\n\(output)" }
}

/// Runs `script` to the end against `daemon` and checks it passed at least `minimumChecks` checks.
func expectScriptPasses(
    _ script: String, against daemon: BridgeDaemon, extra: [String: Any] = [:],
    minimumChecks: Int, seconds: Double = 60,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let run = try ScriptRun(script, context: daemon.context(extra))
    let started = monotonicNanoseconds()
    let status = run.wait(seconds: seconds)
    print(
        "\(script): \(run.passedChecks.map { "\($0) checks passed" } ?? "failed") "
            + "in \(String(format: "%.1f", Double(monotonicNanoseconds() - started) / 1e9)) s"
    )
    #expect(
        status == 0,
        """
        \(script) exit status \(status.map(String.init) ?? "none: timed out after \(seconds) s")
        \(run.transcript)--- tmm-bridge stderr:
        \(daemon.log)
        """,
        sourceLocation: sourceLocation)
    #expect(
        (run.passedChecks ?? 0) >= minimumChecks,
        "\(script): \(run.passedChecks ?? 0) checks passed, expected at least \(minimumChecks)\n\(run.transcript)",
        sourceLocation: sourceLocation)
}

/// The registry file as a client (or an operator) reads it: parsed, the ids in order, the mode.
struct RegistryFile {
    var ids: [String]
    var mode: mode_t

    static func read(_ path: String) throws -> RegistryFile? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let object = try #require(
            try JSONSerialization.jsonObject(with: data) as? [String: Any], "registry is a JSON object")
        #expect(object["format"] as? String == "tmm-bridge registry")
        #expect(object["version"] as? Int == 1)
        let applications = try #require(object["applications"] as? [[String: Any]], "applications array")
        let ids = applications.compactMap { $0["applicationId"] as? String }
        #expect(ids.count == applications.count)
        var info = stat()
        #expect(stat(path, &info) == 0)
        return RegistryFile(ids: ids, mode: info.st_mode & 0o7777)
    }
}
