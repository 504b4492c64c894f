// The connection state machine driven as swift-nio's EmbeddedChannel drives a handler: events in,
// actions out, carried out by an in-memory executor (no socket, no thread, no clock). Time is a
// number the test moves forward.
import HTTP1
import TMMProtocol
import TestSupport
import Testing
import WebSocket

@testable import BridgeCore

/// The server as a connection sees it, as values the test sets.
private struct FakeHost: ClientConnectionHost {
    static let applicationID = GUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")!
    static let validCode = "Basic dmFsaWQ="

    var receiverInfo = ReceiverInfo(isReceiverConfigured: true, isConnected: false)
    var isLocationV2Unlocked = true
    var locationV2Broadcast = LocationV2Broadcast(configuredMinimumInterval: 10_000_000)
    var hasRegisteredApplications = true
    var ports = PortAssignment.defaults
    var version = "test"

    func httpDate() -> String { "Thu, 01 Jan 1970 00:00:00 GMT" }
    func verifyAccessCode(headerValue: String) -> GUID? { headerValue == Self.validCode ? Self.applicationID : nil }
    func sha1(_ bytes: Span<UInt8>) -> WebSocketHandshake.SHA1Digest { InlineArray(repeating: 0) }
    func statusEventFrame() -> [UInt8] { WebSocketFrame.text("status") }
    /// The daemon's answer to a client's data message is none; `echoes` makes this host answer as
    /// tmm-wsecho does (the message back, as one frame of its kind).
    var echoes = false
    func reply(toDataMessage message: WebSocketMessage, on channel: ClientChannel) -> [UInt8]? {
        guard echoes else { return nil }
        return WebSocketFrame.encode(opcode: message.kind == .text ? .text : .binary, payload: message.payload.span)
    }

    // Access Code V2: one valid code; over http, a code is refused as replayed once it was
    // consumed (the ledger's rule, tested in AccessCodeV2LedgerTests); calls are recorded.
    static let validV2 = "AccessCodeV2 dmFsaWQ="
    let v2Calls = AccessCodeV2Calls()
    func verifyAccessCodeV2(
        headerValue: String, overTLS: Bool, consume: Bool
    ) -> Result<GUID, AccessCodeV2Verifier.Refusal> {
        v2Calls.calls.append((headerValue, overTLS, consume))
        guard headerValue == Self.validV2 else { return .failure(.code(.undecryptable)) }
        if !overTLS && v2Calls.consumedOverHTTP { return .failure(.replayed) }
        if consume && !overTLS { v2Calls.consumedOverHTTP = true }
        return .success(Self.applicationID)
    }
    var accessCodeV2PublicKey: (n: String, e: String) { ("bW9kdWx1cw", "AQAB") }
    var deviceSettings = DeviceSettings()
    var correctionsState: DaemonStatus.Corrections?
    var dashboard: [String: StaticFile] = [:]
    func dashboardFile(_ path: String) -> StaticFile? { dashboard[path] }

    /// The dashboard page's side: where it connects from and the configured token.
    var helloFromLoopback = true
    var dashboardToken: String?
    func dashboardHello(_ message: WebSocketMessage) -> DashboardHello.Verdict {
        DashboardHello.verdict(
            message, fromLoopback: helloFromLoopback,
            tokenDigest: dashboardToken.map { fakeDigest(Array($0.utf8).span) },
            sha256: fakeDigest)
    }
}

/// Stands in for SHA-256 in BridgeCore's tests (no OpenSSL in BridgeCore; DashboardHelloTests too):
/// any fixed-size function of every byte and its place tells these tokens apart.
func fakeDigest(_ bytes: Span<UInt8>) -> InlineArray<32, UInt8> {
    var digest = InlineArray<32, UInt8>(repeating: 0)
    for index in bytes.indices {
        digest[index % 32] = digest[index % 32] &* 31 &+ bytes[index] &+ UInt8(truncatingIfNeeded: index)
    }
    return digest
}

/// What the fake host's Access Code V2 check was asked (a class: the host is a value).
private final class AccessCodeV2Calls {
    var calls: [(header: String, overTLS: Bool, consume: Bool)] = []
    var consumedOverHTTP = false
}

/// An in-memory executor: carries out the machine's actions as the io loop does, with a transport
/// that takes `writeRoom` bytes (nil: all) or fails every write.
private struct EmbeddedConnection {
    var machine: ClientConnection
    var host = FakeHost()
    var now: Int64 = 1_000_000_000
    /// What the client received.
    var received: [UInt8] = []
    var writeRoom: Int?
    var writesFail = false
    /// Every action, in order, for the test to inspect.
    var actions: [ClientConnectionAction] = []
    var isClosed = false
    var isWriteShut = false
    var channel: ClientChannel?
    var commands: [Bool] = []
    /// How the next `.receiverCommand` starts.
    var commandOutcome = ReceiverCommandOutcome.started(ticket: 7)
    var reports: [ClientConnectionReport] = []

    init(
        _ server: TMMServer = .api, limits: ServerLimits = ServerLimits(), origins: HTTPOriginPolicy = .any,
        dashboard: Bool = true, dashboardOnly: Bool = false
    ) {
        var settings = ClientConnection.Settings(limits: limits, allowedOrigins: origins, dashboard: dashboard)
        settings.dashboardOnly = dashboardOnly
        machine = ClientConnection(server: server, settings: settings, now: 1_000_000_000)
    }

    /// Feeds an event and carries out its actions as the server's executor does: a `.flush`
    /// writes without telling the machine, and what it wrote (or a write failure, or a started
    /// receiver command) is the machine's next event, once the list is done.
    mutating func run(_ event: (inout ClientConnection, inout [ClientConnectionAction]) -> Void) {
        var list: [ClientConnectionAction] = []
        event(&machine, &list)
        var followUp = FollowUp()
        carryOut(list, followUp: &followUp)
        while !isClosed, let next = followUp.next() {
            list.removeAll()
            let now = now
            switch next {
            case .written(let count, let blocked): machine.written(count, blocked: blocked, now: now, into: &list)
            case .writeFailed: machine.transportFailed(into: &list)
            case .commandStarted(let outcome):
                let host = host
                machine.receiverCommandStarted(outcome, now: now, host: host, into: &list)
            }
            carryOut(list, followUp: &followUp)
        }
    }

    /// The events an action list leaves for the machine, in the order the executor feeds them.
    struct FollowUp {
        enum Event { case written(Int, blocked: Bool), writeFailed, commandStarted(ReceiverCommandOutcome) }
        var written = 0
        var position: OutboundQueue.WritePosition?
        var blocked: Bool?
        var failed = false
        var command: ReceiverCommandOutcome?

        mutating func next() -> Event? {
            if failed {
                (failed, written, position, blocked) = (false, 0, nil, nil)
                return .writeFailed
            }
            if let wasBlocked = blocked {
                defer { (written, position, blocked) = (0, nil, nil) }
                return .written(written, blocked: wasBlocked)
            }
            if let outcome = command {
                command = nil
                return .commandStarted(outcome)
            }
            return nil
        }
    }

