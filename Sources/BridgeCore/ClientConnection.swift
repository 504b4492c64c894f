import HTTP1
import TMMProtocol
import WebSocket

// One client connection's rules as a state machine: events in, actions out. The io loop (Bridge)
// owns the socket and carries out the actions; this type never does I/O, never reads a clock
// (time comes in as `now`) and never calls back into the loop, so an event cannot re-enter it:
// whatever happens (a response, a close, a write error reported later) is data the loop applies
// after the machine has returned.
//
//   accepted ──► http ──upgrade──► webSocket
//                 │                   │
//                 └──── end ──────────┴──► closing(deadline) ──output written──► draining(deadline)
//                                               │                                    │
//                                               └──── deadline, error, hang-up ──────┴──► closed
//
// - `http`: requests are read and answered in order (HTTPExchange); a deferred reply stops
//   reading until it is answered.
// - `webSocket`: frames in (WebSocketConnection), positions and events out through `output`.
// - `closing`: the queued output goes out, nothing is read; then the write side is shut.
// - `draining`: input is read and dropped until the client closes, so a response is not lost to
//   a reset caused by unread input.
// Closing and draining are each cut off at their deadline (`tick`).
//
// Output. Everything the client is to receive is queued in `output` (OutboundQueue, whose
// frames the hub shares between clients). `.flush` is a write request: the loop writes what
// the transport takes, from `output.unsentStart` on, without telling the machine; once the
// action list is carried out it reports the outcome as the connection's next event, `written(_:
// blocked:now:into:)` (or `transportFailed(into:)`). The machine is never changed from inside
// its own action list.

/// What a WebSocket client subscribed to.
public enum ClientChannel: Equatable, Sendable {
    /// LocationV1 once per second (`locationPort`, `/`).
    case locationV1
    /// LocationV2 at the receiver's rate (`locationV2Port`, `/` and `/locationV2`).
    case locationV2
    /// `/events` on `locationV2Port`.
    case events
    /// The operator dashboard's snapshots (`/dashboard/socket` on `apiPort`, its TLS twin and
    /// `dashboard-listen`), once the page's hello is accepted (DashboardHello).
    case dashboard
}

/// What the connection needs from the rest of the server while it answers a request: questions
/// only, in three groups, each answered by the server part that owns the answer (Bridge's
/// `ConnectionHost`). Nothing here changes the server; changes come back as actions.
public typealias ClientConnectionHost = ServerFacts & AccessCodeChecks & WebSocketServices

/// Server-wide state a REST answer reads: the receiver, the port plan, the registrations, the
/// settings, the date.
public protocol ServerFacts {
    /// The `Date` header value for a response written now.
    func httpDate() -> String
    var ports: PortAssignment { get }
    /// Reported as `appVersion` in tmmInfo.
    var version: String { get }
    var receiverInfo: ReceiverInfo { get }
    /// V2 is locked until a registration or an authenticated REST call (TMM-API.md §6.2).
    var isLocationV2Unlocked: Bool { get }
    /// The LocationV2 rate cap in force, and what a client asked of it.
    var locationV2Broadcast: LocationV2Broadcast { get }
    var hasRegisteredApplications: Bool { get }
    /// The Access Code V2 key's public half for `GET /api/v1/publicKey` (unpadded base64url `n`
    /// and `e`).
    var accessCodeV2PublicKey: (n: String, e: String) { get }
    /// The antenna and correction settings REST reads and changes.
    var deviceSettings: DeviceSettings { get }
    /// What the corrections client does now, for GET correctionSource (never the password).
    var correctionsState: DaemonStatus.Corrections? { get }
    /// A file of the operator dashboard by request path (`/`, `/dashboard.css`,
    /// `/dashboard.js`); nil when there is no such file (`dashboard = off` is the exchange's).
    func dashboardFile(_ path: String) -> StaticFile?
}

/// A file served as it is (the dashboard's page): its Content-Type and bytes.
public struct StaticFile: Equatable, Sendable {
    public let contentType: String
    public let bytes: [UInt8]

    public init(contentType: String, bytes: [UInt8]) {
        self.contentType = contentType
        self.bytes = bytes
    }
}

/// The access codes a request may carry, checked against the registrations and their keys.
public protocol AccessCodeChecks {
    /// The registered application whose Access Code V1 the `Authorization` value carries now.
    func verifyAccessCode(headerValue: String) -> GUID?
    /// The application whose Access Code V2 the `Authorization` value carries (AccessCodeV2Verifier
    /// with the server's key, ledger and clock). `overTLS`: it came over a secure port; `consume`:
    /// record a code that passes (false for the look before `100 Continue`).
    func verifyAccessCodeV2(
        headerValue: String, overTLS: Bool, consume: Bool
    ) -> Result<GUID, AccessCodeV2Verifier.Refusal>
}

