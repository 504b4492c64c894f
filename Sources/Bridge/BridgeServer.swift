import BridgeCore
import GNSS
import HTTP1
import InputLoop
import Logging
import Posix
import TLS
import Synchronization
import TMMProtocol
import WebSocket

// The io loop: one thread, one epoll selector, every socket, timer and piece of connection state.
//
//   listeners ──accept──► Connection (HTTP) ──upgrade──► Connection (WebSocket, in the hub)
//   control socket ──► registration requests          input inboxes ──► positions and events
//   tick timer (250 ms) ──► time-outs, pings, slow clients, watchdog
//   V1 timer (1 s) ──► the latest position to LocationV1 clients
//   V2 timer (one-shot) ──► a pending epoch the V2 rate cap held back
//
// Nothing here blocks: sockets are non-blocking, writes that do not fit wait in the connection's
// queue until the selector says the socket is writable, and the C-library threads (gpsd, udev,
// replay) hand their values over through inboxes. A slow client therefore only ever costs its
// own queue (see OutboundQueue for the policy).
//
// The file is split by concern: this file owns the loop, listeners and timers;
// BridgeServer+Connections.swift carries out each client connection's state machine
// (BridgeCore's ClientConnection: requests, upgrades, closing), BridgeServer+Hub.swift positions
// and events, BridgeServer+Control.swift the control socket.

/// The daemon's servers, running on the calling thread until stopped.
public final class BridgeServer {
    /// Everything the server needs that is not in the configuration.
    public struct Environment {
        /// The state directory (registry) and runtime directory (control socket), resolved.
        public var stateDirectory: String
        public var runtimeDirectory: String
        /// Reported as `appVersion` and in tmmInfo.
        public var version: String
        /// Listen for SIGINT and SIGTERM (the daemon); tests stop the server with `stopHandle`.
        public var handleSignals: Bool
        /// Send sd_notify READY/WATCHDOG/STOPPING (only does anything under systemd).
        public var notifySystemd: Bool
        /// The user a root daemon drops to after start-up: directories it owns are accepted as
        /// the daemon's (it owned them after the last run).
        public var dropUser: UserID?
        /// The live status line, when standard output is a terminal (`make run`); the loop
        /// redraws it (BridgeServer+Status.swift).
        public var statusLine: StatusLine?
        /// What to send back for a data message a WebSocket client sent (a whole frame), or nil
        /// to ignore it. Nil in the daemon: no option or configuration key sets it. Only the
        /// conformance suite's echo server (Tests/Support/tmm-wsecho, never shipped) sets it, so
        /// that Autobahn's cases run through the daemon's own server code (docs/websocket.md).
        public var dataMessageReply: (@Sendable (WebSocketMessage) -> [UInt8]?)?
        /// Reads the configuration again (file and command line, as at start) for a reload on
        /// SIGHUP; run on the worker thread. Nil: SIGHUP is logged and ignored.
        public var reloadConfiguration: (@Sendable () -> Result<BridgeConfiguration, ConfigurationError>)?

        public init(stateDirectory: String, runtimeDirectory: String, version: String, handleSignals: Bool = true,
                    notifySystemd: Bool = true) {
            self.stateDirectory = stateDirectory
            self.runtimeDirectory = runtimeDirectory
            self.version = version
            self.handleSignals = handleSignals
            self.notifySystemd = notifySystemd
        }
    }


    /// Stops a running server from any thread: `stop()` makes `run()` return (after closing its
    /// clients).
    public typealias StopHandle = EventLoop.StopHandle

    /// As started, with the reloadable options of the last reload (BridgeServer+Reload).
    var configuration: BridgeConfiguration
    /// What every new client connection applies (from `configuration`).
    var connectionSettings: ClientConnection.Settings
    let environment: Environment
    let log: Logger
    /// Every descriptor and timer of the io thread, each with its handler.
    let loop: EventLoop
    public let ports: PortAssignment
    public var stopHandle: StopHandle { loop.stopHandle }
    let input: ReceiverInput
    var registry: ApplicationRegistry
    var policy: RegistrationPolicy
    /// V2 is locked until a registration or an authenticated REST call (TMM-API.md §6.2; the
    /// desk decides).
    public var isLocationV2Unlocked: Bool { desk.isLocationV2Unlocked }

