// The server side of one WebSocket connection after the handshake: a value-type state machine.
// Events come in (bytes received, the owner closing or failing the connection, a timer tick, the
// transport going away) and actions come out (deliver a message, write bytes, write then close,
// close). The owner, the io loop, carries out the actions; this type never does I/O, never reads
// a clock and never blocks.
//
// Reading. `receive(_:)` takes whatever a read returned, in any chunking. It consumes bytes until
// it has one action to report or has used up the input, and says how many it consumed; the owner
// calls it again with the rest. Nothing it needs is left in the caller's buffer: a header split
// across reads is carried in a 14-byte inline buffer, and payload bytes are unmasked straight
// into the message being assembled (or the 125-byte control buffer) as they arrive. So a
// message is copied exactly once, and its declared size is checked against the limits before a
// single payload byte is stored.
//
// Text is checked for UTF-8 incrementally, across reads and fragments: the first byte that
// cannot be valid fails the connection with 1007 at once (RFC 6455 §8.1 "fail fast"); a message
// that ends inside a character fails when its final fragment ends.
//
// States, and what may still be read and written in each:
//
//   state          reads                                  writes                owner's next step
//   open           everything                             data and control      -
//   closingByUs    data (delivered), close (completes);   nothing               wait for the peer's Close
//                  pings ignored                                                (idle(now:) bounds it)
//   closingByPeer  nothing (discarded, §1.4)              nothing (our echo     close the socket once the
//                                                         was the last frame)   echo is written
//   closed         nothing                                nothing               close the socket
//
//   open ──peer Close──► closingByPeer ──transportClosed()──► closed
//   open ──close(code:)──► closingByUs ──peer Close / close timeout──► closed
//   open ──protocol error / fail(code:) / keepalive timeout──► closed

/// What the owner must do next.
public enum WebSocketAction: Hashable, Sendable {
    /// A complete text or binary message from the client.
    case deliver(WebSocketMessage)
    /// Write these bytes (a pong, a ping, or our Close frame) after anything already queued.
    case write([UInt8])
    /// Write these bytes (a Close frame) after anything already queued, then close the socket.
    /// When the client is not reading, the owner may drop what is queued and write only these.
    case writeAndClose([UInt8])
    /// Close the socket; nothing more will be written.
    case close
}

/// A complete data message received from the client.
public struct WebSocketMessage: Hashable, Sendable {
    /// Text or binary, from the opcode of the message's first frame.
    public enum Kind: Hashable, Sendable {
        case text, binary
    }

    /// Text (valid UTF-8, checked) or binary.
    public var kind: Kind
    /// The unmasked payload of all its fragments.
    public var payload: [UInt8]

    /// A message.
    public init(kind: Kind, payload: [UInt8]) {
        self.kind = kind
        self.payload = payload
    }

    /// The payload as a string, for text messages; nil for binary.
    public var text: String? {
        kind == .text ? String(decoding: payload, as: UTF8.self) : nil
    }
}

/// One server-side WebSocket connection after a successful handshake.
public struct WebSocketConnection: Sendable {
    /// Limits and timeouts. Times are nanoseconds on the owner's monotonic clock.
    public struct Configuration: Hashable, Sendable {
        /// Largest frame payload accepted from the client (1009 beyond it).
        ///
        /// 64 KiB: TMM clients send nothing but pings, pongs and closes, yet RFC 6455's own
        /// 64 KiB example must pass; with 1 000 clients the worst case stays at 64 MiB.
        public var maxFrameSize: Int
        /// Largest message (all fragments together) accepted from the client (1009 beyond it).
        public var maxMessageSize: Int
        /// Silence from the client after which the server sends a ping. The Android TMM client
        /// pings every 30 s itself; most others are silent, so they are pinged.
        public var pingInterval: Int64
        /// Further silence after our ping after which the client is dropped (1001, "going away",
        /// as Jetty does for idle timeouts).
        public var pongTimeout: Int64
        /// How long to wait for the client's Close after sending ours, before closing anyway.
        public var closeTimeout: Int64