/// What the WebSocket side asks: the handshake's digest and the first and echoed messages.
public protocol WebSocketServices {
    /// SHA-1, for `Sec-WebSocket-Accept`.
    func sha1(_ bytes: Span<UInt8>) -> WebSocketHandshake.SHA1Digest
    /// The first message of a new `/events` connection: the `status` event as a whole text frame.
    func statusEventFrame() -> [UInt8]
    /// Whether a dashboard page's first message lets it subscribe: its token, if one is needed
    /// for this connection, checked in constant time (DashboardHello). Its first snapshot comes
    /// from the dashboard's output once subscribed (the status it holds counts this connection,
    /// which cannot be read while its machine runs).
    func dashboardHello(_ message: WebSocketMessage) -> DashboardHello.Verdict
    /// A whole frame to send back for a data message a WebSocket client sent, or nil to ignore it.
    /// The daemon ignores them (TMM clients send none); the conformance suite's echo server
    /// (tmm-wsecho, test builds only) returns the message as a frame, so the suite drives this very
    /// machine. Asked in order, before the frames that followed the message are read.
    func reply(toDataMessage message: WebSocketMessage, on channel: ClientChannel) -> [UInt8]?
}

/// What the loop does for a connection, in order.
public enum ClientConnectionAction: Equatable, Sendable {
    /// Write `output` until the transport blocks, and report with `written` as the next event
    /// (see the file comment).
    case flush
    /// No more output: end the write side (draining begins).
    case shutdownWrite
    /// Close the socket and forget the connection; nothing after this is for it. (The machine is
    /// closed already: a `.flush` before it in the same list writes what it can first.)
    case close
    /// What the selector should wait for (if the selector refuses, the loop closes the connection).
    case setInterest(ClientInterest)
    /// Add the connection to the hub's list for this channel (after an upgrade).
    case subscribe(ClientChannel)
    /// Take it out of the hub (it is ending).
    case unsubscribe
    /// Run `PUT /api/v1/receiver`'s gpsd commands (connect or disconnect the receiver) and report
    /// with `receiverCommandStarted`.
    case receiverCommand(connect: Bool)
    /// A REST call carried a valid access code of this application: V2 unlocks if still locked.
    case authenticated(GUID)
    /// A REST call carried a valid Access Code V2 of this application: V2 unlocks, and the
    /// application is registered if it is not yet (the first use of a code registers it, §4.2).
    case authenticatedByAccessCodeV2(GUID)
    /// REST set the LocationV2 broadcast rate: pace V2 by this requested interval from now on
    /// (nil: by `max-location-rate` alone).
    case setLocationV2Interval(Int64?)
    /// REST changed the antenna or correction settings: keep these (memory now, the file off the
    /// io thread).
    case saveSettings(DeviceSettings)
    /// Counters and log lines.
    case report(ClientConnectionReport)
}

/// What the selector should wait for on the connection's socket.
public struct ClientInterest: Equatable, Sendable {
    public var readable: Bool
    public var writable: Bool

    public init(readable: Bool, writable: Bool) {
        self.readable = readable
        self.writable = writable
    }
}

/// What the loop counts and logs for a connection.
public enum ClientConnectionReport: Equatable, Sendable {
    /// A request was taken up to be answered.
    case request
    /// A WebSocket handshake succeeded.
    case upgrade
    /// A request was refused (403) for its `Origin`, printable as given (RefusedOriginLog).
    case refusedOrigin(String)
    /// An Access Code V2 was refused, and why (for the log; the client got a 401).
    case accessCodeV2Refused(AccessCodeV2Verifier.Refusal)
    /// A WebSocket data message from the client (TMM clients send none; it is ignored).
    case unexpectedMessage
    /// A dashboard page's hello was refused (it is closed with 4401), and why.
    case dashboardHelloRefused(String)
    /// Positions a slow client's queue dropped to make room for the newest (OutboundQueue).
    case positionsDropped(Int)
    /// A slow client is closed with 1008: this far behind, for this long, having lost this many
    /// positions.
    case slowClientClosed(behind: Int, nanoseconds: Int64, droppedPositions: Int)
}

