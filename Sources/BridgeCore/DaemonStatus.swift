import FoundationEssentials
import GNSS

// What the running daemon says about itself: `tmm-bridge status` (over the control socket, as
// JSON), the systemd `STATUS=` line and the live status line of `make run` are all made from this
// one value, which the io loop assembles (BridgeServer+Status.swift). Pure: the formatting of
// each of those views lives here too (DaemonStatus+Text.swift), so every word an operator reads is
// tested without a daemon.
//
// Lists are bounded (`listLimit`) so the document stays one short line on the control socket
// whatever the registry and inventory hold; the counts beside them are always whole.

/// `value` as one line of JSON, keys sorted (equal values give equal bytes), slashes as they are
/// (paths and URLs stay readable): what the operator commands print and the control socket
/// carries. `value` must be encodable (no NaN or infinity): a failure is a programming error.
public func oneLineJSON(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    do {
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    } catch {
        preconditionFailure("\(type(of: value)) did not encode as JSON: \(error)")
    }
}

/// The daemon's state for operators (docs/operations.md lists every field).
public struct DaemonStatus: Codable, Sendable, Equatable {
    /// Identifies the document (a client refuses anything else).
    public static let formatName = "tmm-bridge status"
    /// Bumped when a field changes meaning; new fields do not bump it.
    public static let formatVersion = 1
    /// Longest list the daemon puts in the document (receivers, applications).
    public static let listLimit = 64

    public var format: String
    public var formatVersion: Int
    /// The daemon's version (`tmm-bridge --version`).
    public var version: String
    public var pid: Int32
    public var uptimeSeconds: Int
    /// Receivers the bridge knows: the inventory (discovery, configured devices) and whatever gpsd
    /// has open besides; connected ones first. At most `listLimit`.
    public var receivers: [Receiver]
    /// The device path of the receiver whose positions TMM clients are served (docs/input.md,
    /// "Several receivers"); absent while gpsd has none open.
    public var servedReceiver: String?
    /// The Bluetooth receivers of the configuration (`bluetooth =`) and their rfcomm bindings.
    public var bluetooth: [BluetoothBinding] = []
    public var fix: Fix
    public var gpsd: GPSD
    /// Bound port per server, by TMM's key (`locationPort`, `locationSecurePort`, `apiPort`,
    /// `apiSecurePort`, `locationV2Port`, `locationV2SecurePort`).
    public var ports: [String: Int]
    public var clients: Clients
    public var registration: Registration
    /// The NTRIP client and what reaches the receiver (docs/corrections.md); nil in documents of
    /// daemons older than the corrections client.
    public var corrections: Corrections?
    /// Fleet publishing to an MQTT broker (docs/fleet.md); nil when no broker was ever
    /// configured, and in documents of older daemons.
    public var fleet: Fleet?

    public init(
        version: String, pid: Int32, uptimeSeconds: Int, receivers: [Receiver], servedReceiver: String? = nil,
        fix: Fix, gpsd: GPSD, ports: [String: Int], clients: Clients, registration: Registration
    ) {
        format = Self.formatName
        formatVersion = Self.formatVersion
        self.version = version
        self.pid = pid
        self.uptimeSeconds = uptimeSeconds
        self.receivers = receivers
        self.servedReceiver = servedReceiver
        self.fix = fix
        self.gpsd = gpsd
        self.ports = ports
        self.clients = clients
        self.registration = registration
    }

