// Helpers of the fleet publishing tests (FleetTests.swift): positions one second (or a fraction)
// apart, so every location message names its epoch by `utcTimeStamp`; the fleet part of a bridge's
// status; and the real daemon as a child (SIGKILL, SIGTERM, a state directory kept across runs).
import ByteCoding
import Foundation
import GNSS
import Glibc
import Input
import Posix
import Synchronization
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeCore

enum FleetFixture {
    static let first = try? capturePositions().first
    static let login = (user: "fleet", password: "s3cret")

    /// Epoch `index` of a synthetic stream: the capture's first position, `step` apart from
    /// 01:00:00 on 2026-12-02 (a little latitude apart too).
    static func epoch(_ index: Int, step: Duration = .seconds(1)) throws -> Position {
        var position = try #require(first)
        let stepNanoseconds = step.components.seconds * 1_000_000_000 + step.components.attoseconds / 1_000_000_000
        position.time = UTCTimestamp(
            date: CalendarDate(year: 2026, month: 12, day: 2),
            nanosecondsOfDay: 3_600_000_000_000 + Int64(index) * stepNanoseconds)
        position.latitude = (position.latitude ?? 0) + Double(index) * 1e-7
        return position
    }

    /// The `utcTimeStamp` the LocationV2 JSON of `position` carries.
    static func timeStamp(_ position: Position) -> String? {
        var encoder = LocationV2Encoder()
        encoder.encode(position, identity: ReceiverIdentity(appVersion: "9.8.7"))
        return json(encoder.bytes)?["utcTimeStamp"] as? String
    }

    static func json(_ bytes: [UInt8]) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    }

    static func json(_ text: String) -> [String: Any]? { json(Array(text.utf8)) }

    /// A client id no other test uses.
    static func clientID(_ name: String) -> String { "tmm-test-\(name)-\(getpid())-\(UInt16.random(in: 0...9999))" }

    /// A topic prefix no other test uses.
    static func prefix(_ name: String) -> String { "fleet-test/\(name)-\(UInt32.random(in: 0...UInt32.max))" }

    /// The broker as the in-process bridge's configuration names it.
    static func broker(
        _ broker: MosquittoBroker, user: String? = login.user, password: String? = login.password, tls: Bool = false
    ) -> MQTTBroker {
        MQTTBroker(
            host: "127.0.0.1", port: tls ? broker.tlsPort ?? 0 : broker.port, user: user, password: password,
            usesTLS: tls)
    }

    /// A started broker with the test's login.
    static func startedBroker(tls: Bool = false, requireClientCertificate: Bool = false) throws -> MosquittoBroker {
        let broker = try MosquittoBroker(
            users: [login.user: login.password], tls: tls, requireClientCertificate: requireClientCertificate)
        try broker.start()
        return broker
    }

    static func subscriber(
        _ broker: MosquittoBroker, _ topic: String, clientID: String? = nil, tls: Bool = false
    ) throws -> MQTTSubscriber {
        try MQTTSubscriber(
            broker: broker, topic: topic, user: login.user, password: login.password, clientID: clientID, tls: tls)
    }
}

/// A bridge whose status is asked on its control socket: the in-process one and the daemon.
protocol FleetStatusSource {
    var controlSocket: String { get }
}

extension FleetStatusSource {
    /// The bridge's status (nil: not answered).
    var status: DaemonStatus? {
        (try? ControlProtocol.status(socketPath: controlSocket, timeoutMilliseconds: 5000))?.status
    }

    /// The fleet part of the status (nil: not answered or no fleet).
    var fleet: DaemonStatus.Fleet? { status?.fleet }

    /// Waits up to `timeout` for a fleet status that satisfies `condition`; the last one seen.
    @discardableResult
    func waitForFleet(
        timeout: Duration = .seconds(15), _ condition: (DaemonStatus.Fleet) -> Bool
    ) -> (held: Bool, last: DaemonStatus.Fleet?) {
        var last: DaemonStatus.Fleet?
        let held = waitUntil(timeout: timeout, pollInterval: .milliseconds(50)) {
            last = fleet
            return last.map(condition) ?? false
        }
        return (held, last)
    }
}

extension TestBridge: FleetStatusSource {}

