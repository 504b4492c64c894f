import BridgeCore
import Logging
import TestSupport
import Testing

/// What a reload (SIGHUP) applies and what it reports as needing a restart: every option of the
/// table is named when it changes, and is either applied or reported, never silently dropped.
@Suite("configuration reload: changed, applied, needs a restart", .tags(.unit))
struct ConfigurationReloadTests {
    /// A value other than the default for every option (a new option without one fails
    /// `everyOptionHasASample`, so it cannot escape the two checks below).
    static let samples: [String: String] = [
        "listen": "0.0.0.0", "location-port": "19635", "location-secure-port": "19636", "api-port": "19637",
        "api-secure-port": "19638", "location-v2-port": "19639", "location-v2-secure-port": "19640",
        "fallback-port-start": "19650", "registration": "open", "allow-app-id": "12345678-1234-1234-1234-123456789abc",
        "allowed-origins": "https://app.example", "state-dir": "/s", "tls-certificate": "/c.pem", "tls-key": "/k.pem",
        "runtime-dir": "/r", "device": "/dev/ttyS1", "gpsd": "gpsd.example:2947", "gpsd-control": "/g.sock",
        "gpsd-read-only": "no",
        "discovery": "no", "replay": "/capture.log", "demo": "yes", "http-idle-timeout": "5",
        "tls-handshake-timeout": "5",
        "http-request-timeout": "5", "max-connections": "10", "max-registered-apps": "10", "ws-ping-interval": "5",
        "ws-pong-timeout": "5", "ws-max-message": "1K", "ws-queue-soft-limit": "1K", "ws-queue-hard-limit": "1M",
        "ws-slow-client-grace": "5", "send-buffer": "1K", "receiver-connect-timeout": "5", "max-location-rate": "10",
        "user": "someone", "group": "somegroup", "log-level": "debug",
        "prefer": "/dev/ttyACM1", "bluetooth": "00:11:22:33:44:55",
        "ntrip": "ntrip://user:secret@caster.example/MOUNT", "ntrip-gga-interval": "5",
        "ntrip-receiver": "/dev/ttyACM1", "ntrip-ca": "/ca.pem",
        "mqtt": "mqtts://fleet:secret@broker.example", "mqtt-topic": "fleet/site-a", "mqtt-rate": "10",
        "mqtt-spool": "1M", "mqtt-client-id": "rover-7", "mqtt-ca": "/mqtt-ca.pem", "mqtt-cert": "/client.pem",
        "mqtt-key": "/client.key",
        "dashboard": "off", "dashboard-token": "correct-horse-battery", "dashboard-listen": "0.0.0.0:9641",
    ]

    @Test func everyOptionHasASample() {
        #expect(Set(Self.samples.keys) == Set(BridgeConfiguration.options.map(\.name)))
        #expect(BridgeConfiguration.reloadableOptions.isSubset(of: Set(BridgeConfiguration.options.map(\.name))))
    }

    @Test("a changed option is named, and only that one", arguments: BridgeConfiguration.options.map(\.name))
    func changeIsNamed(_ name: String) throws {
        let old = BridgeConfiguration()
        var new = old
        try new.apply(name, Self.samples[name])
        #expect(old.changedOptions(to: new) == [name])
        #expect(new.changedOptions(to: new).isEmpty)
    }

    @Test(
        "a reload applies the reloadable options and keeps the others as started",
        arguments: BridgeConfiguration.options.map(\.name))
    func reloadAppliesOrKeeps(_ name: String) throws {
        let old = BridgeConfiguration()
        var new = old
        try new.apply(name, Self.samples[name])
        let running = old.reloaded(from: new)
        if BridgeConfiguration.reloadableOptions.contains(name) {
            #expect(running.changedOptions(to: new).isEmpty, "\(name) is applied")
        } else {
            #expect(running == old, "\(name) waits for a restart")
        }
    }

    @Test func theAllowListAndLogLevelAreLiveThePortsAreNot() {
        let reloadable = BridgeConfiguration.reloadableOptions
        for name in [
            "allow-app-id", "registration", "allowed-origins", "log-level", "max-connections", "max-location-rate",
        ] {
            #expect(reloadable.contains(name), "\(name)")
        }
        for name in [
            "api-port", "listen", "state-dir", "runtime-dir", "tls-certificate", "gpsd", "device", "demo", "user",
        ] {
            #expect(!reloadable.contains(name), "\(name)")
        }
    }

    @Test func listsInAnotherOrderAreNoChange() throws {
        var old = BridgeConfiguration()
        try old.apply("allow-app-id", "12345678-1234-1234-1234-123456789abc")
        try old.apply("allow-app-id", "87654321-4321-4321-4321-cba987654321")
        var new = BridgeConfiguration()
        try new.apply("allow-app-id", "87654321-4321-4321-4321-cba987654321")
        try new.apply("allow-app-id", "12345678-1234-1234-1234-123456789abc")
        #expect(old.changedOptions(to: new).isEmpty)
    }

    @Test func logLevelOption() throws {
        var configuration = BridgeConfiguration()
        #expect(configuration.logLevel == .info)
        try configuration.apply("log-level", "warning")
        #expect(configuration.logLevel == .warning)
        #expect(throws: ConfigurationError.self) { try configuration.apply("log-level", "verbose") }
    }
}
