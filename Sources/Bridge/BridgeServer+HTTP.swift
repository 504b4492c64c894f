import BridgeCore
import ByteCoding
import HTTP1
import Posix
import TLS
import TMMProtocol
import WebSocket

// HTTP on every port: REST on `apiPort`, the WebSocket opening handshake on the location ports.
//
// Requests are answered in the order they arrived (pipelining, RFC 9112 §9.3.2). A request that
// must wait (`PUT /receiver {"isConnected":true}` until the receiver is there) holds the ones
// behind it, and reading stops meanwhile, so a client cannot pile up input.

extension BridgeServer {
    /// Bytes read per call; a request head or body larger than the limits fails in the parser.
    static let httpReadSize = 16 * 1024

    func readHTTP(_ connection: Connection) {
        guard connection.deferred == nil else { return }
        let result: IOResult
        do {
            result = try connection.transport.read(appendingTo: &connection.input, maxCount: Self.httpReadSize)
        } catch {
            close(connection)
            return
        }
        switch result {
        case .wouldBlock:
            return
        case .processed(0):
            // End of file. A client that half-closes after its requests (`nc -N`) still reads the
            // answers: they are written first. Otherwise it closed between requests or gave up.
            if connection.output.isEmpty { close(connection) } else { closeAfterFlush(connection) }
            return
        case .processed:
            connection.lastActivity = monotonicNanoseconds()
        }
        processRequests(connection)
    }

    /// Answers every complete request in the buffer, in order.
    func processRequests(_ connection: Connection) {
        guard !connection.lifecycle.isEnding, connection.deferred == nil, connection.webSocket == nil else { return }
        let batch = connection.reader.readAll(in: connection.input.span, from: connection.inputStart)
        connection.pendingRequests = batch.requests
        connection.pendingBatchEnd = batch.end
        connection.pendingBatchError = batch.error
        connection.pendingBatchEndsConnection = batch.endsConnection
        // Decided after the requests before it are answered (responses stay in order), and only
        // for a request that will not be refused: docs/http.md.
        if batch.sendContinue && batch.error == nil { connection.pendingContinue = true }
        continueBatch(connection)
    }

    /// The answer to a request that expects `100 Continue`, once the ones before it are answered:
    /// a request the server will refuse whatever its body (401: no or a wrong access code) is
    /// refused now, without `100 Continue`, and the connection closed, since the body the client
    /// may still send cannot be told from a next request.
    private func answerContinue(_ connection: Connection) {
        connection.pendingContinue = false
        if let head = connection.reader.pendingHead {
            // The pending head's indices start at its own first byte, where the batch ended.
            let pending = Array(connection.input[connection.pendingBatchEnd...])
            let span = pending.span
            // A refused origin first, on every port: no body is asked for, no code checked.
            connection.origin = configuration.allowedOrigins.decide(head, in: span)
            if case .refused(let sent) = connection.origin {
                refuseOrigin(sent, on: connection, version: head.version)
                return
            }
            if connection.server == .api, RESTRouter.needsAuthentication(head, in: span) {
                let header = head.string(of: "Authorization", in: span)
                if !authenticate(header, on: connection) {
                    respondError(connection, .unauthorized, message: unauthorizedMessage(header), keepAlive: false,
                                 version: head.version, extra: [Self.authenticateChallenge])
                    return
                }
            }
        }
        var writer = HTTPResponseWriter(capacity: 32)
        writer.writeContinue()
        send(writer.bytes, to: connection)
    }

    static let authenticateChallenge = (name: "WWW-Authenticate", value: "AccessCode realm=\"tmm-bridge\"")

    /// Works through `pendingRequests` until one is deferred or all are answered, then deals
    /// with the end of the batch.
    func continueBatch(_ connection: Connection) {
        while !connection.pendingRequests.isEmpty {
            let request = connection.pendingRequests.removeFirst()
            statistics.requests += 1
            let upgraded = answer(request, on: connection)
            guard connections[connection.fd] === connection else { return }
            // Ending (a refused origin on a kept-alive connection): nothing behind it is answered.
            if upgraded || connection.lifecycle.isEnding { return }
            if connection.deferred != nil { return }
        }
        if let error = connection.pendingBatchError {
            connection.origin = originUnknown
            var writer = HTTPResponseWriter(capacity: 256)
            writer.writeError(error, date: httpDate(), cors: connection.origin.corsHeaders)
            send(writer.bytes, to: connection)
            closeAfterFlush(connection)
            return
        }
        if connection.pendingBatchEndsConnection {
            closeAfterFlush(connection)
            return
        }
        if connection.pendingContinue {
            answerContinue(connection)
            guard connections[connection.fd] === connection, !connection.lifecycle.isEnding else { return }
        }
        // Drop what was answered; keep the start of the next request.
        let end = connection.pendingBatchEnd
        if end > 0 {
            connection.input.removeSubrange(0..<end)
            connection.inputStart = 0
            connection.pendingBatchEnd = 0
        }
        let now = monotonicNanoseconds()
        if connection.reader.isBetweenRequests && connection.input.isEmpty {
            connection.requestStartedAt = nil
        } else if connection.requestStartedAt == nil {
            connection.requestStartedAt = now
        }
    }

