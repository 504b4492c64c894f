import BridgeCore
import Corrections
import GNSS
import GPSD
import Logging
import Posix
import TLS
import TMMProtocol

// The corrections client: an NTRIP caster's RTCM to the served receiver, and the receiver's GGA
// back to the caster. Every protocol rule is Corrections' NTRIPSession (events in, actions out);
// this part carries its actions out on the io loop and owns what they need:
//
//   settings (REST correctionSource, `ntrip =`) ──► NTRIPSession ──► .connect ──► resolver thread
//        ──► non-blocking connect ──► CasterLink (TCP, or TLS for ntrips://) ──► bytes in ──► session
//        ──► .deliver(frame) ──► CorrectionsWriter (its own thread: gpsd's control socket or the tty)
//   hub (served epochs) ──► session.position (GGA upstream); tick ──► retries, time-outs, GGA
//
// The io thread never waits on either side: names are resolved on a thread of their own, the
// socket is non-blocking, and frames go to the writer's bounded queue (whole frames dropped and
// counted when the receiver side is slower than the caster).

/// Which settings are in force, and where they came from.
enum CorrectionsOrigin: String, Sendable {
    /// An app's `PUT /api/v1/correctionSource` (kept in settings.json).
    case rest
    /// `ntrip =` in the configuration file or on the command line.
    case configuration
}

/// The NTRIP client of the daemon. Loop-confined.
final class CorrectionsClient: HubSubscriber {
    /// `/events` messages (wired to the hub).
    var publishEvent: (BridgeEvent) -> Void = { _ in }
    /// The device path of the receiver TMM clients are served (wired to the input side).
    var servedReceiver: () -> String? = { nil }

    private let loop: EventLoop
    private let log: Logger
    private let userAgent: String
    /// Its thread is made with the server, before the daemon drops privileges (a thread made
    /// later by the io thread would inherit the capability the io thread may keep); it learns
    /// gpsd's control socket at `start()`, once the input side knows it.
    private let writer: CorrectionsWriter
    private let gpsdControlSocket: () -> String?
    /// Resolves caster names (getaddrinfo blocks on DNS) off the io thread.
    private let resolver: Worker
    private let resolved: Inbox<Resolution>

    private var configuration: CorrectionsConfiguration
    /// What an app set over REST, if it chose NTRIP (or turned corrections off: `appChoseOff`).
    private var restSource: NTRIPSource?
    private var appChoseOff = false
    private(set) var origin: CorrectionsOrigin?
    private var session: NTRIPSession?
    /// Health kept across sessions for what a new session starts at zero (the state "off").
    private var offSince: Int64
    private var link: CasterLink?
    /// The connection being opened: the addresses still to try, the one in progress.
    private var connecting: (addresses: [SocketAddress], attempt: OutboundAttempt?)?
    /// Bumped at every `.connect` and close: a resolution or connect that finishes for an
    /// older one is ignored.
    private var generation = 0
    /// Made once, on the first `ntrips://` connection (the trust store is read then).
    private var tlsContext: TLSClientContext?
    private var tlsContextAuthority: String??
    private var readBuffer: [UInt8] = []
    /// The state last announced in /events and the journal.
    private var announced: CorrectionsState = .off

    private struct Resolution: Sendable {
        let generation: Int
        let result: Result<[SocketAddress], ResolveError>
    }

    /// A non-blocking connect in progress (its descriptor is registered for writability).
    private final class OutboundAttempt {
        var connection: OutboundConnection?
        let address: SocketAddress
        init(_ connection: consuming OutboundConnection, address: SocketAddress) {
            self.connection = consume connection
            self.address = address
        }
        var descriptor: CInt? { connection?.descriptor.rawValue }
    }

    init(
        configuration: CorrectionsConfiguration, appSettings: CorrectionSettings,
        gpsdControlSocket: @escaping () -> String?, version: String, loop: EventLoop, log: Logger
    ) throws(Errno) {
        self.configuration = configuration
        self.loop = loop
        self.log = log
        userAgent = "NTRIP tmm-bridge/" + version
        offSince = monotonicNanoseconds()
        self.gpsdControlSocket = gpsdControlSocket
        resolved = try Inbox(capacity: 16)
        resolver = try Worker(name: "ntrip-resolve", capacity: 4)
        do {
            writer = try CorrectionsWriter(gpsdControlSocket: nil, log: log)
        } catch {
            resolver.stop()
            throw error
        }
        takeAppSettings(appSettings)
    }

    deinit {
        resolver.stop()
        writer.stop()
    }

