import ByteCoding
import HTTP1
import TMMProtocol
import WebSocket

// HTTP on every port: REST on `apiPort`, the WebSocket opening handshake on the location ports.
//
// Requests are answered in the order they arrived (pipelining, RFC 9112 §9.3.2). A request that
// must wait (`PUT /receiver {"isConnected":true}` until the receiver is there, or a 401 held back
// by the AuthenticationBudget) holds the ones behind it, and reading stops meanwhile, so a client
// cannot pile up input.
//
// The exchange never changes the connection's lifecycle itself: each event returns an `Outcome`
// (carry on, end after the output, close now, upgrade) that `ClientConnection` applies once the
// exchange is back in its state.

/// The HTTP side of a connection, until it ends or becomes a WebSocket.
public struct HTTPExchange {
    /// What the connection does after an HTTP event.
    enum Outcome {
        case carryOn
        /// End once the queued responses are written (`Connection: close`, an error, a 408).
        case end
        /// Close at once (idle between requests).
        case close
        /// Switch to WebSocket: the handshake response, then `leftover` (bytes that followed the
        /// request) as the first WebSocket input.
        case upgrade(ClientChannel, response: [UInt8], leftover: [UInt8])
    }

    /// A request answered later: `PUT /api/v1/receiver` waits for its gpsd commands (and, to
    /// connect, for the receiver), bounded by `deadline`; a 401 held back by the
    /// `AuthenticationBudget` (`prepared`) is sent at `deadline`.
    public struct DeferredReply: Equatable, Sendable {
        public var deadline: Int64
        public var keepAlive: Bool
        public var version: HTTPVersion
        public var prepared: [UInt8]?
        /// The loop is running the gpsd commands (`.receiverCommand`) and has not said yet how they
        /// started.
        public var awaitingStart = false
        /// The ticket of the gpsd commands under way, until they are done.
        public var awaitingTicket: Int?
        /// `PUT isConnected:true`: answered once a receiver is connected (or at `deadline`);
        /// `isConnected:false` is answered when its commands are done.
        public var connecting = false
    }

    let server: TMMServer
    /// `allowed-origins` and `receiver-connect-timeout`, from the connection's settings.
    let allowedOrigins: HTTPOriginPolicy
    let receiverConnectTimeout: Int64
    /// `dashboard = on`, and whether the connection came to a `dashboard-listen` address (which
    /// answers the dashboard and nothing else).
    let dashboard: Bool
    let dashboardOnly: Bool
    var reader = HTTPRequestReader()
    /// Input not yet consumed; the next request starts at its first byte.
    var input: [UInt8] = []
    /// Complete requests read but not answered yet (only while a reply is deferred).
    var pendingRequests: [HTTPRequest] = []
    /// The rest of the batch the pending requests came from.
    var pendingBatchEnd = 0
    var pendingBatchError: HTTPRequestError?
    var pendingBatchEndsConnection = false
    public internal(set) var deferred: DeferredReply?
    /// A request that expects `100 Continue` waits behind the batch (see `answerContinue`).
    var pendingContinue = false
    var authenticationBudget = AuthenticationBudget()
    /// What the `Origin` of the request being answered allows: the CORS headers of its response.
    /// A deferred reply keeps it, since nothing else is answered meanwhile.
    var origin = HTTPOriginDecision.any
    /// When the request now in progress began (the request timeout); nil between requests.
    public internal(set) var requestStartedAt: Int64?
    /// A response that ends the connection is queued: nothing more is answered.
    private var ending = false

    init(server: TMMServer, settings: ClientConnection.Settings) {
        self.server = server
        allowedOrigins = settings.allowedOrigins
        receiverConnectTimeout = settings.limits.receiverConnectTimeout
        dashboard = settings.dashboard
        dashboardOnly = settings.dashboardOnly
    }

