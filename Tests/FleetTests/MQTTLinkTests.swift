// MQTTLink against a real mosquitto (TestSupport's MosquittoBroker) and hostile brokers: what
// reaches an independent subscriber (mosquitto_sub), what stays in the spool until the broker's
// PUBACK, and the states a person reads in `status`. The bridge-level tests (the daemon, its
// status, SIGKILL) are Tests/BridgeTests/FleetTests.swift.
import Foundation
import Logging
import Posix
import Synchronization
import TestSupport
import Testing

@testable import Fleet

/// A link of its own: a fresh spool directory, a log kept for the test.
private final class LinkUnderTest {
    let link: MQTTLink
    let spoolDirectory: String
    let lines = LogLines()

    final class LogLines: Sendable {
        let all = Mutex<[String]>([])
    }

    init(broker port: UInt16, user: String? = nil, password: String? = nil, prefix: String = "test/box") throws {
        spoolDirectory = NSTemporaryDirectory() + "tmm-link-\(getpid())-\(UUID().uuidString.prefix(8))"
        let lines = self.lines
        let log = Logger(format: .plain(program: ""), level: .debug) { line in lines.all.withLock { $0.append(line) } }
        link = try MQTTLink(log: log)
        try link.start(
            settings: Self.settings(port: port, user: user, password: password, prefix: prefix),
            spoolDirectory: spoolDirectory, spoolLimit: 1 << 20)
    }

    static func settings(port: UInt16, user: String? = nil, password: String? = nil, prefix: String) -> MQTTLinkSettings
    {
        MQTTLinkSettings(
            host: "127.0.0.1", port: port, user: user, password: password, usesTLS: false, authorityFile: nil,
            certificateFile: nil, keyFile: nil, clientID: "link-\(UUID().uuidString.prefix(8))", topicPrefix: prefix,
            lastWill: Array(#"{"online":false}"#.utf8), brokerDescription: "mqtt://127.0.0.1:\(port)")
    }

    func send(_ range: Range<Int>) {
        for n in range {
            link.submit(
                FleetMessage(topic: .location, payload: Array(#"{"n":\#(n)}"#.utf8), unixMilliseconds: Int64(n)))
        }
    }

    deinit {
        link.stop(finalStatus: nil)
        try? FileManager.default.removeItem(atPath: spoolDirectory)
    }
}

@Suite("MQTT link with a real broker", .tags(.integration))
struct MQTTLinkTests {
    private func numbers(_ subscriber: MQTTSubscriber, topic: String = "test/box/location") -> [Int] {
        subscriber.messages(topic: topic).compactMap { message in
            (try? JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Int])?["n"]
        }
    }

    /// Connected: each message once, in order, acknowledged; the retained status is published.
    @Test func messagesReachTheBrokerInOrder() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let subscriber = try MQTTSubscriber(broker: broker, topic: "test/#")
        let link = try LinkUnderTest(broker: broker.port)
        link.link.updateStatus(Array(#"{"online":true}"#.utf8))
        #expect(waitUntil(timeout: .seconds(10)) { link.link.report.state == .connected }, "\(link.link.report)")
        link.send(0..<200)
        #expect(subscriber.waitFor(count: 200, topic: "test/box/location"))
        #expect(numbers(subscriber) == Array(0..<200))
        // A burst: the first 64 live, the rest through the spool (the live window), all acknowledged.
        #expect(
            waitUntil { link.link.report.acknowledged + link.link.report.spool.drained == 200 }, "\(link.link.report)")
        #expect(try MQTTSubscriber.retained(broker: broker, topic: "test/box/status") == #"{"online":true}"#)
        #expect(link.link.report.spool.pendingRecords == 0)
    }

    /// The broker stops: what is sent meanwhile is spooled; it comes back: all of it is drained,
    /// in order, and nothing is left.
    @Test func anOutageIsSpooledAndDrainedInOrder() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let subscriber = try MQTTSubscriber(broker: broker, topic: "test/#", clientID: "sub-\(getpid())-outage")
        let link = try LinkUnderTest(broker: broker.port)
        #expect(waitUntil(timeout: .seconds(10)) { link.link.report.state == .connected })
        link.send(0..<10)
        #expect(subscriber.waitFor(count: 10, topic: "test/box/location"))
        // Acknowledged before the outage (else they are sent again after it: at least once).
        #expect(waitUntil { link.link.report.acknowledged == 10 })
        broker.stop()
        #expect(waitUntil(timeout: .seconds(10)) { link.link.report.state == .unreachable }, "\(link.link.report)")
        link.send(10..<110)
        #expect(waitUntil { link.link.report.spool.spooled == 100 }, "\(link.link.report)")
        #expect(link.link.report.spool.oldestPendingUnixMilliseconds == 10)
        try broker.start()
        // The persistent subscriber's session kept it subscribed; the spool drains at 50/s.
        #expect(subscriber.waitUntilSubscribed(count: 2, timeout: .seconds(20)))
        #expect(
            waitUntil(timeout: .seconds(30)) { Set(numbers(subscriber)).count == 110 }, "\(link.link.report)")
        // QoS 1 is at least once: the broker may hand the persistent subscriber again what it
        // had in flight to it when it stopped (the link sent each once: it counts PUBACKs).
        var seen = Set<Int>()
        #expect(numbers(subscriber).filter { seen.insert($0).inserted } == Array(0..<110))
        #expect(numbers(subscriber).filter { $0 >= 10 } == Array(10..<110), "the spool, once each, in order")
        #expect(waitUntil { link.link.report.spool.drained == 100 && link.link.report.spool.pendingRecords == 0 })
    }

    /// A broker that takes everything and acknowledges nothing: 64 live messages wait for their
    /// PUBACK, the rest go to the spool; when the connection ends they are all in the spool.
    @Test func withoutPubacksNothingLeavesTheSpool() throws {
        let broker = try HostileMQTTBroker(mode: .neverAck, arguments: ["--pong"])
        let link = try LinkUnderTest(broker: broker.port)
        #expect(waitUntil(timeout: .seconds(10)) { link.link.report.state == .connected }, "\(link.link.report)")
        link.send(0..<100)
        #expect(waitUntil { link.link.report.inFlight == MQTTLink.liveWindow }, "\(link.link.report)")
        #expect(waitUntil { link.link.report.spool.spooled == 100 - MQTTLink.liveWindow }, "\(link.link.report)")
        #expect(link.link.report.acknowledged == 0)
        broker.stop()
        // Lost connection: the live ones join the spool, none acknowledged, none lost.
        #expect(
            waitUntil(timeout: .seconds(10)) { link.link.report.spool.pendingRecords == 100 }, "\(link.link.report)")
        #expect(link.link.report.lost == 0)
    }

    /// What a refusal or a broken broker becomes: a clear state, and the link carries on.
    @Test(arguments: [
        (HostileMQTTBroker.Mode.refuse, MQTTLinkReport.State.loginRefused, "not authorised"),
        (.garbage, .unreachable, "not MQTT"),
        (.closeAtOnce, .unreachable, "closed the connection without accepting it"),
        (.silent, .unreachable, "no answer from the broker within 10 s"),
        (.hugePacket, .unreachable, "without an acknowledgement"),
    ])
    func brokenBrokersAreClearStates(
        _ mode: HostileMQTTBroker.Mode, _ state: MQTTLinkReport.State, _ words: String
    )
        throws
    {
        // huge-packet: a PUBLISH that announces 256 MB, sent at 6 MB/s.
        let broker = try HostileMQTTBroker(
            mode: mode,
            arguments: mode == .hugePacket ? ["--trickle-bytes", "65536", "--trickle-interval", "0.01"] : [])
        let link = try LinkUnderTest(broker: broker.port)
        link.send(0..<5)
        #expect(
            waitUntil(timeout: .seconds(15)) {
                link.link.report.state == state && link.link.report.message.contains(words)
            },
            "\(link.link.report)")
        #expect(waitUntil { link.link.report.spool.spooled == 5 }, "\(link.link.report)")
        // huge-packet's CONNACK is valid: connected, then cut off; the others never accept.
        #expect(mode == .hugePacket ? link.link.report.connections >= 1 : link.link.report.connections == 0)
    }

