import CMosquitto
import Glibc
import Logging
import Posix
import Synchronization

/// What the link carries: a topic under the prefix, and the spool's record kind for it.
public enum FleetTopic: UInt8, Sendable, CaseIterable {
    /// `PREFIX/location`, QoS 1: the served receiver's LocationV2 JSON.
    case location = 1
    /// `PREFIX/events`, QoS 1: the `/events` messages.
    case events = 2

    public var name: String {
        switch self {
        case .location: "location"
        case .events: "events"
        }
    }
}

/// One message for the broker, made on the io thread.
public struct FleetMessage: Sendable, Equatable {
    public let topic: FleetTopic
    public let payload: [UInt8]
    /// When it was made (the spool's "oldest pending").
    public let unixMilliseconds: Int64

    public init(topic: FleetTopic, payload: [UInt8], unixMilliseconds: Int64) {
        self.topic = topic
        self.payload = payload
        self.unixMilliseconds = unixMilliseconds
    }
}

/// Where and how to publish (from the configuration; the password is a secret: never logged).
public struct MQTTLinkSettings: Equatable, Sendable {
    public var host: String
    public var port: UInt16
    public var user: String?
    public var password: String?
    public var usesTLS: Bool
    /// PEM files: the CAs trusted for TLS (nil: the system's), a client certificate and its key.
    public var authorityFile: String?
    public var certificateFile: String?
    public var keyFile: String?
    public var clientID: String
    /// `PREFIX` of `PREFIX/location`, `PREFIX/status`, `PREFIX/events`.
    public var topicPrefix: String
    /// The retained status the broker publishes for us if we vanish (`{"online":false,...}`).
    public var lastWill: [UInt8]
    /// `mqtt://user@host:1883` without the password: for logs and status.
    public var brokerDescription: String
    public var keepAliveSeconds: CInt = 15

    public init(
        host: String, port: UInt16, user: String?, password: String?, usesTLS: Bool, authorityFile: String?,
        certificateFile: String?, keyFile: String?, clientID: String, topicPrefix: String, lastWill: [UInt8],
        brokerDescription: String
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.usesTLS = usesTLS
        self.authorityFile = authorityFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.clientID = clientID
        self.topicPrefix = topicPrefix
        self.lastWill = lastWill
        self.brokerDescription = brokerDescription
    }
}

/// The link's health, for `status` and the journal.
public struct MQTTLinkReport: Sendable, Equatable {
    public enum State: String, Sendable {
        /// No broker configured.
        case off
        /// A connection is being made (or will be, after the back-off).
        case connecting
        /// CONNACK accepted: publishing.
        case connected
        /// The broker refused the user name or password, or is not authorising this client.
        case loginRefused = "login-refused"
        /// No connection: refused, no route, name not found, no answer, or lost.
        case unreachable
        /// The TLS handshake failed (certificate not trusted, wrong name, no common protocol).
        case tlsFailed = "tls-failed"
        /// The spool cannot be used: messages of an outage would be lost.
        case spoolFailed = "spool-failed"
    }

    public var state = State.off
    /// Why, for a person ("Connection Refused: bad user name or password.").
    public var message = "no broker configured"
    /// When `state` began (monotonic nanoseconds).
    public var stateSince: Int64 = 0
    /// `mqtt://user@host:port` (never the password), nil while off.
    public var broker: String?
    public var topicPrefix: String?
    public var clientID: String?
    /// Successful CONNACKs since start.
    public var connections = 0
    /// Live messages handed to the broker, and those it acknowledged (PUBACK).
    public var published = 0, acknowledged = 0
    /// Live messages waiting for their PUBACK.
    public var inFlight = 0
    /// Messages lost before the spool: the inbox from the io thread was full, a payload was too
    /// large for the spool, or the spool failed.
    public var lost = 0
    public var spool = SpoolStatistics()

    public init() {}
}