    private var listeners: [CInt: BoundSocket] = [:]
    /// What the secure ports serve with (docs/tls.md); replaced when the certificate is re-issued.
    var tlsContext: TLSServerContext
    var serverCertificate: Certificate
    let tlsAuthority: (certificate: Certificate, key: PrivateKey)?
    var lastCertificateCheck: Int64 = 0
    var lastCertificateWarning: Int64 = -86_400_000_000_000
    /// Access Code V2: the key pair, its public half as served, and the verifier with its
    /// replay ledger.
    let accessCodeV2Key: PrivateKey
    let accessCodeV2PublicKey: (n: String, e: String)
    var accessCodeV2: AccessCodeV2Verifier
    /// What start-up says about the TLS materials (logged by `run`).
    private let secureNotes: [(level: LogLevel, text: String)]
    /// Antenna and correction settings (REST; persisted in the state directory).
    var deviceSettings: DeviceSettings
    /// When expired Access Code V2 codes were last dropped from the ledger.
    private var lastLedgerSweep: Int64 = 0
    var connections: [CInt: Connection] = [:]
    let controlListener: UnixListener
    var controlClients: [CInt: ControlClient] = [:]
    /// One-shot: the next instant the V2 rate cap lets a pending epoch out (BridgeServer+Hub).
    let locationV2Timer: EventLoopTimer
    /// TLS handshakes in progress and those waiting for a turn; the timer that serves the queue
    /// at the end of each turn while it is not empty (BridgeServer+Handshakes).
    var handshakes = HandshakeSchedule()
    let handshakeQueueTimer: EventLoopTimer
    /// The most connections open since the last growth, those open when freed memory was last
    /// given back, and those open at the last tick (BridgeServer+Handshakes).
    var memoryWatch: (peak: Int, trimmedWith: Int?) = (0, nil)
    var connectionsAtLastTick = 0
    /// Which new clients fit (BridgeCore's ConnectionAdmission).
    var admission: ConnectionAdmission
    /// `max-connections` as clamped to the open-file limit.
    public var maxConnections: Int { admission.maxConnections }
    /// Connections the location ports (V1 and V2, before and after the upgrade) may hold together:
    /// `maxConnections` minus the REST reserve, so WebSocket clients never lock out the API.
    public var locationConnectionBudget: Int { admission.locationBudget }
    /// Valid access codes of the current window (a worker keeps it; see AccessCodeTable).
    let accessCodes: AccessCodeTable
    /// Runs what would make the io thread wait (registry writes) and posts the outcome to
    /// `workerResults`.
    let worker: Worker
    let workerResults: Inbox<WorkerResult>
    /// Writes `settings.json` on a thread of its own, coalesced to the latest settings
    /// (SecureServing.swift, `saveSettings`): a burst of PUTs never queues behind registrations
    /// nor makes them wait.
    let settingsWriter: LatestValueWriter<DeviceSettings>
    /// Registrations and the V2 lock (BridgeCore's RegistrationDesk; BridgeServer+Control).
    var desk: RegistrationDesk
    /// The number the next control client gets (`RegistrationDesk.Client`).
    var nextControlClientNumber: UInt64 = 0
    /// A reload is being read on the worker; another SIGHUP meanwhile asks for one more.
    var reload = ReloadState.idle
    private var watchdogInterval: Int64?
    private var lastWatchdog: Int64 = 0
    /// Uptime, epoch rate, STATUS= pacing (BridgeServer+Status.swift).
    var operatorState: OperatorState

    var hub: Hub
    var identity: ReceiverIdentity
    var lastQuality = FixQuality.noFix
    var dateCache: (second: Int64, text: String) = (-1, "")
    /// The actions of the connection event being carried out (reused; see `drive`).
    var actionBuffer: [ClientConnectionAction] = []
    /// Shared by every read (the machine copies what it keeps).
    var readScratch = [UInt8](repeating: 0, count: 65_536)
    public internal(set) var statistics = Statistics()
    /// Keeps refused origins from flooding the log.
    var refusedOriginLog = RefusedOriginLog()

