// Fleet publishing's configuration: the broker URL (a table of good ones, one row per rule for bad
// ones, none quoting the password), its description, each mqtt-* option's good and bad values with
// their messages, the client certificate's pairing, and reload.
import BridgeCore
import TestSupport
import Testing

@Suite("MQTT broker URLs", .tags(.unit))
struct MQTTBrokerURLTests {
    @Test(arguments: [
        ("mqtt://broker.example.com", MQTTBroker(host: "broker.example.com")),
        ("mqtt://broker.example.com:1884", MQTTBroker(host: "broker.example.com", port: 1884)),
        ("mqtt://h/", MQTTBroker(host: "h")),
        ("mqtt://fleet@h", MQTTBroker(host: "h", user: "fleet")),
        ("mqtt://fleet:secret@10.0.0.1:1883", MQTTBroker(host: "10.0.0.1", user: "fleet", password: "secret")),
        ("mqtt://fleet:@h", MQTTBroker(host: "h", user: "fleet", password: "")),
        // %-escapes in user and password; a raw @ in the password (the user information ends at the last @).
        ("mqtt://me%40x.org:p%40ss%3Aw%2Fd@h", MQTTBroker(host: "h", user: "me@x.org", password: "p@ss:w/d")),
        ("mqtt://u:p@ss@h", MQTTBroker(host: "h", user: "u", password: "p@ss")),
        // MQTT sends the user name as a string of its own: a colon in it is fine.
        ("mqtt://a%3Ab@h", MQTTBroker(host: "h", user: "a:b")),
        ("mqtt://[::1]", MQTTBroker(host: "::1")),
        ("mqtt://u@[2001:db8::7]:1999/", MQTTBroker(host: "2001:db8::7", port: 1999, user: "u")),
        ("mqtts://h", MQTTBroker(host: "h", port: 8883, usesTLS: true)),
        ("mqtts://u:p@h:443", MQTTBroker(host: "h", port: 443, user: "u", password: "p", usesTLS: true)),
        ("MQTT://H.example", MQTTBroker(host: "H.example")),
        ("MqttS://h", MQTTBroker(host: "h", usesTLS: true)),
    ])
    func parses(_ url: String, _ expected: MQTTBroker) throws {
        #expect(try MQTTBroker.parse(url).get() == expected)
    }

    @Test func defaultPorts() {
        #expect(MQTTBroker.defaultPort == 1883 && MQTTBroker.defaultTLSPort == 8883)
        #expect(MQTTBroker(host: "h").port == 1883)
        #expect(MQTTBroker(host: "h", usesTLS: true).port == 8883)
    }

    /// A refused URL, the message it must get, and whether it holds the password `secret`.
    static let malformed: [(url: String, message: String)] = [
        ("", "the URL must start with mqtt:// or mqtts://"),
        ("broker.example.com", "the URL must start with mqtt:// or mqtts://"),
        ("tcp://u:secret@h:1883", "the URL must start with mqtt:// or mqtts://"),
        ("ws://h", "the URL must start with mqtt:// or mqtts://"),
        ("mqtt:/h", "the URL must start with mqtt:// or mqtts://"),
        ("mqtt://", "the URL names no host"),
        ("mqtt://u:secret@", "the URL names no host"),
        ("mqtt://u:secret@:1883", "the URL names no host"),
        ("mqtt://h:", "the port is not a number from 1 to 65535"),
        ("mqtt://u:secret@h:0", "the port is not a number from 1 to 65535"),
        ("mqtt://h:65536", "the port is not a number from 1 to 65535"),
        ("mqtt://h:x", "the port is not a number from 1 to 65535"),
        ("mqtt://h/topic", "the URL has a path; a broker URL ends after HOST[:PORT] (topics go in mqtt-topic)"),
        ("mqtt://u:secret@h//", "the URL has a path; a broker URL ends after HOST[:PORT] (topics go in mqtt-topic)"),
        ("mqtt://h?x=1", "the URL has a query or fragment; it takes none"),
        ("mqtt://h/?x=1", "the URL has a query or fragment; it takes none"),
        ("mqtt://u:secret@h#x", "the URL has a query or fragment; it takes none"),
        ("mqtt://u:sec ret@h", "the URL holds a space, control or non-ASCII character at offset 12"),
        ("mqtt://h\n", "the URL holds a space, control or non-ASCII character at offset 8"),
        ("mqtt://u:sécret@h", "the URL holds a space, control or non-ASCII character at offset 10"),
        ("mqtt://u%G0:secret@h", "the user name has a malformed %-escape or is not UTF-8"),
        ("mqtt://:secret@h", "the user name before @ is empty"),
        ("mqtt://u%0A:secret@h", "the user name holds a control character"),
        ("mqtt://u:secret%G0@h", "the password has a malformed %-escape or is not UTF-8"),
        ("mqtt://u:secret%FF@h", "the password has a malformed %-escape or is not UTF-8"),
        ("mqtt://u:secret%00@h", "the password holds a control character"),
        ("mqtt://[::1", "the IPv6 address has no closing ]"),
        ("mqtt://[zz::1]", "the text in [] is not an IPv6 address"),
        ("mqtt://[::1]x", "only :PORT may follow the IPv6 address"),
        ("mqtt://::1", "the URL names no host"),
        ("mqtt://h_!", "the host name holds a character a host name cannot have"),
    ]