/// The fleet publisher's connection to an MQTT broker: libmosquitto and the store-and-forward
/// spool, on a thread of their own ("mqtt"). The io thread only queues (`submit`, `updateStatus`:
/// never waiting); this thread drives libmosquitto's socket with poll(2) (mosquitto_loop_read,
/// _write, _misc: libmosquitto's external-loop interface), so a slow or hostile broker, a name
/// lookup or an fsync never holds up a client.
///
/// **Nothing lost.** Location and event messages go to the broker at once while it is connected
/// and fewer than `liveWindow` of them wait for their PUBACK; otherwise to the spool (the broker
/// unreachable, or connected but not acknowledging). Messages still unacknowledged when the
/// connection is lost go to the spool too, so a SIGKILL during an outage loses nothing that
/// reached this thread. The spool drains oldest first, `drainWindow` at a time and at most
/// `drainPerSecond`, beside the live stream; each record is removed only at its PUBACK.
/// A new connection starts from a clean session (`mosquitto_reinitialise`): libmosquitto keeps
/// no message of the old one, the spool is the one place unacknowledged messages live.
///
/// **Status.** `PREFIX/status` is retained, QoS 1: the latest one given is published at each
/// connection and whenever it changes; the last will (retained) replaces it if the connection
/// dies without a DISCONNECT. `stop` publishes the final status and disconnects cleanly.
public final class MQTTLink: Sendable {
    /// Live messages waiting for a PUBACK before new ones go to the spool instead.
    public static let liveWindow = 64
    /// Spooled messages in flight at once while draining, and the drain's rate: a fleet
    /// reconnecting together after a network outage must not flood its broker (1,000 boxes:
    /// 50,000 messages a second at most, docs/fleet.md).
    public static let drainWindow = 16
    public static let drainPerSecond = 50
    /// Messages queued by the io thread for this thread: minutes of 1 Hz positions while a
    /// name lookup or a slow disk holds the thread up.
    public static let inboxCapacity = 4096
    /// A connection with no CONNACK after this is given up (a broker that accepts and says nothing).
    public static let connectTimeoutNanoseconds: Int64 = 10_000_000_000
    /// What a broker may send between two packets a publisher expects before it is cut off: a
    /// well-behaved one sends 4 bytes a PUBACK, and 2 a PINGRESP each keep-alive.
    public static let maximumUnansweredBytes = 256 * 1024
    /// Back-off after a failure: 1 s doubling to 30 s (each ±20 %), reset by a CONNACK.
    public static let backoffRange: ClosedRange<Int64> = 1_000_000_000...30_000_000_000

    private let shared: Mutex<Shared>
    private let wakeUp: WakeUpEvent
    /// Signalled by the thread when it has answered `start`'s request to open the spool.
    private let spoolAnswered: WakeUpEvent
    private let thread = Mutex<OSThread?>(nil)
    private let log: Logger

    private struct Shared {
        var inbox: [FleetMessage] = []
        var status: [UInt8]?
        var statusVersion = 0
        /// The settings in force (nil: off), with a version so the thread sees each change once.
        var settings: MQTTLinkSettings?
        var settingsVersion = 0
        var spoolLimit = 64 * 1024 * 1024
        /// `start`'s request to open the spool, and the answer.
        var spoolDirectory: String?
        var spoolOpened: Result<Void, SpoolError>?
        var stopping = false
        var report = MQTTLinkReport()
        var lostInInbox = 0
    }

    /// Makes the thread, idle until `start` (made before the daemon drops privileges, as every
    /// thread is; it opens the spool and connects only after).
    public init(log: Logger) throws(Errno) {
        MosquittoLibrary.initialise()
        self.log = log
        shared = Mutex(Shared())
        wakeUp = try WakeUpEvent()
        spoolAnswered = try WakeUpEvent()
        let started = try OSThread(name: "mqtt") { [self] in LinkRunner(link: self).run() }
        thread.withLock { $0 = started }
    }