    /// Counters for logs and tests.
    public struct Statistics: Sendable, Equatable {
        public var accepted = 0
        public var refusedOverLimit = 0
        /// Connections taken off a listener's queue and closed because the descriptor table was full.
        public var refusedOutOfDescriptors = 0
        /// Control-socket clients closed to make room for a new one (`maxControlClients`).
        public var controlClientsEvicted = 0
        public var requests = 0
        public var upgrades = 0
        public var positions = 0
        /// Positions a slow client's queue replaced by a newer one (OutboundQueue).
        public var positionsDropped = 0
        /// Epochs older than the newest accepted (see `accept`), dropped.
        public var positionsStale = 0
        public var slowClientsClosed = 0
        public var unexpectedMessages = 0
        /// Requests (REST, preflights, WebSocket handshakes) refused with 403 for their `Origin`.
        public var refusedOrigins = 0
        /// TLS sessions that failed (refused handshakes, bad records), and handshakes that stalled.
        public var tlsFailures = 0
        public var tlsHandshakesTimedOut = 0
        /// Handshakes in progress closed to make room for a new one (the handshake memory was used up).
        public var tlsHandshakesEvicted = 0
        /// Access Code V2 codes refused (401).
        public var accessCodeV2Refused = 0
    }

    /// Binds every listener (fallback ports included), loads the registry and opens the control
    /// socket; nothing is served until `run()`.
    public init(configuration: BridgeConfiguration, environment: Environment, input: ReceiverInput,
                log: Logger) throws(BridgeServerError) {
        self.configuration = configuration
        connectionSettings = ClientConnection.Settings(configuration)
        self.environment = environment
        self.log = log
        self.input = input
        operatorState = OperatorState(startedAt: monotonicNanoseconds())
        policy = configuration.registrationPolicy
        identity = ReceiverIdentity(appVersion: environment.version)
        hub = Hub(locationV2MinimumInterval: configuration.limits.locationV2MinimumInterval)
        do {
            loop = try EventLoop()
        } catch {
            throw .eventLoop(error)
        }
        locationV2Timer = loop.makeTimer()
        handshakeQueueTimer = loop.makeTimer()

        do {
            try makeDirectories(environment.stateDirectory, mode: 0o700, alsoOwnedBy: environment.dropUser)
            registry = try ApplicationRegistry.load(path: environment.stateDirectory + "/" + ApplicationRegistry.fileName,
                                                    alsoOwnedBy: environment.dropUser)
        } catch let error as ApplicationRegistry.Failure {
            throw .registry(error)
        } catch {
            throw .stateDirectory(environment.stateDirectory, "\(error)")
        }
        let secure = try SecureMaterials.load(configuration: configuration, stateDirectory: environment.stateDirectory,
                                              alsoOwnedBy: environment.dropUser)
        tlsContext = secure.context
        serverCertificate = secure.serverCertificate
        tlsAuthority = secure.authority
        accessCodeV2Key = secure.accessCodeKey
        accessCodeV2PublicKey = secure.publicKey
        // The key is RSA-2048 (AccessCodeKey.load refuses any other), so it has a length.
        accessCodeV2 = AccessCodeV2Verifier(policy: configuration.registrationPolicy,
                                            ciphertextLength: secure.accessCodeKey.rsaCiphertextLength ?? 0,
                                            limits: configuration.limits.accessCodeV2)
        secureNotes = secure.notes
        deviceSettings = try DeviceSettings.load(stateDirectory: environment.stateDirectory, alsoOwnedBy: environment.dropUser)
        identity.antennaHeight = deviceSettings.antenna.appliedHeight

        let bound: PortBinder.Result
        do {
            bound = try PortBinder.bind(configuration: configuration, log: log)
        } catch {
            throw .ports(error)
        }
        ports = bound.ports
        desk = RegistrationDesk(policy: policy, mode: configuration.registration, ports: bound.ports,
                                limits: configuration.limits.accessCodeV2)
        for socket in bound.listeners {
            listeners[socket.descriptor] = socket
        }

        let openFiles = CurrentProcess.openFileLimit()
        admission = ConnectionAdmission(configured: configuration.limits.maxConnections, openFileLimit: openFiles,
                                        otherClients: Self.maxControlClients,
                                        handshakeMemory: configuration.limits.tlsHandshakeMemory)
        if admission.maxConnections < configuration.limits.maxConnections {
            log.warning("max-connections \(configuration.limits.maxConnections) lowered to \(admission.maxConnections): the open-file limit is \(openFiles ?? 0) (raise it, e.g. LimitNOFILE= in the unit, to serve more)")
        }

        let controlSocketPath = Self.controlSocketPath(runtimeDirectory: environment.runtimeDirectory)
        do {
            try makeDirectories(environment.runtimeDirectory, mode: 0o755, alsoOwnedBy: environment.dropUser)
            controlListener = try UnixListener.bind(path: controlSocketPath, mode: 0o660)
        } catch let error as ListenerError where error.isAddressInUse {
            throw .alreadyRunning(controlSocket: controlSocketPath)
        } catch let error as AtomicFile.Failure {
            // Another user's directory, or a symlink: the control socket there could be swapped.
            throw .runtimeDirectory(error)
        } catch {
            throw .controlSocket(controlSocketPath, "\(error)")
        }

        // Last, so nothing after them can fail and leave their threads running.
        do {
            workerResults = try Inbox(capacity: 1024)
            worker = try Worker(name: "bridge-worker")
        } catch {
            throw .eventLoop(error)
        }
        do {
            settingsWriter = try Self.makeSettingsWriter(stateDirectory: environment.stateDirectory, results: workerResults)
        } catch {
            worker.stop()
            throw .eventLoop(error)
        }
        do {
            // Every registered id, allowed now or not: the policy is applied when a code is
            // checked (ConnectionHost.verifyAccessCode), so a reload that allows an id again
            // needs no new table.
            accessCodes = try AccessCodeTable(ids: registry.applicationIDs)
        } catch {
            worker.stop()
            settingsWriter.stop()
            throw .accessCodeWorker("\(error)")
        }
        if registry.entries.count > configuration.limits.maxRegisteredApplications {
            log.warning("the registry holds \(registry.entries.count) applications, more than max-registered-apps (\(configuration.limits.maxRegisteredApplications)): they stay registered, new ones are refused")
        }
    }