/// How the gpsd commands of a `PUT /api/v1/receiver` started.
public enum ReceiverCommandOutcome: Equatable, Sendable {
    /// Under way (the ticket `receiverCommandFinished` will name; nil: nothing to run).
    case started(ticket: Int?)
    /// gpsd could not be asked (503).
    case gpsdFailed(String)
    /// Nothing to connect or no way to control gpsd (409).
    case refused(String)
}

/// One client connection (see the file comment). Loop-confined, like the socket it describes.
public struct ClientConnection {
    /// Where the connection is in its life.
    public enum State {
        case http(HTTPExchange)
        case webSocket(WebSocketSession)
        case closing(deadline: Int64)
        case draining(deadline: Int64)
        case closed
        /// Only while a payload is being changed in place (no copy of its buffers is made).
        case modifying
    }

    /// What a WebSocket connection keeps once upgraded (HTTP is over).
    public struct WebSocketSession {
        public internal(set) var connection: WebSocketConnection
        public let channel: ClientChannel
        /// Since when the client has been behind by more than the hard limit.
        public internal(set) var overHardLimitSince: Int64?
        /// A dashboard page not subscribed yet: its hello must arrive by this instant.
        public internal(set) var helloDeadline: Int64?
    }

    /// The configuration a connection applies.
    public struct Settings: Sendable {
        public var limits: ServerLimits
        public var allowedOrigins: HTTPOriginPolicy
        /// The dashboard is served (`dashboard = on`).
        public var dashboard: Bool
        /// The connection came to a `dashboard-listen` address: it is answered the dashboard only.
        public var dashboardOnly = false

        public init(limits: ServerLimits, allowedOrigins: HTTPOriginPolicy, dashboard: Bool = true) {
            self.limits = limits
            self.allowedOrigins = allowedOrigins
            self.dashboard = dashboard
        }

        public init(_ configuration: BridgeConfiguration) {
            self.init(
                limits: configuration.limits, allowedOrigins: configuration.allowedOrigins,
                dashboard: configuration.dashboard.isOn)
        }
    }

    /// How long each ending step (closing, then draining) may take.
    public static let endingStepTimeout: Int64 = 2_000_000_000
    /// Unsent HTTP responses beyond which the server stops reading a connection's requests.
    public static let httpOutputLimit = 256 * 1024

    public let server: TMMServer
    public let settings: Settings
    public private(set) var state: State
    /// What the client has still to receive.
    public private(set) var output = OutboundQueue()
    /// Last time bytes arrived or the client took some of our output (the HTTP idle timeout).
    public private(set) var lastActivity: Int64
    /// The interest last asked for (`.setInterest`); a new socket is watched for reading.
    public private(set) var interest = ClientInterest(readable: true, writable: false)
    /// The last flush left output the transport would not take.
    private var wantsWritable = false

    /// A connection just accepted on `server`'s port: every connection starts with HTTP.
    public init(server: TMMServer, settings: Settings, now: Int64) {
        self.server = server
        self.settings = settings
        state = .http(HTTPExchange(server: server, settings: settings))
        lastActivity = now
    }

    // MARK: - Questions the loop asks

    public var isClosed: Bool { if case .closed = state { true } else { false } }

    /// The channel of an upgraded connection.
    public var channel: ClientChannel? { if case .webSocket(let session) = state { session.channel } else { nil } }

    /// Whether the input is read now: always while draining; never while closing or while a reply
    /// is deferred; otherwise while the unsent output is under `readPauseThreshold` (a client that
    /// pipelines requests, or floods pings, without reading the answers would otherwise grow its
    /// queue without bound).
    public var isReading: Bool {
        switch state {
        case .draining: true
        case .closing, .closed, .modifying: false
        case .http(let exchange): exchange.deferred == nil && output.byteCount < Self.httpOutputLimit
        case .webSocket: output.byteCount < settings.limits.queueHardLimit
        }
    }

    /// True while a WebSocket client may be sent data frames.
    public var canReceiveFrames: Bool {
        if case .webSocket(let session) = state { session.connection.canSend } else { false }
    }

    /// The ticket of the gpsd commands a deferred `PUT /receiver` waits for.
    public var awaitingTicket: Int? {
        if case .http(let exchange) = state { exchange.deferred?.awaitingTicket } else { nil }
    }

    /// A deferred `PUT /receiver {"isConnected":true}` waits for the receiver.
    public var isWaitingForReceiver: Bool {
        if case .http(let exchange) = state { exchange.deferred?.connecting == true } else { false }
    }

