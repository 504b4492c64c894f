// Nothing on the io thread waits for gpsd (issue 10): a gpsd that takes its time to answer a
// control command (as it does opening a tty, ~0.2 s, or a hung one up to the 3 s timeout) delays
// only the request that waits for it, never the streams.
import Foundation
import GNSS
import GPSD
import Glibc
import Posix
import Synchronization
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge

/// A gpsd control socket that answers every `+path` / `-path` with `OK`, after `delay`.
final class SlowGPSDControl: Sendable {
    /// What the gpsd thread and the test share.
    final class Shared: Sendable {
        let commands = Mutex<[String]>([])
        let stopping = Atomic<Bool>(false)
    }

    let path: String
    let shared = Shared()
    private let thread: OSThread

    var commands: [String] { shared.commands.withLock { $0 } }

    init(delay: Duration) throws {
        let directory = NSTemporaryDirectory() + "slow-gpsd-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/gpsd.sock"
        self.path = path
        let listener = try UnixListener.bind(path: path, mode: 0o600)
        let fd = listener.descriptor.rawValue
        let shared = self.shared
        nonisolated(unsafe) let owned = listener
        thread = try OSThread(name: "slow-gpsd") {
            _ = owned
            while !shared.stopping.load(ordering: .relaxed) {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                let client = accept(fd, nil, nil)
                guard client >= 0 else { continue }
                var line: [UInt8] = []
                var byte: UInt8 = 0
                while read(client, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
                shared.commands.withLock { $0.append(String(decoding: line, as: UTF8.self)) }
                sleep(for: delay)  // the slowness under test, not a wait for a result
                _ = "OK\n".withCString { write(client, $0, 3) }
                close(client)
            }
        }
    }

    func stop() {
        shared.stopping.store(true, ordering: .relaxed)
        thread.join()
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }
}

@Suite("The io thread never waits for gpsd", .tags(.integration), .serialized)
struct ServerBlockingTests {
    /// `PUT isConnected:false` while gpsd takes 800 ms per command: the reply waits for gpsd
    /// (and says the receiver is disconnected), while a V2 client at 50 Hz keeps getting frames
    /// with no gap near the command's time, and the API answers other requests at once.
    @Test func aSlowGPSDDelaysOnlyTheRequestThatWaitsForIt() throws {
        let gpsd = try SlowGPSDControl(delay: .milliseconds(800))
        defer { gpsd.stop() }
        let bridge = try TestBridge.start(gpsdControlSocket: gpsd.path)
        defer { bridge.stop() }
        try bridge.register(testAppID)
        try bridge.connectReceiver("/dev/ttyTEST0")
        let client = try WebSocketTestClient(port: bridge.ports.locationV2)
        let feeder = try PositionFeeder(bridge, positions: try capturePositions(), every: .milliseconds(20))  // 50 Hz
        defer { feeder.stop() }
        #expect(try client.frame(milliseconds: 5000) != nil, "streaming before the request")

        let reply = Mutex<(HTTPResponse?, Int64)>((nil, 0))
        let putter = try OSThread(name: "put") {
            let started = monotonicNanoseconds()
            let response = try? request(
                bridge.ports.api, "/api/v1/receiver", method: "PUT", body: "{\"isConnected\":false}")
            reply.withLock { $0 = (response, monotonicNanoseconds() - started) }
        }
        #expect(waitUntil { gpsd.commands == ["-/dev/ttyTEST0"] }, "gpsd was asked")
        let pingStarted = monotonicNanoseconds()
        #expect(try request(bridge.ports.api, "/api/v1/test/ping").status == 200)
        #expect(monotonicNanoseconds() - pingStarted < 300_000_000, "the API answered while gpsd was busy")

        var largestGap: Int64 = 0
        var last = monotonicNanoseconds()
        var frames = 0
        while reply.withLock({ $0.0 == nil }) {
            guard let frame = try client.frame(milliseconds: 2000) else { break }
            guard frame.opcode == 1 else { continue }
            let now = monotonicNanoseconds()
            largestGap = max(largestGap, now - last)
            last = now
            frames += 1
        }
        putter.join()
        let (response, took) = reply.withLock { $0 }
        #expect(response?.status == 200)
        #expect(response?.json?["isConnected"] as? Bool == false)
        #expect(took >= 700_000_000, "the reply waited for gpsd (\(Double(took) / 1e6) ms)")
        print(
            "V2 while gpsd took 800 ms: \(frames) frames, largest gap \(Double(largestGap) / 1e6) ms; "
                + "PUT answered in \(Double(took) / 1e6) ms"
        )
        #expect(frames >= 20)
        #expect(largestGap < 200_000_000, "largest gap \(Double(largestGap) / 1e6) ms")
    }
}