    deinit {
        accessCodes.stop()
        worker.stop()
        settingsWriter.stop()
    }

    /// Control-socket clients at once; a new one beyond this replaces the oldest (idle) one.
    static let maxControlClients = 16

    /// The signals that stop the daemon cleanly: SIGINT (Ctrl-C) and SIGTERM (systemd, kill).
    public static let stopSignals: [CInt] = [SignalNumber.interrupt, SignalNumber.terminate]
    /// SIGHUP reloads the configuration (`systemctl reload`, ExecReload=; BridgeServer+Reload).
    public static let reloadSignals: [CInt] = [SignalNumber.hangUp]
    /// Every signal the loop reads; the caller blocks them before any thread starts.
    public static let handledSignals: [CInt] = stopSignals + reloadSignals

    /// `<runtime-dir>/control.sock`.
    public var controlSocketPath: String { Self.controlSocketPath(runtimeDirectory: environment.runtimeDirectory) }

    /// The control socket's path for a runtime directory (also what `tmm-bridge open` connects to).
    public static func controlSocketPath(runtimeDirectory: String) -> String { runtimeDirectory + "/control.sock" }

    /// Serves until a stop signal or `stopHandle.stop()`, then closes every client.
    public func run() throws(BridgeServerError) {
        do {
            try registerEverything()
        } catch {
            throw .eventLoopStart(error)
        }
        loop.keepSpareDescriptor(retryNanoseconds: configuration.limits.tickInterval)
        defer { loop.releaseSpareDescriptor() }
        watchdogInterval = environment.notifySystemd ? Self.watchdogInterval() : nil

        let described = TMMServer.iOSOrder.map { "\($0.registrationKey)=\(ports[$0])" }.joined(separator: " ")
        log("ports: \(described)")
        for note in secureNotes { log(note.text, level: note.level) }
        if case .only = configuration.allowedOrigins { log(allowedOriginsSummary) }
        log(registrationSummary + "; \(registry.entries.count) registered; control socket \(controlSocketPath)")
        let readyStatus = "serving on " + described
        // notify() is false when there is no NOTIFY_SOCKET (not under systemd): then no STATUS= lines.
        let notified = environment.notifySystemd && (try? SDNotify.notify("READY=1\nSTATUS=" + readyStatus)) == true
        startOperatorViews(readyStatus: notified ? readyStatus : nil)
        log.notice("ready")

        do {
            if try loop.run() == .stopHandle { log.notice("stop requested") }
        } catch {
            throw .eventLoopWait(error)
        }
        shutDown()
    }