    /// One receiver.
    public struct Receiver: Codable, Sendable, Equatable {
        public var path: String
        /// Present now (plugged in, or a configured device gpsd has open).
        public var connected: Bool
        /// How the bridge learnt of it: `discovery` (udev), `configured` (`device =`, `--device`),
        /// `replay` (the pty a replayed capture, `--demo` or `--replay`, is played into) or `gpsd`
        /// (gpsd has it open but the bridge did not hand it over).
        public var foundBy: String
        /// `usb`, `bluetooth`, `gnss`, `serial` or `configured` (ReceiverConnection).
        public var connection: String?
        public var brand: String?
        public var model: String?
        public var manufacturer: String?
        public var serialNumber: String?
        /// `vvvv:pppp`.
        public var usbID: String?
        public var bluetoothAddress: String?
        public var bluetoothName: String?
        /// The classifier's rule (table row id, `include:…`, `explicit`).
        public var classification: String?
        /// gpsd has the device open.
        public var openInGPSD: Bool
        public var gpsdDriver: String?
        public var gpsdSubtype: String?
        /// Which of gpsd's streams its epochs are read from (`EpochSource`'s raw value: `nmea`, the
        /// receiver's own sentences; `gpsd-json`, gpsd's TPV/SKY/GST for a binary driver). Nil while
        /// gpsd has it closed.
        public var epochSource: String?
        /// Its own stream (every receiver gpsd has open is read on its own watch): whether TMM
        /// clients get it, epochs read, rate (Hz), the latest epoch's fix quality (FixQuality's
        /// case name) and age (s), and whether it has gone silent. Nil while gpsd has it closed.
        public var served: Bool?
        public var epochs: Int?
        public var epochRate: Double?
        public var fixQuality: String?
        public var lastEpochAgeSeconds: Double?
        public var silent: Bool?

        public init(
            path: String, connected: Bool, foundBy: String, connection: String? = nil, brand: String? = nil,
            model: String? = nil, manufacturer: String? = nil, serialNumber: String? = nil, usbID: String? = nil,
            bluetoothAddress: String? = nil, bluetoothName: String? = nil, classification: String? = nil,
            openInGPSD: Bool, gpsdDriver: String? = nil, gpsdSubtype: String? = nil, epochSource: String? = nil,
            served: Bool? = nil,
            epochs: Int? = nil, epochRate: Double? = nil, fixQuality: String? = nil,
            lastEpochAgeSeconds: Double? = nil, silent: Bool? = nil
        ) {
            self.path = path
            self.connected = connected
            self.foundBy = foundBy
            self.connection = connection
            self.brand = brand
            self.model = model
            self.manufacturer = manufacturer
            self.serialNumber = serialNumber
            self.usbID = usbID
            self.bluetoothAddress = bluetoothAddress
            self.bluetoothName = bluetoothName
            self.classification = classification
            self.openInGPSD = openInGPSD
            self.gpsdDriver = gpsdDriver
            self.gpsdSubtype = gpsdSubtype
            self.epochSource = epochSource
            self.served = served
            self.epochs = epochs
            self.epochRate = epochRate
            self.fixQuality = fixQuality
            self.lastEpochAgeSeconds = lastEpochAgeSeconds
            self.silent = silent
        }
    }

    /// A configured Bluetooth receiver's rfcomm binding (RFCOMMKeeper).
    public struct BluetoothBinding: Codable, Sendable, Equatable {
        public var address: String
        public var channel: Int
        /// `/dev/rfcommN`.
        public var device: String
        public var bound: Bool
        /// The link when last asked (`connected`, `clean`, `closed`, ...); nil if unknown.
        public var link: String?
        /// The last bind failure, until a bind succeeds.
        public var lastError: String?
        /// Failed bind attempts since it was last bound, and binds made since start.
        public var failures: Int
        public var binds: Int

        public init(
            address: String, channel: Int, device: String, bound: Bool, link: String? = nil,
            lastError: String? = nil, failures: Int = 0, binds: Int = 0
        ) {
            self.address = address
            self.channel = channel
            self.device = device
            self.bound = bound
            self.link = link
            self.lastError = lastError
            self.failures = failures
            self.binds = binds
        }
    }

