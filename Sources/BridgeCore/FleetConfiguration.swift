// Fleet publishing's settings (`mqtt`, `mqtt-topic`, `mqtt-rate`, `mqtt-spool`, `mqtt-client-id`,
// `mqtt-ca`, `mqtt-cert`, `mqtt-key`; docs/fleet.md, docs/configuration.md): the broker positions,
// status and events are published to, and how. All of them are reloadable.

/// `mqtt = mqtt://[USER[:PASSWORD]@]HOST[:PORT]` (or `mqtts://`) and its companions.
public struct FleetConfiguration: Equatable, Sendable {
    /// The broker; nil: fleet publishing is off.
    public var broker: MQTTBroker?
    /// The topics' prefix (`PREFIX/location`, `PREFIX/status`, `PREFIX/events`); nil: the
    /// default, `tmm-bridge/<hostname>`, decided when the daemon starts.
    public var topicPrefix: String?
    /// Location messages per second; 0: every epoch the receiver makes.
    public var rateHz: Double = 1
    /// Bytes on disk for the store-and-forward spool (`mqtt-spool`).
    public var spoolBytes = 64 * 1024 * 1024
    /// The MQTT client id; nil: derived from /etc/machine-id when the daemon starts.
    public var clientID: String?
    /// `mqtt-ca`: certificate authorities (PEM) trusted for `mqtts://` instead of the system's.
    public var authorityFile: String?
    /// `mqtt-cert` and `mqtt-key`: a client certificate (PEM) and its key, for brokers that
    /// authenticate clients by certificate.
    public var certificateFile: String?
    public var keyFile: String?

    public init() {}

    /// Location rates accepted (Hz); 0 is "every epoch".
    public static let rateRange = 0.0...50.0
    /// The smallest spool: a minute of messages at 10 Hz with room to spare.
    public static let minimumSpoolBytes = 64 * 1024
}

/// An MQTT broker as an operator writes it.
public struct MQTTBroker: Equatable, Sendable {
    /// Host name or IP address (an IPv6 address without its brackets).
    public var host: String
    public var port: UInt16
    public var user: String?
    public var password: String?
    /// `mqtts://`: the connection is TLS.
    public var usesTLS: Bool

    /// IANA's ports for MQTT and MQTT over TLS.
    public static let defaultPort: UInt16 = 1883
    public static let defaultTLSPort: UInt16 = 8883

    public init(host: String, port: UInt16? = nil, user: String? = nil, password: String? = nil, usesTLS: Bool = false)
    {
        self.host = host
        self.port = port ?? (usesTLS ? Self.defaultTLSPort : Self.defaultPort)
        self.user = user
        self.password = password
        self.usesTLS = usesTLS
    }
}
