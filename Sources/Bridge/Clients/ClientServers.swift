import BridgeCore
import HTTP1
import InputLoop
import Posix
import TLS
import TMMProtocol
import WebSocket

// The TMM client servers: REST, LocationV1, LocationV2 and `/events` on their plain and TLS ports.
// Each accepted socket becomes a `Connection`, whose rules are BridgeCore's `ClientConnection`
// (events in, actions out); ClientServers+Executor.swift reads its events from the socket and
// the loop and carries out its actions, ClientServers+Handshakes.swift keeps TLS handshakes from
// crowding out the other clients. What a connection asks of the rest of the server it asks
// through `ConnectionHost` (ConnectionHost.swift); what it changes comes back as actions, carried
// out on the parts that own the state (the hub's outputs, the registrations, the settings, the
// input side).
//
// Nothing here blocks: sockets are non-blocking, writes that do not fit wait in the connection's
// queue until the selector says the socket is writable. A slow client therefore only ever costs
// its own queue (see OutboundQueue for the policy).

/// The client servers' listeners and connections. Loop-confined.
final class ClientServers: FrameDelivery {
    /// What the connections consult and change, owned by the other parts of the server.
    struct Parts {
        let secure: SecureServing
        let registrations: Registrations
        let settings: DeviceSettingsStore
        let input: ReceiverInput
        let outputs: WebSocketOutputs
        let ports: PortAssignment
        /// Reported as `appVersion` and in tmmInfo.
        let version: String
        /// What to send back for a data message (the conformance suite's echo server only).
        let dataMessageReply: (@Sendable (WebSocketMessage) -> [UInt8]?)?
        /// Runs what would make the io thread wait (returning freed memory after a flood).
        let worker: Worker
        /// The NTRIP client, for GET correctionSource's state.
        let corrections: CorrectionsClient
    }

    /// Counters for the log and the status.
    struct Statistics {
        var accepted = 0
        var refusedOverLimit = 0
        var requests = 0
        var upgrades = 0
        /// Positions a slow client's queue replaced by a newer one (OutboundQueue).
        var positionsDropped = 0
        var slowClientsClosed = 0
        var unexpectedMessages = 0
        /// Requests (REST, preflights, WebSocket handshakes) refused with 403 for their `Origin`.
        var refusedOrigins = 0
        /// TLS sessions that failed (refused handshakes, bad records), and handshakes that stalled.
        var tlsFailures = 0
        var tlsHandshakesTimedOut = 0
        /// Handshakes in progress closed to make room for a new one (the handshake memory was used up).
        var tlsHandshakesEvicted = 0
        /// Access Code V2 codes refused (401).
        var accessCodeV2Refused = 0
        /// Dashboard pages refused for their hello (4401: no or a wrong token).
        var dashboardRefused = 0
    }

    let parts: Parts
    let loop: EventLoop
    let log: Logger
    /// The limits in force (a reload may change some; open connections keep their settings).
    private(set) var limits: ServerLimits
    /// What every new client connection applies.
    private var connectionSettings: ClientConnection.Settings
    /// Which new clients fit (BridgeCore's ConnectionAdmission).
    var admission: ConnectionAdmission
    private var listeners: [CInt: BoundSocket] = [:]
    /// SHA-256 of `dashboard-token` (DashboardHello compares digests); nil: none configured.
    let dashboardTokenDigest: InlineArray<32, UInt8>?
    var connections: [CInt: Connection] = [:]
    /// TLS handshakes in progress and those waiting for a turn; the timer that serves the queue
    /// at the end of each turn while it is not empty (ClientServers+Handshakes).
    var handshakes = HandshakeSchedule()
    let handshakeQueueTimer: EventLoopTimer
    /// The most connections open since the last growth, those open when freed memory was last
    /// given back, and those open at the last tick (ClientServers+Handshakes).
    var memoryWatch: (peak: Int, trimmedWith: Int?) = (0, nil)
    var connectionsAtLastTick = 0
    /// The actions of the connection event being carried out (reused; see `drive`).
    var actionBuffer: [ClientConnectionAction] = []
    /// Shared by every read (the machine copies what it keeps).
    var readScratch = [UInt8](repeating: 0, count: 65_536)
    var dateCache: (second: Int64, text: String) = (-1, "")
    /// Keeps refused origins from flooding the log.
    var refusedOriginLog = RefusedOriginLog()
    var statistics = Statistics()
    private let shortage: DescriptorShortage
    /// REST changed the antenna or correction settings (the server wires it: the store keeps
    /// them, the hub's identity takes the antenna height).
    var settingsChanged: (DeviceSettings) -> Void = { _ in }

