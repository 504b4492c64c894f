// The receiver input side against a real gpsd: a private gpsd (started and supervised by the
// code under test), pty receivers replaying a real capture, the libgps session feeding the
// bridge's consumer (epochs decoded on the gpsd thread, posted to an inbox), and the bridge's
// InputTracker making of it what the io thread makes of it. No hardware needed.
import Foundation
import GNSS
import GPSD
import Input
import InputLoop
import Logging
import Glibc
import Posix
import Synchronization
import TestSupport
import Testing

/// A temporary runtime directory, removed at the end.
final class RuntimeDirectory {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "tmm-bridge-gpsd-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Lines of the Trimble RTK capture grouped into epochs (each GGA starts one), CRLF kept.
func trimbleEpochs() throws -> [[UInt8]] {
    var epochs: [[UInt8]] = []
    for line in try Fixtures.lines("nmea-rtk.log") where line.first == UInt8(ascii: "$") {
        if line.count > 6 && line[3...5].elementsEqual("GGA".utf8) || epochs.isEmpty { epochs.append([]) }
        epochs[epochs.count - 1] += line + [13, 10]
    }
    return epochs
}

/// Collects what the session's consumer posts, and what the input side makes of it.
final class EventLog {
    let inbox: Inbox<ReceiverInputEvent>
    var events: [ReceiverInputEvent] = []
    /// The changes the bridge's io thread would publish: the same tracker, fed the same events.
    var tracker = InputTracker()
    var changes: [InputChange] = []

    init() throws { inbox = try Inbox(capacity: 10_000) }

    /// The consumer the bridge hands the session, posting here.
    var consumer: GPSDEpochConsumer { GPSDEpochConsumer(inbox: inbox) }

    /// Drains for up to `milliseconds`, until `condition` holds on the events so far.
    @discardableResult
    func wait(milliseconds: Int, until condition: ([ReceiverInputEvent]) -> Bool) -> Bool {
        let deadline = monotonicNanoseconds() + Int64(milliseconds) * 1_000_000
        while monotonicNanoseconds() < deadline {
            if condition(events) { return true }
            take(inbox.wait(milliseconds: 20))
        }
        return condition(events)
    }

    /// Drains for up to `milliseconds`, until the input side has published a change that `match`es.
    @discardableResult
    func waitForChange(milliseconds: Int, _ match: (InputChange) -> Bool) -> Bool {
        wait(milliseconds: milliseconds) { _ in self.changes.contains(where: match) }
    }

    func drain() { take(inbox.drain()) }

    private func take(_ new: [ReceiverInputEvent]) {
        events += new
        for event in new { tracker.apply(event, into: &changes) }
    }

    var positions: [Position] {
        events.compactMap { if case .position(let p) = $0 { p } else { nil } }
    }
}

func count(_ events: [ReceiverInputEvent], _ match: (ReceiverInputEvent) -> Bool) -> Int {
    events.filter(match).count
}

let gpsdInstalled = findExecutable("gpsd") != nil

/// Log lines from the code under test, kept for failure messages.
final class Messages: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
    /// A logger that keeps every line here (all levels, no prefix, no trailing newline).
    var logger: Logger {
        Logger(format: .plain(program: ""), level: .debug) { [self] line in append(String(line.dropLast())) }
    }
}

/// A private gpsd plus a session reading it: the input side as the bridge runs it.
final class InputHarness {
    let runtime = RuntimeDirectory()
    let gpsd: PrivateGPSD
    let session: GPSDSession
    let log = try! EventLog()
    let messages = Messages()

    init() throws {
        let configuration = try PrivateGPSD.Configuration.inRuntimeDirectory(runtime.path)
        let messages = self.messages
        gpsd = PrivateGPSD(configuration, log: messages.logger)
        try gpsd.start()
        var sessionConfiguration = GPSDSession.Configuration(port: configuration.port)
        sessionConfiguration.controlSocket = configuration.controlSocket
        session = GPSDSession(sessionConfiguration, log: messages.logger)
        try session.start(feeding: log.consumer)
    }

    func shutdown() {
        session.stop()
        gpsd.stop()
    }

    /// Writes `epochs` to the pty at `interval` (a 20 Hz receiver by default), draining events as
    /// it goes.
    func play(
        _ epochs: ArraySlice<[UInt8]>, to pty: borrowing Pseudoterminal, interval: Duration = .milliseconds(50)
    ) throws {
        for epoch in epochs {
            try pty.controller.writeAll(epoch)
            sleep(for: interval)  // the receiver's pace, not a wait for a result
            log.drain()
        }
    }