    /// With a broker in `settings`: opens the spool in `spoolDirectory` (on the link's thread, as
    /// the user the daemon runs as by now), waits for the answer (a spool that cannot be used
    /// stops the start) and connects. Without: nothing until a reload names one.
    public func start(
        settings: MQTTLinkSettings?, spoolDirectory: String, spoolLimit: Int
    ) throws(SpoolError) {
        shared.withLock {
            $0.spoolDirectory = spoolDirectory
            $0.spoolLimit = spoolLimit
            $0.settings = settings
            $0.settingsVersion += 1
        }
        wakeUp.signal()
        // Off: the spool is opened when a reload names a broker (its failure is then a state).
        guard settings != nil else { return }
        // The thread answers in milliseconds (a scan of the spool's index).
        guard spoolAnswered.wait(milliseconds: 30_000), let opened = shared.withLock({ $0.spoolOpened }) else {
            throw SpoolError("opening the spool", spoolDirectory, reason: "no answer from the mqtt thread within 30 s")
        }
        try opened.get()
    }

    /// A reload: new settings (nil: off; the spool keeps what it holds) and spool size.
    public func reconfigure(settings: MQTTLinkSettings?, spoolLimit: Int) {
        shared.withLock {
            $0.settings = settings
            $0.spoolLimit = spoolLimit
            $0.settingsVersion += 1
        }
        wakeUp.signal()
    }

    /// Queues a message; never waits. False (counted in `lost`) when the inbox is full or the
    /// link is stopping.
    @discardableResult
    public func submit(_ message: FleetMessage) -> Bool {
        let accepted = shared.withLock { shared -> Bool in
            guard !shared.stopping, shared.inbox.count < Self.inboxCapacity else {
                shared.lostInInbox += 1
                return false
            }
            shared.inbox.append(message)
            return true
        }
        if accepted { wakeUp.signal() }
        return accepted
    }

    /// The retained status from now on (published when it differs from the last one sent).
    public func updateStatus(_ payload: [UInt8]) {
        let changed = shared.withLock { shared -> Bool in
            guard shared.status != payload else { return false }
            shared.status = payload
            shared.statusVersion += 1
            return true
        }
        if changed { wakeUp.signal() }
    }

    public var report: MQTTLinkReport {
        shared.withLock { shared in
            var report = shared.report
            report.lost += shared.lostInInbox
            return report
        }
    }

    /// Publishes `finalStatus` (retained) if connected, waits up to `timeoutMilliseconds` for
    /// its PUBACK and what is in flight, disconnects, keeps every unacknowledged message in the
    /// spool, and joins the thread. Idempotent.
    public func stop(finalStatus: [UInt8]?, timeoutMilliseconds: Int = 2000) {
        shared.withLock { shared in
            if !shared.stopping, let finalStatus {
                shared.status = finalStatus
                shared.statusVersion += 1
            }
            shared.stopping = true
        }
        wakeUp.signal()
        let running = thread.withLock { current -> OSThread? in
            defer { current = nil }
            return current
        }
        running?.join()
    }

    deinit { stop(finalStatus: nil) }

    // MARK: - The thread's side

    fileprivate struct Take {
        var messages: [FleetMessage]
        var status: (payload: [UInt8], version: Int)?
        var settings: (MQTTLinkSettings?, version: Int, spoolLimit: Int)?
        var spoolDirectory: String?
        var stopping: Bool
    }

    fileprivate func take(statusVersion: Int, settingsVersion: Int) -> Take {
        wakeUp.clear()
        return shared.withLock { shared in
            let messages = shared.inbox
            shared.inbox.removeAll(keepingCapacity: true)
            return Take(
                messages: messages,
                status: shared.status.flatMap {
                    shared.statusVersion != statusVersion ? ($0, shared.statusVersion) : nil
                },
                settings: shared.settingsVersion != settingsVersion
                    ? (shared.settings, shared.settingsVersion, shared.spoolLimit) : nil,
                spoolDirectory: shared.spoolDirectory, stopping: shared.stopping)
        }
    }