        /// 64 KiB frames and messages, ping after 20 s of silence, drop 20 s later, close wait 5 s.
        public init(
            maxFrameSize: Int = 65_536, maxMessageSize: Int = 65_536, pingInterval: Int64 = 20_000_000_000,
            pongTimeout: Int64 = 20_000_000_000, closeTimeout: Int64 = 5_000_000_000
        ) {
            precondition(maxFrameSize >= 0 && maxMessageSize >= 0, "negative size limit")
            self.maxFrameSize = maxFrameSize
            self.maxMessageSize = maxMessageSize
            self.pingInterval = pingInterval
            self.pongTimeout = pongTimeout
            self.closeTimeout = closeTimeout
        }
    }

    /// Where the closing handshake stands (see the table at the top of this file).
    public enum State: Hashable, Sendable {
        /// Reading and writing.
        case open
        /// We sent a Close and wait for the client's; still reading, no longer writing.
        case closingByUs
        /// The client sent a Close and our echo has been handed out; the owner closes the socket.
        case closingByPeer
        /// Done: nothing is read or written.
        case closed
    }

    /// How the connection ended (for logs and metrics): set when the client's Close arrives or the
    /// connection ends; nil while open or while our own Close waits for the answer.
    public enum Termination: Hashable, Sendable {
        /// The client started the closing handshake with this code (nil: no code) and reason;
        /// we echoed the code.
        case closedByPeer(code: WebSocketCloseCode?, reason: String)
        /// We started the closing handshake; the client answered with this code and reason.
        case closeAcknowledged(code: WebSocketCloseCode?, reason: String)
        /// The client broke the protocol; we sent `error.closeCode` (unless a Close was already out).
        case protocolError(WebSocketProtocolError)
        /// The owner failed the connection with this code (e.g. 1008 for a client too slow to read).
        case failedByOwner(WebSocketCloseCode)
        /// The client stayed silent after our ping; we sent 1001.
        case keepaliveTimeout
        /// The client never answered our Close.
        case closeTimeout
        /// The owner reported the socket closed before the closing handshake finished.
        case transportClosed
    }

    /// The result of one `receive(_:)` call.
    public struct Step: Hashable, Sendable {
        /// Bytes of the input used up; the owner passes the rest in the next call. Never 0 for a
        /// non-empty input.
        public var consumed: Int
        /// What to do, if anything.
        public var action: WebSocketAction?

        /// A step.
        public init(consumed: Int, action: WebSocketAction?) {
            self.consumed = consumed
            self.action = action
        }
    }

    /// The limits and timeouts this connection enforces.
    public let configuration: Configuration
    /// Where the closing handshake stands.
    public private(set) var state: State = .open
    /// How the connection ended, once it has (see `Termination`).
    public private(set) var termination: Termination?

    // Reading: the header of the next frame (only when split across reads), the frame in
    // progress, the message being assembled, and the control frame payload.
    private var headerCarry = InlineArray<14, UInt8>(repeating: 0)  // WebSocketFrameHeader.maxLength
    private var headerCarried = 0
    private var frame: Frame?
    private var message: [UInt8] = []
    private var messageKind: WebSocketMessage.Kind?
    private var utf8 = UTF8Validator()
    private var control = InlineArray<125, UInt8>(repeating: 0)  // WebSocketFrame.maxControlPayload
    private var controlCount = 0

    // Keepalive and close timing, all measured at `idle(now:)` ticks.
    private var heardSinceTick = false
    private var lastHeard: Int64?
    private var pingSentAt: Int64?
    private var closeSentAt: Int64?

    private struct Frame: Hashable, Sendable {
        var fin: Bool
        var opcode: WebSocketOpcode
        var key: WebSocketMaskingKey
        var length: Int
        var received = 0
    }

    /// A connection that has just switched protocols.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// True while data frames may be sent to the client (state `open`).
    public var canSend: Bool { state == .open }

    /// True while received bytes are still interpreted (`open`, `closingByUs`); otherwise they
    /// are consumed and discarded.
    public var isReading: Bool { state == .open || state == .closingByUs }

    // MARK: - Events

