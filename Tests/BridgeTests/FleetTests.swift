// Fleet publishing (docs/fleet.md) end to end: in-process bridges and the real daemon publishing
// to a real mosquitto (TestSupport's MosquittoBroker), read back by an independent subscriber
// (mosquitto_sub): the location rate, events and the topic prefix; the retained status and the
// last will; store-and-forward through a broker outage, a SIGKILL of the daemon and a full spool;
// logins, TLS and client certificates; hostile brokers; a hostile local user.
import Foundation
import GNSS
import Glibc
import Input
import Posix
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeCore

private typealias Fixture = FleetFixture

/// The epochs' indices of the location messages (by their `utcTimeStamp`), in arrival order;
/// -1 for a message that is not LocationV2 JSON with a known `utcTimeStamp`.
private func indices(_ messages: [(retained: Bool, payload: String)], of stamps: [String: Int]) -> [Int] {
    messages.map { message in
        (Fixture.json(message.payload)?["utcTimeStamp"] as? String).flatMap { stamps[$0] } ?? -1
    }
}

/// `utcTimeStamp` → epoch index for epochs 0..<count (`step` apart).
private func stampIndex(count: Int, step: Duration = .seconds(1)) throws -> [String: Int] {
    var table: [String: Int] = [:]
    for index in 0..<count {
        let stamp = try #require(Fixture.timeStamp(try Fixture.epoch(index, step: step)))
        table[stamp] = index
    }
    return table
}

// MARK: - Flow

@Suite(
    "Fleet publishing: rate, events, topics", .tags(.integration),
    .enabled(if: MosquittoBroker.isAvailable, "needs Debian's mosquitto, mosquitto-clients and openssl"))
struct FleetFlowTests {
    /// A 10 Hz receiver with mqtt-rate 2: about 2 location messages a second reach the broker
    /// (counted over a measured window), each LocationV2 JSON with utcTimeStamp, in order, under
    /// the prefix of `mqtt-topic`; they are QoS 1 (the broker queues them for a persistent session
    /// that is away: it keeps no QoS 0 message for one); the receiver's connection is an event on
    /// PREFIX/events.
    @Test func locationsAtTheConfiguredRateWithEventsUnderThePrefix() throws {
        let broker = try Fixture.startedBroker()
        let prefix = Fixture.prefix("rate")
        let subscriber = try Fixture.subscriber(broker, prefix + "/#")
        defer { subscriber.stop() }
        let awayID = Fixture.clientID("away")
        try Fixture.subscriber(broker, prefix + "/location", clientID: awayID).stop()
        let bridge = try TestBridge.start { configuration in
            configuration.fleet.broker = Fixture.broker(broker)
            configuration.fleet.rateHz = 2
            configuration.fleet.topicPrefix = prefix
            configuration.fleet.clientID = Fixture.clientID("rate")
        }
        defer { bridge.stop() }
        let connected = bridge.waitForFleet { $0.state == "connected" }
        try #require(connected.held, "\(String(describing: connected.last))")
        #expect(connected.last?.topicPrefix == prefix)
        try bridge.connectReceiver()
        let feeder = try CountingFeeder(bridge, every: .milliseconds(100), step: .milliseconds(100))
        defer { feeder.stop() }

        let location = prefix + "/location"
        try #require(subscriber.waitFor(count: 2, topic: location), "\(subscriber.output)")
        let start = subscriber.messages(topic: location).count
        let began = ContinuousClock.now
        try #require(subscriber.waitFor(count: start + 10, topic: location, timeout: .seconds(15)))
        let elapsed = began.duration(to: .now)
        let fed = feeder.fed
        feeder.stop()
        // 10 messages at 2 Hz: 5 s (the window's start and end each fall somewhere in an interval).
        #expect(elapsed > .milliseconds(4200) && elapsed < .milliseconds(6500), "10 messages in \(elapsed)")

        let stamps = try stampIndex(count: fed + 1, step: .milliseconds(100))
        let received = subscriber.messages(topic: location)
        for message in received {
            let json = try #require(Fixture.json(message.payload), "not JSON: \(message.payload)")
            #expect(json["utcTimeStamp"] is String && json["latitude"] != nil, "\(message.payload)")
            #expect(!message.retained)
        }
        let order = indices(received, of: stamps)
        #expect(!order.contains(-1), "unknown utcTimeStamp in \(received.map(\.payload))")
        #expect(order == order.sorted() && Set(order).count == order.count, "\(order)")
        // Two a second of ten: consecutive messages are about 5 epochs apart.
        let gaps = zip(order.dropFirst(), order).map { $0 - $1 }
        #expect(gaps.allSatisfy { (4...6).contains($0) }, "epoch gaps \(gaps)")

        let events = subscriber.messages(topic: prefix + "/events").compactMap { Fixture.json($0.payload) }
        #expect(
            events.contains { $0["event"] as? String == "receiverConnected" }, "\(events)")
        let topics = Set(subscriber.allMessages.map(\.topic))
        #expect(topics.isSubset(of: [location, prefix + "/events", prefix + "/status"]), "\(topics)")
        #expect(topics.contains(prefix + "/status"))