    fileprivate func spoolOpened(_ result: Result<Void, SpoolError>) {
        shared.withLock { $0.spoolOpened = result }
        spoolAnswered.signal()
    }

    fileprivate func publishReport(_ update: (inout MQTTLinkReport) -> Void) {
        shared.withLock { update(&$0.report) }
    }

    fileprivate var wakeUpDescriptor: CInt { wakeUp.descriptor }
    fileprivate var logger: Logger { log }
}

/// The link's thread: owns the libmosquitto handle and the spool. Confined to that thread
/// (libmosquitto's callbacks run inside its loop calls, on it).
private final class LinkRunner {
    let link: MQTTLink
    let log: Logger
    var handle: OpaquePointer?
    var spool: MQTTSpool?
    var settings: MQTTLinkSettings?
    var statusVersion = -1
    var settingsVersion = 0
    var status: [UInt8]?
    var statusSent = true
    var report = MQTTLinkReport()

    enum Phase {
        case idle
        case waiting(until: Int64)
        case connecting(since: Int64)
        case connected
    }
    var phase = Phase.idle
    var backoff = MQTTLink.backoffRange.lowerBound
    /// Live messages handed to libmosquitto, in order, by message id.
    var live: [(mid: CInt, message: FleetMessage)] = []
    /// Spool records in flight: message id → sequence.
    var draining: [CInt: UInt64] = [:]
    var drainTokens = Double(MQTTLink.drainWindow)
    var lastRefill = monotonicNanoseconds()
    /// The status message in flight (its PUBACK ends a clean stop's wait).
    var statusMid: CInt?
    /// libmosquitto's last error line (an OpenSSL reason, for one), for the state's message.
    var lastLibraryError: String?
    var spoolNeedsSync = false
    /// Bytes the broker sent since the last packet we expect (CONNACK, PUBACK) completed.
    var unansweredBytes = 0
    /// The live window overflowed into the spool on this connection (see `accept`).
    var spilling = false
    var spoolLimit = MQTTLink.defaultSpoolLimit
    /// Why the spool could not be opened (the state says so while connected).
    var spoolFailure: String?

    init(link: MQTTLink) {
        self.link = link
        log = link.logger
    }

    func run() {
        handle = mosquitto_new(nil, true, Unmanaged.passUnretained(self).toOpaque())
        defer {
            if let handle { mosquitto_destroy(handle) }
        }
        guard handle != nil else {
            log.error("mqtt: libmosquitto could not make a client (out of memory)")
            link.spoolOpened(
                .failure(SpoolError("starting", "the mqtt thread", reason: "libmosquitto could not make a client")))
            return
        }
        while true {
            let take = link.take(statusVersion: statusVersion, settingsVersion: settingsVersion)
            if let (next, version, limit) = take.settings {
                settingsVersion = version
                spoolLimit = limit
                spool?.setLimit(limit)
                // A broker needs the spool: opened at the first settings that name one.
                if next != nil, spool == nil, let directory = take.spoolDirectory { openSpool(directory) }
                if next != settings { apply(next) }
            }
            if let (payload, version) = take.status {
                statusVersion = version
                status = payload
                statusSent = false
            }
            for message in take.messages { accept(message) }
            if take.stopping {
                finish()
                return
            }
            let now = monotonicNanoseconds()
            advanceConnection(now: now)
            if case .connected = phase {
                sendStatusIfNeeded()
                drain(now: now)
            }
            syncSpool()
            publishReport(now: now)
            wait(now: now)
        }
    }

    // MARK: Settings and the spool

