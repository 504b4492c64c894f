import BridgeCore
import ByteCoding
import Fleet
import GNSS
import Posix
import TMMProtocol

// Fleet publishing: the hub's epochs, events and the daemon's status to an MQTT broker
// (docs/fleet.md). The rules of what is sent are here, on the io thread; the connection, the
// spool and every wait are Fleet's MQTTLink, on its own thread:
//
//   hub ──► FleetPublisher (mqtt-rate pacing; LocationV2 JSON; /events JSON; status on change)
//        ──► MQTTLink.submit (never waits) ──► "mqtt" thread: libmosquitto, or the spool on disk
//
//   PREFIX/location  QoS 1   the served receiver's LocationV2 message (utcTime, utcTimeStamp)
//   PREFIX/events    QoS 1   the /events messages
//   PREFIX/status    QoS 1, retained; the last will says {"online":false,...}

/// The fleet publisher. Loop-confined.
final class FleetPublisher: HubSubscriber {
    /// What `status` reports, for the retained status (wired by the server).
    var daemonStatus: () -> DaemonStatus? = { nil }

    private let link: MQTTLink
    private let version: String
    private let spoolDirectory: String
    private var configuration: FleetConfiguration
    private var encoder = LocationV2Encoder()
    /// The last location message's instant (the receiver's UTC in nanoseconds, else its arrival,
    /// monotonic), for `mqtt-rate`.
    private var lastLocationAt: Int64?
    /// The status is looked at once a second (it holds only slow facts).
    private var lastStatusAt: Int64 = 0
    /// The defaults decided at start: `tmm-bridge/<hostname>` and the machine's client id.
    private let defaultTopicPrefix: String
    private let defaultClientID: String

    /// The spool lives in `<state-dir>/mqtt-spool`.
    static let spoolDirectoryName = "mqtt-spool"
    /// An epoch this much early still counts as on time for `mqtt-rate` (a receiver's clock and
    /// ours jitter by milliseconds; without it, 1 Hz from a 1 Hz receiver would skip epochs).
    static let rateTolerance = 0.05

    /// Makes the link's thread (before the daemon drops privileges); nothing is opened yet.
    init(
        configuration: FleetConfiguration, stateDirectory: String, version: String, log: Logger
    ) throws(Errno) {
        self.configuration = configuration
        self.version = version
        spoolDirectory = stateDirectory + "/" + Self.spoolDirectoryName
        defaultTopicPrefix = Self.defaultTopicPrefix(hostName: CurrentProcess.hostName)
        defaultClientID = Self.defaultClientID(machineID: Self.machineID(), hostName: CurrentProcess.hostName)
        link = try MQTTLink(log: log)
    }

    deinit { link.stop(finalStatus: nil) }

    /// Opens the spool and connects when a broker is configured; a spool that cannot be used,
    /// or a TLS file the daemon's user cannot read (libmosquitto opens them at each connection),
    /// stops the start.
    func start() throws(BridgeServerError) {
        if configuration.broker != nil {
            for (option, path) in [
                ("mqtt-ca", configuration.authorityFile), ("mqtt-cert", configuration.certificateFile),
                ("mqtt-key", configuration.keyFile),
            ] {
                guard let path else { continue }
                do { try CurrentProcess.checkCanRead(path) } catch {
                    throw .fleetFile(option: option, path: path, error)
                }
            }
        }
        do {
            try link.start(
                settings: linkSettings(configuration), spoolDirectory: spoolDirectory,
                spoolLimit: configuration.spoolBytes)
        } catch {
            throw .fleetSpool(error)
        }
    }

    /// Publishes `{"online":false,"reason":"stopped"}`, keeps what the broker did not
    /// acknowledge in the spool, and ends the link's thread.
    func stop() {
        link.stop(
            finalStatus: configuration.broker == nil
                ? nil : FleetStatusMessage.offline(version: version, clientID: clientID, reason: "stopped"))
    }

    // MARK: - Hub

    func publish(_ epoch: PublishedEpoch) {
        guard configuration.broker != nil else { return }
        // Paced by the receiver's own clock when the epoch has one: two epochs gpsd hands over
        // together are still a second apart, and the second is not skipped. A time that goes
        // back (a replay looping, a day without a date wrapping) starts the pacing again.
        let instant = epoch.position.time.map { $0.unixNanoseconds ?? $0.nanosecondsOfDay } ?? epoch.at
        if configuration.rateHz > 0, let last = lastLocationAt, instant >= last {
            let interval = 1e9 / configuration.rateHz
            guard Double(instant - last) >= interval * (1 - Self.rateTolerance) else { return }
        }
        lastLocationAt = instant
        encoder.encode(epoch.position, identity: epoch.identity)
        link.submit(
            FleetMessage(
                topic: .location, payload: encoder.bytes, unixMilliseconds: wallClockMilliseconds()))
    }