    /// Hands every descriptor and timer to the loop with its handler. The handlers hold the server
    /// unowned: the server owns the loop, which owns the handlers.
    private func registerEverything() throws(Errno) {
        for (fd, entry) in listeners {
            let server = entry.server
            try loop.register(fd, interest: .readable) { [unowned self] _ in acceptAll(on: fd, server: server) }
        }
        try loop.register(controlListener.descriptor.rawValue, interest: .readable) { [unowned self] _ in
            acceptControlClients()
        }
        for fd in input.descriptors {
            try loop.register(fd, interest: .readable) { [unowned self] _ in handleInput() }
        }
        try loop.register(workerResults.eventDescriptor, interest: .readable) { [unowned self] _ in
            handleWorkerResults()
        }
        let tickInterval = configuration.limits.tickInterval
        loop.schedule(afterNanoseconds: tickInterval, periodNanoseconds: tickInterval) { [unowned self] _ in tick() }
        let v1Interval = configuration.limits.locationV1Interval
        loop.schedule(afterNanoseconds: v1Interval, periodNanoseconds: v1Interval) { [unowned self] _ in
            sendLocationV1()
        }
        locationV2Timer.handler = { [unowned self] _ in locationV2TimerExpired() }
        handshakeQueueTimer.handler = { [unowned self] _ in serveHandshakeQueue() }
        if environment.handleSignals {
            try loop.handleSignals(Self.handledSignals) { [unowned self] signal in
                if Self.reloadSignals.contains(signal) {
                    startReload(signal: signal)
                    return
                }
                log.notice("signal \(signal): stopping")
                loop.stop()
            }
        }
    }

    /// Says goodbye to WebSocket clients (1001), closes everything and stops the input side.
    private func shutDown() {
        finishOperatorViews()
        if environment.notifySystemd { _ = try? SDNotify.notify("STOPPING=1") }
        closeAllConnections()
        for fd in Array(controlClients.keys) { closeControlClient(fd) }
        // Registry writes already queued finish (their apps were not told OK, but a write that
        // started is not cut off); nothing new is queued. The latest settings, already answered
        // to their clients, are written before the daemon exits.
        worker.stop()
        settingsWriter.stop()
        accessCodes.stop()
        input.stop()
        log.flushAll()
        log.notice("stopped: \(statistics.accepted) connections, \(statistics.requests) requests, \(statistics.positions) positions")
    }

    // MARK: - Accepting

    private func acceptAll(on fd: CInt, server: TMMServer) {
        guard let socket = listeners[fd] else { return }
        // A bounded batch per wake-up keeps one busy listener from starving the others.
        for _ in 0..<64 {
            let result: AcceptResult
            do {
                result = try socket.listener.accept()
            } catch {
                if refuseWithoutDescriptor(error, listener: fd) { continue }
                return
            }
            switch consume result {
            case .wouldBlock:
                return
            case .accepted(let socket):
                statistics.accepted += 1
                guard admission.hasRoom(for: server) else {
                    statistics.refusedOverLimit += 1
                    if statistics.refusedOverLimit == 1 || statistics.refusedOverLimit % 1000 == 0 {
                        log.warning("connection limit (\(maxConnections), \(locationConnectionBudget) for the location ports) reached: refusing clients (\(statistics.refusedOverLimit) so far)")
                    }
                    continue  // `socket` closes here
                }
                adopt(socket, server: server)
            }
        }
    }