    func openSpool(_ directory: String) {
        do throws(SpoolError) {
            let opened = try MQTTSpool(directory: directory, limitBytes: spoolLimit)
            spool = opened
            let statistics = opened.statistics
            if statistics.recovered > 0 || statistics.damaged > 0 {
                log.notice(
                    "mqtt: the spool holds \(statistics.recovered) messages from before"
                        + (statistics.damaged > 0 ? " (\(statistics.damaged) damaged, dropped)" : "")
                        + ": they are sent once the broker is reached")
            }
            link.spoolOpened(.success(()))
        } catch {
            link.spoolOpened(.failure(error))
            log.error("mqtt: \(error): messages of an outage cannot be kept", key: "mqtt-spool-open")
            spoolFailure = "\(error)"
        }
    }

    func apply(_ next: MQTTLinkSettings?) {
        if case .connected = phase {
            // A clean DISCONNECT (the will is not sent): the new settings may name another broker.
            mosquitto_disconnect(handle)
            _ = mosquitto_loop_write(handle, 1)
        }
        connectionEnded()
        settings = next
        report.broker = next?.brokerDescription
        report.topicPrefix = next?.topicPrefix
        report.clientID = next?.clientID
        backoff = MQTTLink.backoffRange.lowerBound
        if next == nil {
            phase = .idle
            setState(.off, "no broker configured")
        } else {
            phase = .waiting(until: 0)
            statusSent = false
            setState(.connecting, "connecting")
        }
    }

    // MARK: Messages

    func accept(_ message: FleetMessage) {
        // Once the live window overflowed into the spool on this connection, later messages
        // queue behind the overflow until it has drained, so a burst arrives in order. (An
        // outage's backlog, spooled before the connection, drains beside the live stream.)
        if spilling && !(spool?.hasUnsent ?? false) { spilling = false }
        if case .connected = phase, live.count < MQTTLink.liveWindow, !spilling {
            if let mid = publish(topic: message.topic.name, message.payload, retain: false) {
                live.append((mid, message))
                report.published += 1
                return
            }
        }
        if case .connected = phase { spilling = true }
        store(message)
    }

    /// To the spool (or counted as lost when there is none, or it refuses).
    func store(_ message: FleetMessage) {
        guard let spool else {
            report.lost += 1
            return
        }
        do throws(SpoolError) {
            try spool.append(
                kind: message.topic.rawValue, payload: message.payload, unixMilliseconds: message.unixMilliseconds)
            spoolNeedsSync = true
        } catch {
            report.lost += 1
            log.warning("mqtt: a message could not be spooled: \(error)", key: "mqtt-spool")
        }
    }

    func syncSpool() {
        guard spoolNeedsSync, let spool else { return }
        spoolNeedsSync = false
        do throws(SpoolError) { try spool.sync() } catch {
            log.error("mqtt: the spool could not be synced: \(error)", key: "mqtt-spool-sync")
        }
    }

    /// QoS 1 under the prefix; the message id, or nil when libmosquitto refused it.
    func publish(topic: String, _ payload: [UInt8], retain: Bool) -> CInt? {
        guard let settings else { return nil }
        var mid: CInt = 0
        let code = payload.withUnsafeBytes { bytes in
            mosquitto_publish(
                handle, &mid, settings.topicPrefix + "/" + topic, CInt(bytes.count), bytes.baseAddress, 1, retain)
        }
        guard code == MOSQ_ERR_SUCCESS.rawValue else { return nil }
        return mid
    }

    func sendStatusIfNeeded() {
        guard !statusSent, let status else { return }
        if let mid = publish(topic: "status", status, retain: true) {
            statusMid = mid
            statusSent = true
        }
    }