    private mutating func carryOut(_ list: [ClientConnectionAction], followUp: inout FollowUp) {
        for action in list {
            actions.append(action)
            switch action {
            case .close:
                #expect(!isClosed, "closed twice")
                isClosed = true
                return  // nothing after a close is for the connection
            case .flush:
                flush(&followUp)
                if followUp.failed { return }  // the client is gone: the rest of the list is moot
            case .shutdownWrite: isWriteShut = true
            case .setInterest: break
            case .subscribe(let subscribed): channel = subscribed
            case .unsubscribe: channel = nil
            case .receiverCommand(let connect):
                commands.append(connect)
                followUp.command = commandOutcome
            case .authenticated, .authenticatedByAccessCodeV2: break
            case .setLocationV2Interval(let interval): host.locationV2Broadcast.requestedInterval = interval
            case .saveSettings(let settings): host.deviceSettings = settings
            case .report(let report): reports.append(report)
            }
        }
    }

    /// Writes from the first byte no earlier flush of this list wrote.
    private mutating func flush(_ followUp: inout FollowUp) {
        guard !followUp.failed else { return }
        var position = followUp.position ?? machine.output.unsentStart
        defer { followUp.position = position }
        var blocked = false
        while let (bytes, offset) = machine.output.chunk(at: position) {
            if writesFail {
                followUp.failed = true
                return
            }
            let count = min(bytes.count - offset, writeRoom ?? Int.max)
            guard count > 0 else {
                blocked = true
                break
            }
            received.append(contentsOf: bytes[offset..<(offset + count)])
            writeRoom = writeRoom.map { $0 - count }
            machine.output.advance(&position, by: count)
            followUp.written += count
        }
        followUp.blocked = blocked
    }

    // Events, as the loop feeds them.

    mutating func send(_ text: String) { send(Array(text.utf8)) }

    mutating func send(_ bytes: [UInt8]) {
        let (host, now) = (host, now)
        run { $0.bytesRead(bytes[...], now: now, host: host, into: &$1) }
    }

    mutating func endOfInput() {
        let now = now
        run { $0.endOfInput(now: now, into: &$1) }
    }

    mutating func tick(after nanoseconds: Int64) {
        now += nanoseconds
        let (host, now) = (host, now)
        run { $0.tick(now: now, host: host, into: &$1) }
    }

    /// The socket became writable with `room` more bytes of space.
    mutating func writable(room: Int? = nil) {
        writeRoom = room
        run { _, actions in actions.append(.flush) }
    }

    mutating func deliver(_ frame: [UInt8], _ kind: OutboundQueue.Kind = .position) {
        run { $0.deliver(frame, kind, into: &$1) }
    }

    /// Takes what the client received so far, as text.
    mutating func take() -> String {
        defer { received = [] }
        return String(decoding: received, as: UTF8.self)
    }

    /// The status codes of the HTTP responses in `text`, in order.
    static func statuses(_ text: String) -> [Int] {
        var codes: [Int] = []
        var rest = Substring(text)
        while let range = rest.firstRange(of: "HTTP/1.1 ") {
            codes.append(Int(rest[range.upperBound...].prefix(3)) ?? -1)
            rest = rest[range.upperBound...]
        }
        return codes
    }

    var isReading: Bool { machine.isReading }
    var state: String {
        switch machine.state {
        case .http: "http"
        case .webSocket: "webSocket"
        case .closing: "closing"
        case .draining: "draining"
        case .closed: "closed"
        case .modifying: "modifying"
        }
    }
}

private func get(_ path: String, code: String? = FakeHost.validCode, close: Bool = false) -> String {
    "GET \(path) HTTP/1.1\r\nHost: x\r\n" + (code.map { "Authorization: \($0)\r\n" } ?? "")
        + (close ? "Connection: close\r\n" : "") + "\r\n"
}

private func put(connect: Bool, code: String = FakeHost.validCode) -> String {
    put(body: "{\"isConnected\":\(connect)}", code: code)
}

private func put(body: String, code: String = FakeHost.validCode) -> String {
    "PUT /api/v1/receiver HTTP/1.1\r\nHost: x\r\nAuthorization: \(code)\r\n"
        + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
}

private func upgrade(_ path: String, key: String? = "dGhlIHNhbXBsZSBub25jZQ==", origin: String? = nil) -> String {
    "GET \(path) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + (key.map { "Sec-WebSocket-Key: \($0)\r\n" } ?? "") + "Sec-WebSocket-Version: 13\r\n"
        + (origin.map { "Origin: \($0)\r\n" } ?? "") + "\r\n"
}

/// A client frame (masked, as RFC 6455 requires), payload up to 125 bytes.
private func clientFrame(_ opcode: UInt8, _ payload: [UInt8] = []) -> [UInt8] {
    let key: [UInt8] = [0x11, 0x22, 0x33, 0x44]
    var frame: [UInt8] = [0x80 | opcode, 0x80 | UInt8(payload.count)] + key
    for (index, byte) in payload.enumerated() { frame.append(byte ^ key[index % 4]) }
    return frame
}

/// Server frames (unmasked) in `bytes`: opcode and payload of each.
private func serverFrames(_ bytes: [UInt8]) -> [(opcode: UInt8, payload: [UInt8])] {
    var frames: [(UInt8, [UInt8])] = []
    var offset = 0
    while offset + 2 <= bytes.count {
        var length = Int(bytes[offset + 1] & 0x7F)
        var start = offset + 2
        if length == 126 {
            length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            start += 2
        }
        guard start + length <= bytes.count else { break }
        frames.append((bytes[offset] & 0x0F, Array(bytes[start..<(start + length)])))
        offset = start + length
    }
    return frames
}

/// The bytes after the first response's head (a 101's frames).
private func afterHead(_ bytes: [UInt8]) -> [UInt8] {
    let separator = Array("\r\n\r\n".utf8)
    guard let range = bytes.firstRange(of: separator) else { return [] }
    return Array(bytes[range.upperBound...])
}

@Suite("ClientConnection: HTTP lifecycle", .tags(.unit))
struct ClientConnectionHTTPTests {
    @Test func aKeptAliveRequestIsAnsweredAndTheConnectionStaysOpen() {
        var client = EmbeddedConnection()
        client.send(get("/api/v1/test/ping"))
        let text = client.take()
        #expect(EmbeddedConnection.statuses(text) == [200])
        #expect(text.contains("Cache-Control: no-store"))
        #expect(client.state == "http" && !client.isClosed && client.isReading)
        #expect(client.reports == [.request])
        #expect(client.actions.contains(.authenticated(FakeHost.applicationID)))
    }

