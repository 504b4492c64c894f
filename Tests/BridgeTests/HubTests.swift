// The hub and its WebSocket outputs alone, without sockets or the loop running: a recording
// subscriber, connections over an in-memory transport, and a recording delivery (as swift-nio's
// EmbeddedChannel stands in for a socket). The server's own tests drive the same parts through
// real sockets.
@testable import Bridge
import BridgeCore
import GNSS
import HTTP1
import Posix
import TMMProtocol
import TestSupport
import Testing
import WebSocket

/// A transport with nothing behind it: the outputs never read or write, they deliver.
private final class NoTransport: Transport {
    var descriptor: CInt { -1 }
    func read(appendingTo buffer: inout [UInt8], maxCount: Int) throws(Errno) -> IOResult { .wouldBlock }
    func read(into buffer: inout [UInt8]) throws(Errno) -> IOResult { .wouldBlock }
    func write(_ bytes: [UInt8], from offset: Int) throws(Errno) -> IOResult { .processed(bytes.count - offset) }
    var hasPendingOutput: Bool { false }
    func flushPending() throws(Errno) {}
    func shutdownWrite() {}
    func prepareToClose() {}
    var isOutputBacklogged: Bool { false }
    var hasBufferedInput: Bool { false }
    var isEstablished: Bool { true }
    var failureReason: String? { nil }
}

/// What the outputs delivered, to whom.
private final class RecordingDelivery: FrameDelivery {
    var frames: [(connection: ObjectIdentifier, text: String, kind: OutboundQueue.Kind)] = []

    func deliver(_ frame: [UInt8], _ kind: OutboundQueue.Kind, to connection: Connection) {
        let payload = frame.dropFirst(frame[1] & 0x7F == 126 ? 4 : 2)
        frames.append((ObjectIdentifier(connection), String(decoding: payload, as: UTF8.self), kind))
    }

    func texts(to connection: Connection) -> [String] {
        frames.filter { $0.connection == ObjectIdentifier(connection) }.map(\.text)
    }
}

private final class RecordingSubscriber: HubSubscriber {
    var epochs: [PublishedEpoch] = []
    var events: [BridgeEvent] = []
    func publish(_ epoch: PublishedEpoch) { epochs.append(epoch) }
    func publish(_ event: BridgeEvent, unixMilliseconds: Int64) { events.append(event) }
}

private func epoch(_ second: Int64, quality: FixQuality = .autonomous) -> Position {
    var position = Position()
    position.time = UTCTimestamp(
        date: CalendarDate(year: 2026, month: 12, day: 6), nanosecondsOfDay: second * 1_000_000_000)
    position.latitude = 45 + Double(second) / 1000
    position.longitude = 7
    position.quality = quality
    return position
}

private func connection(_ server: TMMServer) -> Connection {
    Connection(
        transport: NoTransport(), server: server,
        settings: .init(limits: ServerLimits(), allowedOrigins: .any), now: 0)
}

@Suite("Hub and its outputs", .tags(.unit))
struct HubTests {
    @Test func subscribersGetPublishedEpochsAndEventsInOrderButNoStaleOnes() {
        let hub = Hub(identity: ReceiverIdentity(appVersion: "1.2.3"))
        let first = RecordingSubscriber()
        let second = RecordingSubscriber()
        hub.subscribe(first)
        hub.subscribe(second)
        hub.publish(epoch(10), now: 1)
        hub.identity.receiverModel = "R12i"
        hub.publish(epoch(10), now: 2)  // the same time again: stale
        hub.publish(epoch(11), now: 3)
        hub.publish(.inputRestored)
        for subscriber in [first, second] {
            #expect(subscriber.epochs.map(\.position) == [epoch(10), epoch(11)])
            #expect(subscriber.epochs.map(\.identity.receiverModel) == [nil, "R12i"], "the identity at publication")
            #expect(subscriber.epochs.map(\.at) == [1, 3])
            #expect(subscriber.events == [.inputRestored])
        }
        #expect(hub.statistics == (offered: 3, stale: 1))
        #expect(hub.timeline.latest == epoch(11))
    }

