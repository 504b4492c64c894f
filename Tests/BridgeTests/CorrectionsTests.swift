// The corrections client against a real caster (tmmtools/peers/ntrip_caster.py, NTRIP Rev 2 and
// Rev 1 and its hostile modes) with a real pty as the receiver: RTCM reaches the device byte for
// byte in CRC-checked frames, the state in `status` says what happens, hostile casters cost no
// client a frame, and the password never leaves the daemon.
import BridgeCore
import ByteCoding
import Corrections
import Foundation
import GNSS
import Glibc
import Posix
import Synchronization
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge

/// A caster peer: started on a free port, read line by line (its first line is the port), killed
/// when the test ends.
final class CasterPeer {
    let process = Process()
    let port: UInt16
    let logPath: String

    /// `asUser`: run it as that user (`setpriv`), as another local user's caster would.
    init(_ arguments: [String], asUser user: String? = nil) throws {
        logPath = NSTemporaryDirectory() + "caster-\(getpid())-\(UUID().uuidString.prefix(8)).log"
        let command = PythonTools.command("peers.ntrip_caster", ["--port", "0", "--log", logPath] + arguments)
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments =
                ["--reuid=\(user)", "--regid=nogroup", "--clear-groups", command.executable] + command.arguments
        } else {
            process.executableURL = URL(fileURLWithPath: command.executable)
            process.arguments = command.arguments
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.standardError
        try process.run()
        var line: [UInt8] = []
        let output = pipe.fileHandleForReading
        while !line.contains(10) {
            let chunk = output.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("listening "), let port = UInt16(text.dropFirst(10).prefix { $0.isNumber }) else {
            process.terminate()
            throw TestBridge.StartFailure(description: "the caster did not start: \(text)")
        }
        self.port = port
    }

    deinit {
        // SIGKILL: a hostile mode may be in the middle of an endless write.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The caster's JSON log lines so far.
    var events: [[String: Any]] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }
}

/// What a receiver's pty gets: the controller side read on a thread of its own into RTCM frames
/// checked by the framer.
final class ReceiverPty: Sendable {
    let path: String
    private let controller: CInt
    private let device: CInt
    private final class Shared: Sendable {
        let received = Mutex<(bytes: [UInt8], framer: RTCM3Framer, frames: [RTCM3Frame])>(([], RTCM3Framer(), []))
        let stopping = Atomic<Bool>(false)
    }
    private let shared = Shared()
    private let thread: OSThread

    init() throws {
        let pty = try Pseudoterminal()
        path = pty.devicePath
        let (controller, device) = pty.release()
        self.controller = controller
        self.device = device
        let shared = shared
        thread = try OSThread(name: "pty-reader") {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !shared.stopping.load(ordering: .relaxed) {
                var poller = pollfd(fd: controller, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 100) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { Glibc.read(controller, $0.baseAddress, $0.count) }
                guard count > 0 else { continue }
                let chunk = Array(buffer[0..<count])
                shared.received.withLock { state in
                    state.bytes += chunk
                    state.framer.append(chunk.span, into: &state.frames)
                }
            }
        }
    }

    deinit {
        shared.stopping.store(true, ordering: .relaxed)
        thread.join()
        close(controller)
        close(device)
    }

    var frames: [RTCM3Frame] { shared.received.withLock { $0.frames } }
    var statistics: RTCM3Framer.Statistics { shared.received.withLock { $0.framer.statistics } }
    var byteCount: Int { shared.received.withLock { $0.bytes.count } }
}

/// A bridge whose corrections go to `pty` (`ntrip-receiver`), with `source` configured.
private func startBridge(source: NTRIPSource?, pty: ReceiverPty, ggaInterval: Int = 10) throws -> TestBridge {
    try TestBridge.start { configuration in
        configuration.corrections.source = source
        configuration.corrections.receiver = pty.path
        configuration.corrections.ggaIntervalSeconds = ggaInterval
    }
}

private func casterSource(
    _ caster: CasterPeer, mount: String = "RTCM3", password: String = "s3cret!"
)
    -> NTRIPSource
{
    NTRIPSource(host: "127.0.0.1", port: caster.port, mountPoint: mount, user: "rover", password: password)
}

extension TestBridge {
    /// The daemon's `status` document's corrections section.
    func correctionsStatus() throws -> DaemonStatus.Corrections? {
        try ControlProtocol.status(socketPath: controlSocket).status.corrections
    }