        let away = try Fixture.subscriber(broker, location, clientID: awayID)
        defer { away.stop() }
        #expect(away.waitFor(count: received.count, topic: location), "QoS 0? \(away.output)")
    }

    /// mqtt-rate 0: every epoch, in order, none twice.
    @Test func rateZeroPublishesEveryEpoch() throws {
        let broker = try Fixture.startedBroker()
        let prefix = Fixture.prefix("every")
        let location = prefix + "/location"
        let subscriber = try Fixture.subscriber(broker, location)
        defer { subscriber.stop() }
        let bridge = try TestBridge.start { configuration in
            configuration.fleet.broker = Fixture.broker(broker)
            configuration.fleet.rateHz = 0
            configuration.fleet.topicPrefix = prefix
            configuration.fleet.clientID = Fixture.clientID("every")
        }
        defer { bridge.stop() }
        try #require(bridge.waitForFleet { $0.state == "connected" }.held)
        try bridge.connectReceiver()
        let count = 40
        let step = Duration.milliseconds(50)
        for index in 0..<count {
            bridge.input.post(.position(try Fixture.epoch(index, step: step)))
            sleep(for: .milliseconds(25))  // a 40 Hz receiver
        }
        #expect(subscriber.waitFor(count: count, topic: location), "\(subscriber.messages(topic: location).count)")
        let order = indices(subscriber.messages(topic: location), of: try stampIndex(count: count, step: step))
        #expect(order == Array(0..<count), "\(order)")
        let fleet = bridge.waitForFleet { $0.acknowledged >= count }
        #expect(fleet.held && (fleet.last?.published ?? 0) >= count, "\(String(describing: fleet.last))")
    }
}

// MARK: - Status and the last will

@Suite(
    "Fleet publishing: retained status and last will", .tags(.integration),
    .enabled(if: MosquittoBroker.isAvailable, "needs Debian's mosquitto, mosquitto-clients and openssl"))
struct FleetStatusTests {
    /// The real daemon (`--demo`): its retained status says online, with client id, version and
    /// the daemon's state; a later subscriber gets it flagged retained. SIGKILL: the broker
    /// publishes the will, `online:false` with `reason: connection lost`. A second daemon on the
    /// same state directory, stopped with SIGTERM, leaves `reason: stopped`.
    @Test func retainedStatusWillAndCleanStop() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let prefix = Fixture.prefix("will")
        let topic = prefix + "/status"
        let clientID = Fixture.clientID("will")
        let arguments = ["--demo", "--mqtt", broker.url, "--mqtt-topic", prefix, "--mqtt-client-id", clientID]
        let daemon = try FleetDaemon(arguments: arguments)
        let connected = daemon.waitForFleet(timeout: .seconds(20)) { $0.state == "connected" }
        try #require(connected.held, "\(String(describing: connected.last)) \(daemon.log())")

