// The option table (command line and file share it) and the configuration file format.
import HTTP1
import TMMProtocol
import TestSupport
import Testing
import WebSocket

@testable import BridgeCore

@Suite("BridgeConfiguration", .tags(.unit))
struct ConfigurationTests {
    @Test func defaultsAreWhatProductionWants() {
        let c = BridgeConfiguration()
        #expect(c.listenAddresses == nil)
        #expect(BridgeConfiguration.defaultListenAddresses == ["127.0.0.1", "::1"])
        #expect(c.basePorts == .defaults)
        #expect(c.fallbackStart == 9650)
        #expect(c.registration == .allowlist)
        #expect(c.registrationPolicy == .allowlist([]))
        #expect(c.discovery)
        #expect(c.limits.locationV1Interval == 1_000_000_000)
        #expect(c.allowedOrigins == .any, "TMM answers every origin; so does the bridge unless told otherwise")
        #expect(throws: Never.self) { try c.validate() }
    }

    @Test(arguments: [
        ("listen", "::1"), ("listen", "0.0.0.0"), ("location-port", "1"), ("api-port", "65535"),
        ("fallback-port-start", "30000"), ("registration", "open"), ("registration", "allowlist"),
        ("allow-app-id", "12345678-1234-1234-1234-123456789ABC"), ("state-dir", "/var/lib/x"),
        ("runtime-dir", "/run/x"), ("device", "/dev/ttyUSB0"), ("gpsd", "127.0.0.1:2947"), ("gpsd", "[::1]:2947"),
        ("gpsd-control", "/run/gpsd.sock"), ("gpsd-read-only", "no"), ("gpsd-read-only", "yes"), ("discovery", "no"),
        ("discovery", "yes"), ("replay", "x.log"),
        ("demo", "yes"), ("http-idle-timeout", "0.5"), ("http-request-timeout", "10"), ("max-connections", "1"),
        ("ws-ping-interval", "20"), ("ws-pong-timeout", "0.000000001"), ("ws-max-message", "64K"),
        ("ws-queue-soft-limit", "1"), ("ws-queue-hard-limit", "1M"), ("ws-slow-client-grace", "86400"),
        ("send-buffer", "4096"), ("receiver-connect-timeout", "3"), ("allowed-origins", "*"),
        ("allowed-origins", "https://app.example"), ("allowed-origins", "null"),
        ("max-location-rate", "1"), ("max-location-rate", "1000"),
        ("user", "nobody"), ("user", "tmm-bridge"), ("user", "root"), ("group", "dialout"), ("group", "Debian-gdm"),
        ("tls-certificate", "/etc/tmm-bridge/server.pem"), ("tls-key", "/etc/tmm-bridge/server.key"),
        ("tls-handshake-timeout", "0.5"), ("ntrip", "ntrip://u:p@caster.example.com:2101/RTCM3"),
        ("ntrip", "ntrips://caster.example.com/MOUNT"), ("ntrip", "ntrip://[::1]/M"), ("ntrip-gga-interval", "0"),
        ("ntrip-gga-interval", "3600"), ("ntrip-receiver", "/dev/ttyACM0"), ("ntrip-ca", "/etc/tmm-bridge/ca.pem"),
    ])
    func everyOptionAcceptsAGoodValue(_ name: String, _ value: String) throws {
        var c = BridgeConfiguration()
        try c.apply(name, value)
    }