/// Feeds `epoch(i)` for i = 0, 1, 2, … every `interval` on a thread of its own (a receiver whose
/// epochs carry increasing times); `fed` is how many were posted.
final class CountingFeeder: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let count = Atomic<Int>(0)
    private let thread = Mutex<OSThread?>(nil)

    init(_ bridge: TestBridge, every interval: Duration, step: Duration = .seconds(1)) throws {
        let positions = try (0..<4000).map { try FleetFixture.epoch($0, step: step) }
        let started = try OSThread(name: "fleet-feeder") { [self] in
            var index = 0
            while !stopping.load(ordering: .relaxed), index < positions.count {
                bridge.input.post(.position(positions[index]))
                index += 1
                count.store(index, ordering: .relaxed)
                sleep(for: interval)  // the receiver's pace, not a wait for a result
            }
        }
        thread.withLock { $0 = started }
    }

    var fed: Int { count.load(ordering: .relaxed) }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        thread.withLock { thread in
            thread?.join()
            thread = nil
        }
    }

    deinit { stop() }
}

/// The real daemon (`tmm-bridge run --demo …`) as a child: its own free ports, state directory
/// `base/state` (kept for a second run: pass `base`), runtime directory `base/run-N`.
final class FleetDaemon: FleetStatusSource {
    let process = Process()
    let ports: PortAssignment
    let base: String
    let runtime: String
    let logPath: String

    var stateDirectory: String { base + "/state" }
    var controlSocket: String { BridgeServer.controlSocketPath(runtimeDirectory: runtime) }

    /// Starts it and, with `waitForReady`, waits for "ready" (throws with its log when it ends first).
    /// `asUser`: run as that uid and gid (setpriv), as the daemon would after its privilege drop.
    init(
        base: String? = nil, nofile: Int? = nil, asUser: uid_t? = nil, arguments: [String], waitForReady: Bool = true
    ) throws {
        let binary = try bridgeBinary().path
        self.base = base ?? NSTemporaryDirectory() + "tmm-fleet-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: self.base, withIntermediateDirectories: true)
        runtime = self.base + "/run-\(UUID().uuidString.prefix(6))"
        ports = try freePorts()
        logPath = runtime + ".stderr"
        guard FileManager.default.createFile(atPath: logPath, contents: nil) else {
            throw TestBridge.StartFailure(description: "cannot create \(logPath)")
        }
        let run =
            [
                binary, "run", "--registration", "open", "--listen", "127.0.0.1",
                "--location-port", "\(ports.location)", "--location-secure-port", "\(ports.locationSecure)",
                "--api-port", "\(ports.api)", "--api-secure-port", "\(ports.apiSecure)",
                "--location-v2-port", "\(ports.locationV2)", "--location-v2-secure-port", "\(ports.locationV2Secure)",
                "--state-dir", self.base + "/state", "--runtime-dir", runtime, "--no-discovery",
            ] + arguments
        if let nofile {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
            process.arguments = ["--nofile=\(nofile)"] + run
        } else if let asUser {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(asUser)", "--regid=\(asUser)", "--clear-groups"] + run
        } else {
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = Array(run.dropFirst())
        }
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        guard waitForReady else { return }
        let process = self.process
        _ = waitUntil(timeout: .seconds(30), pollInterval: .milliseconds(20)) {
            !process.isRunning || log().contains("tmm-bridge: ready")
        }
        guard log().contains("tmm-bridge: ready") else {
            kill()
            throw TestBridge.StartFailure(description: "the daemon did not get ready: \(log())")
        }
    }

    deinit { kill() }

    var pid: pid_t { process.processIdentifier }

    func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Registers the test's app through the control socket (REST needs its access code).
    func register() throws {
        let json = "{\"application_id\":\"\(testAppID)\",\"returl\":\"a://b\"}"
        _ = try ControlProtocol.open(
            "tmmregister://?" + Base64.encode(Array(json.utf8)), socketPath: controlSocket, timeoutMilliseconds: 5000)
    }

    /// GET /api/v1/test/ping (after `register`).
    func ping() throws -> HTTPResponse { try request(ports.api, "/api/v1/test/ping") }

    /// SIGKILL and reap.
    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// SIGTERM and reap (SIGKILL after 20 s); its exit status.
    @discardableResult
    func terminate() -> Int32 {
        if process.isRunning { process.terminate() }
        let process = self.process
        if !waitUntil(timeout: .seconds(20), pollInterval: .milliseconds(10), { !process.isRunning }) { kill() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// /proc/PID/status's `field` (VmRSS, VmHWM) in KiB.
    func memoryKiB(_ field: String) -> Int? { processMemoryKiB(pid, field) }
}

/// /proc/`pid`/status's `field` (VmRSS, VmHWM) in KiB.
func processMemoryKiB(_ pid: pid_t, _ field: String) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
    }
    return nil
}