        func retained(until condition: ([String: Any]) -> Bool) -> [String: Any]? {
            var last: [String: Any]?
            _ = waitUntil(timeout: .seconds(15), pollInterval: .milliseconds(100)) {
                last = (try? MQTTSubscriber.retained(broker: broker, topic: topic)).flatMap { $0 }.flatMap(Fixture.json)
                return last.map(condition) ?? false
            }
            return last
        }
        let online = try #require(retained { $0["online"] as? Bool == true }, "no online status: \(broker.log)")
        #expect(online["clientId"] as? String == clientID, "\(online)")
        #expect((online["version"] as? String)?.isEmpty == false, "\(online)")
        for key in ["receiver", "fix", "corrections", "clients"] {
            #expect(online[key] != nil, "no \(key) in \(online)")
        }
        let later = try MQTTSubscriber(broker: broker, topic: topic)
        defer { later.stop() }
        #expect(later.waitFor(count: 1, topic: topic))
        #expect(later.messages(topic: topic).first?.retained == true)

        daemon.kill()
        let will = retained { $0["online"] as? Bool == false }
        #expect(will?["reason"] as? String == "connection lost", "\(String(describing: will))")
        #expect(will?["clientId"] as? String == clientID, "\(String(describing: will))")

        let second = try FleetDaemon(base: daemon.base, arguments: arguments)
        try #require(second.waitForFleet(timeout: .seconds(20)) { $0.state == "connected" }.held, "\(second.log())")
        #expect(retained { $0["online"] as? Bool == true } != nil, "not online again")
        #expect(second.terminate() == 0, "\(second.log())")
        let stopped = retained { $0["online"] as? Bool == false }
        #expect(stopped?["reason"] as? String == "stopped", "\(String(describing: stopped))")
        #expect(stopped?["clientId"] as? String == clientID, "\(String(describing: stopped))")
    }
}

// MARK: - Store and forward

@Suite(
    "Fleet publishing: store and forward", .tags(.integration),
    .enabled(if: MosquittoBroker.isAvailable, "needs Debian's mosquitto, mosquitto-clients and openssl"))