    /// The position stream TMM clients get.
    public struct Fix: Codable, Sendable, Equatable {
        /// `waiting` (no position yet), `live` or `lost` (InputState).
        public var input: String
        /// FixQuality's case name of the latest epoch (`noFix`, `autonomous`, `dgps`, `rtkFixed`,
        /// `rtkFloat`, …); nil before the first epoch.
        public var quality: String?
        /// Receiver epochs per second over the last seconds (EpochRateMeter); nil with fewer than
        /// two recent epochs.
        public var epochRate: Double?
        /// Seconds since the latest epoch arrived; nil before the first.
        public var lastEpochAgeSeconds: Double?
        public var latitude: Double?
        public var longitude: Double?
        /// Ellipsoidal height, metres (what LocationV2 calls altitude).
        public var height: Double?
        public var satellites: Int?

        public init(
            input: String, quality: String? = nil, epochRate: Double? = nil, lastEpochAgeSeconds: Double? = nil,
            latitude: Double? = nil, longitude: Double? = nil, height: Double? = nil, satellites: Int? = nil
        ) {
            self.input = input
            self.quality = quality
            self.epochRate = epochRate
            self.lastEpochAgeSeconds = lastEpochAgeSeconds
            self.latitude = latitude
            self.longitude = longitude
            self.height = height
            self.satellites = satellites
        }

        /// `quality` as the FixQuality it names.
        public var fixQuality: FixQuality? { quality.flatMap { name in FixQuality.allCases.first { "\($0)" == name } } }
    }

    /// The gpsd the bridge reads.
    public struct GPSD: Codable, Sendable, Equatable {
        /// `private` (started by the bridge), `system` (found on 127.0.0.1:2947) or `configured`
        /// (`gpsd = HOST:PORT`); nil when the input side was not started from gpsd (tests).
        public var kind: String?
        /// `host:port`.
        public var address: String?
        /// gpsd's release while the bridge is connected to it (e.g. `3.22`); nil otherwise.
        public var release: String?

        public init(kind: String?, address: String?, release: String?) {
            self.kind = kind
            self.address = address
            self.release = release
        }
    }

    /// Clients connected now.
    public struct Clients: Codable, Sendable, Equatable {
        /// Open connections per server (TMM's port keys, as in `ports`), whatever they do: HTTP
        /// requests, WebSocket streams, TLS handshakes.
        public var bySocket: [String: Int]
        /// WebSocket subscribers per stream.
        public var locationV1: Int
        public var locationV2: Int
        public var events: Int
        /// Operator dashboard pages (their hello accepted).
        public var dashboard: Int

        public init(bySocket: [String: Int], locationV1: Int, locationV2: Int, events: Int, dashboard: Int = 0) {
            self.bySocket = bySocket
            self.locationV1 = locationV1
            self.locationV2 = locationV2
            self.events = events
            self.dashboard = dashboard
        }

        /// Every open client connection.
        public var total: Int { bySocket.values.reduce(0, +) }
    }

    /// Registration policy and the registry.
    public struct Registration: Codable, Sendable, Equatable {
        /// `allowlist` or `open`.
        public var policy: String
        /// Application ids the allow-list holds (their count only: they are credentials).
        public var allowedIDs: Int
        /// Applications in the registry.
        public var registered: Int
        /// The latest `listLimit` registrations, oldest first, named as the logs name them.
        public var applications: [Application]
        public var locationV2Unlocked: Bool

        public init(
            policy: String, allowedIDs: Int, registered: Int, applications: [Application], locationV2Unlocked: Bool
        ) {
            self.policy = policy
            self.allowedIDs = allowedIDs
            self.registered = registered
            self.applications = applications
            self.locationV2Unlocked = locationV2Unlocked
        }
    }

