import ByteCoding
import Corrections
import HTTP1
import Input
import Logging
import TMMProtocol
import WebSocket

// Everything `tmm-bridge run` can be told, from the command line or a configuration file.
//
// One option table serves both: a file line `api-port = 9737` means exactly what `--api-port
// 9737` means, so the documentation lists each option once (docs/configuration.md). Values from
// the command line override the file's; for repeatable options (`listen`, `device`,
// `allow-app-id`) the command line's list replaces the file's list.

/// The daemon's configuration, with the defaults a production install wants.
public struct BridgeConfiguration: Sendable, Equatable {
    /// Where the listeners bind when nothing is configured: IPv4 and IPv6 loopback only.
    public static let defaultListenAddresses = ["127.0.0.1", "::1"]

    /// Addresses every server listens on; nil means `defaultListenAddresses`, where a machine
    /// without IPv6 loopback is tolerated (logged) instead of refused.
    public var listenAddresses: [String]?
    /// Each server's first-choice port (TMM's 9635...9640 unless configured).
    public var basePorts = PortAssignment.defaults
    /// First port of the fallback scan for a server whose port is busy (TMM-API.md §2.3: 9650).
    public var fallbackStart: UInt16 = 9650
    /// Who may register: `allowlist` (only `allowedApplicationIDs`) or `open` (any GUID).
    public var registration = RegistrationMode.allowlist
    /// The allowlist (configuration `allow-app-id`, repeatable).
    public var allowedApplicationIDs: [GUID] = []
    /// Where the registry of applications is kept; nil: `defaultStateDirectory()`.
    public var stateDirectory: String?
    /// The secure ports' certificate chain (PEM: the server certificate, then intermediates) and
    /// its private key (`tls-certificate`, `tls-key`); nil for both: a local CA and certificate
    /// made in `<state directory>/tls/` (docs/tls.md).
    public var tlsCertificate: String?
    public var tlsKey: String?
    /// Where the control socket (and a private gpsd's files) live; nil: `defaultRuntimeDirectory()`.
    public var runtimeDirectory: String?
    /// Receivers given by path (ttys, ptys) in addition to those udev finds.
    public var devices: [String] = []
    /// Which receivers TMM clients are served first when several are present (`prefer`, in
    /// order; docs/input.md, "Several receivers").
    public var preferredReceivers: [ReceiverPreference] = []
    /// Paired Bluetooth SPP receivers the daemon binds to rfcomm ttys and re-binds (`bluetooth`).
    public var bluetoothReceivers: [BluetoothReceiverSetting] = []
    /// The gpsd to use; nil: the system gpsd on 127.0.0.1:2947 if it answers, else a private one.
    public var gpsd: GPSDAddress?
    /// gpsd's control socket, for handing it devices (nil: found automatically where possible).
    public var gpsdControlSocket: String?
    /// Whether the bridge's private gpsd runs read-only (`-b`: it never writes to a receiver).
    /// `false` lets it write the RTCM corrections to the USB and serial receivers it locks, at the
    /// price of its probing each receiver as a system gpsd does. A system gpsd is not affected.
    public var gpsdReadOnly = true
    /// Watch udev for receivers being plugged in and unplugged.
    public var discovery = true
    /// Play a capture into a pseudo-terminal as if it were a receiver (the demo, and tests).
    public var replay: ReplaySource?
    /// Time-outs, sizes and rates of the servers.
    public var limits = ServerLimits()
    /// Web origins whose pages may use the servers (`allowed-origins`): any, as TMM does (the
    /// default: Trimble's web sample is served from anywhere), or a list (docs/security.md).
    public var allowedOrigins = HTTPOriginPolicy.any
    /// `allowed-origins = *` was given, so an origin given as well is a contradiction, whichever
    /// line comes first (not just a default being replaced).
    public var allowsAnyOriginExplicitly = false
    /// Whom a daemon started as root runs as after start-up (nil: `tmm-bridge` if that user
    /// exists, else `nobody`; `root` keeps root). See docs/security.md, "Privileges".
    public var user: String?
    /// The group it runs as (nil: `dialout`, so serial receivers stay readable, else the
    /// user's primary group).
    public var group: String?
    /// The least severe messages logged (`log-level`); a reload applies it.
    public var logLevel = LogLevel.info
    /// The NTRIP client (`ntrip`, `ntrip-gga-interval`, `ntrip-receiver`, `ntrip-ca`).
    public var corrections = CorrectionsConfiguration()
    /// Fleet publishing to an MQTT broker (`mqtt`, `mqtt-topic`, `mqtt-rate`, `mqtt-spool`, ...).
    public var fleet = FleetConfiguration()
    /// The operator dashboard (`dashboard`, `dashboard-token`, `dashboard-listen`).
    public var dashboard = DashboardConfiguration()

    public init() {}

    /// The registration policy this configuration describes.
    public var registrationPolicy: RegistrationPolicy {
        switch registration {
        case .allowlist: .allowlist(Set(allowedApplicationIDs))
        case .open: .open
        }
    }
}