    /// Hands `path` to gpsd and waits until the session reports it active. gpsd opens the tty,
    /// flushes it twice 0.2 s apart and only then tells its watchers (gpsd.c add_device, serial.c
    /// gpsd_set_speed): bytes written after this are read, bytes written before may be flushed.
    func addAndWaitForActivation(_ path: String) throws {
        try session.addDevice(path)
        let active = log.wait(milliseconds: 5000) { events in
            events.contains { event in
                switch event {
                case .gpsd(.device(let device)): device.path == path && device.isActive
                case .gpsd(.devices(let devices)): devices.contains { $0.path == path && $0.isActive }
                default: false
                }
            }
        }
        guard active else {
            throw GPSDTestFailure(
                "gpsd never reported \(path) active: \(log.events.suffix(5)) \(messages.all.suffix(5))")
        }
    }
}

struct GPSDTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

@Suite(
    "gpsd session with a private gpsd and pty receivers", .tags(.integration), .serialized,
    .enabled(if: gpsdInstalled, "needs gpsd (apt-get install gpsd)"))
struct GPSDSessionTests {
    @Test func plugStreamUnplugReplug() throws {
        let epochs = try trimbleEpochs()
        let h = try InputHarness()
        defer { h.shutdown() }
        #expect(
            h.log.wait(milliseconds: 3000) {
                $0.contains { if case .gpsd(.connected(let r)) = $0 { !r.isEmpty } else { false } }
            },
            "connected with gpsd's release")

        // Plug: announce the pty receiver to gpsd and stream.
        var path = ""
        do {
            let pty = try Pseudoterminal()
            path = pty.devicePath
            try h.addAndWaitForActivation(path)
            try h.play(epochs[0..<30], to: pty)
            #expect(h.log.wait(milliseconds: 2000) { _ in h.log.positions.count >= 25 })
            let streamed = h.log.positions
            #expect(streamed.count >= 25, "\(streamed.count) epochs of 30 arrived")
            #expect(streamed.last?.quality.diffStatus == 2)
            #expect(streamed.last?.time?.date == CalendarDate(year: 2020, month: 3, day: 18))
            // The receiver vanishes mid-sentence: half a GGA is the last thing written.
            try pty.controller.writeAll(Array(epochs[30].prefix(40)))
        }