    @Test func connectionCloseEndsAfterTheResponseThenDrainsUntilTheClientCloses() {
        var client = EmbeddedConnection()
        client.send(get("/api/v1/test/ping", close: true))
        #expect(EmbeddedConnection.statuses(client.take()) == [200])
        #expect(client.isWriteShut && client.state == "draining" && client.isReading)
        // Input after our side is shut is read and dropped.
        client.send(get("/api/v1/test/ping"))
        #expect(client.received.isEmpty && !client.isClosed)
        client.endOfInput()
        #expect(client.isClosed)
    }

    @Test func drainingIsCutOffAtItsDeadline() {
        var client = EmbeddedConnection()
        client.send(get("/api/v1/test/ping", close: true))
        client.tick(after: ClientConnection.endingStepTimeout - 1)
        #expect(!client.isClosed)
        client.tick(after: 1)
        #expect(client.isClosed)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() {
        var client = EmbeddedConnection()
        client.send(get("/api/v1/test/ping") + get("/api/v1/nothing") + get("/api/v1/tmmInfo"))
        let text = client.take()
        #expect(EmbeddedConnection.statuses(text) == [200, 404, 200])
        #expect(client.reports == [.request, .request, .request])
    }

    @Test func aRequestSplitAcrossReadsIsAnsweredOnceComplete() {
        var client = EmbeddedConnection()
        let request = get("/api/v1/test/ping")
        let middle = request.index(request.startIndex, offsetBy: 20)
        client.send(String(request[..<middle]))
        #expect(client.received.isEmpty)
        guard case .http(let exchange) = client.machine.state else { Issue.record("not HTTP"); return }
        #expect(exchange.requestStartedAt == client.now)
        client.send(String(request[middle...]))
        #expect(EmbeddedConnection.statuses(client.take()) == [200])
    }

    @Test func aRequestThatDoesNotArriveInTimeIs408AndEnds() {
        var limits = ServerLimits()
        limits.httpRequestTimeout = 5_000
        var client = EmbeddedConnection(limits: limits)
        client.send("GET /api/v1/test/ping HTTP/1.1\r\n")
        client.tick(after: 4_999)
        #expect(client.received.isEmpty)
        client.tick(after: 1)
        #expect(EmbeddedConnection.statuses(client.take()) == [408])
        #expect(client.isWriteShut && client.state == "draining")
    }

    @Test func anIdleConnectionIsClosedWithoutAResponse() {
        var limits = ServerLimits()
        limits.httpIdleTimeout = 5_000
        var client = EmbeddedConnection(limits: limits)
        client.send(get("/api/v1/test/ping"))
        _ = client.take()
        client.tick(after: 4_999)
        #expect(!client.isClosed)
        client.tick(after: 1)
        #expect(client.isClosed && client.received.isEmpty)
    }

    @Test func aClientThatClosesBetweenRequestsIsClosed() {
        var client = EmbeddedConnection()
        client.endOfInput()
        #expect(client.isClosed)
    }

    @Test func aHalfClosedClientStillGetsItsAnswersThenTheConnectionEnds() {
        var client = EmbeddedConnection()
        client.writeRoom = 0
        client.send(get("/api/v1/test/ping"))
        client.endOfInput()
        #expect(!client.isClosed && client.state == "closing" && !client.isReading)
        client.writable()
        #expect(EmbeddedConnection.statuses(client.take()) == [200])
        #expect(client.isWriteShut && client.state == "draining")
    }

    @Test func closingIsCutOffAtItsDeadlineWhenTheClientReadsNothing() {
        var client = EmbeddedConnection()
        client.writeRoom = 0
        client.send(get("/api/v1/test/ping", close: true))
        #expect(client.state == "closing" && client.machine.interest == ClientInterest(readable: false, writable: true))
        client.tick(after: ClientConnection.endingStepTimeout)
        #expect(client.isClosed && !client.isWriteShut)
    }

    @Test func aWriteErrorClosesAndNothingAfterItIsDone() {
        var client = EmbeddedConnection()
        client.writesFail = true
        client.send(get("/api/v1/test/ping") + get("/api/v1/tmmInfo"))
        #expect(client.isClosed && client.machine.isClosed)
        // The batch was answered into the queue before the loop wrote; once closed, the machine
        // ignores every later event (what the `connections[fd] === connection` checks guarded).
        let before = client.actions.count
        client.send(get("/api/v1/test/ping"))
        client.tick(after: 60_000_000_000)
        client.endOfInput()
        client.deliver(WebSocketFrame.text("late"))
        #expect(client.actions.count == before)
    }

    @Test func aFramingErrorIsAnsweredAfterTheRequestsBeforeItThenEnds() {
        var client = EmbeddedConnection()
        client.send(get("/api/v1/test/ping") + "BROKEN\r\n\r\n")
        #expect(EmbeddedConnection.statuses(client.take()) == [200, 400])
        #expect(client.state == "draining")
    }

    @Test func readingStopsWhileTooMuchOutputIsUnsent() {
        var client = EmbeddedConnection()
        client.writeRoom = 0
        let request = get("/api/v1/tmmInfo")
        var requests = ""
        // Enough answers to pass the limit, each a few hundred bytes.
        for _ in 0..<(ClientConnection.httpOutputLimit / 200) { requests += request }
        client.send(requests)
        #expect(client.machine.output.byteCount >= ClientConnection.httpOutputLimit)
        #expect(!client.isReading && client.machine.interest == ClientInterest(readable: false, writable: true))
        client.writable()
        #expect(client.isReading && client.machine.interest == ClientInterest(readable: true, writable: false))
    }
}

@Suite("ClientConnection: 100-continue and deferred replies", .tags(.unit))
struct ClientConnectionDeferredTests {
    private static let continuePut = """
        PUT /api/v1/receiver HTTP/1.1\r\nHost: x\r\nAuthorization: \(FakeHost.validCode)\r\n\
        Expect: 100-continue\r\nContent-Length: 21\r\n\r\n
        """

    @Test func aRequestExpecting100ContinueGetsItThenItsAnswer() {
        var client = EmbeddedConnection()
        client.commandOutcome = .started(ticket: nil)
        client.host.receiverInfo.isConnected = true
        client.send(Self.continuePut)
        #expect(client.take() == "HTTP/1.1 100 Continue\r\n\r\n")
        client.send("{\"isConnected\":true}\n")
        #expect(client.commands == [true])
        #expect(EmbeddedConnection.statuses(client.take()) == [200])
    }

    @Test func aRequestExpecting100ContinueWithAWrongCodeIs401WithoutAskingForTheBody() {
        var client = EmbeddedConnection()
        client.send(Self.continuePut.replacing(FakeHost.validCode, with: "Basic d3Jvbmc="))
        let text = client.take()
        #expect(EmbeddedConnection.statuses(text) == [401])
        #expect(!text.contains("100 Continue"))
        #expect(client.state == "draining")
    }