    /// Consumes received bytes until there is one action to report or the input is used up.
    ///
    /// Call in a loop over what a read returned, passing the unconsumed rest each time, and carry
    /// out each action in order. Any chunking of the same bytes yields the same actions.
    public mutating func receive(_ bytes: Span<UInt8>) -> Step {
        let count = bytes.count
        guard count > 0 else { return Step(consumed: 0, action: nil) }
        // §1.4: "after receiving a control frame indicating the connection should be closed, a
        // peer discards any further data received."
        guard isReading else { return Step(consumed: count, action: nil) }
        heardSinceTick = true
        var offset = 0
        do throws(WebSocketProtocolError) {
            while offset < count {
                if frame == nil {
                    guard let header = try readHeader(bytes.extracting(offset..<count), offset: &offset) else {
                        continue
                    }
                    try begin(header)
                } else {
                    let appended = readPayload(bytes.extracting(offset..<count), offset: &offset)
                    try checkText(appended)
                }
                if let done = frame, done.received == done.length {
                    frame = nil
                    if let action = try finish(done) { return Step(consumed: offset, action: action) }
                }
            }
        } catch {
            // §7.1.7: "the endpoint SHOULD send a Close frame with an appropriate status code
            // (Section 7.4) before proceeding to _Close the WebSocket Connection_", and then
            // "SHOULD NOT continue to attempt to process data". The rest of the input is dropped.
            return Step(consumed: count, action: failConnection(error))
        }
        return Step(consumed: offset, action: nil)
    }