    @Test(arguments: malformed)
    func refuses(_ url: String, _ message: String) {
        switch MQTTBroker.parse(url) {
        case .success(let broker):
            Issue.record("parsed as \(broker)")
        case .failure(let error):
            #expect(error.message == message)
            #expect(error.description == error.message)
            #expect(!error.message.contains("secret"), "the error quotes the password: \(error.message)")
        }
    }

    @Test func noErrorEverQuotesThePassword() {
        let password = "Pa55-w0rd_XYZ"
        for (url, _) in Self.malformed where url.hasPrefix("mqtt://") && !url.contains("@") {
            let withPassword = url.replacing("://", with: "://user:\(password)@", maxReplacements: 1)
            if case .failure(let error) = MQTTBroker.parse(withPassword) {
                #expect(!error.message.contains(password), "\(withPassword): \(error.message)")
            } else {
                Issue.record("\(withPassword) parsed")
            }
        }
    }

    @Test(arguments: [
        ("mqtt://fleet:secret@broker.example.com", "mqtt://fleet@broker.example.com:1883"),
        ("mqtt://broker.example.com:1884/", "mqtt://broker.example.com:1884"),
        ("mqtts://u:secret@h", "mqtts://u@h:8883"),
        ("mqtt://[::1]", "mqtt://[::1]:1883"),
        ("mqtts://u:secret@[2001:db8::7]:9", "mqtts://u@[2001:db8::7]:9"),
        ("mqtt://me%40x.org:secret@h", "mqtt://me%40x.org@h:1883"),
        ("mqtt://a%3Ab:secret@h", "mqtt://a%3Ab@h:1883"),
    ])
    func descriptionLeavesThePasswordOut(_ url: String, _ expected: String) throws {
        let broker = try MQTTBroker.parse(url).get()
        #expect(broker.description == expected)
        #expect("\(broker)" == expected)
        #expect(!String(reflecting: broker).contains("secret"))
        var withoutPassword = broker
        withoutPassword.password = nil
        #expect(try MQTTBroker.parse(broker.description).get() == withoutPassword, "parses back")
    }

    @Test func hostForURLBracketsIPv6() {
        #expect(MQTTBroker(host: "h").hostForURL == "h")
        #expect(MQTTBroker(host: "fe80::1").hostForURL == "[fe80::1]")
    }
}

@Suite("mqtt-* options", .tags(.unit))
struct FleetOptionTests {
    @Test func defaults() {
        let fleet = BridgeConfiguration().fleet
        #expect(fleet.broker == nil && fleet.topicPrefix == nil && fleet.clientID == nil)
        #expect(fleet.rateHz == 1 && fleet.spoolBytes == 64 * 1024 * 1024)
        #expect(fleet.authorityFile == nil && fleet.certificateFile == nil && fleet.keyFile == nil)
    }