    func drain(now: Int64) {
        guard let spool else { return }
        let elapsed = Double(now - lastRefill) / 1e9
        lastRefill = now
        drainTokens = min(Double(MQTTLink.drainWindow), drainTokens + elapsed * Double(MQTTLink.drainPerSecond))
        let room = min(MQTTLink.drainWindow - draining.count, Int(drainTokens))
        guard room > 0, spool.hasUnsent else { return }
        let records: [SpoolRecord]
        do throws(SpoolError) { records = try spool.takeUnsent(max: room) } catch {
            log.error("mqtt: the spool could not be read: \(error)", key: "mqtt-spool-read")
            return
        }
        for record in records {
            let topic = FleetTopic(rawValue: record.kind) ?? .location
            guard let mid = publish(topic: topic.name, record.payload, retain: false) else {
                spool.returnInFlight()
                draining.removeAll()
                return
            }
            draining[mid] = record.sequence
            drainTokens -= 1
        }
    }

    // MARK: Connection

    func advanceConnection(now: Int64) {
        switch phase {
        case .idle, .connected:
            return
        case .waiting(let until):
            guard now >= until, let settings else { return }
            connect(settings, now: now)
        case .connecting(let since):
            if now - since > MQTTLink.connectTimeoutNanoseconds {
                failed(.unreachable, "no answer from the broker within 10 s", now: now)
            }
        }
    }