    /// Waits until the corrections state is `state`; the last status seen otherwise.
    @discardableResult
    func waitForCorrections(
        _ state: String, seconds: Int = 15, _ condition: (DaemonStatus.Corrections) -> Bool = { _ in true }
    ) throws -> DaemonStatus.Corrections? {
        var last: DaemonStatus.Corrections?
        _ = waitUntil(timeout: .seconds(seconds)) {
            last = try? correctionsStatus()
            return last.map { $0.state == state && condition($0) } ?? false
        }
        return last
    }
}

@Suite(.tags(.integration)) struct CorrectionsTests {
    static let login = ["--user", "rover", "--password", "s3cret!", "--mount", "RTCM3", "--station-id", "2718"]

    @Test(arguments: [[], ["--rev1-only"], ["--refuse-rev2"]])
    func framesReachTheReceiverWholeAndInOrder(revision: [String]) throws {
        let caster = try CasterPeer(Self.login + revision)
        let pty = try ReceiverPty()
        let bridge = try startBridge(source: casterSource(caster), pty: pty)
        let expectedRevision = revision.isEmpty ? 2 : 1
        // 1006 (the station) comes every 5 s: wait for one.
        let streaming = try bridge.waitForCorrections("streaming") {
            $0.frames >= 6 && $0.framesWritten >= 6 && $0.stationID != nil
        }
        #expect(streaming?.revision == expectedRevision, "\(String(describing: streaming))")
        #expect(streaming?.stationID == 2718)
        #expect(streaming?.route == "tty")
        #expect(waitUntil(timeout: .seconds(10)) { pty.frames.count >= 6 })
        // Every byte the receiver got is part of a valid frame: chunk framing, the answer head
        // and nothing else ever reaches it.
        #expect(pty.statistics.damagedFrames == 0)
        #expect(pty.statistics.skippedBytes == 0)
        #expect(pty.frames.allSatisfy { [1006, 1230, 1077, 1087, 1097].contains($0.messageNumber) })
        let request = caster.events.first { $0["event"] as? String == "request" && $0["path"] as? String == "/RTCM3" }
        let headers = (request?["headers"] as? [[String]]) ?? []
        #expect(headers.contains(["User-Agent", "NTRIP tmm-bridge/9.8.7"]), "\(headers)")
        #expect(request?["login"] as? String == "accepted")
    }

    @Test func aWrongMountPointNamesTheOffered() throws {
        let caster = try CasterPeer(Self.login)
        let pty = try ReceiverPty()
        let bridge = try startBridge(source: casterSource(caster, mount: "NOPE"), pty: pty)
        let status = try bridge.waitForCorrections("no-such-mount-point")
        #expect(status?.state == "no-such-mount-point")
        #expect(status?.message.contains("RTCM3") == true, "\(String(describing: status))")
        #expect(pty.byteCount == 0)
    }

    @Test func aRefusedLoginIsAStateAnEventAndAnErrorLine() throws {
        let caster = try CasterPeer(Self.login)
        let pty = try ReceiverPty()
        let bridge = try startBridge(source: casterSource(caster, password: "wrong-password"), pty: pty)
        let status = try bridge.waitForCorrections("login-refused")
        #expect(status?.state == "login-refused")
        #expect(bridge.logs.contains { $0.contains("corrections") && $0.contains("password") })
        // The password never appears: not in a log line, not in the status.
        #expect(!bridge.logs.contains { $0.contains("wrong-password") })
        let json = try ControlProtocol.status(socketPath: bridge.controlSocket).json
        #expect(!json.contains("wrong-password"))
    }

    @Test func theRoversGGAGoesUpWithAValidChecksum() throws {
        let caster = try CasterPeer(Self.login)
        let pty = try ReceiverPty()
        let bridge = try startBridge(source: casterSource(caster), pty: pty, ggaInterval: 1)
        try bridge.waitForCorrections("streaming")
        try bridge.connectReceiver()
        let feeder = try PositionFeeder(bridge, positions: try capturePositions(), every: .milliseconds(100))
        defer { feeder.stop() }
        #expect(
            waitUntil(timeout: .seconds(10)) {
                caster.events.filter { $0["event"] as? String == "gga" }.count >= 2
            })
        let sentences = caster.events.filter { $0["event"] as? String == "gga" }
        #expect(sentences.allSatisfy { $0["checksum"] as? String == "valid" }, "\(sentences)")
        #expect((try bridge.correctionsStatus()?.ggaSent ?? 0) >= 2)
    }