    init(
        listeners: [BoundSocket], configuration: BridgeConfiguration, admission: ConnectionAdmission, parts: Parts,
        loop: EventLoop, shortage: DescriptorShortage, log: Logger
    ) {
        for socket in listeners { self.listeners[socket.descriptor] = socket }
        limits = configuration.limits
        connectionSettings = ClientConnection.Settings(configuration)
        dashboardTokenDigest = configuration.dashboard.token.map { Digest.sha256(Array($0.utf8)) }
        self.admission = admission
        self.parts = parts
        self.loop = loop
        self.shortage = shortage
        self.log = log
        handshakeQueueTimer = loop.makeTimer()
        handshakeQueueTimer.handler = { [unowned self] _ in serveHandshakeQueue() }
    }

    /// Watches the listeners (the loop runs).
    func start() throws(Errno) {
        for (fd, entry) in listeners {
            let server = entry.server
            let dashboardOnly = entry.dashboardOnly
            try loop.register(fd, interest: .readable) { [unowned self] _ in
                acceptAll(on: fd, server: server, dashboardOnly: dashboardOnly)
            }
        }
    }

    /// A reload: new connections take the new settings, open ones keep theirs.
    func reconfigure(_ configuration: BridgeConfiguration) {
        limits = configuration.limits
        connectionSettings = ClientConnection.Settings(configuration)
        admission.reconfigure(
            configured: configuration.limits.maxConnections, openFileLimit: CurrentProcess.openFileLimit(),
            otherClients: ControlServer.maxClients, handshakeMemory: configuration.limits.tlsHandshakeMemory)
        if admission.maxConnections < configuration.limits.maxConnections {
            log.warning(
                "max-connections \(configuration.limits.maxConnections) lowered to \(admission.maxConnections): "
                    + "the open-file limit allows no more"
            )
        }
    }

    /// Every `tickInterval`: HTTP time-outs, WebSocket keepalive, slow clients, deferred replies,
    /// input TLS holds back, stalled handshakes, memory after a flood.
    func tick(now: Int64) {
        tickConnections(now: now)
        readBufferedInput()
        closeStalledHandshakes(now: now)
        returnMemoryAfterFlood()
    }

    // MARK: - Accepting

