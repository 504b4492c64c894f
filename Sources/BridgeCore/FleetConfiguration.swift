import ByteCoding

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

/// An MQTT broker as an operator writes it: `mqtt://[USER[:PASSWORD]@]HOST[:PORT]`, `mqtts://` for TLS.
///
/// The authority is read as the NTRIP client's is (ByteCoding's URLAuthority: user information up to
/// the last `@`, the user name to the first `:`, both %-decoded; an IPv6 host in brackets), except that
/// an MQTT user name may hold a `:` (`%3A`): CONNECT sends it as a string of its own. The password is
/// the one secret: no error message quotes it or the URL around it, and `description` leaves it out.
public struct MQTTBroker: Equatable, Sendable, CustomStringConvertible {
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

    /// `mqtt://user@host:1883`, never the password: safe for logs, status and events. The user is
    /// percent-encoded where needed, so the text parses back to this broker (without its password).
    public var description: String {
        var text = usesTLS ? "mqtts://" : "mqtt://"
        if let user { text += PercentEncoding.encode(user) + "@" }
        return text + hostForURL + ":" + String(port)
    }

    /// The host as a URL writes it: an IPv6 address in brackets.
    public var hostForURL: String {
        URLAuthority.hostForURL(host)
    }

    /// Reads `mqtt://[USER[:PASSWORD]@]HOST[:PORT]` or `mqtts://...` (the scheme in any case; a
    /// trailing `/` allowed, no other path). Percent-decodes user and password; IPv6 hosts in
    /// brackets; ports 1883 and 8883 by default. Never puts the password in an error.
    public static func parse(_ url: String) -> Result<MQTTBroker, MQTTBrokerError> {
        do throws(MQTTBrokerError) {
            return .success(try parseThrowing(Array(url.utf8)))
        } catch {
            return .failure(error)
        }
    }

    private static func parseThrowing(_ url: [UInt8]) throws(MQTTBrokerError) -> MQTTBroker {
        // Raw spaces and controls are never part of a URL (RFC 3986 §2); refusing them up front
        // also keeps them out of every later message. Non-ASCII must be percent-encoded.
        if let bad = url.firstIndex(where: { ASCII.isControl($0) || $0 == ASCII.space || $0 >= 0x80 }) {
            throw MQTTBrokerError("the URL holds a space, control or non-ASCII character at offset \(bad)")
        }
        guard let parts = URLAuthority.split(url) else {
            throw MQTTBrokerError("the URL must start with mqtt:// or mqtts://")
        }
        let usesTLS: Bool
        switch parts.scheme {
        case "mqtt": usesTLS = false
        case "mqtts": usesTLS = true
        default: throw MQTTBrokerError("the URL must start with mqtt:// or mqtts://")
        }
        let authority: URLAuthority
        do throws(URLAuthorityError) {
            authority = try URLAuthority.parse(parts.authority)
        } catch {
            throw MQTTBrokerError(error.description)
        }
        if parts.rest.contains(ASCII.question) || parts.rest.contains(ASCII.hash) {
            throw MQTTBrokerError("the URL has a query or fragment; it takes none")
        }
        guard parts.rest.count <= 1 else {
            throw MQTTBrokerError("the URL has a path; a broker URL ends after HOST[:PORT] (topics go in mqtt-topic)")
        }
        return MQTTBroker(
            host: authority.host, port: authority.port, user: authority.user, password: authority.password,
            usesTLS: usesTLS)
    }
}

/// Why a broker URL was refused: one sentence naming the part at fault, never the password.
public struct MQTTBrokerError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String

    init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