struct FleetStoreAndForwardTests {
    /// A 20 s outage of the broker under a 1 Hz receiver (mqtt-rate 1): the state is
    /// `unreachable` during it; afterwards every second's position reaches a persistent
    /// subscriber, none missing, those of the outage in order among themselves; at least 18 were
    /// spooled and all of them drained.
    @Test func aTwentySecondOutageLosesNothing() throws {
        let broker = try Fixture.startedBroker()
        let prefix = Fixture.prefix("outage")
        let location = prefix + "/location"
        let subscriber = try Fixture.subscriber(broker, location, clientID: Fixture.clientID("outage-sub"))
        defer { subscriber.stop() }
        let bridge = try TestBridge.start { configuration in
            configuration.fleet.broker = Fixture.broker(broker)
            configuration.fleet.rateHz = 1
            configuration.fleet.topicPrefix = prefix
            configuration.fleet.clientID = Fixture.clientID("outage")
        }
        defer { bridge.stop() }
        try #require(bridge.waitForFleet { $0.state == "connected" }.held)
        try bridge.connectReceiver()
        let feeder = try CountingFeeder(bridge, every: .seconds(1))
        defer { feeder.stop() }
        try #require(subscriber.waitFor(count: 3, topic: location))

        broker.stop()
        let stoppedAt = feeder.fed
        let down = bridge.waitForFleet(timeout: .seconds(5)) { $0.state == "unreachable" }
        #expect(down.held, "\(String(describing: down.last))")
        #expect(down.last?.message.isEmpty == false)
        sleep(for: .seconds(20))  // the outage
        let during = bridge.fleet
        #expect(during?.state == "unreachable", "\(String(describing: during))")
        let startedAt = feeder.fed
        try broker.start()

        let drained = bridge.waitForFleet(timeout: .seconds(30)) {
            $0.state == "connected" && $0.pending == 0 && $0.spooled >= 18 && $0.drained == $0.spooled
        }
        #expect(drained.held, "\(String(describing: drained.last))")
        let last = startedAt + 1
        // Every epoch the feeder may post until it stops (the reconnection waits for the
        // back-off, up to 16 s × 1.2, and the feeder goes on meanwhile).
        let stamps = try stampIndex(count: last + 120)
        #expect(
            waitUntil(timeout: .seconds(15), pollInterval: .milliseconds(50)) {
                Set(indices(subscriber.messages(topic: location), of: stamps)).isSuperset(of: 0...last)
            }, "missing: \(Set(0...last).subtracting(indices(subscriber.messages(topic: location), of: stamps)))")
        feeder.stop()
        let order = indices(subscriber.messages(topic: location), of: stamps)
        #expect(!order.contains(-1))
        var seen = Set<Int>()
        let firstTimes = order.filter { seen.insert($0).inserted }
        let outage = firstTimes.filter { (stoppedAt..<startedAt).contains($0) }
        #expect(outage == outage.sorted() && outage.count == startedAt - stoppedAt, "\(firstTimes)")
    }

    /// SIGKILL of the daemon while the broker is down: what it spooled survives. A new daemon on
    /// the same state directory reports it `recovered` and sends it once the broker is back.
    @Test func aSIGKILLDuringAnOutageKeepsTheSpool() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let prefix = Fixture.prefix("kill")
        let location = prefix + "/location"
        let subscriber = try MQTTSubscriber(broker: broker, topic: location, clientID: Fixture.clientID("kill-sub"))
        defer { subscriber.stop() }
        let arguments = ["--demo", "--mqtt", broker.url, "--mqtt-topic", prefix, "--mqtt-rate", "1"]
        let first = try FleetDaemon(arguments: arguments)
        try #require(first.waitForFleet(timeout: .seconds(20)) { $0.state == "connected" }.held, "\(first.log())")
        try #require(subscriber.waitFor(count: 1, topic: location, timeout: .seconds(15)))
        broker.stop()
        let before = subscriber.messages(topic: location).count
        let spooled = first.waitForFleet(timeout: .seconds(20)) { $0.spooled >= 5 }
        try #require(spooled.held, "\(String(describing: spooled.last))")
        let atKill = spooled.last?.pending ?? 0
        first.kill()

        try broker.start()
        let second = try FleetDaemon(base: first.base, arguments: arguments)
        defer { second.terminate() }
        let recovered = second.waitForFleet(timeout: .seconds(20)) {
            $0.state == "connected" && $0.recovered > 0 && $0.pending == 0
        }
        #expect(recovered.held, "\(String(describing: recovered.last)) \(second.log())")
        #expect((recovered.last?.recovered ?? 0) >= atKill, "\(String(describing: recovered.last)), \(atKill) at kill")
        #expect(
            subscriber.waitFor(count: before + atKill, topic: location, timeout: .seconds(15)),
            "\(subscriber.messages(topic: location).count - before) after the kill, \(atKill) spooled")
    }

    /// A 64 KiB spool, the broker down, a 200 Hz receiver with mqtt-rate 0: the spool drops its
    /// oldest messages (`dropped`) and stays within its limit; when the broker returns, what
    /// drains is the newest messages, a gapless run ending with the last epoch.
    @Test func aFullSpoolDropsTheOldest() throws {
        let broker = try Fixture.startedBroker()
        let prefix = Fixture.prefix("full")
        let location = prefix + "/location"
        let subscriber = try Fixture.subscriber(broker, location, clientID: Fixture.clientID("full-sub"))
        defer { subscriber.stop() }
        broker.stop()
        let bridge = try TestBridge.start { configuration in
            configuration.fleet.broker = Fixture.broker(broker)
            configuration.fleet.rateHz = 0
            configuration.fleet.spoolBytes = 64 * 1024
            configuration.fleet.topicPrefix = prefix
            configuration.fleet.clientID = Fixture.clientID("full")
        }
        defer { bridge.stop() }
        try bridge.connectReceiver()
        let step = Duration.milliseconds(100)
        let feeder = try CountingFeeder(bridge, every: .milliseconds(5), step: step)
        let full = bridge.waitForFleet(timeout: .seconds(20)) { $0.dropped > 0 }
        feeder.stop()
        let fed = feeder.fed
        try #require(full.held, "\(String(describing: full.last))")
        // What the io thread had queued reaches the spool too.
        let settled = bridge.waitForFleet { $0.spooled + $0.lost >= fed }
        let status = try #require(settled.last)
        #expect(status.state == "unreachable", "\(status)")
        #expect(status.dropped > 0 && status.lost == 0, "\(status)")
        #expect(status.spoolBytes <= status.spoolLimit && status.spoolLimit == 64 * 1024, "\(status)")
        #expect(status.pending > 0 && status.pending + status.dropped == status.spooled, "\(status)")

        try broker.start()
        let drained = bridge.waitForFleet(timeout: .seconds(30)) { $0.pending == 0 && $0.state == "connected" }
        #expect(drained.held, "\(String(describing: drained.last))")
        let pendingLocations = status.pending  // every event was dropped first: it is the oldest
        #expect(subscriber.waitFor(count: pendingLocations, topic: location, timeout: .seconds(15)))
        let order = indices(subscriber.messages(topic: location), of: try stampIndex(count: fed, step: step))
        #expect(!order.contains(-1))
        let distinct = Array(Set(order)).sorted()
        #expect(distinct.last == fed - 1, "the newest epoch is missing: \(distinct.suffix(5)), fed \(fed)")
        #expect(distinct.first.map { $0 > 0 } == true, "the oldest were not dropped: \(distinct.prefix(5))")
        if let low = distinct.first { #expect(distinct == Array(low...(fed - 1)), "a gap: \(distinct)") }
        #expect(distinct.count == status.pending, "\(distinct.count) distinct epochs, \(status.pending) pending")
    }
}