    /// Starts the closing handshake: our Close goes out, then the client's is awaited.
    ///
    /// - Returns: the Close frame to write, or nil unless `open`.
    /// - Precondition: `code` may be sent (`isValidOnWire`).
    public mutating func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") -> WebSocketAction? {
        guard state == .open else { return nil }
        state = .closingByUs
        // §5.5.1: "The application MUST NOT send any more data frames after sending a Close frame."
        return .write(WebSocketFrame.close(code: code, reason: reason))
    }

    /// Fails the connection for a reason of the owner's (e.g. 1008 for a client whose queue stayed
    /// over the hard limit): a Close with `code` if none was sent yet, then close the socket.
    ///
    /// - Returns: what to do, or nil if already `closed`.
    /// - Precondition: `code` may be sent (`isValidOnWire`).
    public mutating func fail(code: WebSocketCloseCode, reason: String = "") -> WebSocketAction? {
        switch state {
        case .open:
            end(.closed, .failedByOwner(code))
            return .writeAndClose(WebSocketFrame.close(code: code, reason: reason))
        case .closingByUs:
            end(.closed, .failedByOwner(code))
            return .close
        case .closingByPeer:
            // Our echo is already out; keep the record of the client's Close.
            end(.closed, termination ?? .failedByOwner(code))
            return .close
        case .closed:
            return nil
        }
    }

    /// A timer tick: sends a ping to a silent client, drops one that stays silent, and bounds the
    /// wait for the client's Close.
    ///
    /// Call it periodically (every second or so) with the monotonic time in nanoseconds. Silence
    /// is measured between ticks (a tick notices bytes received since the previous one), so each
    /// timeout holds to within one tick period.
    public mutating func idle(now: Int64) -> WebSocketAction? {
        if heardSinceTick || lastHeard == nil {
            heardSinceTick = false
            lastHeard = now
            pingSentAt = nil
        }
        switch state {
        case .open:
            if let sent = pingSentAt {
                guard elapsed(since: sent, now: now) >= configuration.pongTimeout else { return nil }
                end(.closed, .keepaliveTimeout)
                return .writeAndClose(WebSocketFrame.close(code: .goingAway, reason: "ping timeout"))
            }
            guard let heard = lastHeard, elapsed(since: heard, now: now) >= configuration.pingInterval else {
                return nil
            }
            pingSentAt = now
            return .write(WebSocketFrame.encode(opcode: .ping, payload: [UInt8]().span))
        case .closingByUs:
            guard let sent = closeSentAt else {
                closeSentAt = now
                return nil
            }
            guard elapsed(since: sent, now: now) >= configuration.closeTimeout else { return nil }
            end(.closed, .closeTimeout)
            return .close
        case .closingByPeer, .closed:
            return nil
        }
    }

    /// The socket is gone (closed by the owner after an action, or EOF/error from the client).
    public mutating func transportClosed() {
        guard state != .closed else { return }
        end(.closed, termination ?? .transportClosed)
    }

    // MARK: - Reading

    /// Decodes the next header, from the carry buffer when a previous read ended inside it.
    /// Advances `offset` past the header bytes it used; nil when more bytes are needed.
    private mutating func readHeader(
        _ input: Span<UInt8>, offset: inout Int
    ) throws(WebSocketProtocolError)
        -> WebSocketFrameHeader?
    {
        let limit = configuration.maxFrameSize
        if headerCarried == 0 {
            switch try WebSocketFrameHeader.decodeClientFrame(input, maxPayloadLength: limit) {
            case .complete(let header):
                offset += header.headerLength
                return header
            case .needMoreBytes:
                // Shorter than the header it starts, so shorter than 14 bytes: it fits.
                for i in input.indices { headerCarry[i] = input[i] }
                headerCarried = input.count
                offset += input.count
                return nil
            }
        }
        let before = headerCarried
        let taken = min(WebSocketFrameHeader.maxLength - before, input.count)
        for i in 0..<taken { headerCarry[before + i] = input[i] }
        headerCarried += taken
        let decoded = try WebSocketFrameHeader.decodeClientFrame(
            headerCarry.span.extracting(0..<headerCarried), maxPayloadLength: limit)
        switch decoded {
        case .complete(let header):
            headerCarried = 0
            offset += header.headerLength - before
            return header
        case .needMoreBytes:
            offset += taken
            return nil
        }
    }

    /// Checks a new frame against the message in progress and the size limit, and sets it up.
    private mutating func begin(_ header: WebSocketFrameHeader) throws(WebSocketProtocolError) {
        if header.opcode.isControl {
            // §5.4: "Control frames (see Section 5.5) MAY be injected in the middle of a
            // fragmented message." They leave the message in progress alone.
            controlCount = 0
        } else {
            if header.opcode == .continuation {
                // §5.4: a fragmented message is "a single frame with the FIN bit clear and an
                // opcode other than 0, followed by zero or more frames with the FIN bit clear and
                // the opcode set to 0, and terminated by a single frame with the FIN bit set and
                // an opcode of 0."
                guard messageKind != nil else { throw .unexpectedContinuation }
            } else {
                // §5.4: "The fragments of one message MUST NOT be interleaved between the
                // fragments of another message unless an extension has been negotiated".
                guard messageKind == nil else { throw .expectedContinuation }
                messageKind = header.opcode == .text ? .text : .binary
                utf8 = UTF8Validator()
            }
            // Checked on the declared length, before any payload byte is stored.
            let total = message.count + header.payloadLength
            guard total <= configuration.maxMessageSize else { throw .messageTooLarge(total) }
        }
        frame = Frame(fin: header.fin, opcode: header.opcode, key: header.maskingKey, length: header.payloadLength)
    }

    /// Unmasks as much of the current frame's payload as `input` holds into its destination.
    /// Returns how many bytes it appended to `message` (0 for a control frame).
    private mutating func readPayload(_ input: Span<UInt8>, offset: inout Int) -> Int {
        guard var current = frame else { return 0 }
        let n = min(current.length - current.received, input.count)
        let piece = input.extracting(0..<n)
        if current.opcode.isControl {
            for i in 0..<n { control[controlCount + i] = piece[i] ^ current.key[current.received + i] }
            controlCount += n
        } else {
            current.key.apply(piece, payloadOffset: current.received, appendingTo: &message)
        }
        current.received += n
        frame = current
        offset += n
        return current.opcode.isControl ? 0 : n
    }

    /// §8.1: "When an endpoint is to interpret a byte stream as UTF-8 but finds that the byte
    /// stream is not, in fact, a valid UTF-8 stream, that endpoint MUST _Fail the WebSocket
    /// Connection_." Checked on each new piece, so the failure comes as early as possible.
    private mutating func checkText(_ n: Int) throws(WebSocketProtocolError) {
        guard n > 0, messageKind == .text else { return }
        let end = message.count
        var validator = utf8
        let ok = validator.consume(message.span.extracting((end - n)..<end))
        utf8 = validator
        guard ok else { throw .invalidUTF8 }
    }

    /// Acts on a frame whose payload has fully arrived.
    private mutating func finish(_ done: Frame) throws(WebSocketProtocolError) -> WebSocketAction? {
        switch done.opcode {
        case .ping:
            // §5.5.2: "Upon receipt of a Ping frame, an endpoint MUST send a Pong frame in
            // response, unless it already received a Close frame." §5.5.3: the Pong "must have
            // identical "Application data" as found in the message body of the Ping frame".
            // After our own Close, nothing more is written.
            guard state == .open else { return nil }
            return .write(WebSocketFrame.pong(control.span.extracting(0..<controlCount)))
        case .pong:
            // Unsolicited pongs are allowed (§5.5.3); any byte received already counts as life.
            return nil
        case .close:
            return try receivedClose()
        default:
            // A data frame: the message ends with its final fragment.
            guard done.fin, let kind = messageKind else { return nil }
            // §5.6: "a particular text frame might include a partial UTF-8 sequence; however,
            // the whole message MUST contain valid UTF-8."
            if kind == .text && !utf8.isComplete { throw .invalidUTF8 }
            let payload = message
            message = []
            messageKind = nil
            return .deliver(WebSocketMessage(kind: kind, payload: payload))
        }
    }

    /// Validates the client's Close and answers it (§5.5.1, §7.4).
    private mutating func receivedClose() throws(WebSocketProtocolError) -> WebSocketAction {
        let (code, reason) = try parseClose()
        switch state {
        case .open:
            // §5.5.1: "If an endpoint receives a Close frame and did not previously send a Close
            // frame, the endpoint MUST send a Close frame in response. (When sending a Close frame
            // in response, the endpoint typically echos the status code it received.)" §7.1.1:
            // the server closes the TCP connection first.
            end(.closingByPeer, .closedByPeer(code: code, reason: reason))
            return .writeAndClose(WebSocketFrame.close(code: code))
        case .closingByUs, .closingByPeer, .closed:
            // Our Close was already sent: the handshake is complete.
            end(.closed, .closeAcknowledged(code: code, reason: reason))
            return .close
        }
    }

    /// The status code (nil when the body is empty) and reason of the Close just received.
    private func parseClose() throws(WebSocketProtocolError) -> (WebSocketCloseCode?, String) {
        let body = control.span.extracting(0..<controlCount)
        var code: WebSocketCloseCode?
        var reason = ""
        if body.count == 1 { throw .closePayloadTooShort }
        if body.count >= 2 {
            // §5.5.1: "If there is a body, the first two bytes of the body MUST be a 2-byte
            // unsigned integer (in network byte order) representing a status code".
            let received = WebSocketCloseCode(rawValue: UInt16(body[0]) << 8 | UInt16(body[1]))
            // §7.4: codes outside the defined and registered ranges (1004-1006, 1015, 1016-2999,
            // <1000, >=5000) are not valid in a Close frame; receiving one is a protocol error.
            guard received.isValidOnWire else { throw .invalidCloseCode(received.rawValue) }
            let text = body.extracting(2..<body.count)
            // §5.5.1: "Following the 2-byte integer, the body MAY contain UTF-8-encoded data".
            guard UTF8Validator.isValid(text) else { throw .invalidCloseReason }
            var utf8: [UInt8] = []
            utf8.reserveCapacity(text.count)
            for i in text.indices { utf8.append(text[i]) }
            code = received
            reason = String(decoding: utf8, as: UTF8.self)
        }
        return (code, reason)
    }

    // MARK: - Ending

    private mutating func failConnection(_ error: WebSocketProtocolError) -> WebSocketAction {
        let wasOpen = state == .open
        end(.closed, .protocolError(error))
        // An endpoint sends one Close frame at most: after ours, just close.
        return wasOpen ? .writeAndClose(WebSocketFrame.close(code: error.closeCode, reason: error.reason)) : .close
    }

    private mutating func end(_ newState: State, _ why: Termination) {
        state = newState
        termination = why
        // Nothing more is read: release the message buffer now rather than with the connection.
        message = []
        messageKind = nil
        frame = nil
        headerCarried = 0
        controlCount = 0
    }

    /// `now - then`, saturating, and never negative (a clock that went backwards counts as 0).
    private func elapsed(since then: Int64, now: Int64) -> Int64 {
        let (difference, overflow) = now.subtractingReportingOverflow(then)
        if overflow { return now > then ? .max : 0 }
        return max(0, difference)
    }
}