    private func adopt(_ socket: consuming SocketConnection, server: TMMServer) {
        socket.setNoDelay()
        socket.setSendBuffer(configuration.limits.sendBuffer)
        let transport: any Transport
        if server.isSecure {
            if admission.handshakesFull { evictOldestHandshake() }
            do {
                transport = try TLSTransport(socket, context: tlsContext, keyUpdateBurst: configuration.limits.tlsKeyUpdateBurst)
            } catch {
                log.error("cannot start a TLS session: \(error)")
                return
            }
        } else {
            transport = PlainTransport(socket)
        }
        let connection = Connection(transport: transport, server: server, settings: connectionSettings,
                                    now: monotonicNanoseconds())
        let fd = connection.fd
        do {
            try loop.register(fd, interest: .readable) { [unowned self] event in connectionEvent(event) }
        } catch {
            log.error("cannot watch a new connection: \(error)")
            return
        }
        connections[fd] = connection
        admission.admitted(server)
        if server.isSecure { handshakeStarted(connection) }
        log.debug("accepted a connection on \(server.registrationKey) (\(admission.open) open)")
    }

    /// After accept failed on `listener`: a full descriptor table (EMFILE, ENFILE) would make a
    /// level-triggered listener spin; the loop refuses the pending connection with its spare
    /// descriptor or pauses the listener until a descriptor is free (EventLoop.acceptFailed).
    /// Returns true when a connection was refused (try the next one).
    func refuseWithoutDescriptor(_ error: Errno, listener fd: CInt) -> Bool {
        let outcome = loop.acceptFailed(error, listener: fd)
        guard outcome != .otherError else {
            log.error("accept failed: \(error)")
            return false
        }
        statistics.refusedOutOfDescriptors += 1
        if statistics.refusedOutOfDescriptors == 1 || statistics.refusedOutOfDescriptors % 1000 == 0 {
            log.warning("out of file descriptors (\(error)): refusing connections (\(statistics.refusedOutOfDescriptors) so far)")
        }
        if outcome == .refusedOne { return true }
        log.warning("out of file descriptors: not accepting until one is free")
        return false
    }

    func registerControlClient(_ fd: CInt, _ client: ControlClient) {
        controlClients[fd] = client
    }

    func unregisterControlClient(_ fd: CInt) {
        controlClients[fd] = nil
    }

    // MARK: - Timers

    /// Every `tickInterval`: HTTP time-outs, WebSocket keepalive, slow clients, deferred replies,
    /// the watchdog.
    private func tick() {
        let now = monotonicNanoseconds()
        // Summaries of repeated messages whose window ended (the logger has no timer of its own).
        log.flush()
        tickConnections(now: now)
        readBufferedInput()
        closeStalledHandshakes(now: now)
        returnMemoryAfterFlood()
        watchCertificateExpiry(now: now)
        if now - lastLedgerSweep > 60_000_000_000 {
            lastLedgerSweep = now
            accessCodeV2.forgetExpired(now: wallClockMilliseconds() / 1000)
        }
        for (fd, client) in controlClients where now - client.openedAt > 10_000_000_000 {
            closeControlClient(fd)
        }
        if let interval = watchdogInterval, now - lastWatchdog >= interval / 2 {
            lastWatchdog = now
            _ = try? SDNotify.notify("WATCHDOG=1")
        }
    }

    /// `WATCHDOG_USEC` for this process, in nanoseconds, if systemd asked for a watchdog.
    private static func watchdogInterval() -> Int64? {
        guard let raw = CurrentProcess.environment("WATCHDOG_USEC"), let usec = Int64(raw), usec > 0 else { return nil }
        if let pid = CurrentProcess.environment("WATCHDOG_PID"), let number = Int32(pid), number != CurrentProcess.processID {
            return nil
        }
        return usec * 1000
    }