    @Test func mqttTakesAURLOrOff() throws {
        var c = BridgeConfiguration()
        try c.apply("mqtt", "mqtts://fleet:secret@broker.example.com")
        #expect(
            c.fleet.broker == MQTTBroker(host: "broker.example.com", user: "fleet", password: "secret", usesTLS: true))
        try c.apply("mqtt", "off")
        #expect(c.fleet.broker == nil)
    }

    @Test func aBadURLsMessageNamesTheOptionNotThePassword() {
        var c = BridgeConfiguration()
        #expect {
            try c.apply("mqtt", "mqtt://u:secret@h/topic")
        } throws: { error in
            let message = (error as? ConfigurationError)?.message ?? ""
            return message.hasPrefix("mqtt: the URL has a path") && !message.contains("secret")
        }
    }

    @Test(arguments: [
        ("mqtt-topic", "fleet"), ("mqtt-topic", "fleet/site-a/tractor 7"), ("mqtt-topic", "été/北京"),
        ("mqtt-topic", String(repeating: "a", count: 200)), ("mqtt-topic", "a$b"),
        ("mqtt-rate", "0"), ("mqtt-rate", "0.2"), ("mqtt-rate", ".5"), ("mqtt-rate", "1"), ("mqtt-rate", "10"),
        ("mqtt-rate", "50"), ("mqtt-rate", "50.0"), ("mqtt-rate", "12.345"),
        ("mqtt-spool", "64K"), ("mqtt-spool", "65536"), ("mqtt-spool", "512M"), ("mqtt-spool", "1024M"),
        ("mqtt-client-id", "a"), ("mqtt-client-id", "tmm-bridge_0123456789ab"),
        ("mqtt-client-id", String(repeating: "x", count: 64)), ("mqtt-client-id", "site.a/rover:7"),
        ("mqtt-ca", "/etc/tmm-bridge/broker-ca.pem"), ("mqtt-cert", "/etc/tmm-bridge/client.pem"),
        ("mqtt-key", "/etc/tmm-bridge/client.key"),
    ])
    func acceptsAGoodValue(_ name: String, _ value: String) throws {
        var c = BridgeConfiguration()
        try c.apply(name, value)
    }

    @Test func valuesLandInTheFleetConfiguration() throws {
        var c = BridgeConfiguration()
        try c.apply("mqtt-topic", "fleet/site-a")
        try c.apply("mqtt-rate", "0.2")
        try c.apply("mqtt-spool", "1M")
        try c.apply("mqtt-client-id", "rover-7")
        try c.apply("mqtt-ca", "/ca.pem")
        try c.apply("mqtt-cert", "/c.pem")
        try c.apply("mqtt-key", "/k.pem")
        #expect(c.fleet.topicPrefix == "fleet/site-a")
        #expect(c.fleet.rateHz == 0.2)
        #expect(c.fleet.spoolBytes == 1024 * 1024)
        #expect(c.fleet.clientID == "rover-7")
        #expect(
            c.fleet.authorityFile == "/ca.pem" && c.fleet.certificateFile == "/c.pem" && c.fleet.keyFile == "/k.pem")
        #expect(throws: Never.self) { try c.validate() }
    }

    static let rateMessage = "mqtt-rate must be a number from 0 to 50 (e.g. 1, 0.2 or 10; 0: every epoch), not "
    static let idMessage =
        "mqtt-client-id must be 1 to 64 printable ASCII characters without spaces "
        + "(best: at most 23 of 0-9, A-Z, a-z, _ and -)"

    @Test(arguments: [
        ("mqtt", "", "mqtt: the URL must start with mqtt:// or mqtts://"),
        ("mqtt", "none", "mqtt: the URL must start with mqtt:// or mqtts://"),
        ("mqtt-topic", "", "mqtt-topic needs a prefix (e.g. fleet/site-a)"),
        ("mqtt-topic", String(repeating: "a", count: 201), "mqtt-topic is 201 bytes long; at most 200 are allowed"),
        ("mqtt-topic", String(repeating: "é", count: 101), "mqtt-topic is 202 bytes long; at most 200 are allowed"),
        ("mqtt-topic", "fleet/+/x", "mqtt-topic cannot hold + or # (MQTT's wildcards), as 'fleet/+/x' does"),
        ("mqtt-topic", "fleet/#", "mqtt-topic cannot hold + or # (MQTT's wildcards), as 'fleet/#' does"),
        ("mqtt-topic", "a\u{0}b", "mqtt-topic cannot hold NUL or another control character"),
        ("mqtt-topic", "a\nb", "mqtt-topic cannot hold NUL or another control character"),
        ("mqtt-topic", "$SYS/x", "mqtt-topic cannot start with $ (brokers keep $ topics, such as $SYS, to themselves)"),
        ("mqtt-topic", "/fleet", "mqtt-topic cannot start or end with /, as '/fleet' does"),
        ("mqtt-topic", "fleet/", "mqtt-topic cannot start or end with /, as 'fleet/' does"),
        ("mqtt-topic", "/", "mqtt-topic cannot start or end with /, as '/' does"),
        ("mqtt-topic", "a//b", "mqtt-topic has an empty level (//) in 'a//b'"),
        ("mqtt-rate", "", rateMessage + "''"),
        ("mqtt-rate", "51", rateMessage + "'51'"),
        ("mqtt-rate", "50.01", rateMessage + "'50.01'"),
        ("mqtt-rate", "-1", rateMessage + "'-1'"),
        ("mqtt-rate", "+1", rateMessage + "'+1'"),
        ("mqtt-rate", "nan", rateMessage + "'nan'"),
        ("mqtt-rate", "inf", rateMessage + "'inf'"),
        ("mqtt-rate", "1e1", rateMessage + "'1e1'"),
        ("mqtt-rate", "0x10", rateMessage + "'0x10'"),
        ("mqtt-rate", "1.", rateMessage + "'1.'"),
        ("mqtt-rate", ".", rateMessage + "'.'"),
        ("mqtt-rate", "1.2.3", rateMessage + "'1.2.3'"),
        ("mqtt-rate", " 1", rateMessage + "' 1'"),
        ("mqtt-rate", "fast", rateMessage + "'fast'"),
        ("mqtt-spool", "63K", "mqtt-spool must be at least 64K (65536 bytes), not '63K'"),
        ("mqtt-spool", "65535", "mqtt-spool must be at least 64K (65536 bytes), not '65535'"),
        ("mqtt-spool", "2G", "mqtt-spool must be a size from 1 to 1G bytes (e.g. 65536 or 64K), not '2G'"),
        ("mqtt-spool", "lots", "mqtt-spool must be a size from 1 to 1G bytes (e.g. 65536 or 64K), not 'lots'"),
        ("mqtt-client-id", "", idMessage + ", not ''"),
        ("mqtt-client-id", "rover 7", idMessage + ", not 'rover 7'"),
        (
            "mqtt-client-id", String(repeating: "x", count: 65),
            idMessage + ", not '\(String(repeating: "x", count: 65))'"
        ),
        ("mqtt-client-id", "été", idMessage),
        ("mqtt-client-id", "a\tb", idMessage),
        ("mqtt-ca", "", "mqtt-ca needs a path"),
        ("mqtt-cert", "", "mqtt-cert needs a path"),
        ("mqtt-key", "a\u{0}b", "mqtt-key needs a path"),
    ])
    func refusesABadValue(_ name: String, _ value: String, _ message: String) {
        var c = BridgeConfiguration()
        #expect {
            try c.apply(name, value)
        } throws: { error in
            (error as? ConfigurationError)?.message == message
        }
    }

    @Test(arguments: [
        ("mqtt-cert", "mqtt-cert needs mqtt-key too (or neither: no client certificate)"),
        ("mqtt-key", "mqtt-key needs mqtt-cert too (or neither: no client certificate)"),
    ])
    func aClientCertificateNeedsItsKey(_ given: String, _ message: String) throws {
        var c = BridgeConfiguration()
        try c.apply(given, "/etc/tmm-bridge/client.pem")
        #expect {
            try c.validate()
        } throws: { error in
            (error as? ConfigurationError)?.message == message
        }
    }

    static let mqttOptions = [
        "mqtt", "mqtt-topic", "mqtt-rate", "mqtt-spool", "mqtt-client-id", "mqtt-ca", "mqtt-cert", "mqtt-key",
    ]

    @Test func everyOptionIsInTheTableWithHelpAndIsReloadable() throws {
        for name in Self.mqttOptions {
            let option = try #require(BridgeConfiguration.option(named: name), "\(name)")
            #expect(option.valueName != nil && !option.help.isEmpty && !option.repeatable, "\(name)")
            #expect(BridgeConfiguration.reloadableOptions.contains(name), "\(name)")
        }
    }

    @Test func aReloadSwitchesToTheNewBroker() throws {
        let old = BridgeConfiguration()
        var new = old
        try new.apply("mqtt", "mqtt://u:secret@broker.example.com")
        try new.apply("mqtt-topic", "fleet/a")
        try new.apply("mqtt-rate", "5")
        #expect(old.changedOptions(to: new) == ["mqtt", "mqtt-topic", "mqtt-rate"])
        let running = old.reloaded(from: new)
        #expect(running.fleet == new.fleet)
        #expect(running.changedOptions(to: new).isEmpty)
    }
}