/// `registration = allowlist | open`.
public enum RegistrationMode: String, Sendable, Equatable {
    case allowlist, open
}

/// `gpsd = HOST:PORT`.
public struct GPSDAddress: Sendable, Equatable {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }
}

/// A capture played into a pseudo-terminal (`demo`, `replay = FILE`).
public enum ReplaySource: Sendable, Equatable {
    /// The Trimble RTK capture built into the binary.
    case demo
    /// A capture file in gpsd's log format (NMEA lines; `#` lines are comments).
    case file(String)
}

/// Time-outs, sizes and rates. Times are nanoseconds, sizes bytes.
public struct ServerLimits: Sendable, Equatable {
    /// A kept-alive HTTP connection with no request in progress is closed quietly after this.
    public var httpIdleTimeout: Int64 = 30_000_000_000
    /// A request whose head or body is still incomplete after this gets 408 and is closed.
    public var httpRequestTimeout: Int64 = 10_000_000_000
    /// A TLS connection whose handshake is not done after this is closed (a silent or stalled
    /// client on a secure port holds a descriptor and a session until then).
    public var tlsHandshakeTimeout: Int64 = 10_000_000_000
    /// Memory the TLS handshakes in progress may hold together, each counted at its most
    /// (`ConnectionAdmission.handshakeCost`: 409 handshakes); a new one beyond it closes the
    /// oldest. No option: tests lower it.
    public var tlsHandshakeMemory = 32 << 20
    /// KeyUpdates (and refused TLS 1.2 renegotiations) a TLS client may send at once; one more a
    /// second after that; beyond, the connection is closed. Each is a key derivation and, when
    /// the client asks for it, a reply of ours. No option: tests raise it.
    public var tlsKeyUpdateBurst = 8
    /// Open client connections (all servers together) beyond which new ones are closed at once.
    /// Clamped at start to what the open-file limit leaves (BridgeServer), and a share of it is
    /// kept for REST so WebSocket clients cannot lock out the API.
    public var maxConnections = 4096
    /// Registered applications beyond which a registration is refused (each costs a digest per
    /// second on the access-code worker and a line of the registry file).
    public var maxRegisteredApplications = 1000
    /// What one client may take of Access Code V2's ledger, decryptions and auto-registrations
    /// (not options: see AccessCodeV2Limits).
    public var accessCodeV2 = AccessCodeV2Limits()
    /// WebSocket frame and message limits, ping interval, pong and close time-outs.
    public var webSocket = WebSocketConnection.Configuration()
    /// A client's unsent backlog at which queued positions are replaced by the latest one.
    public var queueSoftLimit = 64 * 1024
    /// Bytes a client may fall behind (queued plus dropped since its queue was last empty)
    /// before `slowClientGrace` starts; still behind after it, the client is closed with 1008.
    public var queueHardLimit = 256 * 1024
    /// See `queueHardLimit`.
    public var slowClientGrace: Int64 = 2_000_000_000
    /// SO_SNDBUF asked for each client connection. Bounds the kernel memory a client that reads
    /// slowly can pin (Linux otherwise grows a buffer to 4 MiB), and keeps a WebSocket backlog in
    /// our queue, where it is coalesced and measured, instead of ageing in the kernel.
    public var sendBuffer = 64 * 1024
    /// How often LocationV1 clients get the latest position (TMM: once per second).
    public var locationV1Interval: Int64 = 1_000_000_000
    /// A position older than this is not resent to V1 clients (input has stalled).
    public var locationV1MaximumAge: Int64 = 3_000_000_000
    /// Shortest time between two LocationV2 epochs (`max-location-rate`, 100 Hz by default: twice
    /// the 50 Hz the bridge must carry). Faster epochs coalesce to the latest (docs/server.md), so
    /// a gpsd that floods cannot make every V2 client's stream, nor the encoder, run at its pace.
    public var locationV2MinimumInterval: Int64 = 10_000_000
    /// How long `PUT /api/v1/receiver {"isConnected":true}` waits for the receiver before answering.
    public var receiverConnectTimeout: Int64 = 10_000_000_000
    /// Period of the housekeeping timer (WebSocket pings, HTTP time-outs, slow clients, watchdog).
    public var tickInterval: Int64 = 250_000_000

    public init() {}
}

/// One option of the table.
public struct ConfigurationOption: Sendable {
    /// The name: `--name` on the command line, `name = ...` in a file.
    public let name: String
    /// What the value looks like, for usage text (nil: a flag without a value).
    public let valueName: String?
    /// One line of help.
    public let help: String
    /// May be given more than once (values accumulate).
    public let repeatable: Bool
    fileprivate let apply: @Sendable (inout BridgeConfiguration, String) throws(ConfigurationError) -> Void
}