    /// A wrong password: login refused, in words, and the password in no log line.
    @Test func aWrongPasswordIsRefusedAndNeverLogged() throws {
        let broker = try MosquittoBroker(users: ["box": "right-password"])
        try broker.start()
        let link = try LinkUnderTest(broker: broker.port, user: "box", password: "wrong-password")
        #expect(
            waitUntil(timeout: .seconds(10)) { link.link.report.state == .loginRefused }, "\(link.link.report)")
        #expect(link.link.report.message.contains("not authorised") || link.link.report.message.contains("password"))
        #expect(link.lines.all.withLock { $0 }.allSatisfy { !$0.contains("wrong-password") })
        // The right one, by a reload: connected.
        link.link.reconfigure(
            settings: LinkUnderTest.settings(
                port: broker.port, user: "box", password: "right-password", prefix: "test/box"),
            spoolLimit: 1 << 20)
        #expect(waitUntil(timeout: .seconds(40)) { link.link.report.state == .connected }, "\(link.link.report)")
    }

    /// A clean stop publishes the final status, and the broker keeps it.
    @Test func aCleanStopLeavesTheFinalStatus() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let link = try LinkUnderTest(broker: broker.port)
        link.link.updateStatus(Array(#"{"online":true}"#.utf8))
        #expect(waitUntil(timeout: .seconds(10)) { link.link.report.state == .connected })
        #expect(
            waitUntil {
                (try? MQTTSubscriber.retained(broker: broker, topic: "test/box/status")) == #"{"online":true}"#
            })
        link.link.stop(finalStatus: Array(#"{"online":false,"reason":"stopped"}"#.utf8))
        #expect(
            try MQTTSubscriber.retained(broker: broker, topic: "test/box/status")
                == #"{"online":false,"reason":"stopped"}"#)
    }
}