    // MARK: - Events: input

    /// Bytes the client sent.
    public mutating func bytesRead<Host: ClientConnectionHost>(
        _ bytes: ArraySlice<UInt8>, now: Int64, host: Host, into actions: inout [ClientConnectionAction]
    ) {
        lastActivity = now
        switch state {
        case .http(var exchange):
            state = .modifying
            exchange.append(bytes)
            let outcome = exchange.processRequests(now: now, host: host, output: &output, actions: &actions)
            apply(outcome, exchange, now: now, host: host, into: &actions)
        case .webSocket:
            receiveWebSocket(bytes.span, now: now, host: host, into: &actions)
        case .draining, .closing, .closed, .modifying:
            break  // dropped: the connection is ending
        }
        syncInterest(into: &actions)
    }

    /// The client closed its side (a read returned 0).
    public mutating func endOfInput(now: Int64, into actions: inout [ClientConnectionAction]) {
        if case .http = state, !output.isEmpty {
            // A client that half-closes after its requests (`nc -N`) still reads the answers.
            beginEnding(now: now, into: &actions)
            syncInterest(into: &actions)
        } else {
            closeNow(into: &actions)
        }
    }

    /// A read, write or selector error, or a hang-up while not reading: both directions are gone,
    /// and nothing queued can be delivered any more.
    public mutating func transportFailed(into actions: inout [ClientConnectionAction]) {
        closeNow(into: &actions)
    }

    // MARK: - Events: output

    /// What a `.flush` wrote: `count` bytes of `output` from its first unsent byte, and whether
    /// output was left that the transport would not take (`blocked`). An ending connection whose
    /// output is out shuts its write side; a WebSocket client is checked against the slow-client
    /// rule.
    public mutating func written(_ count: Int, blocked: Bool, now: Int64, into actions: inout [ClientConnectionAction])
    {
        if count > 0 {
            output.consumed(count)
            lastActivity = now
        }
        wantsWritable = blocked
        switch state {
        case .closing where !blocked && output.isEmpty:
            finishClosing(now: now, into: &actions)
        case .webSocket:
            checkBacklog(now: now, into: &actions)
        default:
            break
        }
        syncInterest(into: &actions)
    }

    /// A shared frame for a WebSocket client (positions may be coalesced, see OutboundQueue);
    /// ignored unless the client may receive frames (not ending, closing handshake not begun).
    public mutating func deliver(
        _ frame: [UInt8], _ kind: OutboundQueue.Kind, into actions: inout [ClientConnectionAction]
    ) {
        guard canReceiveFrames else { return }
        switch kind {
        case .position:
            let dropped = output.appendPosition(frame, softLimit: settings.limits.queueSoftLimit)
            if dropped > 0 { actions.append(.report(.positionsDropped(dropped))) }
        case .other:
            output.append(frame)
        }
        actions.append(.flush)
    }

    // MARK: - Events: time and the rest of the server

    /// The periodic tick: ending steps past their deadline close; WebSocket keepalive and the
    /// slow-client rule; HTTP deferred replies, request and idle timeouts.
    public mutating func tick<Host: ClientConnectionHost>(
        now: Int64, host: Host, into actions: inout [ClientConnectionAction]
    ) {
        switch state {
        case .closing(let deadline), .draining(let deadline):
            if now >= deadline { closeNow(into: &actions) }
        case .webSocket(var session):
            state = .modifying
            var action = session.connection.idle(now: now)
            if let deadline = session.helloDeadline, now >= deadline {
                session.helloDeadline = nil
                action = session.connection.fail(code: .policyViolation, reason: "no hello from the dashboard page")
            }
            state = .webSocket(session)
            if let action { perform(action, now: now, into: &actions) }
            checkBacklog(now: now, into: &actions)
        case .http(var exchange):
            state = .modifying
            let outcome = exchange.tick(
                now: now, lastActivity: lastActivity, limits: settings.limits, host: host,
                output: &output, actions: &actions)
            apply(outcome, exchange, now: now, host: host, into: &actions)
        case .closed, .modifying:
            break
        }
        syncInterest(into: &actions)
    }

    /// The loop ran (or could not run) the gpsd commands that `.receiverCommand` asked for.
    public mutating func receiverCommandStarted<Host: ClientConnectionHost>(
        _ outcome: ReceiverCommandOutcome, now: Int64, host: Host, into actions: inout [ClientConnectionAction]
    ) {
        withExchange(now: now, host: host, into: &actions) { exchange, output, actions in
            exchange.receiverCommandStarted(outcome, now: now, host: host, output: &output, actions: &actions)
        }
    }