extension BridgeConfiguration {
    /// Every option, in the order the usage text lists them.
    public static let options: [ConfigurationOption] = [
        option(
            "listen", "ADDRESS", "listen on this numeric address (repeatable; default 127.0.0.1 and ::1)",
            repeatable: true
        ) { c, v throws(ConfigurationError) in
            guard isNumericAddress(v) else {
                throw ConfigurationError(
                    message: "listen: '\(v)' is not a numeric IPv4 or IPv6 address (e.g. 127.0.0.1, ::1, 0.0.0.0)")
            }
            c.listenAddresses = (c.listenAddresses ?? []) + [v]
        },
        portOption(.location, "location-port"),
        portOption(.locationSecure, "location-secure-port"),
        portOption(.api, "api-port"),
        portOption(.apiSecure, "api-secure-port"),
        portOption(.locationV2, "location-v2-port"),
        portOption(.locationV2Secure, "location-v2-secure-port"),
        option("fallback-port-start", "PORT", "first port tried when a server's port is busy (default 9650)") {
            c, v throws(ConfigurationError) in c.fallbackStart = try port(v, "fallback-port-start")
        },
        option("registration", "allowlist|open", "who may register: allowlisted ids (default) or any GUID") {
            c, v throws(ConfigurationError) in
            guard let mode = RegistrationMode(rawValue: v) else {
                throw ConfigurationError(message: "registration must be allowlist or open, not '\(v)'")
            }
            c.registration = mode
        },
        option("allow-app-id", "GUID", "an Application ID that may register (repeatable)", repeatable: true) {
            c, v throws(ConfigurationError) in
            guard let id = GUID(v) else {
                throw ConfigurationError(message: "allow-app-id: '\(v)' is not a GUID (8-4-4-4-12 hex digits)")
            }
            guard !id.isNil else { throw ConfigurationError(message: "allow-app-id: " + GUID.nilRefusal) }
            c.allowedApplicationIDs.append(id)
        },
        option(
            "allowed-origins", "ORIGINS",
            "* (default: any web page) or the origins whose pages may connect, e.g. https://app.example "
                + "(comma- or space-separated, repeatable)",
            repeatable: true
        ) { c, v throws(ConfigurationError) in try c.addAllowedOrigins(v) },
        option("state-dir", "DIR", "where registered applications are kept (default /var/lib/tmm-bridge for root)") {
            c, v throws(ConfigurationError) in c.stateDirectory = try path(v, "state-dir")
        },
        option(
            "tls-certificate", "FILE",
            "the secure ports' certificate chain, PEM (default: "
                + "a certificate from a local CA made in the state directory; see docs/tls.md)"
        ) {
            c, v throws(ConfigurationError) in c.tlsCertificate = try path(v, "tls-certificate")
        },
        option("tls-key", "FILE", "the private key of tls-certificate, PEM, unencrypted (readable by the daemon only)")
        {
            c, v throws(ConfigurationError) in c.tlsKey = try path(v, "tls-key")
        },
        option("runtime-dir", "DIR", "where the control socket lives (default /run/tmm-bridge for root)") {
            c, v throws(ConfigurationError) in c.runtimeDirectory = try path(v, "runtime-dir")
        },
        option(
            "device", "PATH", "a receiver udev does not find, e.g. /dev/ttyS0 or a pty (repeatable)",
            repeatable: true
        ) { c, v throws(ConfigurationError) in c.devices.append(try path(v, "device")) },
        option(
            "prefer", "PATH|SERIAL",
            "serve this receiver when it delivers, by device path or serial number "
                + "(comma- or space-separated, repeatable, first wins)",
            repeatable: true
        ) { c, v throws(ConfigurationError) in try c.addPreferredReceivers(v) },
        option(
            "bluetooth", "ADDRESS [channel N] [rfcomm N]",
            "a paired Bluetooth receiver to bind to /dev/rfcommN and re-bind when its tty goes "
                + "(repeatable; channel 1 and the lowest free N by default)",
            repeatable: true
        ) { c, v throws(ConfigurationError) in
            c.bluetoothReceivers.append(try BluetoothReceiverSetting(parsing: v))
        },
        option(
            "gpsd", "HOST:PORT",
            "the gpsd to read (default: 127.0.0.1:2947 if a trusted gpsd answers there, else a private gpsd)"
        ) {
            c, v throws(ConfigurationError) in
            guard let colon = v.lastIndex(of: ":"), colon > v.startIndex,
                let number = UInt16(v[v.index(after: colon)...]), number > 0
            else { throw ConfigurationError(message: "gpsd must be HOST:PORT, not '\(v)'") }
            var host = String(v[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            c.gpsd = GPSDAddress(host: host, port: number)
        },
        option("gpsd-control", "PATH", "gpsd's control socket, to hand it receivers") {
            c, v throws(ConfigurationError) in c.gpsdControlSocket = try path(v, "gpsd-control")
        },
        option(
            "gpsd-read-only", "yes|no",
            "run the private gpsd read-only, -b (default yes); no lets it write corrections to the receivers it "
                + "locks, and probe them"
        ) { c, v throws(ConfigurationError) in c.gpsdReadOnly = try bool(v, "gpsd-read-only") },
        option(
            "ntrip", "URL",
            "an NTRIP caster whose RTCM corrections go to the served receiver: "
                + "ntrip://USER:PASSWORD@HOST[:PORT]/MOUNT (ntrips:// over TLS; put the password in the file, "
                + "not on the command line)"
        ) {
            c, v throws(ConfigurationError) in
            switch NTRIPSource.parse(v) {
            case .success(let source): c.corrections.source = source
            case .failure(let error): throw ConfigurationError(message: "ntrip: \(error)")
            }
        },
        option(
            "ntrip-gga-interval", "SECONDS", "how often the receiver's GGA goes to the caster (default 10; 0: never)"
        ) {
            c, v throws(ConfigurationError) in
            c.corrections.ggaIntervalSeconds = try count(
                v, "ntrip-gga-interval", CorrectionsConfiguration.ggaIntervalRange)
        },
        option(
            "ntrip-receiver", "PATH",
            "the receiver corrections go to when several are present (default: the served one)"
        ) {
            c, v throws(ConfigurationError) in c.corrections.receiver = try path(v, "ntrip-receiver")
        },
        option("ntrip-ca", "FILE", "certificate authorities (PEM) trusted for ntrips:// besides the system's") {
            c, v throws(ConfigurationError) in c.corrections.authorityFile = try path(v, "ntrip-ca")
        },
        option(
            "mqtt", "URL",
            "the MQTT broker positions, status and events are published to: mqtt://[USER[:PASSWORD]@]HOST[:PORT] "
                + "(mqtts:// over TLS; put the password in the file, not on the command line); off by default"
        ) {
            c, v throws(ConfigurationError) in
            if v == "off" {
                c.fleet.broker = nil
                return
            }
            switch MQTTBroker.parse(v) {
            case .success(let broker): c.fleet.broker = broker
            case .failure(let error): throw ConfigurationError(message: "mqtt: \(error)")
            }
        },
        option(
            "mqtt-topic", "PREFIX",
            "the topics' prefix: PREFIX/location, PREFIX/status, PREFIX/events (default tmm-bridge/HOSTNAME)"
        ) {
            c, v throws(ConfigurationError) in c.fleet.topicPrefix = try topicPrefix(v, "mqtt-topic")
        },
        option(
            "mqtt-rate", "HZ", "location messages per second, 0-50, decimals allowed (default 1; 0: every epoch)"
        ) {
            c, v throws(ConfigurationError) in c.fleet.rateHz = try rate(v, "mqtt-rate", FleetConfiguration.rateRange)
        },
        option("mqtt-spool", "BYTES", "disk kept for messages the broker has not taken yet (default 64M, at least 64K)")
        {
            c, v throws(ConfigurationError) in
            let size = try bytes(v, "mqtt-spool")
            guard size >= FleetConfiguration.minimumSpoolBytes else {
                throw ConfigurationError(
                    message:
                        "mqtt-spool must be at least 64K (\(FleetConfiguration.minimumSpoolBytes) bytes), not '\(v)'")
            }
            c.fleet.spoolBytes = size
        },
        option("mqtt-client-id", "ID", "the MQTT client id (default: derived from /etc/machine-id)") {
            c, v throws(ConfigurationError) in c.fleet.clientID = try clientID(v, "mqtt-client-id")
        },
        option("mqtt-ca", "FILE", "certificate authorities (PEM) trusted for mqtts:// instead of the system's") {
            c, v throws(ConfigurationError) in c.fleet.authorityFile = try path(v, "mqtt-ca")
        },
        option("mqtt-cert", "FILE", "a client certificate (PEM) for brokers that authenticate clients by one") {
            c, v throws(ConfigurationError) in c.fleet.certificateFile = try path(v, "mqtt-cert")
        },
        option("mqtt-key", "FILE", "the private key of mqtt-cert, PEM, unencrypted (readable by the daemon only)") {
            c, v throws(ConfigurationError) in c.fleet.keyFile = try path(v, "mqtt-key")
        },
        option("dashboard", "on|off", "serve the operator dashboard at / on the REST ports (default on)") {
            c, v throws(ConfigurationError) in c.dashboard.isOn = try bool(v, "dashboard")
        },
        option(
            "dashboard-token", "TOKEN",
            "what a dashboard page from another machine must give (at least 16 characters; put it in the file)"
        ) {
            c, v throws(ConfigurationError) in
            guard v.count >= DashboardConfiguration.minimumTokenLength,
                v.utf8.allSatisfy({ $0 > ASCII.space && $0 < 0x7F })
            else {
                throw ConfigurationError(
                    message: "dashboard-token must be at least \(DashboardConfiguration.minimumTokenLength) "
                        + "printable ASCII characters without spaces (e.g. from 'openssl rand -base64 18')")
            }
            c.dashboard.token = v
        },
        option(
            "dashboard-listen", "ADDRESS:PORT",
            "also serve the dashboard, and only it, here (repeatable; needs dashboard-token), e.g. 0.0.0.0:9641",
            repeatable: true
        ) {
            c, v throws(ConfigurationError) in c.dashboard.listen.append(try dashboardListenAddress(v))
        },
        option("discovery", "yes|no", "watch udev for receivers (default yes); --no-discovery turns it off") {
            c, v throws(ConfigurationError) in c.discovery = try bool(v, "discovery")
        },
        option("replay", "FILE", "play a capture (gpsd log format) into a pty as the receiver, looping") {
            c, v throws(ConfigurationError) in c.replay = .file(try path(v, "replay"))
        },
        option("demo", nil, "play the built-in Trimble RTK capture as the receiver, looping") {
            c, v throws(ConfigurationError) in
            if try bool(v, "demo") { c.replay = .demo } else if c.replay == .demo { c.replay = nil }
        },
        option("http-idle-timeout", "SECONDS", "close idle kept-alive HTTP connections after this (default 30)") {
            c, v throws(ConfigurationError) in c.limits.httpIdleTimeout = try seconds(v, "http-idle-timeout")
        },
        option(
            "tls-handshake-timeout", "SECONDS",
            "close a secure-port connection whose TLS handshake is not done after this (default 10)"
        ) {
            c, v throws(ConfigurationError) in c.limits.tlsHandshakeTimeout = try seconds(v, "tls-handshake-timeout")
        },
        option("http-request-timeout", "SECONDS", "answer 408 to a request still incomplete after this (default 10)") {
            c, v throws(ConfigurationError) in c.limits.httpRequestTimeout = try seconds(v, "http-request-timeout")
        },
        option("max-connections", "N", "client connections beyond this are closed at once (default 4096)") {
            c, v throws(ConfigurationError) in c.limits.maxConnections = try count(v, "max-connections", 1...1_000_000)
        },
        option("max-registered-apps", "N", "registrations beyond this many applications are refused (default 1000)") {
            c, v throws(ConfigurationError) in
            c.limits.maxRegisteredApplications = try count(v, "max-registered-apps", 1...100_000)
        },
        option("ws-ping-interval", "SECONDS", "ping a WebSocket client silent this long (default 20)") {
            c, v throws(ConfigurationError) in c.limits.webSocket.pingInterval = try seconds(v, "ws-ping-interval")
        },
        option("ws-pong-timeout", "SECONDS", "drop a client that stays silent this long after a ping (default 20)") {
            c, v throws(ConfigurationError) in c.limits.webSocket.pongTimeout = try seconds(v, "ws-pong-timeout")
        },
        option("ws-max-message", "BYTES", "largest WebSocket frame or message a client may send (default 64K)") {
            c, v throws(ConfigurationError) in
            let size = try bytes(v, "ws-max-message")
            c.limits.webSocket.maxFrameSize = size
            c.limits.webSocket.maxMessageSize = size
        },
        option("ws-queue-soft-limit", "BYTES", "backlog at which a client gets only the latest position (default 64K)")
        {
            c, v throws(ConfigurationError) in c.limits.queueSoftLimit = try bytes(v, "ws-queue-soft-limit")
        },
        option("ws-queue-hard-limit", "BYTES", "how far behind a client may fall before it is closed (default 256K)") {
            c, v throws(ConfigurationError) in c.limits.queueHardLimit = try bytes(v, "ws-queue-hard-limit")
        },
        option("ws-slow-client-grace", "SECONDS", "time past the hard limit before closing with 1008 (default 2)") {
            c, v throws(ConfigurationError) in c.limits.slowClientGrace = try seconds(v, "ws-slow-client-grace")
        },
        option("send-buffer", "BYTES", "kernel send buffer asked for each client connection (default 64K)") {
            c, v throws(ConfigurationError) in c.limits.sendBuffer = try bytes(v, "send-buffer")
        },
        option("receiver-connect-timeout", "SECONDS", "how long PUT isConnected:true waits (default 10)") {
            c, v throws(ConfigurationError) in
            c.limits.receiverConnectTimeout = try seconds(v, "receiver-connect-timeout")
        },
        option(
            "max-location-rate", "HZ",
            "most LocationV2 epochs per second; faster ones coalesce to the latest (default 100)"
        ) {
            c, v throws(ConfigurationError) in
            // Whole hertz, 1 (V1's pace) to 1000: beyond that the cap would no longer bound what a
            // client or the encoder can be made to do.
            c.limits.locationV2MinimumInterval = 1_000_000_000 / Int64(try count(v, "max-location-rate", 1...1000))
        },
        option(
            "user", "NAME",
            "started as root: the user to run as after start-up (default tmm-bridge, else nobody; root keeps root)"
        ) {
            c, v throws(ConfigurationError) in c.user = try accountName(v, "user")
        },
        option("group", "NAME", "started as root: the group to run as after start-up (default dialout)") {
            c, v throws(ConfigurationError) in c.group = try accountName(v, "group")
        },
        option(
            "log-level", "LEVEL", "the least severe messages logged: error, warning, notice, info (default) or debug"
        ) {
            c, v throws(ConfigurationError) in
            guard let level = LogLevel(name: v) else {
                throw ConfigurationError(message: "log-level must be error, warning, notice, info or debug, not '\(v)'")
            }
            c.logLevel = level
        },
    ]

    /// The option called `name`, if any.
    public static func option(named name: String) -> ConfigurationOption? {
        options.first { $0.name == name }
    }

    /// Applies one option. `value` is nil for a flag given without one (`--demo`, `--no-discovery`
    /// becomes `discovery = no` before it gets here).
    public mutating func apply(_ name: String, _ value: String?) throws(ConfigurationError) {
        guard let option = Self.option(named: name) else {
            throw ConfigurationError(message: "unknown option '\(name)'")
        }
        guard let value = value ?? (option.valueName == nil ? "yes" : nil) else {
            throw ConfigurationError(message: "\(name) needs a value (\(option.valueName ?? ""))")
        }
        try option.apply(&self, value)
    }

    /// Forgets the values of a repeatable option (the command line's list replaces the file's).
    public mutating func clear(_ name: String) {
        switch name {
        case "listen": listenAddresses = nil
        case "dashboard-listen": dashboard.listen = []
        case "device": devices = []
        case "prefer": preferredReceivers = []
        case "bluetooth": bluetoothReceivers = []
        case "allow-app-id": allowedApplicationIDs = []
        case "allowed-origins":
            allowedOrigins = .any
            allowsAnyOriginExplicitly = false
        default: break
        }
    }

    /// Checks what single options cannot: distinct ports, a registration policy that can admit
    /// someone, ...
    public func validate() throws(ConfigurationError) {
        do {
            _ = try PortPlan(configuration: portPlanConfiguration)
        } catch {
            throw ConfigurationError(message: error.description)
        }
        if let listenAddresses {
            var seen: Set<String> = []
            for address in listenAddresses where !seen.insert(address).inserted {
                throw ConfigurationError(message: "listen: \(address) is given twice")
            }
        }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            throw ConfigurationError(
                message: tlsCertificate == nil
                    ? "tls-key needs tls-certificate too (or neither, for the local CA's certificate)"
                    : "tls-certificate needs tls-key too (or neither, for the local CA's certificate)")
        }
        if (fleet.certificateFile == nil) != (fleet.keyFile == nil) {
            throw ConfigurationError(
                message: fleet.certificateFile == nil
                    ? "mqtt-key needs mqtt-cert too (or neither: no client certificate)"
                    : "mqtt-cert needs mqtt-key too (or neither: no client certificate)")
        }
        if !dashboard.listen.isEmpty {
            guard dashboard.isOn else {
                throw ConfigurationError(message: "dashboard-listen is given but dashboard = off")
            }
            guard dashboard.token != nil else {
                throw ConfigurationError(
                    message: "dashboard-listen needs dashboard-token: pages from other machines must give it")
            }
            var seen: Set<DashboardListenAddress> = []
            for entry in dashboard.listen where !seen.insert(entry).inserted {
                throw ConfigurationError(message: "dashboard-listen: \(entry) is given twice")
            }
        }
        var addresses: Set<BluetoothAddress> = [], ttys: Set<Int16> = []
        for (setting, rfcomm) in bluetoothReceivers.withTTYNumbers {
            guard addresses.insert(setting.address).inserted else {
                throw ConfigurationError(message: "bluetooth: a receiver is given twice (one line per receiver)")
            }
            guard ttys.insert(rfcomm).inserted else {
                throw ConfigurationError(message: "bluetooth: rfcomm \(rfcomm) is given to two receivers")
            }
        }
        if limits.queueHardLimit < limits.queueSoftLimit {
            throw ConfigurationError(
                message:
                    "ws-queue-hard-limit (\(limits.queueHardLimit)) "
                    + "must not be below ws-queue-soft-limit (\(limits.queueSoftLimit))"
            )
        }
    }

    /// The port plan's configuration.
    public var portPlanConfiguration: PortPlan.Configuration {
        PortPlan.Configuration(basePorts: basePorts, fallbackStart: fallbackStart)
    }

    // MARK: Value parsers

    /// One `allowed-origins` value: `*`, or origins separated by commas and/or white space (so
    /// a list fits one line of the file, or one quoted argument); repeated lines add to the list.
    public mutating func addAllowedOrigins(_ text: String) throws(ConfigurationError) {
        let entries = text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
        guard !entries.isEmpty else {
            throw ConfigurationError(
                message: "allowed-origins needs * or at least one origin (e.g. https://app.example)")
        }
        var origins: Set<HTTPOrigin> = []
        if case .only(let listed) = allowedOrigins { origins = listed }
        for entry in entries {
            if entry == "*" {
                allowsAnyOriginExplicitly = true
                continue
            }
            do {
                origins.insert(try HTTPOrigin(String(entry)))
            } catch {
                throw ConfigurationError(message: "allowed-origins: '\(entry)' is not an origin: \(error)")
            }
        }
        if allowsAnyOriginExplicitly && !origins.isEmpty {
            throw ConfigurationError(
                message:
                    "allowed-origins: * (any origin) cannot be combined with a list of origins; give one or the other")
        }
        allowedOrigins = origins.isEmpty ? .any : .only(origins)
    }

    /// One `prefer` value: receivers separated by commas and/or white space, each a device path
    /// (starting with `/`) or a serial number; repeated lines add to the list, in order.
    public mutating func addPreferredReceivers(_ text: String) throws(ConfigurationError) {
        let entries = text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
        guard !entries.isEmpty else {
            throw ConfigurationError(message: "prefer needs a device path (/dev/ttyUSB0) or a serial number")
        }
        for entry in entries {
            guard let preference = ReceiverPreference(entry) else {
                throw ConfigurationError(message: "prefer: '\(entry)' is neither a device path nor a serial number")
            }
            preferredReceivers.append(preference)
        }
    }

    private static func option(
        _ name: String, _ valueName: String?, _ help: String, repeatable: Bool = false,
        _ apply: @escaping @Sendable (inout BridgeConfiguration, String) throws(ConfigurationError) -> Void
    ) -> ConfigurationOption {
        ConfigurationOption(name: name, valueName: valueName, help: help, repeatable: repeatable, apply: apply)
    }

    private static func portOption(_ server: TMMServer, _ name: String) -> ConfigurationOption {
        option(name, "PORT", "port of the \(server.registrationKey) server (default \(server.defaultPort))") {
            c, v throws(ConfigurationError) in c.basePorts[server] = try port(v, name)
        }
    }

    /// A user or group name as Debian's adduser allows them (whether it exists is checked at
    /// start, where it matters).
    public static func accountName(_ text: String, _ name: String) throws(ConfigurationError) -> String {
        let allowed = text.utf8.allSatisfy { byte in
            ASCII.isAlphanumeric(byte) || byte == ASCII.underscore || byte == ASCII.minus || byte == ASCII.dot
        }
        guard !text.isEmpty, text.utf8.count <= 32, allowed, text.first != "-" else {
            throw ConfigurationError(
                message: "\(name) must be a user or group name (letters, digits, '_', '-', '.'), not '\(text)'")
        }
        return text
    }

    public static func port(_ text: String, _ name: String) throws(ConfigurationError) -> UInt16 {
        guard let value = UInt16(text), value > 0 else {
            throw ConfigurationError(message: "\(name) must be a port number 1-65535, not '\(text)'")
        }
        return value
    }

    public static func count(
        _ text: String, _ name: String, _ range: ClosedRange<Int>
    ) throws(ConfigurationError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError(
                message: "\(name) must be a whole number \(range.lowerBound)-\(range.upperBound), not '\(text)'")
        }
        return value
    }