    /// A caster that misbehaves: a clear state, never a crash, and every V2 client keeps getting
    /// its positions meanwhile.
    ///
    /// | mode | the caster | the state |
    /// |---|---|---|
    /// | endless-header | header lines for ever | protocol-error (past 8 KiB) |
    /// | huge-line | a 10 MiB header line | protocol-error (past 8 KiB) |
    /// | garbage | 200, then random bytes | no-data (30 s without a valid frame) |
    /// | slow-drip | the answer a byte every 2 s | protocol-error (no whole head in 10 s) |
    /// | chunk-overflow | a chunk size of 24 hex digits | protocol-error |
    /// | chunk-never-ends | a 1 MiB chunk that stops after one epoch | protocol-error (a chunk over 64 KiB) |
    /// | silent | accepts, never answers | unreachable (no answer in 10 s) |
    /// | close-at-once | closes every connection | unreachable (Rev 2 then Rev 1, both closed) |
    @Test(arguments: [
        ("endless-header", "protocol-error"), ("huge-line", "protocol-error"), ("garbage", "no-data"),
        ("slow-drip", "protocol-error"), ("chunk-overflow", "protocol-error"), ("chunk-never-ends", "protocol-error"),
        ("silent", "unreachable"), ("close-at-once", "unreachable"),
    ])
    func aHostileCasterIsAStateNotAStall(mode: String, state: String) throws {
        let caster = try CasterPeer(Self.login + ["--mode", mode])
        let pty = try ReceiverPty()
        let bridge = try startBridge(source: casterSource(caster), pty: pty)
        try bridge.connectReceiver()
        try bridge.register(testAppID)
        let client = try WebSocketTestClient(port: bridge.ports.locationV2, path: "/locationV2")
        let feeder = try PositionFeeder(bridge, positions: try capturePositions(), every: .milliseconds(50))
        defer { feeder.stop() }
        let status = try bridge.waitForCorrections(state, seconds: 45)
        #expect(status?.state == state, "\(String(describing: status))")
        // Nothing reaches the receiver.
        #expect(pty.statistics.frames == 0 && pty.statistics.skippedBytes == 0)
        // The clients were served all along: frames keep coming now.
        #expect(try client.frames(5, milliseconds: 3000).count == 5)
    }
}