    static let authenticateChallenge = (name: "WWW-Authenticate", value: "AccessCode realm=\"tmm-bridge\"")
    static let rootPath = HTTPPath("/")
    static let locationV2Path = HTTPPath("/locationV2")
    static let eventsPath = HTTPPath("/events")
    static let dashboardSocketPath = HTTPPath("/dashboard/socket")
    static let dashboardPagePaths = RESTRouter.dashboardRoutes.map(\.path)

    mutating func append(_ bytes: ArraySlice<UInt8>) {
        input.append(contentsOf: bytes)
    }

    /// The outcome once an event is handled: what the responses queued ask for.
    private var outcome: Outcome { ending ? .end : .carryOn }

    // MARK: - Batches

    /// Answers every complete request in the buffer, in order.
    mutating func processRequests<Host: ClientConnectionHost>(
        now: Int64, host: Host, output: inout OutboundQueue, actions: inout [ClientConnectionAction]
    ) -> Outcome {
        guard !ending, deferred == nil else { return outcome }
        let bytes = input  // a reference, so the reader can change while it reads them
        let batch = reader.readAll(in: bytes.span, from: 0)
        pendingRequests = batch.requests
        pendingBatchEnd = batch.end
        pendingBatchError = batch.error
        pendingBatchEndsConnection = batch.endsConnection
        // Decided after the requests before it are answered (responses stay in order), and only
        // for a request that will not be refused: docs/http.md.
        if batch.sendContinue && batch.error == nil { pendingContinue = true }
        return continueBatch(now: now, host: host, output: &output, actions: &actions)
    }

    /// Works through `pendingRequests` until one is deferred or all are answered, then deals with
    /// the end of the batch.
    private mutating func continueBatch<Host: ClientConnectionHost>(
        now: Int64, host: Host, output: inout OutboundQueue, actions: inout [ClientConnectionAction]
    ) -> Outcome {
        while !pendingRequests.isEmpty {
            let request = pendingRequests.removeFirst()
            actions.append(.report(.request))
            if let upgrade = answer(request, now: now, host: host, output: &output, actions: &actions) {
                return upgrade
            }
            // Ending (a refused origin on a kept-alive connection): nothing behind it is answered.
            if ending || deferred != nil { return outcome }
        }
        if let error = pendingBatchError {
            origin = originUnknown
            var writer = HTTPResponseWriter(capacity: 256)
            writer.writeError(error, date: host.httpDate(), cors: origin.corsHeaders)
            output.append(writer.bytes)
            actions.append(.flush)
            ending = true
            return outcome
        }
        if pendingBatchEndsConnection {
            ending = true
            return outcome
        }
        if pendingContinue {
            answerContinue(host: host, output: &output, actions: &actions)
            if ending { return outcome }
        }
        // Drop what was answered; keep the start of the next request.
        if pendingBatchEnd > 0 {
            input.removeSubrange(0..<pendingBatchEnd)
            pendingBatchEnd = 0
        }
        if reader.isBetweenRequests && input.isEmpty {
            requestStartedAt = nil
        } else if requestStartedAt == nil {
            requestStartedAt = now
        }
        return outcome
    }

    /// The answer to a request that expects `100 Continue`, once the ones before it are answered:
    /// a request the server will refuse whatever its body (403 for its origin, 401 for no or a
    /// wrong access code) is refused now, without `100 Continue`, and the connection ends, since
    /// the body the client may still send cannot be told from a next request.
    private mutating func answerContinue<Host: ClientConnectionHost>(
        host: Host, output: inout OutboundQueue, actions: inout [ClientConnectionAction]
    ) {
        pendingContinue = false
        if let head = reader.pendingHead {
            // The pending head's indices start at its own first byte, where the batch ended.
            let pending = Array(input[pendingBatchEnd...])
            let span = pending.span
            // A refused origin first, on every port: no body is asked for, no code checked.
            origin = allowedOrigins.decide(head, in: span)
            if case .refused(let sent) = origin {
                refuseOrigin(sent, version: head.version, host: host, output: &output, actions: &actions)
                return
            }
            if isREST, RESTRouter.needsAuthentication(head, in: span) {
                let header = head.string(of: "Authorization", in: span)
                // A look only: a single-use V2 code is spent by the request itself, not by this.
                if case .refused(let reason) = authenticate(header, consume: false, host: host, actions: &actions) {
                    respondError(
                        .unauthorized, message: reason, keepAlive: false,
                        version: head.version, extra: [Self.authenticateChallenge], host: host,
                        output: &output, actions: &actions)
                    return
                }
            }
        }
        var writer = HTTPResponseWriter(capacity: 32)
        writer.writeContinue()
        output.append(writer.bytes)
        actions.append(.flush)
    }