        // Unplug: the pty is gone (end of the scope above) and discovery's remove action tells
        // gpsd (`-path`); gpsd closes the device and input is lost at once.
        let unplugged = monotonicNanoseconds()
        try h.session.removeDevice(path)
        #expect(
            h.log.waitForChange(milliseconds: 2000) { $0 == .inputLost(.receiverRemoved(path: path)) },
            "input lost after unplug: \(h.log.events.suffix(3))")
        #expect(monotonicNanoseconds() - unplugged < 1_000_000_000)

        // Replug: a new pty (a new name, as ttyACM0 -> ttyACM1); positions resume within
        // 1 s plus one epoch of the first write.
        let again = try Pseudoterminal()
        try h.addAndWaitForActivation(again.devicePath)
        let before = h.log.positions.count
        let firstWrite = monotonicNanoseconds()
        try again.controller.writeAll(epochs[30] + epochs[31])
        #expect(h.log.wait(milliseconds: 1100) { _ in h.log.positions.count > before }, "positions resume after replug")
        let resumed = monotonicNanoseconds() - firstWrite
        #expect(resumed < 1_100_000_000)
        #expect(h.log.changes.contains(.inputRestored))
    }

    @Test func gpsdKilledIsRestartedAndPositionsResume() throws {
        let epochs = try trimbleEpochs()
        let h = try InputHarness()
        defer { h.shutdown() }
        let pty = try Pseudoterminal()
        try h.addAndWaitForActivation(pty.devicePath)
        try h.play(epochs[0..<10], to: pty)
        #expect(h.log.wait(milliseconds: 2000) { _ in h.log.positions.count >= 5 })

        let pid = try #require(h.gpsd.pid)
        kill(pid, SIGKILL)
        #expect(h.log.waitForChange(milliseconds: 3000) { $0 == .inputLost(.gpsdConnectionLost) })
        // The supervisor restarts gpsd, the session reconnects and re-adds the receiver.
        #expect(h.log.wait(milliseconds: 8000) { _ in h.gpsd.restarts >= 1 })
        // The receiver goes on at 10 Hz until positions come through again.
        let before = h.log.positions.count
        var next = 10
        _ = try waitUntil(timeout: .seconds(8), pollInterval: .milliseconds(100)) {
            h.log.drain()
            if h.log.positions.count > before || next == epochs.count { return true }
            try pty.controller.writeAll(epochs[next])
            next += 1
            return false
        }
        #expect(h.log.positions.count > before, "positions resume after gpsd was killed: \(h.messages.all)")
        #expect(h.log.changes.contains(.inputRestored))
    }

    /// A signal handler running while the session waits on gpsd is not a lost connection. glibc
    /// interrupts every thread with its internal SIGSETXID on any set*id call of a threaded
    /// process (the privilege drop of a root bridge makes one): before, the interrupted wait was
    /// taken for an error and the session dropped and re-made a healthy connection (the root
    /// cause of an end-to-end flake right after "dropped privileges").
    @Test func aSignalDuringTheWaitKeepsTheConnection() throws {
        let epochs = try trimbleEpochs()
        let h = try InputHarness()
        defer { h.shutdown() }
        #expect(
            h.log.wait(milliseconds: 3000) { $0.contains { if case .gpsd(.connected) = $0 { true } else { false } } })
        // Unchanged ids, so nothing changes but the broadcast to every thread, the session's
        // among them, which spends nearly all its time in that wait.
        // Spread over 0.1 s on purpose, so that many land while the session waits.
        for _ in 0..<50 {
            #expect(setgid(getgid()) == 0)
            sleep(for: .milliseconds(2))
        }
        // A device streaming afterwards shows the session is past any reaction to the signals.
        let pty = try Pseudoterminal()
        try h.addAndWaitForActivation(pty.devicePath)
        try h.play(epochs[0..<5], to: pty)
        #expect(h.log.wait(milliseconds: 2000) { _ in h.log.positions.count >= 3 })
        #expect(h.session.statistics.connections == 1, "\(h.messages.all)")
        #expect(!h.log.events.contains { $0 == .gpsd(.connectionLost) }, "\(h.log.events)")
        #expect(!h.log.changes.contains { if case .inputLost = $0 { true } else { false } }, "\(h.log.changes)")
    }

    @Test func aReceiverThatGoesSilentIsReportedLost() throws {
        let epochs = try trimbleEpochs()
        let h = try InputHarness()
        defer { h.shutdown() }
        do {
            let pty = try Pseudoterminal()
            try h.addAndWaitForActivation(pty.devicePath)
            try h.play(epochs[0..<5], to: pty)
        }  // pty closed without telling gpsd: gpsd keeps the device open, no data arrives
        let timeout = Int(h.session.configuration.silenceTimeout / 1_000_000)
        #expect(
            h.log.waitForChange(milliseconds: timeout + 1500) {
                if case .inputLost(.receiverSilent) = $0 { true } else { false }
            })
    }

    @Test func noDescriptorLeaksAcrossStartAndStop() throws {
        let left = try descriptorsLeft {
            let h = try InputHarness()
            let pty = try Pseudoterminal()
            try h.addAndWaitForActivation(pty.devicePath)
            h.shutdown()
        }
        #expect(left.isEmpty, "descriptors left open: \(left)")
    }
}