    /// Fleet publishing: the broker, its state and the store-and-forward spool. Never the password.
    public struct Fleet: Codable, Sendable, Equatable {
        /// `off`, `connecting`, `connected`, `login-refused`, `unreachable`, `tls-failed`,
        /// `spool-failed`.
        public var state: String
        public var message: String
        public var stateSeconds: Int
        /// `mqtt://user@host:port` (never the password), the topics' prefix, the client id.
        public var broker: String?
        public var topicPrefix: String?
        public var clientID: String?
        /// Location messages per second (0: every epoch).
        public var rate: Double
        /// Successful connections; live messages published and acknowledged; waiting for PUBACK.
        public var connections: Int
        public var published: Int
        public var acknowledged: Int
        public var inFlight: Int
        /// Messages that could not even be spooled (inbox full, spool failed).
        public var lost: Int
        /// The spool: appended since start, drained (acknowledged) since start, dropped when
        /// full, found damaged or left by an earlier run at start; pending now, its bytes and limit,
        /// and the age of the oldest pending message.
        public var spooled: Int
        public var drained: Int
        public var dropped: Int
        public var damaged: Int
        public var recovered: Int
        public var pending: Int
        public var spoolBytes: Int
        public var spoolLimit: Int
        public var oldestPendingAgeSeconds: Double?

        public init(
            state: String, message: String, stateSeconds: Int, broker: String? = nil, topicPrefix: String? = nil,
            clientID: String? = nil, rate: Double = 1, connections: Int = 0, published: Int = 0,
            acknowledged: Int = 0, inFlight: Int = 0, lost: Int = 0, spooled: Int = 0, drained: Int = 0,
            dropped: Int = 0, damaged: Int = 0, recovered: Int = 0, pending: Int = 0, spoolBytes: Int = 0,
            spoolLimit: Int = 0, oldestPendingAgeSeconds: Double? = nil
        ) {
            self.state = state
            self.message = message
            self.stateSeconds = stateSeconds
            self.broker = broker
            self.topicPrefix = topicPrefix
            self.clientID = clientID
            self.rate = rate
            self.connections = connections
            self.published = published
            self.acknowledged = acknowledged
            self.inFlight = inFlight
            self.lost = lost
            self.spooled = spooled
            self.drained = drained
            self.dropped = dropped
            self.damaged = damaged
            self.recovered = recovered
            self.pending = pending
            self.spoolBytes = spoolBytes
            self.spoolLimit = spoolLimit
            self.oldestPendingAgeSeconds = oldestPendingAgeSeconds
        }

        /// A few words for STATUS= and the status line: `mqtt connected`, `mqtt: unreachable`;
        /// nil while off. No counts: they change every second, the line only when a state does.
        public var headline: String? {
            switch state {
            case "off": nil
            case "connected", "connecting": "mqtt " + state
            default: "mqtt: " + state.replacing("-", with: " ")
            }
        }
    }

    /// The corrections client: the caster, its state, what came in and what reached the receiver.
    /// Never the password.
    public struct Corrections: Codable, Sendable, Equatable {
        /// CorrectionsState's code: `off`, `connecting`, `streaming`, `login-refused`,
        /// `no-such-mount-point`, `unreachable`, `no-data`, `protocol-error`.
        public var state: String
        /// The state in words (why, for a failure; the mount points offered for a wrong one).
        public var message: String
        /// Seconds the state has lasted.
        public var stateSeconds: Int
        /// Where the settings come from: `rest` (an app's PUT correctionSource) or `configuration`
        /// (`ntrip =`); nil while off with nothing configured.
        public var origin: String?
        /// `host:port`, the mount point, the user name, TLS or not.
        public var caster: String?
        public var mountPoint: String?
        public var user: String?
        public var tls: Bool?
        /// The NTRIP revision the caster answered with (1 or 2).
        public var revision: Int?
        /// Connection attempts since the settings were applied.
        public var attempts: Int
        /// RTCM bytes received (after de-chunking), valid frames, frames whose CRC failed.
        public var bytes: Int
        public var frames: Int
        public var damagedFrames: Int
        /// Seconds since the last valid frame arrived; nil before the first.
        public var lastFrameAgeSeconds: Double?
        /// The reference station id of the last 1005/1006 message.
        public var stationID: Int?
        /// GGA sentences sent to the caster, and seconds since the last.
        public var ggaSent: Int
        public var lastGGAAgeSeconds: Double?
        /// The receiver the frames go to, how (`gpsd`: gpsd's control socket; `tty`: the device
        /// itself), frames written, dropped (the receiver side slower than the caster) and failed.
        public var receiver: String?
        public var route: String?
        public var framesWritten: Int
        public var framesDropped: Int
        public var writeFailures: Int
        /// The last write failure, in words.
        public var writeError: String?