    private func acceptAll(on fd: CInt, server: TMMServer, dashboardOnly: Bool) {
        guard let socket = listeners[fd] else { return }
        // A bounded batch per wake-up keeps one busy listener from starving the others.
        for _ in 0..<64 {
            let result: AcceptResult
            do {
                result = try socket.listener.accept()
            } catch {
                if shortage.acceptFailed(error, listener: fd) { continue }
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
                        log.warning(
                            "connection limit (\(admission.maxConnections), "
                                + "\(admission.locationBudget) for the location ports) reached: "
                                + "refusing clients (\(statistics.refusedOverLimit) so far)"
                        )
                    }
                    continue  // `socket` closes here
                }
                adopt(socket, server: server, dashboardOnly: dashboardOnly)
            }
        }
    }

    private func adopt(_ socket: consuming SocketConnection, server: TMMServer, dashboardOnly: Bool) {
        socket.setNoDelay()
        socket.setSendBuffer(limits.sendBuffer)
        let transport: any Transport
        if server.isSecure {
            if admission.handshakesFull { evictOldestHandshake() }
            do {
                transport = try parts.secure.transport(for: socket, keyUpdateBurst: limits.tlsKeyUpdateBurst)
            } catch {
                log.error("cannot start a TLS session: \(error)")
                return
            }
        } else {
            transport = PlainTransport(socket)
        }
        var settings = connectionSettings
        settings.dashboardOnly = dashboardOnly
        let connection = Connection(
            transport: transport, server: server, settings: settings, now: monotonicNanoseconds())
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

    // MARK: - Counted and logged

    func record(_ report: ClientConnectionReport, on connection: Connection) {
        switch report {
        case .request:
            statistics.requests += 1
        case .upgrade:
            statistics.upgrades += 1
        case .refusedOrigin(let shown):
            statistics.refusedOrigins += 1
            if refusedOriginLog.shouldLog(shown, count: statistics.refusedOrigins, now: monotonicNanoseconds()) {
                log.warning(
                    "refused Origin '\(shown)' on \(connection.server.registrationKey) (not in allowed-origins): "
                        + "403 (\(statistics.refusedOrigins) refused so far)"
                )
            }
        case .accessCodeV2Refused(let refusal):
            // Keyed by the kind of refusal (a client can vary the numbers, ids and ages in the
            // text at will).
            statistics.accessCodeV2Refused += 1
            log.warning(
                "Access Code V2 refused: \(refusal) (\(statistics.accessCodeV2Refused) refused so far)",
                key: "Access Code V2 refused: " + refusal.kind)
        case .unexpectedMessage:
            statistics.unexpectedMessages += 1
        case .dashboardHelloRefused(let reason):
            // Keyed by the reason alone: a page retrying its token is one line and a summary.
            statistics.dashboardRefused += 1
            log.notice(
                "dashboard page refused (4401): \(reason) (\(statistics.dashboardRefused) refused so far)",
                key: "dashboard page refused: " + reason)
        case .positionsDropped(let count):
            statistics.positionsDropped += count
        case .slowClientClosed(let behind, let nanoseconds, let dropped):
            statistics.slowClientsClosed += 1
            // Keyed without the numbers: a burst of slow clients is one line and a summary.
            log.warning(
                "closing a slow WebSocket client (1008): \(behind) bytes behind for \(nanoseconds / 1_000_000) ms, "
                    + "\(dropped) positions dropped",
                key: "closing a slow WebSocket client")
        }
    }

    /// A transport failed for a reason of its own (TLS: a refused handshake, a bad record):
    /// counted and logged. A client can cause these at will (a scanner), so the logger's repeat
    /// rule holds back copies of the same failure (keyed without the running count) and
    /// summarises them with the latest count.
    func recordTransportFailure(_ reason: String, on connection: Connection, established: Bool) {
        statistics.tlsFailures += 1
        let what =
            "TLS \(established ? "session" : "handshake") failed on \(connection.server.registrationKey): \(reason)"
        log.warning(what + " (\(statistics.tlsFailures) TLS failures so far)", key: what)
    }

    /// The `Date` header value, formatted once per second.
    func httpDate() -> String {
        let second = wallClockMilliseconds() / 1000
        if second != dateCache.second { dateCache = (second, HTTPDate.imfFixdate(unixSeconds: second)) }
        return dateCache.text
    }

    /// Connections open per server (status).
    var openBySocket: [String: Int] {
        var bySocket = Dictionary(uniqueKeysWithValues: TMMServer.iOSOrder.map { ($0.registrationKey, 0) })
        for connection in connections.values { bySocket[connection.server.registrationKey, default: 0] += 1 }
        return bySocket
    }
}

@available(*, unavailable, message: "the client servers belong to the io thread")
extension ClientServers: Sendable {}