    /// Answers one request; returns the upgrade when the connection becomes a WebSocket.
    private mutating func answer<Host: ClientConnectionHost>(
        _ request: HTTPRequest, now: Int64, host: Host, output: inout OutboundQueue,
        actions: inout [ClientConnectionAction]
    ) -> Outcome? {
        requestStartedAt = nil
        // Before routing, authentication, the V2 lock and the handshake: a page from an origin the
        // operator did not list learns nothing but the 403.
        origin = allowedOrigins.decide(request.head, in: input.span)
        if case .refused(let sent) = origin {
            refuseOrigin(sent, version: request.head.version, host: host, output: &output, actions: &actions)
            return nil
        }
        switch server {
        case .location, .locationV2, .locationSecure, .locationV2Secure:
            return upgrade(request, host: host, output: &output, actions: &actions)
        case .api, .apiSecure:
            let head = request.head
            let bytes = input  // a reference, read while the exchange changes
            let isSocket = head.pathMatches(Self.dashboardSocketPath, in: bytes.span)
            let isPage = isSocket || Self.dashboardPagePaths.contains { head.pathMatches($0, in: bytes.span) }
            if isPage && !dashboard {
                respondError(
                    .notFound, message: "the dashboard is off (dashboard = off)", keepAlive: head.keepAlive,
                    version: head.version, isHead: head.method == .head, host: host, output: &output,
                    actions: &actions)
            } else if !isPage && dashboardOnly {
                respondError(
                    .notFound, message: "this address serves the operator dashboard only: / and /dashboard/socket",
                    keepAlive: head.keepAlive, version: head.version, isHead: head.method == .head, host: host,
                    output: &output, actions: &actions)
            } else if isSocket {
                return upgrade(request, host: host, output: &output, actions: &actions)
            } else {
                answerREST(request, now: now, host: host, output: &output, actions: &actions)
            }
            return nil
        }
    }

    // MARK: - Time and deferred replies

    /// The tick: a deferred reply past its deadline is answered; a request that takes too long is
    /// answered 408 and ends the connection; one idle between requests (or not taking its answers)
    /// is closed.
    mutating func tick<Host: ClientConnectionHost>(
        now: Int64, lastActivity: Int64, limits: ServerLimits, host: Host, output: inout OutboundQueue,
        actions: inout [ClientConnectionAction]
    ) -> Outcome {
        guard !ending else { return outcome }
        if let deferred, now >= deferred.deadline {
            return answerDeferred(failure: nil, now: now, host: host, output: &output, actions: &actions)
        }
        if let started = requestStartedAt {
            if now - started >= limits.httpRequestTimeout && deferred == nil {
                origin = originUnknown
                respondError(
                    .requestTimeout, message: "the request did not arrive in time", keepAlive: false,
                    version: .http1_1, host: host, output: &output, actions: &actions)
            }
        } else if now - lastActivity >= limits.httpIdleTimeout {
            return .close
        }
        return outcome
    }