    func publish(_ event: BridgeEvent, unixMilliseconds: Int64) {
        guard configuration.broker != nil else { return }
        link.submit(
            FleetMessage(
                topic: .events, payload: BridgeEventEncoder.bytes(event, unixMilliseconds: unixMilliseconds),
                unixMilliseconds: unixMilliseconds))
    }

    func tick(now: Int64) {
        guard configuration.broker != nil, now - lastStatusAt >= 1_000_000_000, let status = daemonStatus() else {
            return
        }
        lastStatusAt = now
        link.updateStatus(FleetStatusMessage.online(status, clientID: clientID))
    }

    func reconfigure(_ configuration: BridgeConfiguration) {
        guard configuration.fleet != self.configuration else { return }
        self.configuration = configuration.fleet
        lastLocationAt = nil
        lastStatusAt = 0
        link.reconfigure(settings: linkSettings(configuration.fleet), spoolLimit: configuration.fleet.spoolBytes)
    }

    // MARK: - Status

    func status(now: Int64) -> DaemonStatus.Fleet? {
        let report = link.report
        guard configuration.broker != nil || report.spool.pendingRecords > 0 || report.published > 0 else {
            return nil
        }
        let spool = report.spool
        return DaemonStatus.Fleet(
            state: report.state.rawValue, message: report.message,
            stateSeconds: Int(max(0, now - report.stateSince) / 1_000_000_000), broker: report.broker,
            topicPrefix: report.topicPrefix, clientID: report.clientID, rate: configuration.rateHz,
            connections: report.connections, published: report.published, acknowledged: report.acknowledged,
            inFlight: report.inFlight, lost: report.lost, spooled: spool.spooled, drained: spool.drained,
            dropped: spool.dropped, damaged: spool.damaged, recovered: spool.recovered, pending: spool.pendingRecords,
            spoolBytes: spool.pendingBytes, spoolLimit: configuration.spoolBytes,
            oldestPendingAgeSeconds: spool.oldestPendingUnixMilliseconds.map {
                Double(max(0, wallClockMilliseconds() - $0)) / 1000
            })
    }

    // MARK: - Settings

    private var clientID: String { configuration.clientID ?? defaultClientID }

    private func linkSettings(_ configuration: FleetConfiguration) -> MQTTLinkSettings? {
        guard let broker = configuration.broker else { return nil }
        let clientID = configuration.clientID ?? defaultClientID
        return MQTTLinkSettings(
            host: broker.host, port: broker.port, user: broker.user, password: broker.password,
            usesTLS: broker.usesTLS, authorityFile: configuration.authorityFile,
            certificateFile: configuration.certificateFile, keyFile: configuration.keyFile, clientID: clientID,
            topicPrefix: configuration.topicPrefix ?? defaultTopicPrefix,
            lastWill: FleetStatusMessage.offline(version: version, clientID: clientID, reason: "connection lost"),
            brokerDescription: "\(broker)")
    }

    /// `tmm-bridge/<hostname>` (`tmm-bridge/box` when the name cannot be read); a host name
    /// cannot hold MQTT's wildcards or `/`, but is checked all the same.
    static func defaultTopicPrefix(hostName: String) -> String {
        let usable =
            !hostName.isEmpty && !hostName.utf8.contains { $0 == 0x2B || $0 == 0x23 || $0 == 0x2F || $0 < 0x21 }
        return "tmm-bridge/" + (usable ? hostName : "box")
    }

    /// `tmm-bridge-` and 12 hex digits of the machine id (stable across restarts and host
    /// renames, unique in a fleet); the host name when there is no machine id.
    static func defaultClientID(machineID: String?, hostName: String) -> String {
        if let machineID, machineID.utf8.count >= 12, machineID.utf8.allSatisfy({ Hex.isDigit($0) }) {
            return "tmm-bridge-" + machineID.prefix(12)
        }
        return "tmm-bridge-" + (hostName.isEmpty ? "box" : String(hostName.prefix(40)))
    }

    /// /etc/machine-id's 32 hex digits (systemd's machine-id(5)), nil when absent.
    static func machineID() -> String? {
        guard let bytes = try? AtomicFile.read("/etc/machine-id", limit: 256) else { return nil }
        // The digits, without the newline after them.
        let digits = bytes.prefix(while: Hex.isDigit)
        return digits.isEmpty ? nil : String(decoding: digits, as: UTF8.self)
    }
}

@available(*, unavailable, message: "the fleet publisher belongs to the io thread")
extension FleetPublisher: Sendable {}