    @Test(arguments: [
        ("listen", "localhost", "not a numeric IPv4 or IPv6 address"),
        ("listen", "256.0.0.1", "not a numeric"),
        ("listen", "1.2.3", "not a numeric"),
        ("api-port", "0", "port number 1-65535"),
        ("api-port", "65536", "port number 1-65535"),
        ("api-port", "-1", "port number"),
        ("api-port", "", "port number"),
        ("registration", "closed", "allowlist or open"),
        ("allow-app-id", "{12345678-1234-1234-1234-123456789abc}", "not a GUID"),
        ("allow-app-id", "12345678123412341234123456789abc", "not a GUID"),
        ("allow-app-id", "00000000-0000-0000-0000-000000000000", "the nil UUID) is not an application id"),
        ("ntrip", "http://caster.example.com/M", "ntrip"),
        ("ntrip", "ntrip://caster.example.com", "ntrip"),
        ("ntrip-gga-interval", "3601", "whole number 0-3600"),
        ("ntrip-gga-interval", "-1", "whole number"),
        ("gpsd", "localhost", "HOST:PORT"),
        ("gpsd", ":2947", "HOST:PORT"),
        ("gpsd", "h:0", "HOST:PORT"),
        ("discovery", "maybe", "yes or no"),
        ("gpsd-read-only", "sometimes", "gpsd-read-only must be yes or no"),
        ("http-idle-timeout", "0", "seconds above 0"),
        ("http-idle-timeout", "-1", "seconds"),
        ("http-idle-timeout", "1e3", "seconds"),
        ("http-idle-timeout", "1.", "seconds"),
        ("http-idle-timeout", "100000", "seconds"),
        ("http-idle-timeout", "0.0000000001", "seconds"),
        ("max-connections", "0", "whole number 1-1000000"),
        ("max-connections", "many", "whole number"),
        ("ws-max-message", "0", "size from 1"),
        ("ws-max-message", "2G", "size"),
        ("ws-max-message", "K", "size"),
        ("ws-max-message", "1.5K", "size"),
        ("state-dir", "", "needs a path"),
        ("tls-certificate", "", "needs a path"),
        ("tls-key", "", "needs a path"),
        ("allowed-origins", "", "needs * or at least one origin"),
        ("allowed-origins", " , ", "needs * or at least one origin"),
        (
            "allowed-origins", "app.example",
            "allowed-origins: 'app.example' is not an origin: an origin is scheme://host[:port]"
        ),
        ("allowed-origins", "https://app.example/", "'https://app.example/' is not an origin: an origin has no path"),
        ("allowed-origins", "https://a.example,https://b.example/x", "'https://b.example/x' is not an origin"),
        ("allowed-origins", "https://a.example:0", "the port must be a number 1-65535"),
        ("allowed-origins", "https://a.example:99999", "the port must be a number 1-65535"),
        ("allowed-origins", "https://user@a.example", "no user name or password"),
        ("allowed-origins", "file:///home/me/app.html", "file:// pages send Origin: null"),
        ("allowed-origins", "https://bücher.example", "xn-- form"),
        ("allowed-origins", "NULL", "is not an origin"),
        ("allowed-origins", "**", "is not an origin"),
        ("allowed-origins", "* https://app.example", "* (any origin) cannot be combined with a list of origins"),
        ("allowed-origins", "https://app.example, *", "cannot be combined"),
        ("max-location-rate", "0", "whole number 1-1000"),
        ("max-location-rate", "1001", "whole number 1-1000"),
        ("max-location-rate", "50.5", "whole number 1-1000"),
        ("user", "", "user must be a user or group name"),
        ("user", "a b", "user must be a user or group name"),
        ("user", "-nobody", "user must be a user or group name"),
        ("user", "x:y", "user must be a user or group name"),
        ("group", "../etc", "group must be a user or group name"),
        ("nonsense", "1", "unknown option 'nonsense'"),
    ])
    func everyOptionRefusesABadValueSayingWhatItWants(_ name: String, _ value: String, _ expected: String) {
        var c = BridgeConfiguration()
        do {
            try c.apply(name, value)
            Issue.record("\(name) = \(value) was accepted")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    /// The private gpsd is read-only (`-b`) unless `gpsd-read-only = no`; the command line's
    /// `--gpsd-read-only no` goes through the same table.
    @Test func gpsdReadOnlyDefaultsToYes() throws {
        #expect(BridgeConfiguration().gpsdReadOnly)
        var c = BridgeConfiguration()
        try c.apply("gpsd-read-only", "no")
        #expect(!c.gpsdReadOnly)
        try c.apply("gpsd-read-only", "yes")
        #expect(c.gpsdReadOnly)
        let option = try #require(BridgeConfiguration.option(named: "gpsd-read-only"))
        #expect(option.valueName == "yes|no" && !option.repeatable)
        #expect(!BridgeConfiguration.reloadableOptions.contains("gpsd-read-only"), "gpsd is started once")
    }

    @Test func tlsCertificateAndKeyGoTogether() throws {
        var certificateOnly = BridgeConfiguration()
        try certificateOnly.apply("tls-certificate", "/etc/c.pem")
        #expect { try certificateOnly.validate() } throws: { "\($0)".contains("tls-certificate needs tls-key too") }
        var keyOnly = BridgeConfiguration()
        try keyOnly.apply("tls-key", "/etc/c.key")
        #expect { try keyOnly.validate() } throws: { "\($0)".contains("tls-key needs tls-certificate too") }
        var both = keyOnly
        try both.apply("tls-certificate", "/etc/c.pem")
        #expect(throws: Never.self) { try both.validate() }
    }

    @Test func flagsNeedNoValueButValuedOptionsDo() throws {
        var c = BridgeConfiguration()
        try c.apply("demo", nil)
        #expect(c.replay == .demo)
        #expect(throws: ConfigurationError.self) { try c.apply("api-port", nil) }
    }

    @Test func valuesAreConverted() throws {
        var c = BridgeConfiguration()
        try c.apply("ws-max-message", "64K")
        try c.apply("ws-queue-hard-limit", "2M")
        try c.apply("http-idle-timeout", "1.25")
        try c.apply("gpsd", "[::1]:2948")
        try c.apply("location-v2-port", "19639")
        try c.apply("allow-app-id", "12345678-1234-1234-1234-123456789ABC")
        #expect(c.limits.webSocket.maxFrameSize == 65_536 && c.limits.webSocket.maxMessageSize == 65_536)
        #expect(c.limits.queueHardLimit == 2 * 1024 * 1024)
        #expect(c.limits.httpIdleTimeout == 1_250_000_000)
        #expect(c.gpsd == GPSDAddress(host: "::1", port: 2948))
        #expect(c.basePorts.locationV2 == 19639)
        #expect(c.allowedApplicationIDs.map(\.canonical) == ["12345678-1234-1234-1234-123456789abc"])
    }

    @Test func repeatableOptionsAccumulateAndClear() throws {
        var c = BridgeConfiguration()
        try c.apply("listen", "127.0.0.1")
        try c.apply("listen", "::1")
        try c.apply("device", "/dev/a")
        try c.apply("device", "/dev/b")
        #expect(c.listenAddresses == ["127.0.0.1", "::1"])
        #expect(c.devices == ["/dev/a", "/dev/b"])
        c.clear("listen")
        c.clear("device")
        #expect(c.listenAddresses == nil && c.devices.isEmpty)
        #expect(
            BridgeConfiguration.options.filter(\.repeatable).map(\.name).sorted()
                == ["allow-app-id", "allowed-origins", "bluetooth", "dashboard-listen", "device", "listen", "prefer"])
    }

    @Test func allowedOriginsAreAListInAnySpellingNormalised() throws {
        var c = BridgeConfiguration()
        try c.apply("allowed-origins", "HTTPS://App.Example:443, http://localhost:8080\thttp://[::1]:8080,,  null")
        try c.apply("allowed-origins", "https://app.example chrome-extension://abcdef")
        let expected = try [
            "https://app.example", "http://localhost:8080", "http://[::1]:8080", "null",
            "chrome-extension://abcdef",
        ].map { try HTTPOrigin($0) }
        #expect(c.allowedOrigins == .only(Set(expected)))
        #expect(c.allowedOrigins.allows(try HTTPOrigin("https://app.example")))
        #expect(!c.allowedOrigins.allows(try HTTPOrigin("http://app.example")))
        c.clear("allowed-origins")
        #expect(c.allowedOrigins == .any)
        try c.apply("allowed-origins", "*")
        #expect(c.allowedOrigins == .any)
        // `*` and a list contradict each other on separate lines too, whichever comes first.
        #expect(throws: ConfigurationError.self) { try c.apply("allowed-origins", "https://app.example") }
        c = BridgeConfiguration()
        try c.apply("allowed-origins", "https://app.example")
        #expect(throws: ConfigurationError.self) { try c.apply("allowed-origins", "*") }
        c.clear("allowed-origins")
        try c.apply("allowed-origins", "*")
        #expect(c.allowedOrigins == .any, "the command line's * replaces the file's list")
    }

    @Test func validationCatchesWhatSingleOptionsCannot() throws {
        var c = BridgeConfiguration()
        try c.apply("api-port", "9635")
        #expect(throws: ConfigurationError(message: "port plan: base port 9635 is configured for two servers")) {
            try c.validate()
        }
        c = BridgeConfiguration()
        try c.apply("listen", "127.0.0.1")
        try c.apply("listen", "127.0.0.1")
        #expect(throws: ConfigurationError(message: "listen: 127.0.0.1 is given twice")) { try c.validate() }
        c = BridgeConfiguration()
        try c.apply("ws-queue-soft-limit", "2K")
        try c.apply("ws-queue-hard-limit", "1K")
        #expect(throws: ConfigurationError.self) { try c.validate() }
    }