// MARK: - Logins and TLS

@Suite(
    "Fleet publishing: logins and TLS", .tags(.integration),
    .enabled(if: MosquittoBroker.isAvailable, "needs Debian's mosquitto, mosquitto-clients and openssl"))
struct FleetLoginTests {
    /// A wrong password: `login-refused` with a message saying so; the bridge keeps trying (the
    /// broker sees more attempts) and keeps serving. A closed port: `unreachable`.
    @Test func aWrongPasswordIsLoginRefusedAndAClosedPortUnreachable() throws {
        let broker = try Fixture.startedBroker()
        let bridge = try TestBridge.start { configuration in
            configuration.fleet.broker = Fixture.broker(broker, password: "wrong")
            configuration.fleet.clientID = Fixture.clientID("wrong")
        }
        defer { bridge.stop() }
        let refused = bridge.waitForFleet { $0.state == "login-refused" }
        #expect(refused.held, "\(String(describing: refused.last))")
        let message = refused.last?.message.lowercased() ?? ""
        #expect(message.contains("password") || message.contains("not authori"), "\(message)")
        #expect(!message.contains("wrong"), "the password in the message: \(message)")
        let attempts = { broker.log.split(separator: "\n").count { $0.contains("not authorised") } }
        #expect(waitUntil(timeout: .seconds(10)) { attempts() >= 2 }, "no retry: \(broker.log)")
        #expect(bridge.fleet?.state == "login-refused")
        try bridge.register(testAppID)
        #expect(try request(bridge.ports.api, "/api/v1/test/ping").status == 200)

        let closed = try MosquittoBroker()  // never started: its port refuses
        let other = try TestBridge.start { configuration in
            configuration.fleet.broker = Fixture.broker(closed)
            configuration.fleet.clientID = Fixture.clientID("closed")
        }
        defer { other.stop() }
        let unreachable = other.waitForFleet { $0.state == "unreachable" }
        #expect(
            unreachable.held && unreachable.last?.message.isEmpty == false, "\(String(describing: unreachable.last))")
    }

    /// `mqtts://` with `mqtt-ca`: connected, messages arrive over TLS. Without the CA (the
    /// system's trust): `tls-failed`.
    @Test func tlsWithTheCAConnectsAndWithoutItFails() throws {
        let broker = try Fixture.startedBroker(tls: true)
        let prefix = Fixture.prefix("tls")
        let subscriber = try Fixture.subscriber(broker, prefix + "/location", tls: true)
        defer { subscriber.stop() }
        let trusted = try TestBridge.start { configuration in
            configuration.fleet.broker = Fixture.broker(broker, tls: true)
            configuration.fleet.authorityFile = broker.caFile
            configuration.fleet.topicPrefix = prefix
            configuration.fleet.clientID = Fixture.clientID("tls")
            configuration.fleet.rateHz = 0
        }
        defer { trusted.stop() }
        let connected = trusted.waitForFleet { $0.state == "connected" }
        #expect(connected.held, "\(String(describing: connected.last))\n\(broker.log)")
        try trusted.connectReceiver()
        trusted.input.post(.position(try Fixture.epoch(0)))
        #expect(subscriber.waitFor(count: 1, topic: prefix + "/location"), "\(subscriber.output)")

        let untrusted = try TestBridge.start { configuration in
            configuration.fleet.broker = Fixture.broker(broker, tls: true)
            configuration.fleet.clientID = Fixture.clientID("untrusted")
        }
        defer { untrusted.stop() }
        // A handshake on loopback fails at once: not after the 10 s connect time-out.
        let failed = untrusted.waitForFleet(timeout: .seconds(5)) { $0.state == "tls-failed" }
        #expect(
            failed.held && failed.last?.message.contains("certificate") == true,
            "\(String(describing: failed.last))\n\(untrusted.logs.joined(separator: "\n"))")
    }

    /// A broker that requires a client certificate: `mqtt-cert` and `mqtt-key` get in; without
    /// them the bridge does not connect.
    @Test func aRequiredClientCertificate() throws {
        let broker = try Fixture.startedBroker(tls: true, requireClientCertificate: true)
        let with = try TestBridge.start { configuration in
            configuration.fleet.broker = Fixture.broker(broker, tls: true)
            configuration.fleet.authorityFile = broker.caFile
            configuration.fleet.certificateFile = broker.clientCertFile
            configuration.fleet.keyFile = broker.clientKeyFile
            configuration.fleet.clientID = Fixture.clientID("cert")
        }
        defer { with.stop() }
        let connected = with.waitForFleet { $0.state == "connected" }
        #expect(connected.held, "\(String(describing: connected.last))\n\(broker.log)")

        let without = try TestBridge.start { configuration in
            configuration.fleet.broker = Fixture.broker(broker, tls: true)
            configuration.fleet.authorityFile = broker.caFile
            configuration.fleet.clientID = Fixture.clientID("nocert")
        }
        defer { without.stop() }
        let refused = without.waitForFleet { $0.state == "tls-failed" || $0.state == "unreachable" }
        #expect(refused.held, "\(String(describing: refused.last))")
        #expect(without.fleet?.connections == 0, "\(String(describing: without.fleet))")
    }
}