    /// Seconds with up to 9 decimals (`30`, `0.5`), > 0 and at most a day, in nanoseconds.
    public static func seconds(_ text: String, _ name: String) throws(ConfigurationError) -> Int64 {
        let failure = ConfigurationError(
            message: "\(name) must be a number of seconds above 0 (e.g. 30 or 0.5), not '\(text)'")
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty || parts.count == 2, whole.utf8.allSatisfy(ASCII.isDigit),
            whole.count <= 5
        else { throw failure }
        var nanoseconds = (Int64(whole) ?? 0) * 1_000_000_000
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.count <= 9, fraction.utf8.allSatisfy(ASCII.isDigit) else { throw failure }
            var scaled = Int64(fraction) ?? 0
            for _ in fraction.count..<9 { scaled *= 10 }
            nanoseconds += scaled
        }
        guard nanoseconds > 0, nanoseconds <= 86_400_000_000_000 else { throw failure }
        return nanoseconds
    }

    /// A size: digits with an optional `K` or `M` (binary: 64K = 65 536), from 1 byte to 1 GiB.
    public static func bytes(_ text: String, _ name: String) throws(ConfigurationError) -> Int {
        var digits = Substring(text)
        var multiplier = 1
        switch digits.last {
        case "k", "K": multiplier = 1024
        case "m", "M": multiplier = 1024 * 1024
        default: break
        }
        if multiplier > 1 { digits = digits.dropLast() }
        guard !digits.isEmpty, digits.utf8.allSatisfy(ASCII.isDigit), digits.count <= 10, let value = Int(digits),
            value > 0, value * multiplier <= 1 << 30
        else {
            throw ConfigurationError(
                message: "\(name) must be a size from 1 to 1G bytes (e.g. 65536 or 64K), not '\(text)'")
        }
        return value * multiplier
    }

    public static func bool(_ text: String, _ name: String) throws(ConfigurationError) -> Bool {
        switch text {
        case "yes", "true", "on", "1": return true
        case "no", "false", "off", "0": return false
        default: throw ConfigurationError(message: "\(name) must be yes or no, not '\(text)'")
        }
    }

    public static func path(_ text: String, _ name: String) throws(ConfigurationError) -> String {
        guard !text.isEmpty, !text.utf8.contains(0) else {
            throw ConfigurationError(message: "\(name) needs a path")
        }
        return text
    }

    /// A decimal rate in `range` (`1`, `0.2`, `12.5`): digits with an optional fraction, no sign,
    /// exponent, `nan` or `inf`.
    public static func rate(
        _ text: String, _ name: String, _ range: ClosedRange<Double>
    ) throws(ConfigurationError) -> Double {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let fraction = parts.count == 2 ? parts[1] : nil
        let wellFormed =
            (!parts[0].isEmpty || fraction?.isEmpty == false)
            && parts.allSatisfy { $0.count <= 9 && $0.utf8.allSatisfy(ASCII.isDigit) } && fraction?.isEmpty != true
        guard wellFormed, let value = Double(text), value.isFinite, range.contains(value) else {
            throw ConfigurationError(
                message: "\(name) must be a number from \(Int(range.lowerBound)) to \(Int(range.upperBound)) "
                    + "(e.g. 1, 0.2 or 10; 0: every epoch), not '\(text)'")
        }
        return value
    }

    /// An MQTT topic prefix: the topics are `PREFIX/location`, ... so it is a topic name itself
    /// (MQTT 3.1.1 §4.7): no wildcards, no NUL, and no level the broker would read otherwise.
    public static func topicPrefix(_ text: String, _ name: String) throws(ConfigurationError) -> String {
        let utf8 = text.utf8
        guard !utf8.isEmpty else { throw ConfigurationError(message: "\(name) needs a prefix (e.g. fleet/site-a)") }
        guard utf8.count <= 200 else {
            throw ConfigurationError(message: "\(name) is \(utf8.count) bytes long; at most 200 are allowed")
        }
        guard !utf8.contains(where: ASCII.isControl) else {
            throw ConfigurationError(message: "\(name) cannot hold NUL or another control character")
        }
        guard !utf8.contains(ASCII.plus), !utf8.contains(ASCII.hash) else {
            throw ConfigurationError(message: "\(name) cannot hold + or # (MQTT's wildcards), as '\(text)' does")
        }
        guard utf8.first != ASCII.dollar else {
            throw ConfigurationError(
                message: "\(name) cannot start with $ (brokers keep $ topics, such as $SYS, to themselves)")
        }
        guard utf8.first != ASCII.slash, utf8.last != ASCII.slash else {
            throw ConfigurationError(message: "\(name) cannot start or end with /, as '\(text)' does")
        }
        guard !text.contains("//") else {
            throw ConfigurationError(message: "\(name) has an empty level (//) in '\(text)'")
        }
        return text
    }

    /// An MQTT client id: MQTT 3.1.1 §3.1.3.1 has brokers accept 1-23 bytes of `0-9 A-Z a-z` (and
    /// most `_` and `-`); mosquitto and the others take longer ones, so up to 64 printable ASCII
    /// bytes without spaces.
    public static func clientID(_ text: String, _ name: String) throws(ConfigurationError) -> String {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= 64, utf8.allSatisfy({ ASCII.isPrintable($0) && $0 != ASCII.space })
        else {
            let shown = utf8.allSatisfy(ASCII.isPrintable) && utf8.count <= 80 ? ", not '\(text)'" : ""
            throw ConfigurationError(
                message: "\(name) must be 1 to 64 printable ASCII characters without spaces "
                    + "(best: at most 23 of 0-9, A-Z, a-z, _ and -)\(shown)")
        }
        return text
    }

    /// One `dashboard-listen` value: `ADDRESS:PORT`, the address numeric (IPv6 in brackets), the
    /// port 1-65535.
    static func dashboardListenAddress(_ text: String) throws(ConfigurationError) -> DashboardListenAddress {
        let expected = "dashboard-listen must be ADDRESS:PORT with a numeric address (e.g. 0.0.0.0:9641 or [::]:9641)"
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]), port > 0
        else { throw ConfigurationError(message: "\(expected), not '\(text)'") }
        var address = String(text[..<colon])
        if address.hasPrefix("["), address.hasSuffix("]") {
            address = String(address.dropFirst().dropLast())
            guard address.contains(":") else { throw ConfigurationError(message: "\(expected), not '\(text)'") }
        } else if address.contains(":") {
            throw ConfigurationError(message: "\(expected), not '\(text)': an IPv6 address goes in brackets")
        }
        guard isNumericAddress(address) else { throw ConfigurationError(message: "\(expected), not '\(text)'") }
        return DashboardListenAddress(address: address, port: port)
    }

    /// A numeric IPv4 (dotted quad) or IPv6 address, checked by shape here; the listener's
    /// inet_pton gives the final word.
    public static func isNumericAddress(_ text: String) -> Bool {
        if text.contains(":") {
            return text.utf8.count <= 45
                && text.utf8.allSatisfy { Hex.isDigit($0) || $0 == ASCII.colon || $0 == ASCII.dot }
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy {
                $0.count >= 1 && $0.count <= 3 && $0.utf8.allSatisfy(ASCII.isDigit) && Int($0)! <= 255
            }
    }
}

extension ConfigurationFile {
    /// Applies `entries` to `configuration` in order, with file locations on errors.
    public static func apply(
        _ entries: [Entry], path: String, to configuration: inout BridgeConfiguration
    )
        throws(ConfigurationError)
    {
        for entry in entries {
            do {
                try configuration.apply(entry.name, entry.value)
            } catch {
                throw ConfigurationError(location: "\(path):\(entry.line): ", message: error.message)
            }
        }
    }
}