    func connect(_ settings: MQTTLinkSettings, now: Int64) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = mosquitto_reinitialise(handle, settings.clientID, true, context)
        lastLibraryError = nil
        mosquitto_connect_callback_set(handle) { _, context, code in
            LinkRunner.from(context).connackArrived(code)
        }
        mosquitto_disconnect_callback_set(handle) { _, context, code in
            LinkRunner.from(context).disconnected(code)
        }
        mosquitto_publish_callback_set(handle) { _, context, mid in
            LinkRunner.from(context).acknowledged(mid)
        }
        mosquitto_log_callback_set(handle) { _, context, level, text in
            guard level == MOSQ_LOG_ERR, let text else { return }
            LinkRunner.from(context).lastLibraryError = String(cString: text)
        }
        _ = mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)
        // Our own window bounds what waits for a PUBACK; libmosquitto queues nothing past it.
        _ = mosquitto_max_inflight_messages_set(handle, 0)
        do throws(MosquittoError) {
            if let user = settings.user {
                try MosquittoError.check(mosquitto_username_pw_set(handle, user, settings.password))
            }
            let will = settings.lastWill.withUnsafeBytes { bytes in
                mosquitto_will_set(
                    handle, settings.topicPrefix + "/status", CInt(bytes.count), bytes.baseAddress, 1, true)
            }
            try MosquittoError.check(will)
            if settings.usesTLS {
                if settings.authorityFile == nil {
                    try MosquittoError.check(mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1))
                }
                try MosquittoError.check(
                    mosquitto_tls_set(
                        handle, settings.authorityFile, settings.authorityFile == nil ? "/etc/ssl/certs" : nil,
                        settings.certificateFile, settings.keyFile, nil))
            }
            // The state stays what the last attempt found (unreachable, login refused) while a
            // retry is under way: "connecting" once, for new settings, would hide it.
            phase = .connecting(since: now)
            try MosquittoError.check(
                mosquitto_connect_async(handle, settings.host, CInt(settings.port), settings.keepAliveSeconds))
        } catch {
            let state: MQTTLinkReport.State = error.code == MOSQ_ERR_TLS.rawValue ? .tlsFailed : .unreachable
            failed(state, describe(error), now: now)
        }
    }

    func describe(_ error: MosquittoError) -> String {
        if error.code == MOSQ_ERR_EAI.rawValue, let settings {
            return "cannot resolve \(settings.host)"
        }
        if let lastLibraryError, error.code == MOSQ_ERR_TLS.rawValue { return lastLibraryError }
        return "\(error)"
    }

    func connackArrived(_ code: CInt) {
        unansweredBytes = 0
        let now = monotonicNanoseconds()
        guard code == 0 else {
            // 4: bad user name or password; 5: not authorised (MQTT 3.1.1 §3.2.2.3).
            let state: MQTTLinkReport.State = code == 4 || code == 5 ? .loginRefused : .unreachable
            failed(state, connackReason(code), now: now)
            return
        }
        phase = .connected
        backoff = MQTTLink.backoffRange.lowerBound
        report.connections += 1
        statusSent = false
        lastRefill = now
        if let spoolFailure {
            setState(.spoolFailed, "connected, but the spool cannot be used: \(spoolFailure)", now: now)
        } else {
            setState(.connected, "connected", now: now)
        }
        log.notice("mqtt: connected to \(settings?.brokerDescription ?? "the broker")")
    }

    func disconnected(_ code: CInt) {
        // 0: the DISCONNECT we sent (a stop or new settings), whose caller carries on.
        guard code != 0 else { return }
        let now = monotonicNanoseconds()
        switch phase {
        case .connected:
            let reason =
                code == MOSQ_ERR_CONN_LOST.rawValue
                ? "the broker closed the connection" : describe(MosquittoError(code: code))
            failed(.unreachable, "connection lost: " + reason, now: now)
        case .connecting:
            let error = MosquittoError(code: code, errno: code == MOSQ_ERR_ERRNO.rawValue ? Errno.current : nil)
            let state: MQTTLinkReport.State = code == MOSQ_ERR_TLS.rawValue ? .tlsFailed : .unreachable
            let reason =
                switch code {
                case MOSQ_ERR_CONN_LOST.rawValue: "the broker closed the connection without accepting it"
                case MOSQ_ERR_PROTOCOL.rawValue, MOSQ_ERR_MALFORMED_PACKET.rawValue:
                    "the broker's answer is not MQTT (\(error))"
                default: describe(error)
                }
            failed(state, reason, now: now)
        case .idle, .waiting:
            break
        }
    }

    func acknowledged(_ mid: CInt) {
        unansweredBytes = 0
        if let index = live.firstIndex(where: { $0.mid == mid }) {
            live.remove(at: index)
            report.acknowledged += 1
        } else if let sequence = draining.removeValue(forKey: mid) {
            spool?.acknowledge(sequence)
        } else if mid == statusMid {
            statusMid = nil
        }
    }

    /// A failed attempt or a lost connection: what was in flight goes to the spool, a fresh
    /// handle waits for the back-off.
    func failed(_ state: MQTTLinkReport.State, _ message: String, now: Int64) {
        let wasConnected: Bool
        if case .connected = phase { wasConnected = true } else { wasConnected = false }
        connectionEnded()
        // ±20 % of jitter: a fleet that lost its broker together does not come back in step.
        let delay = backoff + Int64.random(in: -(backoff / 5)...(backoff / 5))
        phase = .waiting(until: now + delay)
        let seconds = Double(delay / 100_000_000) / 10
        backoff = min(backoff * 2, MQTTLink.backoffRange.upperBound)
        let changed = report.state != state || report.message != message
        setState(state, message, now: now)
        if changed || wasConnected {
            let level: LogLevel = state == .loginRefused || state == .tlsFailed ? .error : .warning
            log("mqtt: \(message); retrying in \(seconds) s", level: level, key: "mqtt-state")
        }
    }

    /// Unacknowledged live messages to the spool (in order); spooled ones in flight back to
    /// unsent; libmosquitto forgets the connection (and every message it held).
    func connectionEnded() {
        if let handle, mosquitto_socket(handle) >= 0 {
            mosquitto_disconnect(handle)
        }
        for (_, message) in live { store(message) }
        live.removeAll()
        draining.removeAll()
        spilling = false
        unansweredBytes = 0
        spool?.returnInFlight()
        statusMid = nil
        statusSent = false
        syncSpool()
        _ = mosquitto_reinitialise(handle, settings?.clientID, true, Unmanaged.passUnretained(self).toOpaque())
    }

    // MARK: Waiting

    func wait(now: Int64) {
        var pollers = [pollfd(fd: link.wakeUpDescriptor, events: Int16(POLLIN), revents: 0)]
        let socket = handle.map { mosquitto_socket($0) } ?? -1
        if socket >= 0 {
            var events = Int16(POLLIN)
            if mosquitto_want_write(handle) { events |= Int16(POLLOUT) }
            pollers.append(pollfd(fd: socket, events: events, revents: 0))
        }
        var timeout: Int64 = 1000
        switch phase {
        case .waiting(let until): timeout = max(0, min(timeout, (until - now) / 1_000_000))
        case .connected where spool?.hasUnsent == true: timeout = 20
        default: break
        }
        _ = poll(&pollers, nfds_t(pollers.count), CInt(timeout))
        guard socket >= 0, pollers.count == 2 else { return }
        let ready = pollers[1].revents
        if ready & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
            // A publisher is only ever sent a few bytes (CONNACK, PUBACK, PINGRESP); libmosquitto
            // reserves whatever size a packet announces (up to 256 MB) and reads on. Counting
            // what arrives between the packets we expect cuts a broker that floods.
            unansweredBytes += FileDescriptor.readableByteCount(socket) ?? 0
            if unansweredBytes > MQTTLink.maximumUnansweredBytes {
                failed(
                    .unreachable,
                    "the broker sent \(unansweredBytes) bytes without an acknowledgement: not an MQTT broker's "
                        + "answer to a publisher", now: monotonicNanoseconds())
                return
            }
            settle(mosquitto_loop_read(handle, 1))
        }
        if mosquitto_socket(handle) >= 0, ready & Int16(POLLOUT) != 0 || mosquitto_want_write(handle) {
            settle(mosquitto_loop_write(handle, 1))
        }
        if mosquitto_socket(handle) >= 0 { settle(mosquitto_loop_misc(handle)) }
    }

    /// A loop call's failure that libmosquitto did not report through the disconnect callback
    /// (a failed TLS handshake returns MOSQ_ERR_TLS and closes the socket without one): handled
    /// as one, so the state says so at once rather than at the connection time-out.
    func settle(_ code: CInt) {
        guard code != MOSQ_ERR_SUCCESS.rawValue, code != MOSQ_ERR_NO_CONN.rawValue else { return }
        switch phase {
        case .connecting, .connected: disconnected(code)
        case .idle, .waiting: break
        }
    }

    // MARK: Stopping

    func finish() {
        let deadline = monotonicNanoseconds() + 2_000_000_000
        if case .connected = phase {
            sendStatusIfNeeded()
            // The final status and what is in flight get their PUBACKs, up to the deadline.
            while monotonicNanoseconds() < deadline, statusMid != nil || !live.isEmpty || !draining.isEmpty {
                guard case .connected = phase else { break }
                wait(now: monotonicNanoseconds())
            }
            if case .connected = phase {
                mosquitto_disconnect(handle)
                _ = mosquitto_loop_write(handle, 1)
            }
        }
        phase = .idle
        connectionEnded()
        if let spool {
            do throws(SpoolError) { try spool.checkpoint() } catch {
                log.error("mqtt: the spool's position could not be saved: \(error)")
            }
        }
        publishReport(now: monotonicNanoseconds())
    }

    // MARK: Report

    func setState(_ state: MQTTLinkReport.State, _ message: String, now: Int64 = monotonicNanoseconds()) {
        if report.state != state { report.stateSince = now }
        report.state = state
        report.message = message
    }

    func publishReport(now: Int64) {
        report.inFlight = live.count
        if let spool { report.spool = spool.statistics }
        let snapshot = report
        link.publishReport { $0 = snapshot }
    }

    static func from(_ context: UnsafeMutableRawPointer?) -> LinkRunner {
        Unmanaged<LinkRunner>.fromOpaque(context!).takeUnretainedValue()
    }
}

extension MQTTLink {
    /// The spool's size when the settings do not say (`mqtt-spool`'s default).
    public static let defaultSpoolLimit = 64 * 1024 * 1024
}