        public init(
            state: String, message: String, stateSeconds: Int, origin: String? = nil, caster: String? = nil,
            mountPoint: String? = nil, user: String? = nil, tls: Bool? = nil, revision: Int? = nil, attempts: Int = 0,
            bytes: Int = 0, frames: Int = 0, damagedFrames: Int = 0, lastFrameAgeSeconds: Double? = nil,
            stationID: Int? = nil, ggaSent: Int = 0, lastGGAAgeSeconds: Double? = nil, receiver: String? = nil,
            route: String? = nil, framesWritten: Int = 0, framesDropped: Int = 0, writeFailures: Int = 0,
            writeError: String? = nil
        ) {
            self.state = state
            self.message = message
            self.stateSeconds = stateSeconds
            self.origin = origin
            self.caster = caster
            self.mountPoint = mountPoint
            self.user = user
            self.tls = tls
            self.revision = revision
            self.attempts = attempts
            self.bytes = bytes
            self.frames = frames
            self.damagedFrames = damagedFrames
            self.lastFrameAgeSeconds = lastFrameAgeSeconds
            self.stationID = stationID
            self.ggaSent = ggaSent
            self.lastGGAAgeSeconds = lastGGAAgeSeconds
            self.receiver = receiver
            self.route = route
            self.framesWritten = framesWritten
            self.framesDropped = framesDropped
            self.writeFailures = writeFailures
            self.writeError = writeError
        }

        /// A few words for STATUS= and the status line: `corrections streaming`, `corrections:
        /// login refused`; nil while off (nothing to say).
        public var headline: String? {
            switch state {
            case "off": nil
            case "streaming": "corrections streaming"
            case "connecting": "corrections connecting"
            default: "corrections: " + state.replacing("-", with: " ")
            }
        }
    }

    /// A registered application. The id is a credential (Access Code V1 is computed from it), so
    /// only its last four hex digits are given, as in the log (`GUID.logName`).
    public struct Application: Codable, Sendable, Equatable {
        public var name: String
        /// ISO 8601 UTC, as the registry records it.
        public var registeredAt: String

        public init(name: String, registeredAt: String) {
            self.name = name
            self.registeredAt = registeredAt
        }
    }

    // MARK: - JSON

    /// The document as one line of JSON. Only a non-finite double could fail to encode, and the
    /// assembler never puts one in.
    public func json() -> String { oneLineJSON(self) }

    /// Parses a document a daemon sent; the message says what is wrong with it.
    public static func parse(json: String) -> Result<DaemonStatus, ControlFailure> {
        let status: DaemonStatus
        do {
            status = try JSONDecoder().decode(DaemonStatus.self, from: Data(json.utf8))
        } catch {
            return .failure(
                ControlFailure(message: "the daemon's status is not a tmm-bridge status document: \(error)"))
        }
        guard status.format == formatName else {
            return .failure(
                ControlFailure(message: "the daemon's status has format '\(status.format)', not '\(formatName)'"))
        }
        guard status.formatVersion <= formatVersion else {
            return .failure(
                ControlFailure(
                    message:
                        "the daemon's status is version \(status.formatVersion), "
                        + "newer than this tmm-bridge reads (\(formatVersion)): use the daemon's own tmm-bridge"
                ))
        }
        return .success(status)
    }
}