    /// How the gpsd commands of the deferred `PUT /receiver` started: refused at once (answered
    /// now), or under way (the reply waits for their end and, to connect, for the receiver).
    mutating func receiverCommandStarted<Host: ClientConnectionHost>(
        _ started: ReceiverCommandOutcome, now: Int64, host: Host, output: inout OutboundQueue,
        actions: inout [ClientConnectionAction]
    ) -> Outcome {
        guard let reply = deferred, reply.awaitingStart else { return outcome }
        deferred?.awaitingStart = false
        switch started {
        case .started(let ticket):
            if ticket != nil || (reply.connecting && !host.receiverInfo.isConnected) {
                deferred?.awaitingTicket = ticket
                return outcome
            }
            return answerDeferred(failure: nil, now: now, host: host, output: &output, actions: &actions)
        case .gpsdFailed(let message), .refused(let message):
            deferred = nil
            let status: HTTPStatus = if case .gpsdFailed = started { .serviceUnavailable } else { .conflict }
            respondError(
                status, message: message, keepAlive: reply.keepAlive, version: reply.version, host: host,
                output: &output, actions: &actions)
            return carryOnAfterDeferred(now: now, host: host, output: &output, actions: &actions)
        }
    }

    mutating func receiverCommandFinished<Host: ClientConnectionHost>(
        failure: String?, now: Int64, host: Host, output: inout OutboundQueue, actions: inout [ClientConnectionAction]
    ) -> Outcome {
        guard let reply = deferred, reply.awaitingTicket != nil else { return outcome }
        deferred?.awaitingTicket = nil
        guard failure != nil || !reply.connecting || host.receiverInfo.isConnected else { return outcome }
        return answerDeferred(failure: failure, now: now, host: host, output: &output, actions: &actions)
    }

    /// Answers the deferred reply: a prepared one as it is, a `PUT /receiver` with the receiver as
    /// it is now (or with 503 when its gpsd commands failed); then carries on with the requests
    /// behind it.
    mutating func answerDeferred<Host: ClientConnectionHost>(
        failure: String?, now: Int64, host: Host, output: inout OutboundQueue, actions: inout [ClientConnectionAction]
    ) -> Outcome {
        guard let reply = deferred else { return outcome }
        deferred = nil
        if let failure {
            respondError(
                .serviceUnavailable, message: failure, keepAlive: reply.keepAlive, version: reply.version,
                host: host, output: &output, actions: &actions)
        } else if let prepared = reply.prepared {
            output.append(prepared)
            actions.append(.flush)
            if !reply.keepAlive { ending = true }
        } else {
            var body = JSONWriter(reservingCapacity: 512)
            RESTBodies.writeReceiverInfo(host.receiverInfo, to: &body)
            respond(
                .ok, json: body.bytes, keepAlive: reply.keepAlive, version: reply.version, host: host,
                output: &output, actions: &actions)
        }
        return carryOnAfterDeferred(now: now, host: host, output: &output, actions: &actions)
    }

    private mutating func carryOnAfterDeferred<Host: ClientConnectionHost>(
        now: Int64, host: Host, output: inout OutboundQueue, actions: inout [ClientConnectionAction]
    ) -> Outcome {
        guard !ending else { return outcome }
        let result = continueBatch(now: now, host: host, output: &output, actions: &actions)
        if case .upgrade = result { return result }
        return processRequests(now: now, host: host, output: &output, actions: &actions)
    }

    // MARK: - REST

    private mutating func answerREST<Host: ClientConnectionHost>(
        _ request: HTTPRequest, now: Int64, host: Host, output: inout OutboundQueue,
        actions: inout [ClientConnectionAction]
    ) {
        let head = request.head
        let keepAlive = head.keepAlive
        switch RESTRouter.route(request, in: input.span) {
        case .error(let status, let message, let allow):
            respondError(
                status, message: message, keepAlive: keepAlive, version: head.version,
                isHead: head.method == .head, allow: allow, host: host, output: &output, actions: &actions)
        case .invalid(let status, let message):
            guard
                authenticateOrRefuse(
                    head, isHead: head.method == .head, now: now, host: host, output: &output,
                    actions: &actions)
            else { return }
            respondError(
                status, message: message, keepAlive: keepAlive, version: head.version,
                isHead: head.method == .head, host: host, output: &output, actions: &actions)
        case .call(let call, let isHead):
            if call.needsAuthentication {
                guard
                    authenticateOrRefuse(head, isHead: isHead, now: now, host: host, output: &output, actions: &actions)
                else { return }
            }
            perform(
                call, keepAlive: keepAlive, version: head.version, isHead: isHead, now: now, host: host,
                output: &output, actions: &actions)
        }
    }

