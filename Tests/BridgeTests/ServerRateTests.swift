// The LocationV2 rate cap against an in-process bridge fed faster than any receiver: a burst
// reaches a V2 client at no more than the cap (and its last epoch always does), and a backlog
// or an old epoch arriving after newer ones is not flushed to clients.
import Foundation
import GNSS
import GPSD
import Glibc
import Input
import Posix
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeCore

@Suite("LocationV2 rate cap", .tags(.integration), .serialized)
struct ServerRateTests {
    static let first = try? capturePositions().first

    /// Epoch `index` of a synthetic stream: the capture's first position, one millisecond (and a
    /// little latitude) apart, so every epoch's bytes differ.
    static func epoch(_ index: Int) throws -> Position {
        var position = try #require(first)
        position.time = UTCTimestamp(
            date: CalendarDate(year: 2026, month: 12, day: 2),
            nanosecondsOfDay: 3_600_000_000_000 + Int64(index) * 1_000_000)
        position.latitude = (position.latitude ?? 0) + Double(index) * 1e-7
        return position
    }

    static func bytes(_ position: Position) -> [UInt8] {
        var encoder = LocationV2Encoder()
        encoder.encode(position, identity: ReceiverIdentity(appVersion: "9.8.7"))
        return encoder.bytes
    }

    static func unlockedBridge(rate: Int) throws -> TestBridge {
        let bridge = try TestBridge.start { try! $0.apply("max-location-rate", "\(rate)") }
        try bridge.register(testAppID)
        try bridge.connectReceiver()
        return bridge
    }

    /// 2,000 epochs at once (a gpsd pushing ~11,000 epochs/s does this to every client): the
    /// client gets at most one frame per interval since the burst began, plus the pacer's burst
    /// (100 ms of the cap), and the last frame is the last epoch, which waited for the timer.
    @Test func aBurstIsCappedAndItsLastEpochArrives() throws {
        let rate = 50
        let bridge = try Self.unlockedBridge(rate: rate)
        let client = try WebSocketTestClient(port: bridge.ports.locationV2, path: "/locationV2")
        let epochs = try (0..<2000).map(Self.epoch)
        let last = Self.bytes(epochs[epochs.count - 1])
        let started = monotonicNanoseconds()
        for position in epochs { bridge.input.post(.position(position)) }
        var frames = 0
        var sawLast = false
        while !sawLast, let frame = try client.frame(milliseconds: 5000) {
            #expect(frame.opcode == 1)
            frames += 1
            sawLast = frame.payload == last
        }
        let elapsed = monotonicNanoseconds() - started
        #expect(sawLast, "the burst's last epoch was never sent (\(frames) frames)")
        let burst = LocationV2Pacer(minimumInterval: 1_000_000_000 / Int64(rate)).burst
        let allowed = Int(elapsed * Int64(rate) / 1_000_000_000) + burst
        #expect(frames <= allowed, "\(frames) frames in \(elapsed / 1_000_000) ms at \(rate) Hz (burst \(burst))")
        // Nothing after the last epoch: what was dropped stays dropped.
        #expect(try client.frame(milliseconds: 300) == nil)
    }

