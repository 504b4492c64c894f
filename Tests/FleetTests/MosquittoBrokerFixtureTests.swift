// The real-broker fixtures of the fleet publishing tests (TestSupport's MosquittoBroker.swift),
// proven with Debian's own clients before the daemon's publisher meets them: mosquitto_pub
// publishes, MQTTSubscriber (mosquitto_sub) sees; logins, an outage on the same port with a
// persistent session, TLS with the fixture's CA, and the hostile broker's modes.
import Foundation
import TestSupport
import Testing

private let login = (user: "fleet", password: "s3cret")

/// A started broker with the test's login.
private func startedBroker(tls: Bool = false, requireClientCertificate: Bool = false) throws -> MosquittoBroker {
    let broker = try MosquittoBroker(
        users: [login.user: login.password], tls: tls, requireClientCertificate: requireClientCertificate)
    try broker.start()
    return broker
}

@Suite(
    "MosquittoBroker: a real broker and subscriber for the fleet tests", .tags(.integration),
    .enabled(if: MosquittoBroker.isAvailable, "needs Debian's mosquitto, mosquitto-clients and openssl"))
struct MosquittoBrokerFixtureTests {
    /// mosquitto_pub's QoS 1 messages reach the subscriber; a retained status is kept, flagged
    /// retained for a later subscriber and read by the one-shot `retained`.
    @Test func publishedMessagesReachTheSubscriber() throws {
        let broker = try startedBroker()
        #expect(broker.url == "mqtt://127.0.0.1:\(broker.port)")
        #expect(broker.url(user: "fleet", password: "a b") == "mqtt://fleet:a%20b@127.0.0.1:\(broker.port)")
        let subscriber = try MQTTSubscriber(
            broker: broker, topic: "tmm/unit/#", user: login.user, password: login.password)
        defer { subscriber.stop() }
        let status = #"{"state":"online"}"#
        try #require(
            broker.publish(
                topic: "tmm/unit/status", payload: status, retain: true, user: login.user, password: login.password
            ).status == 0)
        for number in 1...3 {
            let location = #"{"lat":47.\#(number),"lon":8.5}"#
            let run = try broker.publish(
                topic: "tmm/unit/location", payload: location, user: login.user, password: login.password)
            try #require(run.status == 0, "\(run)")
        }
        #expect(subscriber.waitFor(count: 3, topic: "tmm/unit/location"), "\(subscriber.output)")
        #expect(subscriber.waitFor(count: 1, topic: "tmm/unit/status"), "\(subscriber.output)")
        #expect(
            subscriber.messages(topic: "tmm/unit/location").map(\.payload)
                == (1...3).map { #"{"lat":47.\#($0),"lon":8.5}"# })
        #expect(subscriber.messages(topic: "tmm/unit/status").map(\.retained) == [false], "live: not flagged")

        let later = try MQTTSubscriber(
            broker: broker, topic: "tmm/unit/status", user: login.user, password: login.password)
        defer { later.stop() }
        #expect(later.waitFor(count: 1, topic: "tmm/unit/status"))
        #expect(later.messages(topic: "tmm/unit/status").first?.retained == true)
        #expect(
            try MQTTSubscriber.retained(
                broker: broker, topic: "tmm/unit/status", user: login.user, password: login.password) == status)
        #expect(
            try MQTTSubscriber.retained(
                broker: broker, topic: "tmm/unit/none", user: login.user, password: login.password) == nil)
    }

    /// A wrong password and no login at all are refused (CONNACK 5: mosquitto_pub's exit status 5).
    @Test func wrongPasswordIsRefused() throws {
        let broker = try startedBroker()
        let wrong = try broker.publish(topic: "tmm/unit/status", payload: "{}", user: login.user, password: "wrong")
        #expect(wrong.status == 5, "\(wrong)")
        #expect(wrong.output.contains("not authorised"), "\(wrong)")
        let anonymous = try broker.publish(topic: "tmm/unit/status", payload: "{}")
        #expect(anonymous.status == 5, "\(anonymous)")
        #expect(throws: MosquittoFixtureError.self) {
            try MQTTSubscriber(broker: broker, topic: "#", user: login.user, password: "wrong")
        }
        let right = try broker.publish(
            topic: "tmm/unit/status", payload: "{}", user: login.user, password: login.password)
        #expect(right.status == 0, "\(right)")
    }

    /// An outage: stopped, the port refuses; started again on the same port, the broker still
    /// has the retained status and the persistent session, whose QoS 1 messages queued before and
    /// after the restart reach the subscriber when it comes back; a running subscriber reconnects.
    @Test func restartOnTheSamePortKeepsPersistentSessions() throws {
        let broker = try startedBroker()
        let port = broker.port
        let clientID = "tmm-fleet-\(UInt32.random(in: 0...UInt32.max))"
        func publish(_ topic: String, _ payload: String, retain: Bool = false) throws -> MQTTToolRun {
            try broker.publish(
                topic: topic, payload: payload, retain: retain, user: login.user, password: login.password)
        }
        try #require(try publish("tmm/unit/status", #"{"state":"online"}"#, retain: true).status == 0)
        let away = try MQTTSubscriber(
            broker: broker, topic: "tmm/unit/events", user: login.user, password: login.password, clientID: clientID)
        away.stop()
        let live = try MQTTSubscriber(
            broker: broker, topic: "tmm/unit/events", user: login.user, password: login.password)
        defer { live.stop() }
        try #require(try publish("tmm/unit/events", #"{"n":1}"#).status == 0)
        try #require(try publish("tmm/unit/events", #"{"n":2}"#).status == 0)

        broker.stop()
        #expect(!broker.isRunning)
        #expect(!MosquittoBroker.acceptsConnection(port: port), "port \(port) still accepts")
        #expect(FileManager.default.fileExists(atPath: broker.persistenceFile), "no persistence file")
        #expect(try publish("tmm/unit/events", #"{"n":"lost"}"#).status != 0, "published during the outage")

        try broker.start()
        #expect(broker.port == port)
        #expect(MosquittoBroker.acceptsConnection(port: port))
        #expect(live.waitUntilSubscribed(count: 2, timeout: .seconds(15)), "no reconnection: \(live.output)")
        try #require(try publish("tmm/unit/events", #"{"n":3}"#).status == 0)
        let back = try MQTTSubscriber(
            broker: broker, topic: "tmm/unit/events", user: login.user, password: login.password, clientID: clientID)
        defer { back.stop() }
        #expect(back.waitFor(count: 3, topic: "tmm/unit/events"), "\(back.output)\n\(broker.log)")
        #expect(back.messages(topic: "tmm/unit/events").map(\.payload) == [#"{"n":1}"#, #"{"n":2}"#, #"{"n":3}"#])
        #expect(
            try MQTTSubscriber.retained(
                broker: broker, topic: "tmm/unit/status", user: login.user, password: login.password)
                == #"{"state":"online"}"#)
        #expect(live.waitFor(count: 3, topic: "tmm/unit/events"), "\(live.output)")
    }

    /// SIGKILL: the port refuses at once; started again, it runs on the same port.
    @Test func killAndStartAgain() throws {
        let broker = try startedBroker()
        broker.kill()
        #expect(!MosquittoBroker.acceptsConnection(port: broker.port))
        try broker.restart()
        let run = try broker.publish(topic: "tmm/unit/x", payload: "{}", user: login.user, password: login.password)
        #expect(run.status == 0, "\(run)")
    }

    /// TLS with the fixture's CA: mosquitto_pub verifies the server (127.0.0.1 in its SAN) on
    /// tlsPort; the subscriber over TLS gets the message; a client that trusts only the system's
    /// CAs refuses the server.
    @Test func tlsListenerWithTheFixturesCA() throws {
        let broker = try startedBroker(tls: true)
        let tlsPort = try #require(broker.tlsPort)
        #expect(tlsPort != broker.port)
        #expect(broker.url(user: "u", password: "p", tls: true) == "mqtts://u:p@127.0.0.1:\(tlsPort)")
        let subscriber = try MQTTSubscriber(
            broker: broker, topic: "tmm/unit/location", user: login.user, password: login.password, tls: true)
        defer { subscriber.stop() }
        let run = try broker.publish(
            topic: "tmm/unit/location", payload: #"{"lat":1}"#, user: login.user, password: login.password, tls: true)
        #expect(run.status == 0, "\(run)\n\(broker.log)")
        #expect(subscriber.waitFor(count: 1, topic: "tmm/unit/location"), "\(subscriber.output)")
        let withoutCA = try MQTTToolRun.run(
            "/usr/bin/mosquitto_pub",
            [
                "-h", "127.0.0.1", "-p", String(tlsPort), "-u", login.user, "-P", login.password, "-t", "x", "-m", "{}",
                "--tls-use-os-certs",
            ])
        #expect(withoutCA.status != 0, "\(withoutCA)")
    }

    /// `requireClientCertificate`: a client with the fixture's client certificate gets in, one
    /// without is refused.
    @Test func clientCertificateRequired() throws {
        let broker = try startedBroker(tls: true, requireClientCertificate: true)
        #expect(broker.clientCertFile.map(FileManager.default.fileExists(atPath:)) == true)
        let with = try broker.publish(
            topic: "tmm/unit/x", payload: "{}", user: login.user, password: login.password, tls: true,
            clientCertificate: true)
        #expect(with.status == 0, "\(with)\n\(broker.log)")
        let without = try broker.publish(
            topic: "tmm/unit/x", payload: "{}", user: login.user, password: login.password, tls: true)
        #expect(without.status != 0, "\(without)")
    }

    /// The hostile broker starts in each mode, accepts a connection, and prints its summary on stop.
    @Test(arguments: HostileMQTTBroker.Mode.allCases)
    func hostileBrokerStarts(mode: HostileMQTTBroker.Mode) throws {
        let hostile = try HostileMQTTBroker(mode: mode)
        #expect(hostile.url == "mqtt://127.0.0.1:\(hostile.port)")
        #expect(MosquittoBroker.acceptsConnection(port: hostile.port))
        if mode == .refuse || mode == .closeAtOnce || mode == .garbage {
            let run = try MQTTToolRun.run(
                "/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(hostile.port), "-t", "x", "-m", "{}"],
                timeout: .seconds(10))
            #expect(run.status != 0 && run.status != nil, "\(run)")
            if mode == .refuse { #expect(run.output.contains("not authorised"), "\(run)") }
        }
        #expect(waitUntil(timeout: .seconds(10)) { hostile.connections >= 1 }, "\(hostile.output)")
        hostile.stop()
        #expect(!hostile.isRunning)
        let summary = try #require(hostile.summary, "\(hostile.output)")
        #expect((summary["connections"] as? Int ?? 0) >= 1, "\(summary)")
    }
}