    /// Checks the request's access code; on failure answers 401 (late, once the connection has
    /// used up its failures: `AuthenticationBudget`) and returns false.
    private mutating func authenticateOrRefuse<Host: ClientConnectionHost>(
        _ head: HTTPRequestHead, isHead: Bool, now: Int64, host: Host, output: inout OutboundQueue,
        actions: inout [ClientConnectionAction]
    ) -> Bool {
        let header = head.string(of: "Authorization", in: input.span)
        guard case .refused(let reason) = authenticate(header, consume: true, host: host, actions: &actions) else {
            return true
        }
        var writer = HTTPResponseWriter(capacity: 512)
        writer.writeError(
            .unauthorized, message: reason, date: host.httpDate(),
            keepAlive: head.keepAlive, requestVersion: head.version, isHeadRequest: isHead,
            cors: origin.corsHeaders,
            extraHeaders: [Self.authenticateChallenge, ("Cache-Control", "no-store")])
        let wait = authenticationBudget.spend(now: now)
        if wait == 0 {
            output.append(writer.bytes)
            actions.append(.flush)
            if !head.keepAlive { ending = true }
        } else {
            // Out of failures: the 401 waits, and so does every request behind it (a deferred reply
            // stops reading), so one connection guesses at most once per refill interval.
            deferred = DeferredReply(
                deadline: now + wait, keepAlive: head.keepAlive, version: head.version,
                prepared: writer.bytes)
        }
        return false
    }

    /// An access code's verdict: accepted, or refused with the 401's message.
    enum Authentication {
        case accepted
        case refused(String)
    }

    /// Access Code V1 against every registered application the policy allows, for now±1 s (the
    /// host's table), or Access Code V2 (the host's key, ledger and clock). A valid code unlocks
    /// V2 (`.authenticated`); a valid V2 code also registers its application if needed.
    private func authenticate<Host: ClientConnectionHost>(
        _ header: String?, consume: Bool, host: Host, actions: inout [ClientConnectionAction]
    ) -> Authentication {
        guard let header else {
            return .refused(
                """
                missing Authorization header: send 'Authorization: AccessCodeV2 <code>' \
                (GET /api/v1/publicKey gives the key) or 'Basic <Access Code V1>' after registering the application
                """
            )
        }
        if AccessCodeV2.isAccessCodeV2(headerValue: header) {
            switch host.verifyAccessCodeV2(headerValue: header, overTLS: server.isSecure, consume: consume) {
            case .success(let id):
                if consume { actions.append(.authenticatedByAccessCodeV2(id)) }
                return .accepted
            case .failure(let refusal):
                if consume { actions.append(.report(.accessCodeV2Refused(refusal))) }
                return .refused("Access Code V2 refused: \(refusal)")
            }
        }
        guard host.hasRegisteredApplications else {
            return .refused("no application is registered: register it first (tmmregister), or use Access Code V2")
        }
        guard let id = host.verifyAccessCode(headerValue: header) else {
            return .refused(
                """
                the access code matches no registered application for the current time \
                (check the application is registered and the clock)
                """
            )
        }
        actions.append(.authenticated(id))
        return .accepted
    }

    /// REST is served on the API port and its TLS twin.
    private var isREST: Bool { server == .api || server == .apiSecure }

