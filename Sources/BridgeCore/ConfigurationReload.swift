import TMMProtocol
import WebSocket

// What a reload (SIGHUP) changes in a running daemon. The file is read again, with the command
// line's options on top as at start; the options below take effect at once (docs/configuration.md,
// "Reload"), every other changed one is named in a warning and waits for a restart: ports,
// addresses and directories are bound or made once, and the input side (gpsd, devices, discovery,
// replay, the preferred receivers, the Bluetooth bindings) and the TLS materials are set up once.

extension BridgeConfiguration {
    /// The options a running daemon applies on a reload. Limits that a connection copies when it
    /// is accepted (time-outs, WebSocket and queue sizes, send buffer) apply to connections made
    /// after the reload; the others (max-connections, max-registered-apps, max-location-rate,
    /// tls-handshake-timeout) to everything at once.
    public static let reloadableOptions: Set<String> = [
        "registration", "allow-app-id", "allowed-origins", "log-level",
        "http-idle-timeout", "tls-handshake-timeout", "http-request-timeout", "max-connections", "max-registered-apps",
        "ws-ping-interval", "ws-pong-timeout", "ws-max-message", "ws-queue-soft-limit", "ws-queue-hard-limit",
        "ws-slow-client-grace", "send-buffer", "receiver-connect-timeout", "max-location-rate",
        "ntrip", "ntrip-gga-interval", "ntrip-receiver", "ntrip-ca",
        "mqtt", "mqtt-topic", "mqtt-rate", "mqtt-spool", "mqtt-client-id", "mqtt-ca", "mqtt-cert", "mqtt-key",
    ]

    /// The options whose values differ in `new`, in the table's order. Lists are compared as
    /// sets (`allow-app-id` lines in another order are no change).
    public func changedOptions(to new: BridgeConfiguration) -> [String] {
        var changed: Set<String> = []
        func note(_ name: String, _ differs: Bool) { if differs { changed.insert(name) } }
        note(
            "listen",
            Set(listenAddresses ?? Self.defaultListenAddresses)
                != Set(new.listenAddresses ?? Self.defaultListenAddresses)
                || (listenAddresses == nil) != (new.listenAddresses == nil))
        note("location-port", basePorts[.location] != new.basePorts[.location])
        note("location-secure-port", basePorts[.locationSecure] != new.basePorts[.locationSecure])
        note("api-port", basePorts[.api] != new.basePorts[.api])
        note("api-secure-port", basePorts[.apiSecure] != new.basePorts[.apiSecure])
        note("location-v2-port", basePorts[.locationV2] != new.basePorts[.locationV2])
        note("location-v2-secure-port", basePorts[.locationV2Secure] != new.basePorts[.locationV2Secure])
        note("fallback-port-start", fallbackStart != new.fallbackStart)
        note("registration", registration != new.registration)
        note("allow-app-id", Set(allowedApplicationIDs) != Set(new.allowedApplicationIDs))
        note("allowed-origins", allowedOrigins != new.allowedOrigins)
        note("state-dir", stateDirectory != new.stateDirectory)
        note("tls-certificate", tlsCertificate != new.tlsCertificate)
        note("tls-key", tlsKey != new.tlsKey)
        note("runtime-dir", runtimeDirectory != new.runtimeDirectory)
        note("device", Set(devices) != Set(new.devices))
        note("gpsd", gpsd != new.gpsd)
        note("gpsd-control", gpsdControlSocket != new.gpsdControlSocket)
        note("gpsd-read-only", gpsdReadOnly != new.gpsdReadOnly)
        note("discovery", discovery != new.discovery)
        note("ntrip", corrections.source != new.corrections.source)
        note("ntrip-gga-interval", corrections.ggaIntervalSeconds != new.corrections.ggaIntervalSeconds)
        note("ntrip-receiver", corrections.receiver != new.corrections.receiver)
        note("ntrip-ca", corrections.authorityFile != new.corrections.authorityFile)
        note("mqtt", fleet.broker != new.fleet.broker)
        note("mqtt-topic", fleet.topicPrefix != new.fleet.topicPrefix)
        note("mqtt-rate", fleet.rateHz != new.fleet.rateHz)
        note("mqtt-spool", fleet.spoolBytes != new.fleet.spoolBytes)
        note("mqtt-client-id", fleet.clientID != new.fleet.clientID)
        note("mqtt-ca", fleet.authorityFile != new.fleet.authorityFile)
        note("mqtt-cert", fleet.certificateFile != new.fleet.certificateFile)
        note("mqtt-key", fleet.keyFile != new.fleet.keyFile)
        // The dashboard's listeners are bound, and its token given to pages, once.
        note("dashboard", dashboard.isOn != new.dashboard.isOn)
        note("dashboard-token", dashboard.token != new.dashboard.token)
        note("dashboard-listen", Set(dashboard.listen) != Set(new.dashboard.listen))
        // The served receiver's rule and the rfcomm bindings are set up with the input side.
        note("prefer", preferredReceivers != new.preferredReceivers)
        note("bluetooth", bluetoothReceivers != new.bluetoothReceivers)
        if replay != new.replay {
            // One field holds both: name the option(s) on either side.
            note("demo", replay == .demo || new.replay == .demo)
            note("replay", replay.map { $0 != .demo } ?? false || new.replay.map { $0 != .demo } ?? false)
        }
        let (old, next) = (limits, new.limits)
        note("http-idle-timeout", old.httpIdleTimeout != next.httpIdleTimeout)
        note("tls-handshake-timeout", old.tlsHandshakeTimeout != next.tlsHandshakeTimeout)
        note("http-request-timeout", old.httpRequestTimeout != next.httpRequestTimeout)
        note("max-connections", old.maxConnections != next.maxConnections)
        note("max-registered-apps", old.maxRegisteredApplications != next.maxRegisteredApplications)
        note("ws-ping-interval", old.webSocket.pingInterval != next.webSocket.pingInterval)
        note("ws-pong-timeout", old.webSocket.pongTimeout != next.webSocket.pongTimeout)
        note(
            "ws-max-message",
            old.webSocket.maxMessageSize != next.webSocket.maxMessageSize
                || old.webSocket.maxFrameSize != next.webSocket.maxFrameSize)
        note("ws-queue-soft-limit", old.queueSoftLimit != next.queueSoftLimit)
        note("ws-queue-hard-limit", old.queueHardLimit != next.queueHardLimit)
        note("ws-slow-client-grace", old.slowClientGrace != next.slowClientGrace)
        note("send-buffer", old.sendBuffer != next.sendBuffer)
        note("receiver-connect-timeout", old.receiverConnectTimeout != next.receiverConnectTimeout)
        note("max-location-rate", old.locationV2MinimumInterval != next.locationV2MinimumInterval)
        note("user", user != new.user)
        note("group", group != new.group)
        note("log-level", logLevel != new.logLevel)
        return Self.options.map(\.name).filter(changed.contains)
    }

    /// This configuration with the reloadable options of `new`: what a running daemon switches to
    /// (everything else stays as it started).
    public func reloaded(from new: BridgeConfiguration) -> BridgeConfiguration {
        var result = self
        result.registration = new.registration
        result.allowedApplicationIDs = new.allowedApplicationIDs
        result.allowedOrigins = new.allowedOrigins
        result.allowsAnyOriginExplicitly = new.allowsAnyOriginExplicitly
        result.limits = new.limits
        result.logLevel = new.logLevel
        result.corrections = new.corrections
        result.fleet = new.fleet
        return result
    }
}