    /// Answers one request. Returns true when the connection became a WebSocket.
    private func answer(_ request: HTTPRequest, on connection: Connection) -> Bool {
        connection.requestStartedAt = nil
        // Before routing, authentication, the V2 lock and the handshake: a page from an origin
        // the operator did not list learns nothing but the 403.
        connection.origin = configuration.allowedOrigins.decide(request.head, in: connection.input.span)
        if case .refused(let sent) = connection.origin {
            refuseOrigin(sent, on: connection, version: request.head.version)
            return false
        }
        switch connection.server {
        case .location, .locationV2:
            return upgrade(request, on: connection)
        case .api:
            answerREST(request, on: connection)
            return false
        case .locationSecure, .apiSecure, .locationV2Secure:
            preconditionFailure("secure ports do not listen yet")
        }
    }

    // MARK: - REST

    private func answerREST(_ request: HTTPRequest, on connection: Connection) {
        let head = request.head
        let keepAlive = head.keepAlive
        let routing = RESTRouter.route(request, in: connection.input.span)
        switch routing {
        case .error(let status, let message, let allow):
            respondError(connection, status, message: message, keepAlive: keepAlive, version: head.version,
                         isHead: head.method == .head, allow: allow)
        case .invalid(let status, let message):
            guard authenticateOrRefuse(head, on: connection, isHead: head.method == .head) else { return }
            respondError(connection, status, message: message, keepAlive: keepAlive, version: head.version,
                         isHead: head.method == .head)
        case .call(let call, let isHead):
            if call.needsAuthentication {
                guard authenticateOrRefuse(head, on: connection, isHead: isHead) else { return }
            }
            perform(call, on: connection, keepAlive: keepAlive, version: head.version, isHead: isHead)
        }
    }

    /// Checks the request's access code; on failure answers 401 (late, once the connection has
    /// used up its failures: `authenticate(_:on:)`) and returns false.
    private func authenticateOrRefuse(_ head: HTTPRequestHead, on connection: Connection, isHead: Bool) -> Bool {
        let header = head.string(of: "Authorization", in: connection.input.span)
        if authenticate(header, on: connection) { return true }
        let now = monotonicNanoseconds()
        var writer = HTTPResponseWriter(capacity: 512)
        writer.writeError(.unauthorized, message: unauthorizedMessage(header), date: httpDate(), keepAlive: head.keepAlive,
                          requestVersion: head.version, isHeadRequest: isHead, cors: connection.origin.corsHeaders,
                          extraHeaders: [Self.authenticateChallenge, ("Cache-Control", "no-store")])
        let wait = connection.authenticationBudget.spend(now: now)
        if wait == 0 {
            send(writer.bytes, to: connection)
            if !head.keepAlive { closeAfterFlush(connection) }
        } else {
            // Out of failures: the 401 waits, and so does every request behind it (a deferred reply
            // stops reading), so one connection guesses at most once per refill interval.
            connection.deferred = Connection.DeferredReply(deadline: now + wait, keepAlive: head.keepAlive,
                                                           version: head.version, prepared: writer.bytes)
        }
        return false
    }

    /// Access Code V1 against every registered application allowed by the policy, for now±1 s:
    /// a lookup in the access-code table, whatever the number of applications.
    func authenticate(_ header: String?, on connection: Connection) -> Bool {
        guard let header, !registry.entries.isEmpty, let id = accessCodes.verify(headerValue: header) else { return false }
        unlockLocationV2(because: "authenticated REST call by \(ApplicationRegistry.logName(id))")
        return true
    }

    private func unauthorizedMessage(_ header: String?) -> String {
        guard let header else {
            return "missing Authorization header: send 'Authorization: Basic <Access Code V1>' after registering the application"
        }
        if header.utf8.count > 12, ASCII.lowercased(header.prefix(12)) == "accesscodev2" {
            return "Access Code V2 is not supported by this bridge yet: use Access Code V1 ('Authorization: Basic <code>')"
        }
        if registry.entries.isEmpty { return "no application is registered: register it first (tmmregister)" }
        return "the access code matches no registered application for the current time (check the application is registered and the clock)"
    }