    /// Carries out what `call` answers (its row in `RESTRouter.routes` says what that is).
    private mutating func perform<Host: ClientConnectionHost>(
        _ call: RESTCall, keepAlive: Bool, version: HTTPVersion, isHead: Bool, now: Int64, host: Host,
        output: inout OutboundQueue, actions: inout [ClientConnectionAction]
    ) {
        switch call.answer(host: host) {
        case .ok(let json, let then):
            actions.append(contentsOf: then)
            respond(
                .ok, json: json, keepAlive: keepAlive, version: version, isHead: isHead, host: host,
                output: &output, actions: &actions)
        case .preflight(let allow):
            var writer = HTTPResponseWriter(capacity: 512)
            writer.writeResponse(
                .noContent, date: host.httpDate(), body: [UInt8]().span, keepAlive: keepAlive,
                requestVersion: version,
                cors: origin.preflightHeaders(maxAgeSeconds: HTTPCORSHeaders.defaultMaxAge),
                extraHeaders: [("Allow", allow)])
            output.append(writer.bytes)
            actions.append(.flush)
        case .page(let file):
            var writer = HTTPResponseWriter(capacity: file.bytes.count + 768)
            writer.writeResponse(
                .ok, date: host.httpDate(), contentType: file.contentType, body: file.bytes.span,
                keepAlive: keepAlive, requestVersion: version, isHeadRequest: isHead,
                extraHeaders: Self.pageHeaders)
            output.append(writer.bytes)
            actions.append(.flush)
            if !keepAlive { ending = true }
        case .afterReceiverCommand(let connect):
            deferred = DeferredReply(
                deadline: now + receiverConnectTimeout, keepAlive: keepAlive, version: version,
                awaitingStart: true, connecting: connect)
            actions.append(.receiverCommand(connect: connect))
        case .error(let status, let message):
            respondError(
                status, message: message, keepAlive: keepAlive, version: version, isHead: isHead, host: host,
                output: &output, actions: &actions)
        }
    }

    // MARK: - Responses