    /// The gpsd commands of the deferred `PUT /receiver` are done (`failure`: gpsd's complaint, as
    /// the response tells it): a failure is answered with 503; a disconnection, or a connection
    /// whose receiver is already there, with the receiver as it is; one still waiting for its
    /// receiver goes on waiting.
    public mutating func receiverCommandFinished<Host: ClientConnectionHost>(
        failure: String?, now: Int64, host: Host, into actions: inout [ClientConnectionAction]
    ) {
        withExchange(now: now, host: host, into: &actions) { exchange, output, actions in
            exchange.receiverCommandFinished(failure: failure, now: now, host: host, output: &output, actions: &actions)
        }
    }

    /// A receiver connected: a deferred `PUT /receiver {"isConnected":true}` is answered.
    public mutating func receiverConnected<Host: ClientConnectionHost>(
        now: Int64, host: Host, into actions: inout [ClientConnectionAction]
    ) {
        guard isWaitingForReceiver, host.receiverInfo.isConnected else { return }
        withExchange(now: now, host: host, into: &actions) { exchange, output, actions in
            exchange.answerDeferred(failure: nil, now: now, host: host, output: &output, actions: &actions)
        }
    }

    /// The server stops: a WebSocket client is told (1001) instead of the backlog it has not begun
    /// to receive; then every connection closes.
    public mutating func serverStopping(into actions: inout [ClientConnectionAction]) {
        if case .webSocket(var session) = state {
            state = .modifying
            let action = session.connection.close(code: .goingAway, reason: "server stopping")
            state = .webSocket(session)
            if case .write(let bytes) = action {
                output.discardUnstarted()
                output.append(bytes)
                actions.append(.flush)
            }
        }
        closeNow(into: &actions)
    }

    // MARK: - Lifecycle

    /// Ends the connection once what is queued is written: closing, then draining (see the file
    /// comment). Only an open connection begins to end.
    mutating func beginEnding(now: Int64, into actions: inout [ClientConnectionAction]) {
        switch state {
        case .http:
            break
        case .webSocket:
            actions.append(.unsubscribe)
        case .closing, .draining, .closed, .modifying:
            return
        }
        state = .closing(deadline: now + Self.endingStepTimeout)
        if output.isEmpty { finishClosing(now: now, into: &actions) }
    }

    private mutating func finishClosing(now: Int64, into actions: inout [ClientConnectionAction]) {
        actions.append(.shutdownWrite)
        state = .draining(deadline: now + Self.endingStepTimeout)
    }

    mutating func closeNow(into actions: inout [ClientConnectionAction]) {
        guard !isClosed else { return }
        state = .closed
        actions.append(.close)
    }

    /// Asks for the selector interest the state needs, when it changed.
    private mutating func syncInterest(into actions: inout [ClientConnectionAction]) {
        guard !isClosed else { return }
        let wanted = ClientInterest(readable: isReading, writable: wantsWritable)
        guard wanted != interest else { return }
        interest = wanted
        actions.append(.setInterest(wanted))
    }

    /// Runs `body` on the HTTP exchange, if the connection still has one, and applies its outcome.
    private mutating func withExchange<Host: ClientConnectionHost>(
        now: Int64, host: Host, into actions: inout [ClientConnectionAction],
        _ body: (inout HTTPExchange, inout OutboundQueue, inout [ClientConnectionAction]) -> HTTPExchange.Outcome
    ) {
        guard case .http(var exchange) = state else { return }
        state = .modifying
        let outcome = body(&exchange, &output, &actions)
        apply(outcome, exchange, now: now, host: host, into: &actions)
        syncInterest(into: &actions)
    }

    /// Puts the exchange back and does what it asked for.
    private mutating func apply<Host: ClientConnectionHost>(
        _ outcome: HTTPExchange.Outcome, _ exchange: HTTPExchange, now: Int64, host: Host,
        into actions: inout [ClientConnectionAction]
    ) {
        state = .http(exchange)
        switch outcome {
        case .carryOn:
            break
        case .end:
            beginEnding(now: now, into: &actions)
        case .close:
            closeNow(into: &actions)
        case .upgrade(let channel, let response, let leftover):
            // A dashboard page subscribes once its hello is accepted (`receiveHello`).
            let awaitsHello = channel == .dashboard
            state = .webSocket(
                WebSocketSession(
                    connection: WebSocketConnection(configuration: settings.limits.webSocket),
                    channel: channel, helloDeadline: awaitsHello ? now + DashboardHello.timeout : nil))
            output.append(response)
            actions.append(.flush)
            if !awaitsHello { actions.append(.subscribe(channel)) }
            if channel == .events {
                output.append(host.statusEventFrame())
                actions.append(.flush)
            }
            if !leftover.isEmpty { receiveWebSocket(leftover.span, now: now, host: host, into: &actions) }
        }
    }