    /// Starts the writer's thread, registers the resolver's inbox with the loop and starts the
    /// client if settings say so.
    func start() throws(Errno) {
        writer.useGPSDControlSocket(gpsdControlSocket())
        try loop.register(resolved.eventDescriptor, interest: .readable) { [unowned self] _ in
            for resolution in resolved.drain() { resolutionArrived(resolution) }
        }
        restart(now: monotonicNanoseconds())
    }

    /// Closes the connection; the writer's queued frames are dropped with its thread.
    func stop() {
        if let session {
            var stopping = session
            _ = stopping.stop(now: monotonicNanoseconds())
        }
        session = nil
        closeLink()
        resolver.stop()
        writer.stop()
    }

    // MARK: - Settings

    /// An app's `PUT /api/v1/correctionSource`, applied at once.
    func apply(appSettings: CorrectionSettings) {
        let before = (restSource, appChoseOff)
        takeAppSettings(appSettings)
        guard before.0 != restSource || before.1 != appChoseOff else { return }
        restart(now: monotonicNanoseconds())
    }

    private func takeAppSettings(_ settings: CorrectionSettings) {
        restSource = settings.ntripSource
        // An app that chose `auto` or `direct` after the daemon's own configuration named a caster
        // has the last word until the configuration changes (SIGHUP) or an app chooses NTRIP.
        appChoseOff = settings.wasSetByApp && restSource == nil
    }

    /// A reload: a changed `ntrip` (or its interval, receiver or CA) applies at once and takes
    /// precedence over what an app set before it.
    func reconfigure(_ configuration: BridgeConfiguration) {
        let next = configuration.corrections
        guard next != self.configuration else { return }
        let sourceChanged = next.source != self.configuration.source
        self.configuration = next
        if sourceChanged {
            restSource = nil
            appChoseOff = false
        }
        if next.authorityFile != tlsContextAuthority ?? nil { tlsContext = nil }
        restart(now: monotonicNanoseconds())
    }

    /// The source in force: the app's, else the configuration's unless an app turned them off.
    private var activeSource: (NTRIPSource, CorrectionsOrigin)? {
        if let restSource { return (restSource, .rest) }
        if appChoseOff { return nil }
        return configuration.source.map { ($0, .configuration) }
    }

    private func restart(now: Int64) {
        if var session {
            perform(session.stop(now: now), now: now)
            self.session = nil
        }
        closeLink()
        guard let (source, origin) = activeSource else {
            self.origin = nil
            offSince = now
            announce(.off, now: now)
            return
        }
        self.origin = origin
        var next = NTRIPSession(
            settings: .init(
                source: source, userAgent: userAgent, ggaIntervalSeconds: configuration.ggaIntervalSeconds))
        log.notice("corrections: \(source) (set by \(origin.rawValue))")
        let actions = next.start(now: now)
        session = next
        perform(actions, now: now)
    }

    // MARK: - Hub

    /// The served receiver's epochs: its GGA goes upstream.
    func publish(_ epoch: PublishedEpoch) {
        guard session != nil else { return }
        let actions = session!.position(epoch.position, now: epoch.at)
        perform(actions, now: epoch.at)
    }

    /// Retries, time-outs and GGA sentences that are due.
    func tick(now: Int64) {
        guard session != nil else { return }
        let actions = session!.tick(now: now)
        perform(actions, now: now)
    }

    // MARK: - Actions

    private func perform(_ actions: [NTRIPSession.Action], now: Int64) {
        for action in actions {
            switch action {
            case .connect(let host, let port, let tls): connect(host: host, port: port, tls: tls)
            case .send(let bytes): send(bytes, now: now)
            case .disconnect: closeLink()
            case .deliver(let frame): deliver(frame)
            case .stateChanged(let state): announce(state, now: now)
            case .log(let level, let text): log("corrections: " + text, level: level, key: "corrections")
            }
        }
    }

    private func deliver(_ frame: RTCM3Frame) {
        guard let device = configuration.receiver ?? servedReceiver() else {
            undeliverable += 1
            return
        }
        _ = writer.submit(frame.bytes, to: device)
    }

    /// Frames that came while no receiver was there to take them.
    private(set) var undeliverable = 0