    @Test func aPutWaitsForTheReceiverAndHoldsTheRequestsBehindIt() {
        var client = EmbeddedConnection()
        client.send(put(connect: true) + get("/api/v1/test/ping"))
        #expect(client.commands == [true])
        #expect(client.received.isEmpty && !client.isReading && client.machine.awaitingTicket == 7)
        // Its commands are done but no receiver yet: it goes on waiting.
        client.run { [host = client.host, now = client.now] in
            $0.receiverCommandFinished(failure: nil, now: now, host: host, into: &$1)
        }
        #expect(client.received.isEmpty && client.machine.isWaitingForReceiver)
        client.host.receiverInfo.isConnected = true
        client.run { [host = client.host, now = client.now] in $0.receiverConnected(now: now, host: host, into: &$1) }
        let text = client.take()
        #expect(EmbeddedConnection.statuses(text) == [200, 200])
        #expect(text.contains("\"isConnected\":true"))
        #expect(client.isReading && !client.machine.isWaitingForReceiver)
    }

    @Test func aPutIsAnsweredAtItsDeadlineWithTheReceiverAsItIs() {
        var limits = ServerLimits()
        limits.receiverConnectTimeout = 1_000
        var client = EmbeddedConnection(limits: limits)
        client.send(put(connect: true) + get("/api/v1/test/ping"))
        client.tick(after: 999)
        #expect(client.received.isEmpty)
        client.tick(after: 1)
        let text = client.take()
        #expect(EmbeddedConnection.statuses(text) == [200, 200])
        #expect(text.contains("\"isConnected\":false"))
    }

    @Test func aDisconnectIsAnsweredWhenItsCommandsAreDone() {
        var client = EmbeddedConnection()
        client.commandOutcome = .started(ticket: 3)
        client.send(put(connect: false))
        #expect(client.commands == [false] && client.received.isEmpty)
        client.run { [host = client.host, now = client.now] in
            $0.receiverCommandFinished(failure: nil, now: now, host: host, into: &$1)
        }
        #expect(EmbeddedConnection.statuses(client.take()) == [200])
    }

    @Test func failedCommandsAre503AndRefusedOnes409() {
        var failing = EmbeddedConnection()
        failing.send(put(connect: true))
        failing.run { [host = failing.host, now = failing.now] in
            $0.receiverCommandFinished(failure: "gpsd did not accept the change: no", now: now, host: host, into: &$1)
        }
        #expect(EmbeddedConnection.statuses(failing.take()) == [503])

        var unreachable = EmbeddedConnection()
        unreachable.commandOutcome = .gpsdFailed("gpsd is not there")
        unreachable.send(put(connect: true) + get("/api/v1/test/ping"))
        #expect(EmbeddedConnection.statuses(unreachable.take()) == [503, 200])

        var refused = EmbeddedConnection()
        refused.commandOutcome = .refused("no receiver is configured")
        refused.send(put(connect: true) + get("/api/v1/test/ping"))
        let text = refused.take()
        #expect(EmbeddedConnection.statuses(text) == [409, 200])
        #expect(text.contains("no receiver is configured"))
    }

    @Test func aReceiverConnectingDoesNotConcernAConnectionThatIsNotWaiting() {
        var client = EmbeddedConnection()
        client.send(get("/api/v1/test/ping", close: true))
        let before = client.actions.count
        client.host.receiverInfo.isConnected = true
        client.run { [host = client.host, now = client.now] in $0.receiverConnected(now: now, host: host, into: &$1) }
        client.run { [host = client.host, now = client.now] in
            $0.receiverCommandFinished(failure: nil, now: now, host: host, into: &$1)
        }
        #expect(client.actions.count == before)
    }
}

@Suite("ClientConnection: authentication", .tags(.unit))
struct ClientConnectionAuthenticationTests {
    @Test func aValidCodeIsAuthenticatedAndUnlocksV2() {
        var client = EmbeddedConnection()
        client.send(get("/api/v1/receiver"))
        #expect(client.actions.contains(.authenticated(FakeHost.applicationID)))
        #expect(EmbeddedConnection.statuses(client.take()) == [200])
    }

    @Test(arguments: [
        (nil as String?, true, "missing Authorization header"),
        ("AccessCodeV2 abc", true, "Access Code V2 refused: the code does not decrypt with this bridge's public key"),
        ("AccessCodeV2 abc", false, "Access Code V2 refused"),
        ("Basic d3Jvbmc=", false, "no application is registered"),
        ("Basic d3Jvbmc=", true, "matches no registered application"),
    ])
    func refusalsSayWhatToDo(_ code: String?, _ registered: Bool, _ expected: String) {
        var client = EmbeddedConnection()
        client.host.hasRegisteredApplications = registered
        client.send(get("/api/v1/receiver", code: code))
        let text = client.take()
        #expect(EmbeddedConnection.statuses(text) == [401])
        #expect(text.contains(expected), "\(text)")
        #expect(text.contains("WWW-Authenticate: AccessCode realm=\"tmm-bridge\""))
        #expect(!client.actions.contains { if case .authenticated = $0 { true } else { false } })
    }

    @Test func theBudgetAnswersABurstAtOnceThenOneFailurePerRefill() {
        var client = EmbeddedConnection()
        let wrong = get("/api/v1/test/ping", code: "Basic d3Jvbmc=")
        var burst = ""
        for _ in 0..<AuthenticationBudget.burst { burst += wrong }
        client.send(burst)
        #expect(EmbeddedConnection.statuses(client.take()) == Array(repeating: 401, count: AuthenticationBudget.burst))
        // The next failure waits, and so do the requests behind it: reading stops.
        client.send(wrong + get("/api/v1/test/ping"))
        #expect(client.received.isEmpty && !client.isReading)
        client.tick(after: AuthenticationBudget.refillInterval - 1)
        #expect(client.received.isEmpty)
        client.tick(after: 1)
        #expect(EmbeddedConnection.statuses(client.take()) == [401, 200])
        #expect(client.isReading)
    }

    @Test func aMalformedBodyIsRefused401BeforeItIsJudged() {
        var client = EmbeddedConnection()
        let body = "nonsense"
        client.send("PUT /api/v1/receiver HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        #expect(EmbeddedConnection.statuses(client.take()) == [401])
        client.send(put(body: "{\"isConnected\":1}"))
        #expect(EmbeddedConnection.statuses(client.take()) == [400])
    }

    @Test func unknownEndpointsAndPreflightsNeedNoCode() {
        var client = EmbeddedConnection()
        client.send(
            get("/api/v1/nothing", code: nil)
                + "OPTIONS /api/v1/receiver HTTP/1.1\r\nHost: x\r\nOrigin: http://a.example\r\n\r\n")
        let text = client.take()
        #expect(EmbeddedConnection.statuses(text) == [404, 204])
        #expect(text.contains("Allow: GET, HEAD, PUT, OPTIONS"))
    }
}

@Suite("ClientConnection: the modern flow (public key, Access Code V2, secure ports, settings)", .tags(.unit))
struct ClientConnectionModernFlowTests {
    @Test func thePublicKeyNeedsNoCode() {
        var client = EmbeddedConnection(.apiSecure)
        client.send(get("/api/v1/publicKey/", code: nil))
        let text = client.take()
        #expect(EmbeddedConnection.statuses(text) == [200])
        #expect(text.hasSuffix(#"{"kty":"RSA","use":"enc","alg":"RSA-OAEP-256","n":"bW9kdWx1cw","e":"AQAB"}"#))
        #expect(client.host.v2Calls.calls.isEmpty)
    }