    /// The `Date` header value, formatted once per second.
    func httpDate() -> String {
        let second = wallClockMilliseconds() / 1000
        if second != dateCache.second { dateCache = (second, HTTPDate.imfFixdate(unixSeconds: second)) }
        return dateCache.text
    }
}

@available(*, unavailable, message: "the server belongs to the io thread")
extension BridgeServer: Sendable {}

/// Why the server could not start or stopped serving.
public enum BridgeServerError: ExitStatusError, Sendable {
    /// No epoll instance, timer or stop event (exit 1).
    case eventLoop(Errno)
    /// The registry file is not what the bridge writes (exit 78).
    case registry(ApplicationRegistry.Failure)
    /// The state directory cannot be made or trusted (exit 78).
    case stateDirectory(String, String)
    /// The TMM servers could not be bound (its own status).
    case ports(PortBindingError)
    /// Another bridge answers on the control socket (exit 1).
    case alreadyRunning(controlSocket: String)
    /// The runtime directory is another user's, a symlink or not a directory (exit 78).
    case runtimeDirectory(AtomicFile.Failure)
    /// The control socket cannot be opened (exit 1).
    case controlSocket(String, String)
    /// The access-code worker thread did not start (exit 1).
    case accessCodeWorker(String)
    /// The loop's descriptors could not be registered (exit 1).
    case eventLoopStart(Errno)
    /// Waiting for events failed (exit 1).
    case eventLoopWait(Errno)
    /// The TLS certificate or key, or the Access Code V2 key, cannot be loaded or made (exit 78
    /// for a configured certificate or a file of the state directory that is not the daemon's,
    /// 1 for other failures of the state directory's materials).
    case tls(String, isConfiguration: Bool)
    /// The settings file is unreadable or not what the bridge writes (exit 78).
    case settings(String, String)

    public var exitStatus: ExitStatus {
        switch self {
        case .registry, .stateDirectory, .runtimeDirectory, .settings: .badConfiguration
        case .tls(_, let isConfiguration): isConfiguration ? .badConfiguration : .failure
        case .ports(let error): error.exitStatus
        case .eventLoop, .alreadyRunning, .controlSocket, .accessCodeWorker, .eventLoopStart, .eventLoopWait: .failure
        }
    }

    public var description: String {
        switch self {
        case .eventLoop(let error): "cannot create the event loop: \(error)"
        case .registry(let error): "\(error)"
        case .stateDirectory(let path, let reason): "state directory \(path): \(reason)"
        case .ports(let error): error.description
        case .alreadyRunning(let path):
            "another tmm-bridge is running: its control socket \(path) answers (stop it, or give this one its own runtime-dir)"
        case .runtimeDirectory(let error): "runtime directory: \(error)"
        case .controlSocket(let path, let reason): "cannot open the control socket \(path): \(reason)"
        case .accessCodeWorker(let reason): "cannot start the access-code worker: \(reason)"
        case .eventLoopStart(let error): "cannot start the event loop: \(error)"
        case .eventLoopWait(let error): "epoll_wait failed: \(error)"
        case .tls(let reason, _): reason
        case .settings(let path, let reason): "settings \(path): \(reason)"
        }
    }
}

/// What a job of the server's worker reports back to the io thread.
enum WorkerResult: Sendable {
    /// The registry file for the oldest queued registration was written (`failure` nil) or not.
    case registrySaved(ApplicationRegistry, failure: String?)
    /// The settings file was written (`failure` nil) or not.
    case settingsSaved(failure: String?)
    /// The configuration read again for a reload (BridgeServer+Reload).
    case configurationRead(Result<BridgeConfiguration, ConfigurationError>)
}

extension BridgeServer {
    /// Takes the worker's results (the inbox's descriptor was readable).
    func handleWorkerResults() {
        for result in workerResults.drain() {
            switch result {
            case .registrySaved(let next, let failure): registrySaved(next, failure: failure)
            case .settingsSaved(let failure):
                if let failure { log.error("cannot save the settings: \(failure) (they apply until the daemon stops)") }
            case .configurationRead(let result): applyReloaded(result)
            }
        }
    }
}