    private func announce(_ state: CorrectionsState, now: Int64) {
        let previous = announced
        announced = state
        guard state != previous else { return }
        let source = activeSource?.0
        let caster = source.map { "\($0.host):\($0.port)" } ?? ""
        let mount = source?.mountPoint ?? ""
        // One repeat key per state: a retry that fails the same way again is held back, a new
        // state never is.
        let key = "corrections-" + state.code
        switch state {
        case .streaming:
            log.notice("corrections: streaming from \(source.map { "\($0)" } ?? "")")
            publishEvent(.correctionsConnected(caster: caster, mountPoint: mount, revision: session?.health.revision))
        case .loginRefused:
            log.error("corrections: \(state.description) (check the NTRIP user name and password)", key: key)
            publishEvent(.correctionsLoginRefused(caster: caster, mountPoint: mount))
        case .noSuchMountPoint, .protocolError:
            log.error("corrections: \(state.description)", key: key)
        case .unreachable, .noData:
            log.warning("corrections: \(state.description)", key: key)
        case .connecting:
            log.info("corrections: connecting to \(source.map { "\($0)" } ?? "")", key: key)
        case .off:
            log.notice("corrections: off")
        }
        if previous == .streaming {
            publishEvent(.correctionsLost(reason: state.code, message: state.description))
        }
    }

    // MARK: - Connection

    private func connect(host: String, port: UInt16, tls: Bool) {
        closeLink()
        generation += 1
        let generation = generation
        let inbox = resolved
        let submitted = resolver.submit {
            let result = Result { () throws(ResolveError) -> [SocketAddress] in try resolveTCP(host: host, port: port) }
            inbox.post(Resolution(generation: generation, result: result))
        }
        if !submitted { connectionFailed("the resolver is busy") }
    }

    private func resolutionArrived(_ resolution: Resolution) {
        guard resolution.generation == generation, session != nil else { return }
        switch resolution.result {
        case .success(let addresses):
            connecting = (addresses, nil)
            tryNextAddress(lastError: nil)
        case .failure(let error):
            connectionFailed(error.description)
        }
    }

    /// Starts a connect to the next address, or reports the last failure when none is left.
    private func tryNextAddress(lastError: String?) {
        guard var pending = connecting, !pending.addresses.isEmpty else {
            connecting = nil
            connectionFailed(lastError ?? "no address to connect to")
            return
        }
        let address = pending.addresses.removeFirst()
        do {
            let attempt = OutboundAttempt(try OutboundConnection.start(to: address), address: address)
            pending.attempt = attempt
            connecting = pending
            let fd = attempt.descriptor!
            try loop.register(fd, interest: .writable) { [unowned self] _ in connectFinished(attempt) }
        } catch {
            connecting = pending
            tryNextAddress(lastError: "connect to \(address): \(error)")
        }
    }

    private func connectFinished(_ attempt: OutboundAttempt) {
        guard let pending = connecting, pending.attempt === attempt, let fd = attempt.descriptor else { return }
        try? loop.deregister(fd)
        if let error = attempt.connection!.finish() {
            attempt.connection = nil
            tryNextAddress(lastError: "connect to \(attempt.address): \(error)")
            return
        }
        connecting = nil
        guard let source = activeSource?.0 else { return }
        let connection = attempt.connection.take()!
        let link: CasterLink
        do throws(CryptoError) {
            let tls = try source.usesTLS ? (context: clientContext(), serverName: source.host) : nil
            link = try CasterLink(connection.connected(), tls: tls)
        } catch {
            connectionFailed("TLS to \(source.host): \(error)")
            return
        }
        self.link = link
        do throws(Errno) {
            try loop.register(link.descriptor, interest: .readable) { [unowned self, unowned link] event in
                linkReady(link, event)
            }
        } catch {
            closeLink()
            connectionFailed("watching the caster's socket: \(error)")
            return
        }
        do throws(TLSSession.Failure) {
            try link.start()
        } catch {
            closeLink()
            connectionFailed("TLS to \(source.host): \(error)")
            return
        }
        let now = monotonicNanoseconds()
        if !source.usesTLS || link.isEstablished { sessionConnected(now: now) }
        updateInterest()
    }

    /// The session sends its request once the caster can be talked to (after TLS, if any).
    private var sessionToldConnected = false

    private func sessionConnected(now: Int64) {
        guard !sessionToldConnected, session != nil else { return }
        sessionToldConnected = true
        let actions = session!.connected(now: now)
        perform(actions, now: now)
    }

    private func clientContext() throws(CryptoError) -> TLSClientContext {
        if let tlsContext { return tlsContext }
        let context = try TLSClientContext(systemTrustAnd: configuration.authorityFile)
        tlsContext = context
        tlsContextAuthority = .some(configuration.authorityFile)
        return context
    }