/// `ntrips://`: the caster behind a TLS terminator (socat with OpenSSL) whose certificate a CA made
/// by the test signed: trusted through `ntrip-ca`, refused without it.
@Suite(.tags(.integration)) struct CorrectionsTLSTests {
    /// A CA and a certificate for 127.0.0.1 made with the openssl command line.
    static func makeCertificates(in directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=caster test CA",
                "-keyout", "\(directory)/ca.key", "-out", "\(directory)/ca.pem",
            ],
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "\(directory)/caster.key",
                "-out", "\(directory)/caster.csr",
            ],
            [
                "x509", "-req", "-in", "\(directory)/caster.csr", "-CA", "\(directory)/ca.pem", "-CAkey",
                "\(directory)/ca.key", "-CAcreateserial", "-days", "2", "-extfile", "\(directory)/san.cnf",
                "-out", "\(directory)/caster.pem",
            ],
        ]
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: "\(directory)/san.cnf", atomically: true, encoding: .utf8)
        for step in steps {
            let run = try runTool("/usr/bin/openssl", step)
            guard run.status == 0 else { throw TestBridge.StartFailure(description: "openssl \(step): \(run.output)") }
        }
    }

    /// socat terminating TLS on a free port in front of `caster`; killed at the end.
    final class Terminator {
        let process = Process()
        let port: UInt16

        init(directory: String, caster: UInt16) throws {
            guard let port = freeLoopbackPort() else { throw TestBridge.StartFailure(description: "no free port") }
            self.port = port
            process.executableURL = URL(fileURLWithPath: "/usr/bin/socat")
            process.arguments = [
                "OPENSSL-LISTEN:\(port),bind=127.0.0.1,reuseaddr,fork,verify=0,cert=\(directory)/caster.pem,"
                    + "key=\(directory)/caster.key",
                "TCP:127.0.0.1:\(caster)",
            ]
            try process.run()
            guard waitUntil(timeout: .seconds(5), { (try? StreamSocket.connect(loopbackPort: port)) != nil }) else {
                throw TestBridge.StartFailure(description: "socat did not listen on \(port)")
            }
        }

        deinit {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    @Test func aCasterOnTLSIsTrustedThroughNtripCAAndRefusedWithout() throws {
        let directory = NSTemporaryDirectory() + "caster-tls-\(getpid())-\(UUID().uuidString.prefix(8))"
        try Self.makeCertificates(in: directory)
        let caster = try CasterPeer(CorrectionsTests.login)
        let terminator = try Terminator(directory: directory, caster: caster.port)
        let source = NTRIPSource(
            host: "127.0.0.1", port: terminator.port, mountPoint: "RTCM3", user: "rover", password: "s3cret!",
            usesTLS: true)

        let pty = try ReceiverPty()
        let trusted = try TestBridge.start { configuration in
            configuration.corrections.source = source
            configuration.corrections.receiver = pty.path
            configuration.corrections.authorityFile = directory + "/ca.pem"
        }
        let streaming = try trusted.waitForCorrections("streaming") { $0.framesWritten >= 3 }
        #expect(streaming?.tls == true && streaming?.framesWritten ?? 0 >= 3, "\(String(describing: streaming))")
        #expect(waitUntil(timeout: .seconds(10)) { pty.frames.count >= 3 })
        #expect(pty.statistics.damagedFrames == 0 && pty.statistics.skippedBytes == 0)
        trusted.stop()

        // Without the CA the caster's certificate is not trusted: unreachable, with the reason.
        let other = try ReceiverPty()
        let untrusted = try TestBridge.start { configuration in
            configuration.corrections.source = source
            configuration.corrections.receiver = other.path
        }
        let refused = try untrusted.waitForCorrections("unreachable")
        #expect(refused?.message.contains("certificate") == true, "\(String(describing: refused))")
        #expect(other.byteCount == 0)
    }
}

/// The real daemon under `prlimit --nofile=128`, its descriptor table filled by 300 clients, reading
/// a caster another local user (`nobody`) runs: the caster's connection still gets its descriptor
/// (max-connections is clamped to leave room), corrections stream, and REST answers.
@Suite(.tags(.integration)) struct CorrectionsUnderPressureTests {
    @Test func aCasterOfAnotherUserStreamsWhileClientsFillTheDescriptorTable() throws {
        let caster = try CasterPeer(CorrectionsTests.login, asUser: "nobody")
        let daemon = try Daemon(
            nofile: 128, extraArguments: ["--ntrip", "ntrip://rover:s3cret%21@127.0.0.1:\(caster.port)/RTCM3"])
        defer { daemon.stop() }
        var clients: [RawClient] = []
        for _ in 0..<300 { if let client = try? RawClient(port: daemon.ports.location) { clients.append(client) } }
        var last: DaemonStatus.Corrections?
        let streamed = waitUntil(timeout: .seconds(20)) {
            last = try? ControlProtocol.status(socketPath: daemon.base + "/run/control.sock").status.corrections
            return last.map { $0.state == "streaming" && $0.frames >= 3 } ?? false
        }
        #expect(streamed, "\(String(describing: last)) \(daemon.log())")
        // The control socket and REST are served too (as in ServerRobustnessTests).
        let reply = try ControlProtocol.open(
            "tmmregister://?" + Base64.encode(Array("{\"application_id\":\"\(testAppID)\",\"returl\":\"a://b\"}".utf8)),
            socketPath: daemon.base + "/run/control.sock", timeoutMilliseconds: 5000)
        if case .ok(let result, _) = reply { #expect(result == "OK") } else { Issue.record("\(reply)") }
        let ping = try request(daemon.ports.api, "/api/v1/test/ping")
        #expect(ping.status == 200, "\(ping)\n\(daemon.log())")
        #expect(!daemon.log().contains("s3cret"))
        _ = clients.count
    }
}
