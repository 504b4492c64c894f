import BridgeCore
import HTTP1
import GNSS
import Input
import InputLoop
import Logging
import Posix
import TMMProtocol
import WebSocket

// The daemon's server: one thread (io), one epoll loop, and the parts that own the state. This
// type makes the parts, wires them together and routes the loop's events to them; it holds no
// protocol rule and no client, registration or certificate state of its own.
//
//   listeners, client sockets ──► ClientServers (Clients/: REST, V1, V2, /events, TLS)
//   control socket ──────────────► ControlServer (Control/) ──► Registrations (Registrations/)
//   input inbox ──► ReceiverInput (InputLoop) ──► Hub (Hub/) ──► HubOutputs: V1, V2, /events, operator views
//   worker results ──► Registrations (registry written), DeviceSettingsStore (Settings/), reload
//   tick timer (250 ms) ──► each part's time-outs; signals ──► stop, reload
//
// The parts reach each other only through what is wired here: a connection's `.subscribe` goes
// to the hub's outputs, its `.authenticated` to the registrations, the registrations' replies to
// the control server and their events to the hub. Each part is a class of its own file, tested
// through the server's sockets and, for the pure rules it carries out, in BridgeCoreTests.

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

        public init(
            stateDirectory: String, runtimeDirectory: String, version: String, handleSignals: Bool = true,
            notifySystemd: Bool = true
        ) {
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
    let environment: Environment
    let log: Logger
    /// Every descriptor and timer of the io thread, each with its handler.
    let loop: EventLoop
    public var stopHandle: StopHandle { loop.stopHandle }

    // The parts.
    let input: ReceiverInput
    let hub: Hub
    /// The hub's subscribers (Hub/HubOutputs.swift: where a new one is added).
    let hubOutputs: HubOutputs
    let clients: ClientServers
    let control: ControlServer
    let registrations: Registrations
    let secure: SecureServing
    let settings: DeviceSettingsStore
    /// The NTRIP client: RTCM to the served receiver, its GGA to the caster (Corrections/).
    let corrections: CorrectionsClient
    /// Fleet publishing to an MQTT broker, with its spool (Fleet/).
    let fleet: FleetPublisher
    var outputs: WebSocketOutputs { hubOutputs.webSocket }
    /// Uptime, epoch rate, STATUS= pacing and the watchdog (BridgeServer+Status.swift).
    var operatorViews: OperatorViews { hubOutputs.operatorViews }

    /// Runs what would make the io thread wait (registry writes, reading a reload) and posts the
    /// outcome to `workerResults`.
    let worker: Worker
    let workerResults: Inbox<WorkerResult>
    /// A reload is being read on the worker; another SIGHUP meanwhile asks for one more.
    var reload = ReloadState.idle

    /// The ports each TMM server listens on (fallbacks included), as the client servers bound them.
    public var ports: PortAssignment { clients.parts.ports }
    /// V2 is locked until a registration or an authenticated REST call (TMM-API.md §6.2).
    public var isLocationV2Unlocked: Bool { registrations.isLocationV2Unlocked }
    /// `max-connections` as clamped to the open-file limit.
    public var maxConnections: Int { clients.admission.maxConnections }
    /// Connections the location ports (V1 and V2, before and after the upgrade) may hold together:
    /// `maxConnections` minus the REST reserve, so WebSocket clients never lock out the API.
    public var locationConnectionBudget: Int { clients.admission.locationBudget }

    /// Binds every listener (fallback ports included), loads the registry, the TLS materials and
    /// the settings, and opens the control socket; nothing is served until `run()`. What can fail
    /// without a thread comes first; the threads (worker, settings writer, access codes) last.
    public init(
        configuration: BridgeConfiguration, environment: Environment, input: ReceiverInput,
        log: Logger
    ) throws(BridgeServerError) {
        self.configuration = configuration
        self.environment = environment
        self.log = log
        self.input = input
        do {
            loop = try EventLoop()
        } catch {
            throw .eventLoop(error)
        }
        let shortage = DescriptorShortage(loop: loop, log: log)

        let registry: ApplicationRegistry
        do {
            try makeDirectories(environment.stateDirectory, mode: 0o700, alsoOwnedBy: environment.dropUser)
        } catch {
            throw .stateDirectory(environment.stateDirectory, "\(error)")
        }
        do {
            registry = try ApplicationRegistry.load(
                path: environment.stateDirectory + "/" + ApplicationRegistry.fileName,
                alsoOwnedBy: environment.dropUser)
        } catch {
            throw .registry(error)
        }
        do {
            secure = try SecureServing(
                configuration: configuration, stateDirectory: environment.stateDirectory,
                alsoOwnedBy: environment.dropUser, log: log)
        } catch {
            throw .tls(error)
        }
        let deviceSettings = try DeviceSettings.load(
            stateDirectory: environment.stateDirectory,
            alsoOwnedBy: environment.dropUser)

        let bound: PortBinder.Result
        do {
            bound = try PortBinder.bind(configuration: configuration, log: log)
        } catch {
            throw .ports(error)
        }

        let openFiles = CurrentProcess.openFileLimit()
        let admission = ConnectionAdmission(
            configured: configuration.limits.maxConnections, openFileLimit: openFiles,
            otherClients: ControlServer.maxClients,
            handshakeMemory: configuration.limits.tlsHandshakeMemory)
        if admission.maxConnections < configuration.limits.maxConnections {
            log.warning(
                "max-connections \(configuration.limits.maxConnections) lowered to \(admission.maxConnections): "
                    + "the open-file limit is \(openFiles ?? 0) "
                    + "(raise it, e.g. LimitNOFILE= in the unit, to serve more)"
            )
        }

        let controlSocketPath = Self.controlSocketPath(runtimeDirectory: environment.runtimeDirectory)
        do {
            try makeDirectories(environment.runtimeDirectory, mode: 0o755, alsoOwnedBy: environment.dropUser)
        } catch {
            // Another user's directory, or a symlink: the control socket there could be swapped.
            throw .runtimeDirectory(error)
        }
        do {
            control = try ControlServer(path: controlSocketPath, loop: loop, shortage: shortage)
        } catch let error where error.isAddressInUse {
            throw .alreadyRunning(controlSocket: controlSocketPath)
        } catch {
            throw .controlSocket(controlSocketPath, error)
        }

        // Threads from here on: each failure stops those already started.
        do {
            workerResults = try Inbox(capacity: Self.workerResultCapacity)
            worker = try Worker(name: "bridge-worker")
        } catch {
            throw .eventLoop(error)
        }
        do {
            settings = try DeviceSettingsStore(
                deviceSettings, stateDirectory: environment.stateDirectory,
                results: workerResults, log: log)
        } catch {
            worker.stop()
            throw error
        }
        do {
            registrations = try Registrations(
                registry: registry, configuration: configuration, ports: bound.ports,
                accessCodeKey: secure.accessCodeV2Key, worker: worker,
                results: workerResults, log: log)
        } catch {
            worker.stop()
            settings.stop()
            throw error
        }

        do {
            corrections = try CorrectionsClient(
                configuration: configuration.corrections, appSettings: settings.settings.corrections,
                gpsdControlSocket: { [unowned input] in input.controlSocket }, version: environment.version,
                loop: loop, log: log)
        } catch {
            worker.stop()
            settings.stop()
            registrations.stop()
            throw .eventLoop(error)
        }
        do {
            fleet = try FleetPublisher(
                configuration: configuration.fleet, stateDirectory: environment.stateDirectory,
                version: environment.version, log: log)
        } catch {
            worker.stop()
            settings.stop()
            registrations.stop()
            corrections.stop()
            throw .eventLoop(error)
        }

        var identity = ReceiverIdentity(appVersion: environment.version)
        identity.antennaHeight = settings.settings.antenna.appliedHeight
        hub = Hub(identity: identity)
        hubOutputs = HubOutputs(
            hub: hub, loop: loop, configuration: configuration, corrections: corrections, fleet: fleet,
            startedAt: monotonicNanoseconds())
        let outputs = hubOutputs.webSocket
        clients = ClientServers(
            listeners: bound.listeners, configuration: configuration, admission: admission,
            parts: ClientServers.Parts(
                secure: secure, registrations: registrations, settings: settings, input: input,
                outputs: outputs, ports: bound.ports, version: environment.version,
                dataMessageReply: environment.dataMessageReply, worker: worker, corrections: corrections),
            loop: loop, shortage: shortage, log: log)
        // The outputs deliver through the client servers, which subscribe connections to them.
        outputs.deliver(through: clients)
        wire()
    }

    /// Results the worker and the settings writer may have posted before the io thread takes them.
    static let workerResultCapacity = 1024

    /// Routes what one part produces to the part that acts on it.
    private func wire() {
        let (hub, control, settings) = (hub, control, settings)
        registrations.replyToControlClient = { [unowned control] reply, client in control.reply(reply, to: client) }
        registrations.publish = { [unowned hub] event in hub.publish(event) }
        control.open = { [unowned registrations] url, client in registrations.open(url, from: client) }
        control.status = { [unowned self] in daemonStatus().json() }
        clients.settingsChanged = { [unowned hub, unowned settings, unowned corrections] next in
            settings.save(next)
            hub.identity.antennaHeight = next.antenna.appliedHeight
            corrections.apply(appSettings: next.corrections)
        }
        corrections.publishEvent = { [unowned hub] event in hub.publish(event) }
        corrections.servedReceiver = { [unowned input] in input.servedReceiver }
        fleet.daemonStatus = { [unowned self] in daemonStatus() }
        outputs.dashboard.daemonStatus = { [unowned self] in daemonStatus() }
    }

    deinit {
        registrations.stop()
        worker.stop()
        settings.stop()
        corrections.stop()
        fleet.stop()
    }

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
        // Before READY: a spool that cannot be used (another user's directory, a full disk) is
        // found now, not at the first outage.
        try fleet.start()
        loop.keepSpareDescriptor(retryNanoseconds: configuration.limits.tickInterval)
        defer { loop.releaseSpareDescriptor() }

        let described = TMMServer.iOSOrder.map { "\($0.registrationKey)=\(ports[$0])" }.joined(separator: " ")
        log("ports: \(described)")
        for note in secure.notes { log(note.text, level: note.level) }
        if case .only = configuration.allowedOrigins { log(allowedOriginsSummary) }
        log(
            registrationSummary
                + "; \(registrations.registry.entries.count) registered; control socket \(controlSocketPath)")
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
        try clients.start()
        try control.start()
        try corrections.start()
        for fd in input.descriptors {
            try loop.register(fd, interest: .readable) { [unowned self] _ in handleInput() }
        }
        try loop.register(workerResults.eventDescriptor, interest: .readable) { [unowned self] _ in
            handleWorkerResults()
        }
        let tickInterval = configuration.limits.tickInterval
        loop.schedule(afterNanoseconds: tickInterval, periodNanoseconds: tickInterval) { [unowned self] _ in tick() }
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
        clients.closeAllConnections()
        control.closeAll()
        // Registry writes already queued finish (their apps were not told OK, but a write that
        // started is not cut off); nothing new is queued. The latest settings, already answered
        // to their clients, are written before the daemon exits.
        worker.stop()
        settings.stop()
        registrations.stop()
        corrections.stop()
        // The retained status says "stopped", what the broker did not acknowledge stays spooled.
        fleet.stop()
        input.stop()
        log.flushAll()
        let served = clients.statistics
        log.notice(
            "stopped: \(served.accepted) connections, \(served.requests) requests, \(hub.statistics.offered) positions")
    }

    // MARK: - Routing

    /// Every `tickInterval`: each part's time-outs, the watchdog.
    private func tick() {
        let now = monotonicNanoseconds()
        // Summaries of repeated messages whose window ended (the logger has no timer of its own).
        log.flush()
        clients.tick(now: now)
        secure.watchCertificateExpiry(now: now)
        registrations.tick(now: now)
        control.tick(now: now)
        hub.tick(now: now)
    }

    /// Drains the input side: epochs to the hub, changes to the hub (events), the clients
    /// (deferred replies) and the hub's identity.
    private func handleInput() {
        let now = monotonicNanoseconds()
        for change in input.drain() {
            switch change {
            case .position(let position):
                hub.publish(corrections.annotate(position, now: now), now: now)
            case .receiverConnected(let path):
                refreshIdentity()
                hub.publish(.receiverConnected(device: path, receiver: input.receiverInfo))
                clients.answerDeferredWhenConnected()
            case .receiverDisconnected(let path):
                refreshIdentity()
                hub.publish(.receiverDisconnected(device: path, receiver: input.receiverInfo))
            case .servedReceiver:
                // Clients learn of a failover from inputLost and inputRestored (docs/input.md);
                // the location messages name the served receiver's model and serial from now on.
                refreshIdentity()
            case .inputLost(let reason):
                hub.publish(.inputLost(reason))
            case .inputRestored:
                hub.publish(.inputRestored)
            case .receiverControlFinished(let ticket, let failure):
                clients.receiverControlFinished(ticket: ticket, failure: failure)
            }
        }
        hub.inputDrained(now: monotonicNanoseconds())
    }

    /// The receiver's model and serial number, as the location messages carry them.
    private func refreshIdentity() {
        let info = input.receiverInfo
        hub.identity.receiverModel = info.receiverModel
        hub.identity.receiverSerialNumber = info.receiverSerialNumber
    }

    /// Takes the worker's results (the inbox's descriptor was readable).
    private func handleWorkerResults() {
        for result in workerResults.drain() {
            switch result {
            case .registrySaved(let next, let failure): registrations.saved(next, failure: failure)
            case .settingsSaved(let failure): settings.saved(failure: failure)
            case .configurationRead(let result): applyReloaded(result)
            }
        }
    }
}

@available(*, unavailable, message: "the server belongs to the io thread")
extension BridgeServer: Sendable {}

/// What a job of the server's worker (or the settings writer) reports back to the io thread.
enum WorkerResult: Sendable {
    /// The registry file for the oldest queued registration was written (`failure` nil) or not.
    case registrySaved(ApplicationRegistry, failure: String?)
    /// The settings file was written (`failure` nil) or not.
    case settingsSaved(failure: String?)
    /// The configuration read again for a reload (BridgeServer+Reload).
    case configurationRead(Result<BridgeConfiguration, ConfigurationError>)
}