// MARK: - Hostile brokers

@Suite(
    "Fleet publishing: hostile brokers", .tags(.integration),
    .enabled(if: MosquittoBroker.isAvailable, "needs Debian's mosquitto, mosquitto-clients and openssl"))
struct FleetHostileBrokerTests {
    /// Whatever the broker does, a V2 WebSocket client gets every epoch fed (40 Hz, mqtt-rate 0),
    /// REST answers, and the fleet state is clear: not connected, or for a broker that accepts
    /// and never acknowledges, connected with 64 messages in flight and the rest spooled.
    @Test(arguments: HostileMQTTBroker.Mode.allCases)
    func clientsKeepEveryEpoch(mode: HostileMQTTBroker.Mode) throws {
        let hostile = try HostileMQTTBroker(mode: mode)
        let bridge = try TestBridge.start { configuration in
            configuration.fleet.broker = MQTTBroker(host: "127.0.0.1", port: hostile.port)
            configuration.fleet.rateHz = 0
            configuration.fleet.clientID = Fixture.clientID("hostile")
        }
        defer { bridge.stop() }
        try bridge.register(testAppID)
        try bridge.connectReceiver()
        #expect(waitUntil(timeout: .seconds(10)) { hostile.connections >= 1 }, "\(hostile.output)")
        let client = try WebSocketTestClient(port: bridge.ports.locationV2, path: "/locationV2")
        let count = 100
        let step = Duration.milliseconds(25)
        for index in 0..<count {
            bridge.input.post(.position(try Fixture.epoch(index, step: step)))
            sleep(for: step)  // a 40 Hz receiver
        }
        let frames = try client.frames(count, milliseconds: 3000)
        let stamps = try stampIndex(count: count, step: step)
        let order = frames.map { (Fixture.json($0.payload)?["utcTimeStamp"] as? String).flatMap { stamps[$0] } ?? -1 }
        #expect(order == Array(0..<count), "\(mode): \(frames.count) frames: \(order)")
        #expect(try request(bridge.ports.api, "/api/v1/test/ping").status == 200)

        let status = try #require(bridge.fleet)
        switch mode {
        case .neverAck:
            let spooling = bridge.waitForFleet { $0.inFlight == 64 && $0.spooled > 0 }
            #expect(spooling.held && spooling.last?.state == "connected", "\(String(describing: spooling.last))")
            if let last = spooling.last { #expect(last.published + last.spooled >= count, "\(last)") }
        case .refuse:
            #expect(bridge.waitForFleet { $0.state == "login-refused" }.held, "\(String(describing: bridge.fleet))")
        case .hugePacket:
            // Accepted, then a packet that never ends: connected (or given up), never a crash.
            #expect(["connected", "unreachable", "connecting"].contains(status.state), "\(status)")
        case .garbage, .silent, .closeAtOnce:
            #expect(["unreachable", "connecting"].contains(status.state), "\(status)")
            #expect(status.connections == 0 && !status.message.isEmpty, "\(status)")
        }
    }

    /// The real daemon against a broker that announces a 256 MiB PUBLISH and sends it fast: the
    /// link cuts it off, the daemon's resident memory grows by less than 16 MiB, and it keeps
    /// answering REST.
    @Test func aHugePacketDoesNotBloatTheDaemon() throws {
        let hostile = try HostileMQTTBroker(
            mode: .hugePacket, arguments: ["--trickle-bytes", "65536", "--trickle-interval", "0.01"])
        let daemon = try FleetDaemon(arguments: ["--demo", "--mqtt", hostile.url])
        defer { daemon.terminate() }
        try daemon.register()
        let base = try #require(daemon.memoryKiB("VmRSS"))
        try #require(waitUntil(timeout: .seconds(10)) { hostile.connections >= 1 }, "\(hostile.output)")
        // At 6.5 MB/s, 6 s would bring 39 MB into a buffer that is never cut off; watch the peak for 6.
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: .seconds(6))
        var peak = base
        _ = waitUntil(timeout: .seconds(6), pollInterval: .milliseconds(100)) {
            peak = max(peak, daemon.memoryKiB("VmHWM") ?? peak)
            return peak - base > 64 * 1024 || clock.now >= end
        }
        // Cut off after 256 KiB without an acknowledgement (MQTTLink.maximumUnansweredBytes), plus
        // what the socket buffers held.
        #expect(peak - base < 16 * 1024, "resident memory grew by \((peak - base) / 1024) MiB")
        let fleet = try #require(daemon.status?.fleet, "\(daemon.log())")
        #expect(fleet.message.contains("without an acknowledgement") || fleet.connections >= 1, "\(fleet)")
        #expect(daemon.process.isRunning, "\(daemon.log())")
        let ping = try daemon.ping()
        #expect(ping.status == 200, "\(ping)")
    }
}