    private func perform(_ call: RESTCall, on connection: Connection, keepAlive: Bool, version: HTTPVersion,
                         isHead: Bool) {
        var body = JSONWriter(reservingCapacity: 512)
        switch call {
        case .preflight(let allow):
            var writer = HTTPResponseWriter(capacity: 512)
            writer.writeResponse(.noContent, date: httpDate(), body: [UInt8]().span, keepAlive: keepAlive,
                                 requestVersion: version,
                                 cors: connection.origin.preflightHeaders(maxAgeSeconds: HTTPCORSHeaders.defaultMaxAge),
                                 extraHeaders: [("Allow", allow)])
            send(writer.bytes, to: connection)
            return
        case .getReceiver:
            RESTBodies.writeReceiverInfo(input.receiverInfo, to: &body)
        case .putReceiver(let isConnected):
            // The gpsd commands run on the input side's worker: the reply waits for them (and,
            // to connect, for the receiver), bounded by receiver-connect-timeout.
            do {
                let ticket = isConnected ? try input.connect() : try input.disconnect()
                if ticket != nil || (isConnected && !input.receiverInfo.isConnected) {
                    connection.deferred = Connection.DeferredReply(
                        deadline: monotonicNanoseconds() + configuration.limits.receiverConnectTimeout,
                        keepAlive: keepAlive, version: version, awaitingTicket: ticket, connecting: isConnected)
                    return
                }
            } catch {
                let status: HTTPStatus = if case .gpsdFailed = error { .serviceUnavailable } else { .conflict }
                respondError(connection, status, message: error.description, keepAlive: keepAlive, version: version)
                return
            }
            RESTBodies.writeReceiverInfo(input.receiverInfo, to: &body)
        case .positionStream(let format):
            RESTBodies.writePositionStream(port: format.port(in: ports), to: &body)
        case .tmmInfo:
            RESTBodies.writeTMMInfo(version: environment.version, ports: ports, receiver: input.receiverInfo, to: &body)
        case .ping:
            RESTBodies.writePong(to: &body)
        }
        respond(connection, .ok, json: body.bytes, keepAlive: keepAlive, version: version, isHead: isHead)
    }

    /// Answers a deferred `PUT /receiver` with the receiver as it is now (or with 503 when its
    /// gpsd commands failed), then carries on with the requests behind it.
    func answerDeferred(_ connection: Connection, failure: String? = nil) {
        guard let deferred = connection.deferred else { return }
        connection.deferred = nil
        if let failure {
            respondError(connection, .serviceUnavailable, message: ReceiverControlError.gpsdFailed(failure).description,
                         keepAlive: deferred.keepAlive, version: deferred.version)
        } else if let prepared = deferred.prepared {
            send(prepared, to: connection)
            if !deferred.keepAlive { closeAfterFlush(connection) }
        } else {
            var body = JSONWriter(reservingCapacity: 512)
            RESTBodies.writeReceiverInfo(input.receiverInfo, to: &body)
            respond(connection, .ok, json: body.bytes, keepAlive: deferred.keepAlive, version: deferred.version)
        }
        guard connections[connection.fd] === connection, !connection.lifecycle.isEnding else { return }
        continueBatch(connection)
        if connections[connection.fd] === connection && !connection.lifecycle.isEnding { processRequests(connection) }
        if connections[connection.fd] === connection { updateInterest(connection) }
    }

    func respond(_ connection: Connection, _ status: HTTPStatus, json: [UInt8], keepAlive: Bool, version: HTTPVersion,
                 isHead: Bool = false) {
        var writer = HTTPResponseWriter(capacity: json.count + 256)
        writer.writeResponse(status, date: httpDate(), contentType: "application/json", body: json.span,
                             keepAlive: keepAlive, requestVersion: version, isHeadRequest: isHead, cors: connection.origin.corsHeaders,
                             extraHeaders: [("Cache-Control", "no-store")])
        send(writer.bytes, to: connection)
        if !keepAlive { closeAfterFlush(connection) }
    }

    func respondError(_ connection: Connection, _ status: HTTPStatus, message: String, keepAlive: Bool,
                      version: HTTPVersion, isHead: Bool = false, allow: String? = nil,
                      extra: [(name: String, value: String)] = []) {
        var writer = HTTPResponseWriter(capacity: 512)
        var headers = extra
        if let allow { headers.append(("Allow", allow)) }
        headers.append(("Cache-Control", "no-store"))
        writer.writeError(status, message: message, date: httpDate(), keepAlive: keepAlive, requestVersion: version,
                          isHeadRequest: isHead, cors: connection.origin.corsHeaders, extraHeaders: headers)
        send(writer.bytes, to: connection)
        if !keepAlive { closeAfterFlush(connection) }
    }

    // MARK: - Origins