    @Test func optionNamesAreUniqueAndDocumented() {
        let names = BridgeConfiguration.options.map(\.name)
        #expect(Set(names).count == names.count)
        for option in BridgeConfiguration.options { #expect(!option.help.isEmpty, "\(option.name)") }
    }
}

@Suite("ConfigurationFile", .tags(.unit))
struct ConfigurationFileTests {
    @Test func aFileWithCommentsQuotesAndBlankLines() throws {
        let text = """
            # tmm-bridge configuration
            registration = open

              api-port=9737   # the REST port
            device = "/dev/serial/by-id/usb-Trimble #1"   # quotes keep spaces and '#'
            allow-app-id = 12345678-1234-1234-1234-123456789abc\r
            state-dir = /var/lib/a#b
            """
        let entries = try ConfigurationFile.parse(text, path: "t.conf")
        #expect(entries.map(\.name) == ["registration", "api-port", "device", "allow-app-id", "state-dir"])
        #expect(
            entries.map(\.value) == [
                "open", "9737", "/dev/serial/by-id/usb-Trimble #1",
                "12345678-1234-1234-1234-123456789abc", "/var/lib/a#b",
            ])
        #expect(entries.map(\.line) == [2, 4, 5, 6, 7])
        var c = BridgeConfiguration()
        try ConfigurationFile.apply(entries, path: "t.conf", to: &c)
        #expect(c.registration == .open && c.basePorts.api == 9737)
    }