// MARK: - A hostile local user

@Suite(
    "Fleet publishing: hostile local user", .tags(.integration),
    .enabled(if: MosquittoBroker.isAvailable && geteuid() == 0, "needs root, mosquitto and its clients"))
struct FleetLocalUserTests {
    /// A spool directory another user (nobody) owns: the daemon (uid 12345 here, as after its
    /// privilege drop) refuses to start, exit status 78, naming the directory.
    @Test func aSpoolDirectoryOfAnotherUserIsRefused() throws {
        let daemonUser: uid_t = 12345
        let base = NSTemporaryDirectory() + "tmm-fleet-owner-\(getpid())-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: base) }
        let spool = base + "/state/" + FleetPublisher.spoolDirectoryName
        try FileManager.default.createDirectory(
            atPath: spool, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for directory in [base, base + "/state"] {
            try #require(chown(directory, daemonUser, gid_t(daemonUser)) == 0 && chmod(directory, 0o700) == 0)
        }
        try #require(chown(spool, 65534, 65534) == 0)
        let daemon = try FleetDaemon(
            base: base, asUser: daemonUser, arguments: ["--demo", "--mqtt", "mqtt://127.0.0.1:1"],
            waitForReady: false)
        let process = daemon.process
        #expect(waitUntil(timeout: .seconds(20)) { !process.isRunning }, "still running: \(daemon.log())")
        daemon.kill()
        #expect(process.terminationStatus == 78, "\(daemon.log())")
        #expect(daemon.log().contains(spool), "\(daemon.log())")
        #expect(!daemon.log().contains("tmm-bridge: ready"))
    }

    /// Under `prlimit --nofile=48` with a broker: the daemon starts and connects; with its
    /// descriptor table filled by clients, a broker restart costs it the connection but it does
    /// not spin (CPU) or crash, and it connects again once descriptors are free.
    @Test func fewDescriptorsNeitherSpinNorCrash() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        // 40 descriptors leave room for one client connection (max-connections is lowered to 1);
        // 48 for a few, so that status, registration and REST can follow one another.
        let daemon = try FleetDaemon(nofile: 48, arguments: ["--demo", "--mqtt", broker.url])
        defer { daemon.terminate() }
        #expect(waitUntil(timeout: .seconds(10)) { (try? daemon.register()) != nil }, "\(daemon.log())")
        let connected = daemon.waitForFleet(timeout: .seconds(20)) { $0.state == "connected" }
        #expect(connected.held, "\(String(describing: connected.last)) \(daemon.log())")
        var clients: [RawClient] = []
        for _ in 0..<60 { if let client = try? RawClient(port: daemon.ports.location) { clients.append(client) } }
        try broker.restart()
        let before = cpuTicks(daemon.pid)
        let began = ContinuousClock.now
        sleep(for: .seconds(3))  // what the daemon does with a full table and a broker to reach again
        let used = Double(cpuTicks(daemon.pid) - before) / Double(sysconf(Int32(_SC_CLK_TCK)))
        let elapsed = began.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        #expect(used < seconds * 0.5, "\(used) s of CPU in \(seconds) s")
        #expect(daemon.process.isRunning, "\(daemon.log())")
        clients.removeAll()
        let again = daemon.waitForFleet(timeout: .seconds(40)) { $0.state == "connected" && $0.connections >= 2 }
        #expect(again.held, "\(String(describing: again.last)) \(daemon.log())")
        let ping = try daemon.ping()
        #expect(ping.status == 200, "\(ping)")
    }
}