    @Test func aValidV2CodeOverTLSIsReusableAndRegistersItsApplication() {
        var client = EmbeddedConnection(.apiSecure)
        client.host.hasRegisteredApplications = false
        client.send(get("/api/v1/receiver/", code: FakeHost.validV2) + get("/api/v1/receiver", code: FakeHost.validV2))
        #expect(EmbeddedConnection.statuses(client.take()) == [200, 200])
        #expect(client.actions.filter { $0 == .authenticatedByAccessCodeV2(FakeHost.applicationID) }.count == 2)
        #expect(client.host.v2Calls.calls.map(\.overTLS) == [true, true])
    }

    @Test func overPlainHTTPAV2CodeIsSingleUse() {
        var client = EmbeddedConnection(.api)
        client.send(get("/api/v1/receiver", code: FakeHost.validV2) + get("/api/v1/receiver", code: FakeHost.validV2))
        let text = client.take()
        #expect(EmbeddedConnection.statuses(text) == [200, 401])
        #expect(text.contains("Access Code V2 refused: this code was used before"))
        #expect(client.reports.contains { if case .accessCodeV2Refused = $0 { true } else { false } })
    }

    /// The look before `100 Continue` does not spend a single-use code: the request does.
    @Test func aContinueCheckDoesNotSpendTheCode() {
        var client = EmbeddedConnection(.api)
        client.commandOutcome = .started(ticket: nil)
        client.host.receiverInfo.isConnected = true
        client.send(
            "PUT /api/v1/receiver HTTP/1.1\r\nHost: x\r\nAuthorization: \(FakeHost.validV2)\r\n"
                + "Expect: 100-continue\r\nContent-Length: 21\r\n\r\n"
        )
        #expect(client.take() == "HTTP/1.1 100 Continue\r\n\r\n")
        client.send("{\"isConnected\":true}\n")
        #expect(EmbeddedConnection.statuses(client.take()) == [200])
        #expect(client.host.v2Calls.calls.map(\.consume) == [false, true])
    }

    @Test func theSecurePortsServeTheSameChannels() {
        var v2 = EmbeddedConnection(.locationV2Secure)
        v2.send(upgrade("/locationV2"))
        #expect(v2.channel == .locationV2)
        var v1 = EmbeddedConnection(.locationSecure)
        v1.send(upgrade("/"))
        #expect(v1.channel == .locationV1)
        var notREST = EmbeddedConnection(.locationSecure)
        notREST.send(upgrade("/locationV2"))
        #expect(EmbeddedConnection.statuses(notREST.take()) == [404])
    }