    private func linkReady(_ link: CasterLink, _ event: SelectorEvent) {
        guard link === self.link else { return }
        do {
            if link.hasPendingOutput { try link.flush() }
            var rounds = 0
            while rounds < Self.readRoundsPerWakeUp, self.link === link {
                rounds += 1
                readBuffer.removeAll(keepingCapacity: true)
                switch try link.read(into: &readBuffer) {
                case .processed(0):
                    closeLink()
                    let now = monotonicNanoseconds()
                    if session != nil { perform(session!.connectionClosed(now: now), now: now) }
                    return
                case .processed:
                    let now = monotonicNanoseconds()
                    if link.isEstablished && !sessionToldConnected { sessionConnected(now: now) }
                    guard session != nil else { return }
                    let bytes = readBuffer
                    let actions = session!.received(bytes.span, now: now)
                    perform(actions, now: now)
                case .wouldBlock:
                    if link.isEstablished && !sessionToldConnected { sessionConnected(now: monotonicNanoseconds()) }
                    rounds = Self.readRoundsPerWakeUp
                }
            }
        } catch {
            let reason = link.failureReason.map { "TLS: \($0)" } ?? "\(error)"
            closeLink()
            connectionFailed(reason)
            return
        }
        updateInterest()
    }

    /// Reads per wake-up before other descriptors get a turn (a caster streams a few KB/s; a
    /// hostile one must not hold the loop).
    static let readRoundsPerWakeUp = 4

    private func send(_ bytes: [UInt8], now: Int64) {
        guard let link else { return }
        do {
            try link.send(bytes)
        } catch {
            closeLink()
            connectionFailed("sending to the caster: \(link.failureReason ?? "\(error)")")
            return
        }
        updateInterest()
    }

    private func updateInterest() {
        guard let link else { return }
        try? loop.modify(link.descriptor, interest: link.hasPendingOutput ? [.readable, .writable] : .readable)
    }

    private func connectionFailed(_ reason: String) {
        let now = monotonicNanoseconds()
        guard session != nil else { return }
        perform(session!.connectionFailed(reason: reason, now: now), now: now)
    }

    private func closeLink() {
        generation += 1
        sessionToldConnected = false
        if let attempt = connecting?.attempt, let fd = attempt.descriptor { try? loop.deregister(fd) }
        connecting = nil
        if let link {
            try? loop.deregister(link.descriptor)
            link.close()
        }
        link = nil
    }

    // MARK: - What the rest of the daemon reads

    /// The receiver-side and caster-side figures for `status`.
    func status(now: Int64) -> DaemonStatus.Corrections {
        let written = writer.statistics
        let source = activeSource?.0
        guard let health = session?.health else {
            return DaemonStatus.Corrections(
                state: "off", message: CorrectionsState.off.description,
                stateSeconds: Int((now - offSince) / 1_000_000_000), receiver: written.device,
                route: written.route?.rawValue, framesWritten: written.framesWritten,
                framesDropped: written.framesDropped, writeFailures: written.writeFailures,
                writeError: written.lastError)
        }
        func seconds(_ at: Int64?) -> Double? {
            at.map { (Double(now - $0) / 1e8).rounded() / 10 }
        }
        return DaemonStatus.Corrections(
            state: health.state.code, message: health.state.description,
            stateSeconds: Int((now - health.since) / 1_000_000_000), origin: origin?.rawValue,
            caster: source.map { "\($0.host):\($0.port)" }, mountPoint: source?.mountPoint, user: source?.user,
            tls: source?.usesTLS, revision: health.revision, attempts: health.connectAttempts, bytes: health.bytes,
            frames: health.frames, damagedFrames: health.damagedFrames,
            lastFrameAgeSeconds: seconds(health.lastFrameAt),
            stationID: health.referenceStationID, ggaSent: health.ggaSent, lastGGAAgeSeconds: seconds(health.lastGGAAt),
            receiver: written.device ?? configuration.receiver ?? servedReceiver(), route: written.route?.rawValue,
            framesWritten: written.framesWritten, framesDropped: written.framesDropped,
            writeFailures: written.writeFailures, writeError: written.lastError)
    }

    /// LocationV2's `diffAge` and `diffID` when the receiver does not say: the age of the last
    /// frame written to it and the station the frames name (DF003), while its fix is differential
    /// (the corrections are in use) and frames are flowing to it.
    func annotate(_ position: Position, now: Int64) -> Position {
        guard session != nil, position.quality.usesCorrections else { return position }
        var annotated = position
        if annotated.diffAge == nil, let at = writer.statistics.lastWrittenAt {
            annotated.diffAge = (Double(now - at) / 1e8).rounded() / 10
        }
        if annotated.diffStationID == nil { annotated.diffStationID = session!.health.referenceStationID }
        return annotated
    }
}

extension FixQuality {
    /// A fix that uses corrections (DGPS, RTK fixed or float).
    var usesCorrections: Bool { self == .dgps || self == .rtkFixed || self == .rtkFloat }
}

@available(*, unavailable, message: "the corrections client belongs to the io thread")
extension CorrectionsClient: Sendable {}