    /// The decision behind responses that answer no parsed request (a framing error, a 408):
    /// there is no `Origin` to check or echo.
    var originUnknown: HTTPOriginDecision { configuration.allowedOrigins == .any ? .any : .absent }

    /// 403 to a request whose `Origin` is not in `allowed-origins`, on any port (REST, preflight,
    /// WebSocket handshake), then closes: the page may not use the bridge at all, so nothing
    /// pipelined behind it is answered either. Counted, and logged as `RefusedOriginLog` allows.
    func refuseOrigin(_ sent: String, on connection: Connection, version: HTTPVersion) {
        statistics.refusedOrigins += 1
        let shown = RefusedOriginLog.printable(sent)
        if refusedOriginLog.shouldLog(shown, count: statistics.refusedOrigins, now: monotonicNanoseconds()) {
            log("refused Origin '\(shown)' on \(connection.server.registrationKey) (not in allowed-origins): 403 (\(statistics.refusedOrigins) refused so far)")
        }
        respondError(connection, .forbidden,
                     message: "this page's origin may not use the bridge: it is not in the bridge's allowed-origins setting",
                     keepAlive: false, version: version)
    }

    // MARK: - WebSocket upgrade

    /// What the handshake needs from a request head, read while its bytes are at hand.
    private struct UpgradeAsk {
        var channel: Channel?
        var path: String
        var request: WebSocketUpgradeRequest
    }

    private static func upgradeAsk(_ head: HTTPRequestHead, in input: [UInt8], server: TMMServer) -> UpgradeAsk {
        let span = input.span
        let channel: Channel?
        if server == .location {
            channel = head.pathMatches(rootPath, in: span) ? .locationV1 : nil
        } else if head.pathMatches(rootPath, in: span) || head.pathMatches(locationV2Path, in: span) {
            channel = .locationV2
        } else {
            channel = head.pathMatches(eventsPath, in: span) ? .events : nil
        }
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(head.fieldCount)
        for index in 0..<head.fieldCount {
            headers.append((String(decoding: head.name(at: index, in: span).bytes, as: UTF8.self),
                            String(decoding: head.value(at: index, in: span).bytes, as: UTF8.self)))
        }
        let request = WebSocketUpgradeRequest(
            method: String(decoding: head.method(in: span).bytes, as: UTF8.self), versionMajor: 1,
            versionMinor: head.version == .http1_0 ? 0 : 1, headers: headers)
        return UpgradeAsk(channel: channel, path: head.normalizedPath(in: span), request: request)
    }

    /// The opening handshake on a location port: path, then the V2 lock, then RFC 6455's rules.
    private func upgrade(_ request: HTTPRequest, on connection: Connection) -> Bool {
        let head = request.head
        let ask = Self.upgradeAsk(head, in: connection.input, server: connection.server)
        guard let channel = ask.channel else {
            let paths = connection.server == .location ? "/" : "/, /locationV2 and /events"
            respondError(connection, .notFound, message: "no WebSocket at \(ask.path): this port serves \(paths)",
                         keepAlive: false, version: head.version)
            return false
        }
        if channel != .locationV1 && !isLocationV2Unlocked {
            respondError(connection, .unauthorized,
                         message: "the LocationV2 stream is locked: register the application (tmmregister) or make an authenticated REST call first",
                         keepAlive: false, version: head.version)
            return false
        }
        let upgradeRequest = ask.request
        let response: [UInt8]
        do {
            response = try WebSocketHandshake.response(to: upgradeRequest, sha1: Digest.sha1)
        } catch {
            // The same JSON error body, Date and CORS headers as every other error (the WebSocket
            // target, which has no clock, states the status and the fields RFC 6455 asks for).
            respondError(connection, error.status, message: error.explanation, keepAlive: false, version: head.version,
                         extra: error.headers)
            return false
        }
        statistics.upgrades += 1
        // The bytes after the handshake (a client may send its first frame right behind it).
        let leftover = Array(connection.input[request.range.upperBound...])
        connection.input = []
        connection.pendingRequests = []
        connection.webSocket = WebSocketConnection(configuration: configuration.limits.webSocket)
        connection.channel = channel
        send(response, to: connection)
        guard connections[connection.fd] === connection else { return true }
        joinHub(connection)
        if channel == .events { sendStatusEvent(to: connection) }
        if !leftover.isEmpty { receiveWebSocket(leftover.span, on: connection) }
        return true
    }

    static let rootPath = HTTPPath("/")
    static let locationV2Path = HTTPPath("/locationV2")
    static let eventsPath = HTTPPath("/events")
}


extension Span where Element == UInt8 {
    /// A copy of the bytes (for the few places that need a String).
    var bytes: [UInt8] {
        var copy: [UInt8] = []
        copy.reserveCapacity(count)
        for index in indices { copy.append(self[index]) }
        return copy
    }
}