    /// The dashboard's files: only its own scripts, styles and socket, never framed, never
    /// sniffed, never cached stale, no referrer (docs/dashboard.md, docs/security.md).
    static let pageHeaders: [(name: String, value: String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"), ("Cache-Control", "no-cache"),
    ]

    private mutating func respond<Host: ClientConnectionHost>(
        _ status: HTTPStatus, json: [UInt8], keepAlive: Bool, version: HTTPVersion, isHead: Bool = false, host: Host,
        output: inout OutboundQueue, actions: inout [ClientConnectionAction]
    ) {
        var writer = HTTPResponseWriter(capacity: json.count + 256)
        writer.writeResponse(
            status, date: host.httpDate(), contentType: "application/json", body: json.span,
            keepAlive: keepAlive, requestVersion: version, isHeadRequest: isHead, cors: origin.corsHeaders,
            extraHeaders: [("Cache-Control", "no-store")])
        output.append(writer.bytes)
        actions.append(.flush)
        if !keepAlive { ending = true }
    }

    private mutating func respondError<Host: ClientConnectionHost>(
        _ status: HTTPStatus, message: String, keepAlive: Bool, version: HTTPVersion, isHead: Bool = false,
        allow: String? = nil, extra: [(name: String, value: String)] = [], host: Host, output: inout OutboundQueue,
        actions: inout [ClientConnectionAction]
    ) {
        var writer = HTTPResponseWriter(capacity: 512)
        var headers = extra
        if let allow { headers.append(("Allow", allow)) }
        headers.append(("Cache-Control", "no-store"))
        writer.writeError(
            status, message: message, date: host.httpDate(), keepAlive: keepAlive, requestVersion: version,
            isHeadRequest: isHead, cors: origin.corsHeaders, extraHeaders: headers)
        output.append(writer.bytes)
        actions.append(.flush)
        if !keepAlive { ending = true }
    }

    // MARK: - Origins

    /// The decision behind responses that answer no parsed request (a framing error, a 408):
    /// there is no `Origin` to check or echo.
    private var originUnknown: HTTPOriginDecision { allowedOrigins == .any ? .any : .absent }

    /// 403 to a request whose `Origin` is not in `allowed-origins`, on any port (REST, preflight,
    /// WebSocket handshake), then the connection ends: the page may not use the bridge at all, so
    /// nothing pipelined behind it is answered either.
    private mutating func refuseOrigin<Host: ClientConnectionHost>(
        _ sent: String, version: HTTPVersion, host: Host, output: inout OutboundQueue,
        actions: inout [ClientConnectionAction]
    ) {
        actions.append(.report(.refusedOrigin(RefusedOriginLog.printable(sent))))
        respondError(
            .forbidden,
            message: "this page's origin may not use the bridge: it is not in the bridge's allowed-origins setting",
            keepAlive: false, version: version, host: host, output: &output, actions: &actions)
    }

    // MARK: - WebSocket upgrade

    /// The opening handshake on a location port (path, then the V2 lock, then RFC 6455's rules),
    /// or of the dashboard's socket on a REST port (RFC 6455's rules; its hello comes after).
    private mutating func upgrade<Host: ClientConnectionHost>(
        _ request: HTTPRequest, host: Host, output: inout OutboundQueue, actions: inout [ClientConnectionAction]
    ) -> Outcome? {
        let head = request.head
        let bytes = input  // a reference, read while the exchange changes
        let span = bytes.span
        let channel: ClientChannel?
        if server.plain == .api {
            channel = .dashboard  // the only WebSocket of the REST ports (`answer`)
        } else if server.plain == .location {
            channel = head.pathMatches(Self.rootPath, in: span) ? .locationV1 : nil
        } else if head.pathMatches(Self.rootPath, in: span) || head.pathMatches(Self.locationV2Path, in: span) {
            channel = .locationV2
        } else {
            channel = head.pathMatches(Self.eventsPath, in: span) ? .events : nil
        }
        guard let channel else {
            let paths = server.plain == .location ? "/" : "/, /locationV2 and /events"
            respondError(
                .notFound, message: "no WebSocket at \(head.normalizedPath(in: span)): this port serves \(paths)",
                keepAlive: false, version: head.version, host: host, output: &output, actions: &actions)
            return nil
        }
        if channel == .locationV2 || channel == .events, !host.isLocationV2Unlocked {
            respondError(
                .unauthorized,
                message: """
                    the LocationV2 stream is locked: register the application (tmmregister) \
                    or make an authenticated REST call first
                    """,
                keepAlive: false, version: head.version, host: host, output: &output, actions: &actions)
            return nil
        }
        let response: [UInt8]
        let upgradeRequest = Self.upgradeRequest(head, in: span)
        do throws(WebSocketHandshakeError) {
            response = try WebSocketHandshake.response(to: upgradeRequest) { host.sha1($0) }
        } catch {
            // The same JSON error body, Date and CORS headers as every other error (the WebSocket
            // target, which has no clock, states the status and the fields RFC 6455 asks for).
            respondError(
                error.status, message: error.explanation, keepAlive: false, version: head.version,
                extra: error.headers, host: host, output: &output, actions: &actions)
            return nil
        }
        actions.append(.report(.upgrade))
        // The bytes after the handshake (a client may send its first frame right behind it).
        let leftover = Array(input[request.range.upperBound...])
        input = []
        pendingRequests = []
        return .upgrade(channel, response: response, leftover: leftover)
    }

    private static func upgradeRequest(_ head: HTTPRequestHead, in span: Span<UInt8>) -> WebSocketUpgradeRequest {
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(head.fieldCount)
        for index in 0..<head.fieldCount {
            headers.append((string(head.name(at: index, in: span)), string(head.value(at: index, in: span))))
        }
        return WebSocketUpgradeRequest(
            method: string(head.method(in: span)), versionMajor: 1,
            versionMinor: head.version == .http1_0 ? 0 : 1, headers: headers)
    }

    private static func string(_ bytes: Span<UInt8>) -> String {
        var copy: [UInt8] = []
        copy.reserveCapacity(bytes.count)
        for index in bytes.indices { copy.append(bytes[index]) }
        return String(decoding: copy, as: UTF8.self)
    }
}