    /// TMM's "Set configuration for LocationV2 broadcast" over the REST port: the rate asked for
    /// caps the stream (a 2,000-epoch burst reaches a client at no more than it, its last epoch
    /// included), GET answers it, it needs an access code, a bad one changes nothing, and null
    /// goes back to max-location-rate.
    @Test func aRateSetOverRESTCapsTheStream() throws {
        let bridge = try Self.unlockedBridge(rate: 100)
        let path = "/api/v1/positionStream/locationV2"
        let five = #"{"rate":5.0,"interval":200.0,"maximumRate":100.0,"requestedRate":5.0}"#
        var response = try request(bridge.ports.api, path, method: "PUT", body: #"{"rate":5}"#, authorized: false)
        #expect(response.status == 401)
        response = try request(bridge.ports.api, path, method: "PUT", body: #"{"rate":5000}"#)
        #expect(response.status == 400)
        #expect((response.json?["error"] as? String)?.contains("from 1 to 1000") == true)
        response = try request(bridge.ports.api, path)
        #expect(response.status == 200 && response.json?["rate"] as? Double == 100, "\(response.text)")
        response = try request(bridge.ports.api, path + "/", method: "PUT", body: #"{"Rate":5}"#)
        #expect(response.status == 200 && response.text == five, "\(response.text)")
        #expect(try request(bridge.ports.api, path).text == five)

        let rate = 5
        let client = try WebSocketTestClient(port: bridge.ports.locationV2, path: "/locationV2")
        let epochs = try (0..<2000).map(Self.epoch)
        let last = Self.bytes(epochs[epochs.count - 1])
        let started = monotonicNanoseconds()
        for position in epochs { bridge.input.post(.position(position)) }
        var frames = 0
        var sawLast = false
        while !sawLast, let frame = try client.frame(milliseconds: 5000) {
            frames += 1
            sawLast = frame.payload == last
        }
        let elapsed = monotonicNanoseconds() - started
        #expect(sawLast, "the burst's last epoch was never sent (\(frames) frames)")
        let burst = LocationV2Pacer(minimumInterval: 1_000_000_000 / Int64(rate)).burst
        let allowed = Int(elapsed * Int64(rate) / 1_000_000_000) + burst
        #expect(frames <= allowed, "\(frames) frames in \(elapsed / 1_000_000) ms at \(rate) Hz (burst \(burst))")

        response = try request(bridge.ports.api, path, method: "PUT", body: #"{"rate":null}"#)
        #expect(response.status == 200 && response.json?["rate"] as? Double == 100, "\(response.text)")
        #expect(response.json?["requestedRate"] is NSNull)
    }

    /// After a stall the backlog arrives at once: it is not replayed (only its newest fresh epochs
    /// go out, at most a burst beyond the cap while it arrives), and an epoch older than one
    /// already sent (a late duplicate of the backlog) is not sent at all.
    @Test func aBacklogAfterAStallIsNotFlushed() throws {
        let bridge = try Self.unlockedBridge(rate: 100)
        let client = try WebSocketTestClient(port: bridge.ports.locationV2, path: "/locationV2")
        bridge.input.post(.position(try Self.epoch(0)))
        #expect(try client.frame()?.payload == Self.bytes(try Self.epoch(0)))

        // The stall: 5 s of a 100 Hz receiver, delivered in one go.
        let backlog = try (1...500).map { try Self.epoch($0 * 10) }
        let started = monotonicNanoseconds()
        for position in backlog { bridge.input.post(.position(position)) }
        let newest = Self.bytes(backlog[backlog.count - 1])
        var received: [[UInt8]] = []
        while received.last != newest, let frame = try client.frame(milliseconds: 5000) {
            received.append(frame.payload)
        }
        let elapsed = monotonicNanoseconds() - started
        #expect(received.last == newest)
        // The io thread may drain the posts in several turns while they come, so what the cap
        // allows in that time may go out too; a replay would be hundreds of frames.
        let allowed = LocationV2Pacer(minimumInterval: 10_000_000).burst + Int(elapsed / 10_000_000) + 1
        #expect(
            received.count <= allowed,
            "\(received.count) frames of a 500-epoch backlog were sent in \(elapsed / 1_000_000) ms")

        // A straggler from late in the backlog, 0.5 s older than what was sent: dropped. (It would
        // go out within an interval, 10 ms; the client waits ten times that for it.)
        bridge.input.post(.position(try Self.epoch(4500)))
        #expect(try client.frame(milliseconds: 100) == nil, "the old epoch was sent")
        let next = try Self.epoch(5010)
        bridge.input.post(.position(next))
        #expect(try client.frame()?.payload == Self.bytes(next), "the old epoch was sent")
    }

    /// A capture that loops goes back in time by more than the stale window: followed at once.
    @Test func aTimelineThatJumpsBackIsFollowed() throws {
        let bridge = try Self.unlockedBridge(rate: 100)
        let client = try WebSocketTestClient(port: bridge.ports.locationV2, path: "/locationV2")
        bridge.input.post(.position(try Self.epoch(5000)))
        #expect(try client.frame()?.payload == Self.bytes(try Self.epoch(5000)))
        bridge.input.post(.position(try Self.epoch(0)))  // 5 s earlier: the loop started again
        #expect(try client.frame()?.payload == Self.bytes(try Self.epoch(0)))
    }

    @Test func theRateIsValidated() throws {
        var configuration = BridgeConfiguration()
        #expect(configuration.limits.locationV2MinimumInterval == 10_000_000, "100 Hz by default")
        try configuration.apply("max-location-rate", "20")
        #expect(configuration.limits.locationV2MinimumInterval == 50_000_000)
        for bad in ["0", "1001", "-5", "50.5", "fast", ""] {
            #expect(throws: ConfigurationError.self, "'\(bad)'") { try configuration.apply("max-location-rate", bad) }
        }
        do {
            try configuration.apply("max-location-rate", "0")
        } catch {
            #expect(error.message == "max-location-rate must be a whole number 1-1000, not '0'")
        }
    }
}