    @Test func allowedOriginsInAFile() throws {
        let text = """
            allowed-origins = https://app.example, https://tools.example:8443   # the field apps
            allowed-origins = "null"
            """
        var c = BridgeConfiguration()
        try ConfigurationFile.apply(try ConfigurationFile.parse(text, path: "t.conf"), path: "t.conf", to: &c)
        #expect(
            c.allowedOrigins
                == .only([try HTTPOrigin("https://app.example"), try HTTPOrigin("https://tools.example:8443"), .null]))
    }

    @Test func theDocumentedExampleLoads() throws {
        // docs/configuration.md, "The file".
        let text = """
            # /etc/tmm-bridge/tmm-bridge.conf
            registration = allowlist
            allow-app-id = 12345678-1234-1234-1234-123456789abc
            allow-app-id = 87654321-4321-4321-4321-cba987654321
            device = "/dev/serial/by-id/usb-Trimble_R12i #2"   # quotes keep spaces and '#'
            api-port = 9637
            allowed-origins = https://fieldapp.example, http://localhost:5173   # only these web pages
            """
        var c = BridgeConfiguration()
        try ConfigurationFile.apply(try ConfigurationFile.parse(text, path: "example"), path: "example", to: &c)
        #expect(c.devices == ["/dev/serial/by-id/usb-Trimble_R12i #2"])
        #expect(c.allowedApplicationIDs.count == 2)
        #expect(
            c.allowedOrigins
                == .only([try HTTPOrigin("https://fieldapp.example"), try HTTPOrigin("http://localhost:5173")]))
        // A quoted value may hold what a combining mark would glue to a quote as a Character.
        let entries = try ConfigurationFile.parse("device = \"x\u{301}\"", path: "t")
        #expect(entries.map(\.value) == ["x\u{301}"])
    }

    @Test(arguments: [
        ("api-port 9737", "t.conf:1: expected 'name = value', got 'api-port 9737'"),
        ("= 9737", "t.conf:1: '' is not an option name"),
        ("api port = 1", "t.conf:1: 'api port' is not an option name"),
        ("device = \"/dev/x", "t.conf:1: unterminated quoted value"),
        ("\n\napi-port = zero", "t.conf:3: api-port must be a port number 1-65535, not 'zero'"),
        ("bogus = 1", "t.conf:1: unknown option 'bogus'"),
        ("device = \"/dev/x\" y", "t.conf:1: unexpected 'y' after the closing quote (a comment starts with #)"),
        ("device = /dev/x\ry = z", "t.conf:1: control character U+000D in the line"),
        ("device = /dev/\u{0}x", "t.conf:1: control character U+0000 in the line"),
        ("a\u{301} = 1", "t.conf:1: 'a\u{301}' is not an option name"),
        (
            "allowed-origins = https://a.example\nallowed-origins = https://b.example/",
            "t.conf:2: allowed-origins: 'https://b.example/' is not an origin: "
                + "an origin has no path, query or fragment (drop everything from the '/' after the host)"
        ),
        ("d\u{E9}vice = 1", "t.conf:1: 'd\u{E9}vice' is not an option name"),
        ("\n\nprefer = ", "t.conf:3: prefer needs a device path (/dev/ttyUSB0) or a serial number"),
        (
            "prefer = /dev/ttyUSB0\nprefer = 12\"34",
            "t.conf:2: prefer: '12\"34' is neither a device path nor a serial number"
        ),
    ])
    func malformedLinesNameTheFileAndLine(_ text: String, _ message: String) {
        do {
            var c = BridgeConfiguration()
            try ConfigurationFile.apply(try ConfigurationFile.parse(text, path: "t.conf"), path: "t.conf", to: &c)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description == message)
        }
    }
}