@Suite("gpsd control socket and bad input", .tags(.integration))
struct GPSDBadInputTests {
    @Test func controlSocketThatDoesNotExistGivesAClearError() {
        let socket = GPSDControlSocket(path: "/nonexistent/gpsd.sock")
        #expect {
            try socket.add("/dev/ttyACM0")
        } throws: { error in
            guard let failure = error as? GPSDControlSocket.Failure, case .unreachable = failure else { return false }
            return failure.description.contains("cannot reach gpsd's control socket /nonexistent/gpsd.sock")
        }
    }

    @Test(.enabled(if: gpsdInstalled)) func gpsdRefusesADeviceItCannotOpen() throws {
        let h = try InputHarness()
        defer { h.shutdown() }
        #expect {
            try h.session.addDevice("/dev/nonexistent-receiver")
        } throws: { error in
            guard let failure = error as? GPSDControlSocket.Failure, case .refused = failure else { return false }
            return failure.description.contains("gpsd answered ERROR")
        }
    }

    @Test func controlPathWithControlCharactersIsRejectedBeforeSending() {
        #expect(throws: GPSDControlSocket.Failure.invalidPath("/dev/tty\nx")) {
            try GPSDControlSocket(path: "/tmp/none.sock").add("/dev/tty\nx")
        }
    }

    @Test func unreachableGPSDIsReportedAsInputLostAndRetried() throws {
        guard let port = freeLoopbackPort() else { return }
        let log = try EventLog()
        // Retries every 10-20 ms, so the window below holds dozens of them.
        var configuration = GPSDSession.Configuration(port: port)
        configuration.initialBackoff = 10_000_000
        configuration.maximumBackoff = 20_000_000
        let session = GPSDSession(configuration, log: Messages().logger)
        try session.start(feeding: log.consumer)
        defer { session.stop() }
        #expect(
            log.waitForChange(milliseconds: 2000) { if case .inputLost(.gpsdUnreachable) = $0 { true } else { false } })
        // Reported once, not once per retry: a fixed window on purpose, what is tested is that
        // nothing more comes in it.
        sleep(for: .milliseconds(500))
        log.drain()
        #expect(count(log.events) { if case .gpsd(.unreachable) = $0 { true } else { false } } == 1)
        #expect(log.changes.filter { if case .inputLost = $0 { true } else { false } }.count == 1)
    }

    @Test func garbageAndHugeLinesFromAFakeGPSDDoNotCrashTheSession() throws {
        // A fake "gpsd" that greets, then sends garbage, a 100 KB line and NMEA, then hangs up.
        let server = try FakeGPSD { client in
            var script =
                Array(#"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#.utf8) + [
                    10
                ]
            script += Array("\u{1}\u{2}garbage\u{7f}\n{not json\n".utf8)
            script += [UInt8](repeating: UInt8(ascii: "A"), count: 100_000) + [10]
            script += Array("$GPGGA,120000.00,4807.038,N,01131.002,E,1,08,0.9,545.4,M,47.3,M,,*52\r\n".utf8)
            _ = script.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        let log = try EventLog()
        let left = try descriptorsLeft {
            let session = GPSDSession(GPSDSession.Configuration(port: server.port), log: Messages().logger)
            try session.start(feeding: log.consumer)
            #expect(
                log.waitForChange(milliseconds: 3000) { $0 == .inputLost(.gpsdConnectionLost) },
                "the hang-up is reported: \(log.events)")
            session.stop()
        }
        server.stop()
        #expect(left.isEmpty, "descriptors left open: \(left)")
    }

    /// gpsd's JSON slave driver prints what a receiver speaking gpsd's JSON sends to every client
    /// as if it were gpsd's own (navisys-gr701w.log begins with another gpsd's VERSION, DEVICES
    /// and WATCH): a VERSION after the first, or a DEVICES no WATCH or `?DEVICES` asked for, is
    /// not gpsd's and must not become the bridge's view of gpsd.
    @Test func aRelayedVersionOrDeviceListIsIgnored() throws {
        let server = try FakeGPSD { client in
            let lines = [
                #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#,
                #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/pts/7","driver":"u-blox","#
                    + #""activated":"2026-12-06T10:00:00.000Z"}]}"#,
                #"{"class":"WATCH","enable":true,"json":true}"#,
                #"{"class":"VERSION","release":"3.21.1~dev","rev":"3.21.1~dev","proto_major":3,"proto_minor":14}"#,
                #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyUSB0","#
                    + #""activated":"2019-01-01T00:00:00.000Z"}]}"#,
                #"{"class":"WATCH","enable":true,"json":true,"nmea":false}"#,
            ]
            let script = Array((lines.joined(separator: "\n") + "\n").utf8)
            _ = script.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        defer { server.stop() }
        let log = try EventLog()
        let session = GPSDSession(GPSDSession.Configuration(port: server.port), log: Messages().logger)
        try session.start(feeding: log.consumer)
        #expect(log.waitForChange(milliseconds: 3000) { $0 == .inputLost(.gpsdConnectionLost) }, "\(log.events)")
        session.stop()
        let versions = log.events.compactMap { if case .gpsd(.connected(let release)) = $0 { release } else { nil } }
        let lists = log.events.compactMap {
            if case .gpsd(.devices(let devices)) = $0 { devices.map(\.path) } else { nil }
        }
        #expect(versions == ["3.22"])
        #expect(lists == [["/dev/pts/7"]])
        #expect(session.statistics.otherLines >= 2)
    }
}

/// A one-shot TCP server on loopback that runs `script` for each client, then closes it.
final class FakeGPSD: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let thread: OSThread?

    init(script: @escaping @Sendable (Int32) -> Void) throws {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = listener
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        listen(fd, 4)
        port = UInt16(bigEndian: address.sin_port)
        thread = try OSThread(name: "fake-gpsd") {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                script(client)
                // Hang up after what was sent (a FIN behind it), then read what the client sent
                // until it closes too: closing with its ?WATCH unread would reset the connection
                // and could discard the script's bytes before the client read them.
                shutdown(client, Int32(SHUT_WR))
                var pending = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
                var chunk = [UInt8](repeating: 0, count: 4096)
                while poll(&pending, 1, 5000) > 0, read(client, &chunk, chunk.count) > 0 {}
                Glibc.close(client)
            }
        }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        thread?.join()
    }
}