    @Test func antennaAndCorrectionSettingsAreReadAndChanged() {
        var client = EmbeddedConnection(.apiSecure)
        let body = #"{"MeasuredHeight":1.8,"IsAntennaHeightApplied":true}"#
        client.send(
            "PUT /api/v1/antenna HTTP/1.1\r\nHost: x\r\nAuthorization: \(FakeHost.validCode)\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        )
        #expect(client.take().hasSuffix(#"{"measuredHeight":1.8,"isAntennaHeightApplied":true}"#))
        #expect(
            client.actions.contains(
                .saveSettings(
                    DeviceSettings(antenna: AntennaSettings(measuredHeight: 1.8, isAntennaHeightApplied: true)))))
        client.send(get("/api/v1/antenna"))
        #expect(client.take().hasSuffix(#"{"measuredHeight":1.8,"isAntennaHeightApplied":true}"#))
        func putCorrections(_ body: String) {
            client.send(
                "PUT /api/v1/correctionSource HTTP/1.1\r\nHost: x\r\nAuthorization: \(FakeHost.validCode)\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
            )
        }
        // NTRIP without a caster to reach is refused and changes nothing.
        putCorrections(#"{"correctionSource":"ntrip","ntripPassword":"secret"}"#)
        let refused = client.take()
        #expect(
            refused.hasPrefix("HTTP/1.1 400") && refused.contains("serverAddress and ntripMountPoint"), "\(refused)")
        #expect(client.host.deviceSettings.corrections.ntripPassword == nil)
        putCorrections(
            #"{"correctionSource":"ntrip","serverAddress":"caster.example","ntripMountPoint":"RTCM3","#
                + #""ntripPassword":"secret"}"#)
        let text = client.take()
        #expect(text.contains(#""hasNtripPassword":true"#) && !text.contains("secret"))
        #expect(client.host.deviceSettings.corrections.ntripPassword == "secret")
        #expect(client.host.deviceSettings.corrections.wasSetByApp)
        // GET adds what the client does now, read-only.
        client.host.correctionsState = DaemonStatus.Corrections(
            state: "streaming", message: "receiving RTCM corrections", stateSeconds: 3, revision: 2, frames: 12,
            lastFrameAgeSeconds: 0.4, stationID: 2718, ggaSent: 1)
        client.send(get("/api/v1/correctionSource"))
        let state = client.take()
        #expect(
            state.hasSuffix(
                #""hasNtripPassword":true,"status":{"state":"streaming","message":"receiving RTCM corrections","#
                    + #""ntripRevision":2,"frames":12,"lastFrameAge":0.4,"stationId":2718,"ggaSent":1}}"#), "\(state)")
        client.send(get("/api/v1/userInfo"))
        #expect(client.take().contains(#""isSignedIn":false"#))
    }

    /// TMM's "Set configuration for LocationV2 broadcast": the rate asked for is the action the
    /// loop carries out and what GET answers after; the cap in force is never above
    /// max-location-rate (here 100 Hz); null goes back to it.
    @Test func theLocationV2BroadcastRateIsReadAndChanged() {
        var client = EmbeddedConnection(.api)
        func putRate(_ body: String, code: String = FakeHost.validCode) -> String {
            "PUT /api/v1/positionStream/locationV2/ HTTP/1.1\r\nHost: x\r\nAuthorization: \(code)\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        }
        client.send(get("/api/v1/positionStream/locationV2"))
        #expect(client.take().hasSuffix(#"{"rate":100.0,"interval":10.0,"maximumRate":100.0,"requestedRate":null}"#))
        client.send(putRate(#"{"Rate":5}"#))
        let five = #"{"rate":5.0,"interval":200.0,"maximumRate":100.0,"requestedRate":5.0}"#
        #expect(client.take().hasSuffix(five))
        #expect(client.actions.contains(.setLocationV2Interval(200_000_000)))
        client.send(get("/api/v1/positionStream/locationV2"))
        #expect(client.take().hasSuffix(five))
        client.send(putRate(#"{"interval":"250"}"#))
        #expect(client.take().hasSuffix(#"{"rate":4.0,"interval":250.0,"maximumRate":100.0,"requestedRate":4.0}"#))
        // Faster than max-location-rate: asked, but the cap stays.
        client.send(putRate(#"{"updateRate":400,"enabled":true}"#))
        #expect(client.take().hasSuffix(#"{"rate":100.0,"interval":10.0,"maximumRate":100.0,"requestedRate":400.0}"#))
        client.send(putRate(#"{"rate":null}"#))
        #expect(client.take().hasSuffix(#"{"rate":100.0,"interval":10.0,"maximumRate":100.0,"requestedRate":null}"#))
        #expect(client.actions.contains(.setLocationV2Interval(nil)))
        // A bad rate is a 400, without a code a 401 whatever the body; neither changes anything.
        let before = client.actions.count
        client.send(putRate(#"{"rate":0}"#))
        let refused = client.take()
        #expect(EmbeddedConnection.statuses(refused) == [400])
        #expect(refused.contains("rate must be a number of hertz from 1 to 1000, or null"), "\(refused)")
        client.send(putRate(#"{"rate":5}"#, code: "Basic d3Jvbmc="))
        #expect(EmbeddedConnection.statuses(client.take()) == [401])
        #expect(!client.actions[before...].contains { if case .setLocationV2Interval = $0 { true } else { false } })
        #expect(client.host.locationV2Broadcast.requestedInterval == nil)
    }
}

@Suite("ClientConnection: upgrade and WebSocket", .tags(.unit))
struct ClientConnectionWebSocketTests {
    @Test(arguments: [
        (TMMServer.location, "/", ClientChannel.locationV1),
        (.locationV2, "/", .locationV2),
        (.locationV2, "/locationV2", .locationV2),
        (.locationV2, "/events", .events),
    ])
    func anUpgradeSubscribesToItsChannel(_ server: TMMServer, _ path: String, _ channel: ClientChannel) {
        var client = EmbeddedConnection(server)
        client.send(upgrade(path))
        let bytes = client.received
        #expect(EmbeddedConnection.statuses(client.take()) == [101])
        #expect(client.channel == channel && client.machine.channel == channel && client.state == "webSocket")
        #expect(client.reports == [.request, .upgrade])
        let frames = serverFrames(afterHead(bytes))
        #expect(frames.map(\.payload) == (channel == .events ? [Array("status".utf8)] : []))
    }

    @Test func v2AndEventsAreLockedUntilUnlockedButV1IsNot() {
        for path in ["/", "/locationV2", "/events"] {
            var client = EmbeddedConnection(.locationV2)
            client.host.isLocationV2Unlocked = false
            client.send(upgrade(path))
            let text = client.take()
            #expect(EmbeddedConnection.statuses(text) == [401], "\(path)")
            #expect(text.contains("LocationV2 stream is locked") && client.state == "draining" && client.channel == nil)
        }
        var v1 = EmbeddedConnection(.location)
        v1.host.isLocationV2Unlocked = false
        v1.send(upgrade("/"))
        #expect(EmbeddedConnection.statuses(v1.take()) == [101])
    }

    @Test func anUnknownPathIs404AndABadHandshake400() {
        var unknown = EmbeddedConnection(.location)
        unknown.send(upgrade("/locationV2"))
        let text = unknown.take()
        #expect(EmbeddedConnection.statuses(text) == [404] && text.contains("this port serves /"))

        var keyless = EmbeddedConnection(.locationV2)
        keyless.send(upgrade("/", key: nil))
        #expect(EmbeddedConnection.statuses(keyless.take()) == [400])
        #expect(keyless.state == "draining")
    }

    @Test func aRefusedOriginIs403AndNothingBehindItIsAnswered() throws {
        let listed = try HTTPOrigin("http://good.example")
        var client = EmbeddedConnection(.api, origins: .only([listed]))
        let request = get("/api/v1/test/ping").replacing(
            "Host: x\r\n", with: "Host: x\r\nOrigin: http://evil.example\r\n")
        client.send(request + get("/api/v1/test/ping"))
        #expect(EmbeddedConnection.statuses(client.take()) == [403])
        #expect(client.reports == [.request, .refusedOrigin("http://evil.example")])
        #expect(client.state == "draining")

        var socket = EmbeddedConnection(.locationV2, origins: .only([listed]))
        socket.send(upgrade("/", origin: "http://evil.example"))
        #expect(EmbeddedConnection.statuses(socket.take()) == [403] && socket.channel == nil)
    }

    @Test func aFrameRightBehindTheHandshakeIsRead() {
        var client = EmbeddedConnection(.location)
        client.send(Array(upgrade("/").utf8) + clientFrame(0x9, Array("hi".utf8)))
        let bytes = client.received
        #expect(EmbeddedConnection.statuses(client.take()) == [101])
        let frames = serverFrames(afterHead(bytes))
        #expect(frames.count == 1 && frames[0].opcode == 0xA && frames[0].payload == Array("hi".utf8))
    }

    private func upgraded(
        _ server: TMMServer = .locationV2, limits: ServerLimits = ServerLimits()
    ) -> EmbeddedConnection {
        var client = EmbeddedConnection(server, limits: limits)
        client.send(upgrade(server == .location ? "/" : "/locationV2"))
        _ = client.take()
        client.reports = []
        return client
    }

    @Test func framesAreDeliveredAndDataMessagesCountedAndIgnored() {
        var client = upgraded()
        client.deliver(WebSocketFrame.text("position"))
        client.send(clientFrame(0x1, Array("hello".utf8)))
        #expect(serverFrames(client.received).map(\.payload) == [Array("position".utf8)])
        #expect(client.reports == [.unexpectedMessage])
    }

    @Test func aHostsReplyToAMessageGoesOutBeforeTheEchoOfACloseInTheSameRead() {
        // The conformance suite's echo (tmm-wsecho): Autobahn's 7.1.1 sends a message and its
        // Close back to back, and expects the echo first, then the Close.
        var client = upgraded(.location)
        client.host.echoes = true
        client.send(
            clientFrame(0x1, Array("Hello World!".utf8)) + clientFrame(0x2, [0, 0xFF]) + clientFrame(0x8, [0x03, 0xE8]))
        let frames = serverFrames(client.received)
        #expect(frames.map(\.opcode) == [0x1, 0x2, 0x8])
        #expect(frames.map(\.payload) == [Array("Hello World!".utf8), [0, 0xFF], [0x03, 0xE8]])
        #expect(client.reports == [.unexpectedMessage, .unexpectedMessage])
        #expect(client.state == "draining")
    }

    @Test func theClientsCloseIsEchoedThenTheConnectionEnds() {
        var client = upgraded()
        client.send(clientFrame(0x8, [0x03, 0xE8]))
        let frames = serverFrames(client.received)
        #expect(frames.count == 1 && frames[0].opcode == 0x8 && frames[0].payload == [0x03, 0xE8])
        #expect(client.channel == nil && client.isWriteShut && client.state == "draining")
        // An epoch arriving now is not for it.
        let before = client.actions.count
        client.deliver(WebSocketFrame.text("late"))
        #expect(client.actions.count == before)
        client.endOfInput()
        #expect(client.isClosed)
    }

    @Test func anEpochForAClosingConnectionIsDropped() {
        var client = upgraded()
        client.writeRoom = 0
        client.send(clientFrame(0x8, [0x03, 0xE8]))
        #expect(client.state == "closing")
        let queued = client.machine.output.byteCount
        client.deliver(WebSocketFrame.text("late"))
        #expect(client.machine.output.byteCount == queued)
    }

    @Test func aSilentClientIsPingedThenDropped() {
        var limits = ServerLimits()
        limits.webSocket.pingInterval = 1_000
        limits.webSocket.pongTimeout = 1_000
        var client = upgraded(limits: limits)
        client.tick(after: 1)
        client.tick(after: 1_000)
        #expect(serverFrames(client.received).map(\.opcode) == [0x9])
        client.tick(after: 1_000)
        let frames = serverFrames(client.received)
        #expect(frames.map(\.opcode) == [0x9, 0x8])
        #expect(frames.last?.payload.prefix(2) == [0x03, 0xE9])  // 1001
        #expect(client.state == "draining" && client.channel == nil)
    }

    @Test func aSlowClientIsClosedWith1008AfterTheGracePeriod() {
        var limits = ServerLimits()
        limits.queueSoftLimit = 100
        limits.queueHardLimit = 200
        limits.slowClientGrace = 1_000
        var client = upgraded(limits: limits)
        client.writeRoom = 0
        let frame = WebSocketFrame.text(String(repeating: "x", count: 60))
        for _ in 0..<4 { client.deliver(frame, .other) }
        // Over the hard limit: not read any more, and the grace period runs.
        #expect(!client.isReading)
        client.tick(after: 999)
        #expect(!client.reports.contains { if case .slowClientClosed = $0 { true } else { false } })
        client.tick(after: 1)
        #expect(
            client.reports.contains(.slowClientClosed(behind: 4 * frame.count, nanoseconds: 1_000, droppedPositions: 0))
        )
        #expect(client.state == "closing" && client.channel == nil)
        // The backlog was dropped for the Close frame.
        client.writable()
        let frames = serverFrames(client.received)
        #expect(frames.map(\.opcode) == [0x8] && frames[0].payload.prefix(2) == [0x03, 0xF0])
        #expect(client.state == "draining")
    }

    @Test func positionsBeyondTheSoftLimitAreCoalesced() {
        var limits = ServerLimits()
        limits.queueSoftLimit = 100
        var client = upgraded(limits: limits)
        client.writeRoom = 0
        let frame = WebSocketFrame.text(String(repeating: "p", count: 60))
        for _ in 0..<3 { client.deliver(frame) }
        #expect(client.reports == [.positionsDropped(2)])
        client.writable()
        #expect(serverFrames(client.received).count == 1)
    }

    @Test func stoppingTheServerSays1001InsteadOfTheBacklog() {
        var client = upgraded()
        client.writeRoom = 0
        client.deliver(WebSocketFrame.text("backlog"))
        client.writeRoom = nil
        client.run { $0.serverStopping(into: &$1) }
        let frames = serverFrames(client.received)
        #expect(frames.map(\.opcode) == [0x8] && frames[0].payload.prefix(2) == [0x03, 0xE9])
        #expect(client.isClosed)
    }

    @Test func aWriteErrorDuringTheUpgradeClosesBeforeTheClientIsSubscribed() {
        var client = EmbeddedConnection(.locationV2)
        client.writesFail = true
        client.send(Array(upgrade("/events").utf8) + clientFrame(0x9))
        #expect(client.isClosed && client.channel == nil)
        #expect(!client.actions.contains(.subscribe(.events)))
    }

    @Test func framesAfterTheClientsCloseAreNotAnswered() {
        var client = upgraded()
        client.send(clientFrame(0x8, [0x03, 0xE8]) + clientFrame(0x9, Array("late".utf8)))
        #expect(serverFrames(client.received).map(\.opcode) == [0x8])
        #expect(client.state == "draining")
    }

    @Test func aKeepalivePingThatCannotBeWrittenCloses() {
        var limits = ServerLimits()
        limits.webSocket.pingInterval = 1_000
        var client = upgraded(limits: limits)
        client.writesFail = true
        client.tick(after: 1)
        client.tick(after: 1_000)
        #expect(client.isClosed)
        let before = client.actions.count
        client.tick(after: 1_000)
        #expect(client.actions.count == before)
    }

    @Test func aWriteErrorOnAWebSocketCloses() {
        var client = upgraded()
        client.writesFail = true
        client.deliver(WebSocketFrame.text("position"))
        #expect(client.isClosed)
    }
}

@Suite("ClientConnection: any chunking of the input", .tags(.unit))
struct ClientConnectionChunkingTests {
    /// Feeds `input` in random pieces (and the transport takes random amounts, becoming writable
    /// again after each read); returns what the client received and whether the connection ended.
    private func converse(_ server: TMMServer, _ input: [UInt8], seed: UInt64?) -> (received: [UInt8], state: String) {
        var client = EmbeddedConnection(server)
        guard let seed else {
            client.send(input)
            return (client.received, client.state)
        }
        var random = SplitMix64(state: seed)
        var offset = 0
        while offset < input.count {
            let count = Int.random(in: 1...min(64, input.count - offset), using: &random)
            client.writeRoom = Int.random(in: 0...512, using: &random)
            client.send(Array(input[offset..<(offset + count)]))
            offset += count
            client.writable(room: Int.random(in: 0...512, using: &random))
        }
        client.writable()
        return (client.received, client.state)
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func pipelinedRequestsGetTheSameAnswers(_ seed: UInt64) {
        let input = Array(
            (get("/api/v1/test/ping") + get("/api/v1/nothing", code: nil) + get("/api/v1/tmmInfo")
                + "OPTIONS /api/v1/receiver HTTP/1.1\r\nHost: x\r\n\r\n" + get("/api/v1/receiver", close: true)).utf8)
        let whole = converse(.api, input, seed: nil)
        let pieces = converse(.api, input, seed: seed)
        #expect(
            EmbeddedConnection.statuses(String(decoding: whole.received, as: UTF8.self)) == [200, 404, 200, 204, 200])
        #expect(pieces.received == whole.received)
        #expect(pieces.state == "draining" && whole.state == "draining")
    }

    @Test(arguments: [11, 12, 13, 14, 15, 16, 17, 18] as [UInt64])
    func anUpgradeAndItsFramesGetTheSameAnswers(_ seed: UInt64) {
        let input =
            Array(upgrade("/locationV2").utf8) + clientFrame(0x9, Array("one".utf8))
            + clientFrame(0xA) + clientFrame(0x9, Array("two".utf8)) + clientFrame(0x8, [0x03, 0xE8])
        let whole = converse(.locationV2, input, seed: nil)
        let pieces = converse(.locationV2, input, seed: seed)
        #expect(serverFrames(afterHead(whole.received)).map(\.opcode) == [0xA, 0xA, 0x8])
        #expect(pieces.received == whole.received)
        #expect(pieces.state == "draining" && whole.state == "draining")
    }
}

@Suite("ClientConnection: the dashboard's socket", .tags(.unit))
struct ClientConnectionDashboardTests {
    private static let hello = Array(#"{"type":"hello","token":null}"#.utf8)
    private static func hello(token: String) -> [UInt8] { Array(#"{"type":"hello","token":"\#(token)"}"#.utf8) }

    /// Upgraded on `/dashboard/socket`, the hello not sent yet.
    private func opened(fromLoopback: Bool = true, token: String? = nil) -> EmbeddedConnection {
        var client = EmbeddedConnection(.api)
        client.host.isLocationV2Unlocked = false  // the dashboard does not need it
        client.host.helloFromLoopback = fromLoopback
        client.host.dashboardToken = token
        client.send(upgrade("/dashboard/socket"))
        #expect(EmbeddedConnection.statuses(client.take()) == [101])
        return client
    }

    private func closeCode(_ client: EmbeddedConnection) -> (code: Int, reason: String)? {
        guard let close = serverFrames(client.received).first(where: { $0.opcode == 0x8 }), close.payload.count >= 2
        else { return nil }
        return (
            Int(close.payload[0]) << 8 | Int(close.payload[1]),
            String(decoding: close.payload.dropFirst(2), as: UTF8.self)
        )
    }

    @Test func aPageIsSubscribedOnlyOnceItsHelloIsAccepted() {
        var client = opened()
        #expect(client.channel == nil && client.state == "webSocket")
        client.send(clientFrame(0x1, Self.hello))
        #expect(client.channel == .dashboard && client.received.isEmpty)
        // Later messages are counted and ignored, as on the other channels.
        client.reports = []
        client.send(clientFrame(0x1, Self.hello))
        #expect(client.reports == [.unexpectedMessage] && client.channel == .dashboard)
    }

    @Test(
        arguments: [
            (false, nil, nil, "this dashboard is for this machine only (no dashboard-token)"),
            (false, "0123456789abcdef", nil, "token required"),
            (false, "0123456789abcdef", "0123456789abcdeX", "token refused"),
            (false, "0123456789abcdef", "0123456789abcdef0", "token refused"),
        ] as [(Bool, String?, String?, String)])
    func aPageFromAnotherMachineNeedsTheToken(fromLoopback: Bool, configured: String?, sent: String?, reason: String) {
        var client = opened(fromLoopback: fromLoopback, token: configured)
        client.send(clientFrame(0x1, sent.map { Self.hello(token: $0) } ?? Self.hello))
        #expect(closeCode(client)?.code == 4401 && closeCode(client)?.reason == reason)
        #expect(client.channel == nil && client.reports.contains(.dashboardHelloRefused(reason)))
    }

    @Test func theRightTokenFromAnotherMachineIsAccepted() {
        var client = opened(fromLoopback: false, token: "0123456789abcdef")
        client.send(clientFrame(0x1, Self.hello(token: "0123456789abcdef")))
        #expect(client.channel == .dashboard && closeCode(client) == nil)
    }

    @Test(arguments: [
        #"{"type":"subscribe"}"#, "[]", "not json", #"{"type":"hello","token":5}"#,
        #"{"type":"hello","type":"hello"}"#,
    ])
    func aFirstMessageThatIsNotAHelloIsRefused(_ text: String) {
        var client = opened()
        client.send(clientFrame(0x1, Array(text.utf8)))
        #expect(closeCode(client)?.code == 4401 && client.channel == nil)
    }

    @Test func aBinaryOrOversizedHelloIsRefused() {
        var binary = opened()
        binary.send(clientFrame(0x2, Self.hello))
        #expect(closeCode(binary)?.code == 4401)
        var client = opened()
        let padding = String(repeating: " ", count: DashboardHello.maximumSize)
        let big = Array(#"{"type":"hello","token":null}"#.utf8) + Array(padding.utf8)
        // A frame over 125 bytes: a 16-bit length.
        let key: [UInt8] = [1, 2, 3, 4]
        var frame: [UInt8] = [0x81, 0x80 | 126, UInt8(big.count >> 8), UInt8(big.count & 0xFF)] + key
        for (index, byte) in big.enumerated() { frame.append(byte ^ key[index % 4]) }
        client.send(frame)
        #expect(closeCode(client)?.code == 4401)
    }

    @Test func aPageThatSaysNothingIsClosedAfterTheHelloTimeout() {
        var client = opened()
        client.tick(after: DashboardHello.timeout - 1)
        #expect(closeCode(client) == nil)
        client.tick(after: 1)
        #expect(closeCode(client)?.code == 1008 && client.channel == nil)
    }

    @Test func offTheSocketAndPageAre404() {
        for request in [upgrade("/dashboard/socket"), get("/", code: nil), get("/dashboard.js", code: nil)] {
            var client = EmbeddedConnection(.api, dashboard: false)
            client.send(request)
            let text = client.take()
            #expect(EmbeddedConnection.statuses(text) == [404] && text.contains("dashboard = off"), "\(request)")
        }
    }

    @Test func aDashboardListenAddressAnswersTheDashboardOnly() {
        var api = EmbeddedConnection(.api, dashboardOnly: true)
        api.send(get("/api/v1/tmmInfo"))
        let text = api.take()
        #expect(EmbeddedConnection.statuses(text) == [404] && text.contains("operator dashboard only"))
        var page = EmbeddedConnection(.api, dashboardOnly: true)
        page.host.dashboard["/"] = StaticFile(contentType: "text/html; charset=utf-8", bytes: Array("<p>".utf8))
        page.send(get("/", code: nil))
        #expect(EmbeddedConnection.statuses(page.take()) == [200])
        var socket = EmbeddedConnection(.api, dashboardOnly: true)
        socket.send(upgrade("/dashboard/socket"))
        #expect(EmbeddedConnection.statuses(socket.take()) == [101])
    }

    @Test func theLocationPortsHaveNoDashboardSocket() {
        var client = EmbeddedConnection(.locationV2)
        client.send(upgrade("/dashboard/socket"))
        #expect(EmbeddedConnection.statuses(client.take()) == [404])
    }
}