    /// Each channel's clients get their own frames; the fix-quality event follows the V2 epoch
    /// that changed it; a client that leaves gets nothing more and the others keep theirs.
    @Test func eachOutputDeliversToItsOwnClients() throws {
        let loop = try EventLoop()
        let hub = Hub(identity: ReceiverIdentity(appVersion: "1.2.3"))
        let outputs = WebSocketOutputs(hub: hub, loop: loop, limits: ServerLimits())
        let delivery = RecordingDelivery()
        outputs.deliver(through: delivery)
        let v2a = connection(.locationV2), v2b = connection(.locationV2), v1 = connection(.location)
        let events = connection(.locationV2)
        outputs.subscribe(v2a, to: .locationV2)
        outputs.subscribe(v2b, to: .locationV2)
        outputs.subscribe(v1, to: .locationV1)
        outputs.subscribe(events, to: .events)

        hub.publish(epoch(20, quality: .rtkFixed), now: 1_000)
        #expect(delivery.frames.isEmpty, "V2 waits for the end of the input drain")
        hub.inputDrained(now: 1_000)
        let a = delivery.texts(to: v2a), b = delivery.texts(to: v2b)
        #expect(a.count == 1 && a == b, "one encoding, the same bytes for every V2 client")
        #expect(a.first?.contains("\"diffStatus\":4") == true)
        #expect(delivery.texts(to: events).count == 1)
        #expect(delivery.texts(to: events).first?.contains("fixQualityChanged") == true)
        #expect(delivery.texts(to: v1).isEmpty, "V1 goes at its own tick")

        outputs.locationV1.send(now: 2_000)
        #expect(delivery.texts(to: v1).count == 1)
        outputs.locationV1.send(now: 1_000 + ServerLimits().locationV1MaximumAge + 1)
        #expect(delivery.texts(to: v1).count == 1, "too old: nothing repeated")

        outputs.unsubscribe(v2a)
        #expect(v2a.hubChannel == nil && v2a.hubSlot == -1)
        hub.publish(epoch(21, quality: .rtkFixed), now: 200_000_000)
        hub.inputDrained(now: 200_000_000)
        #expect(delivery.texts(to: v2a).count == 1, "left: nothing more")
        #expect(delivery.texts(to: v2b).count == 2)
        #expect(delivery.texts(to: events).count == 1, "same quality: no event")
        #expect(outputs.locationV2.clients.count == 1 && outputs.locationV2.clients.members[0] === v2b)
        #expect(v2b.hubSlot == 0, "swap-removal moved it into the freed slot")
    }
    /// The LocationV2 cap in force: a rate a REST client asked for paces V2, never faster than
    /// max-location-rate, and is still asked after a reload changes that; null goes back to it.
    @Test func aRequestedRateIsPacedByAndSurvivesAReload() throws {
        let loop = try EventLoop()
        let hub = Hub(identity: ReceiverIdentity(appVersion: "1.2.3"))
        let v2 = WebSocketOutputs(hub: hub, loop: loop, limits: ServerLimits()).locationV2
        #expect(v2.pacer.minimumInterval == 10_000_000, "100 Hz by default")
        v2.request(interval: 200_000_000)
        #expect(v2.broadcast.requestedInterval == 200_000_000 && v2.pacer.minimumInterval == 200_000_000)
        var configuration = BridgeConfiguration()
        try configuration.apply("max-location-rate", "2")
        v2.reconfigure(configuration)
        #expect(v2.pacer.minimumInterval == 500_000_000, "the slower configured cap")
        #expect(v2.broadcast.requestedInterval == 200_000_000)
        try configuration.apply("max-location-rate", "50")
        v2.reconfigure(configuration)
        #expect(v2.pacer.minimumInterval == 200_000_000, "the client's rate again")
        v2.request(interval: nil)
        #expect(v2.pacer.minimumInterval == 20_000_000 && v2.broadcast.requestedInterval == nil)
    }
}