    // MARK: - WebSocket

    private mutating func receiveWebSocket<Host: ClientConnectionHost>(
        _ bytes: Span<UInt8>, now: Int64, host: Host, into actions: inout [ClientConnectionAction]
    ) {
        var offset = 0
        while offset < bytes.count, case .webSocket(var session) = state {
            state = .modifying
            let step = session.connection.receive(bytes.extracting(offset..<bytes.count))
            state = .webSocket(session)
            offset += step.consumed
            if case .deliver(let message)? = step.action, session.helloDeadline != nil {
                receiveHello(message, now: now, host: host, into: &actions)
                if step.consumed == 0 { return }
                continue
            }
            // The reply is queued before the next frame of the same read is looked at, so a
            // message followed by a Close gets its answer before the Close's echo.
            if case .deliver(let message)? = step.action, session.connection.canSend,
                let reply = host.reply(toDataMessage: message, on: session.channel)
            {
                output.append(reply)
                actions.append(.flush)
            }
            if let action = step.action { perform(action, now: now, into: &actions) }
            if step.consumed == 0 { return }
        }
    }

    /// A dashboard page's first message: accepted, it subscribes (and gets the current snapshot
    /// with the output's next round); refused, it is closed with 4401 and the reason (the page
    /// then asks for the token).
    private mutating func receiveHello<Host: ClientConnectionHost>(
        _ message: WebSocketMessage, now: Int64, host: Host, into actions: inout [ClientConnectionAction]
    ) {
        guard case .webSocket(var session) = state, session.connection.canSend else { return }
        state = .modifying
        session.helloDeadline = nil
        switch host.dashboardHello(message) {
        case .accepted:
            state = .webSocket(session)
            actions.append(.subscribe(.dashboard))
        case .refused(let reason):
            actions.append(.report(.dashboardHelloRefused(reason)))
            let action = session.connection.fail(code: DashboardHello.refusedCode, reason: reason)
            state = .webSocket(session)
            if let action { perform(action, now: now, into: &actions) }
        }
    }

    /// Carries out what the WebSocket state machine asked for.
    private mutating func perform(_ action: WebSocketAction, now: Int64, into actions: inout [ClientConnectionAction]) {
        switch action {
        case .deliver:
            // TMM clients send nothing but control frames; a data message is counted, and
            // ignored unless the host answered it (receiveWebSocket).
            actions.append(.report(.unexpectedMessage))
        case .write(let bytes):
            output.append(bytes)
            actions.append(.flush)
        case .writeAndClose(let bytes):
            output.append(bytes)
            actions.append(.flush)
            beginEnding(now: now, into: &actions)
        case .close:
            if output.isEmpty { closeNow(into: &actions) } else { beginEnding(now: now, into: &actions) }
        }
    }

    /// The slow-client rule: behind by more than the hard limit for longer than the grace period
    /// closes the client with 1008; catching up resets it.
    private mutating func checkBacklog(now: Int64, into actions: inout [ClientConnectionAction]) {
        guard case .webSocket(var session) = state else { return }
        let limits = settings.limits
        guard output.behind >= limits.queueHardLimit else {
            if session.overHardLimitSince != nil {
                state = .modifying
                session.overHardLimitSince = nil
                state = .webSocket(session)
            }
            return
        }
        guard let since = session.overHardLimitSince else {
            state = .modifying
            session.overHardLimitSince = now
            state = .webSocket(session)
            return
        }
        guard now - since >= limits.slowClientGrace else { return }
        actions.append(
            .report(
                .slowClientClosed(
                    behind: output.behind, nanoseconds: now - since,
                    droppedPositions: output.droppedPositions)))
        // What it has not started to receive is of no use to it any more.
        output.discardUnstarted()
        state = .modifying
        let action = session.connection.fail(code: .policyViolation, reason: "client too slow")
        state = .webSocket(session)
        if let action { perform(action, now: now, into: &actions) }
    }
}

@available(*, unavailable, message: "a connection belongs to the io thread")
extension ClientConnection: Sendable {}
