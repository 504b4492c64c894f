import ByteCoding
import GNSS
import HTTP1
import Logging

// The NTRIP client as a state machine: events in, actions out, the way BridgeCore's
// ClientConnection works. The executor (Bridge) owns the socket, DNS, TLS and the clock and does
// what the actions say; every rule of the protocol is here, tested without sockets.
//
// One connection at a time:
//
//   idle ─start─► connecting ─connected─► awaitingAnswer ─┬─ ICY 200, HTTP 200 ────► streaming
//                 (connectTimeout)        (answerTimeout)  ├─ a sourcetable ────────► readingSourcetable
//                                                          ├─ 400/404/505 to Rev 2 ─► connecting (Rev 1, at once)
//                                                          └─ 401/403, other ───────► waiting
//   every failure: .disconnect, its state, waiting (the backoff) ─tick─► connecting
//   stop, from anywhere: .disconnect if a connection is open, idle
//
// GGA goes upstream only while streaming: the first as soon as a fix is known (at once when the
// caster answers, if one is), then every `ggaIntervalSeconds`, never within a second of the last.
// The last fix is sent again at each interval while no newer one comes.
//
// The executor's contract:
// - Each `.connect` is ended by exactly one `.disconnect`, whatever happened in between (a failed
//   connect, the caster's close and a read error included), so the executor frees a connection in
//   one place only. After `.disconnect` it reports nothing more about that connection.
// - `connected` once the connection (TLS included) is up; `received` for every read, in order;
//   `connectionFailed` for a DNS, connect, TLS or read error; `connectionClosed` at end of input.
// - `tick` at least once a second (or at `nextDeadline`): retries, time-outs and GGA are due there.
//
// Failures and the state they leave (each with `.disconnect` and a retry after the backoff):
// - DNS, refused, connect or TLS failure, nothing within `connectTimeout`: `.unreachable(reason)`.
// - No answer within `answerTimeout`, or a close or read error before any byte of it (Rev 1):
//   `.unreachable`. The same before any byte with a Rev 2 request means the caster may not speak
//   Rev 2: the next attempt, at once, is Rev 1, remembered for this session (as are 400, 404, 505).
// - An answer that is not NTRIP, a head over `maximumHeadBytes` or not complete within
//   `answerTimeout`, a status other than the ones below, broken chunking: `.protocolError(reason)`.
// - 401, 403 (`ERROR - Bad Password`): `.loginRefused`. A sourcetable (or 404 to Rev 1):
//   `.noSuchMountPoint(offered:)`.
// - Streaming with no valid frame for `silenceLimit` (silence, garbage, a chunk that never ends), or
//   a stream the caster ends before any valid frame: `.noData`. A stream that ends after frames
//   were delivered: `.connecting` (nothing is wrong with the source; it is retried).
// A failure's state stays until an attempt succeeds (the caster answers 200), so an operator sees
// why corrections stopped while the client retries.
//
// The password never leaves this type except Base64-encoded in the request's Authorization field:
// every message is built from `NTRIPSource.description`, and any text that comes from outside (the
// caster's status line, sourcetable names, the executor's error reasons) has the password and the
// encoded credentials blanked before it goes into a state or a log line.

/// The NTRIP client's protocol: request, answer, sourcetable, stream, GGA, time-outs and retries.
public struct NTRIPSession: Sendable {
    /// What the client connects to and how it introduces itself.
    public struct Settings: Equatable, Sendable {
        public var source: NTRIPSource
        /// `User-Agent`, e.g. "NTRIP tmm-bridge/1.2.3" (NTRIP 2.0 wants it to start with "NTRIP").
        public var userAgent: String
        /// Seconds between GGA sentences sent upstream; 0 = never send GGA.
        public var ggaIntervalSeconds: Int

        public init(source: NTRIPSource, userAgent: String, ggaIntervalSeconds: Int = 10) {
            self.source = source
            self.userAgent = userAgent
            self.ggaIntervalSeconds = ggaIntervalSeconds
        }
    }

    /// What the executor must do, in order.
    public enum Action: Equatable, Sendable {
        /// Open a connection (resolve, connect, TLS when `tls`); report `connected` or `connectionFailed`.
        case connect(host: String, port: UInt16, tls: Bool)
        /// Write these bytes: the request, or a GGA sentence (CRLF-terminated).
        case send([UInt8])
        /// Close the current connection (or abandon the attempt in progress).
        case disconnect
        /// A valid frame for the receiver, in stream order.
        case deliver(RTCM3Frame)
        /// `health.state` changed to this.
        case stateChanged(CorrectionsState)
        /// A line for the log; never contains the password.
        case log(LogLevel, String)
    }

    // MARK: Limits and times (monotonic nanoseconds)

    static let second: Int64 = 1_000_000_000
    /// Streaming without a valid frame this long: `.disconnect`, `.noData`, retry.
    public static let silenceLimit: Int64 = 30 * second
    /// The whole answer head must arrive within this after the request: bounds a caster that
    /// accepts and never answers, and one that drips its head a byte at a time.
    public static let answerTimeout: Int64 = 10 * second
    /// DNS, TCP and TLS together must be done within this after `.connect`.
    public static let connectTimeout: Int64 = 10 * second
    /// The longest answer head: an endless header or a 10 MB line is refused here, never buffered.
    /// 8 KiB, as for requests (`HTTPLimits.maxHeadBytes`); casters send 100 to 300 bytes.
    public static let maximumHeadBytes = 8 * 1024
    /// The largest chunk of a chunked stream. Casters send one chunk per message or epoch (at most
    /// a few KiB); 64 KiB leaves room and stops a size line like `FFFFFFFFFFFFFFFFFFFF` early.
    public static let maximumChunkBytes = 64 * 1024
    /// A sourcetable must be complete within this after the answer head; what came by then counts.
    public static let sourcetableTimeout: Int64 = 30 * second
    /// The first retry's delay; each further failure doubles it, up to `maximumRetryDelay`.
    public static let firstRetryDelay: Int64 = 1 * second
    public static let maximumRetryDelay: Int64 = 30 * second
    /// GGA is never sent more often than this, whatever the interval and the positions.
    public static let minimumGGASpacing: Int64 = 1 * second

    // MARK: State

    public let settings: Settings
    public private(set) var health: CorrectionsHealth
    /// The dialect of the next (or current) request: Rev 2 until a caster refused it.
    public private(set) var requestRevision = NTRIPRevision.version2

    enum Phase: Equatable, Sendable {
        /// Not started, or stopped.
        case idle
        /// After a failure, until `health.nextAttemptAt`.
        case waiting
        /// `.connect` was asked for; until `connected`.
        case connecting
        /// The request was sent; reading the answer head.
        case awaitingAnswer
        /// The caster answered with its sourcetable.
        case readingSourcetable
        /// RTCM is arriving.
        case streaming
    }

    var phase = Phase.idle
    /// The time-out of `connecting`, `awaitingAnswer` and `readingSourcetable`.
    var deadline: Int64 = 0
    /// Failures since the last delivered frame (or the start): the backoff's exponent.
    var consecutiveFailures = 0

    // The current connection's parts, made new by each `.connect`.
    var head: NTRIPResponseHead
    var sourcetable = NTRIPSourcetable()
    /// Set for a chunked answer (`Transfer-Encoding: chunked`).
    var dechunker: HTTPChunkedDecoder?
    var framer = RTCM3Framer()
    /// When streaming began, and when this connection last delivered a valid frame.
    var streamingSince: Int64 = 0
    var lastFrameOnConnection: Int64?
    var lastByteAt: Int64 = 0
    var framesOnConnection = 0
    var ggaSentOnConnection = false

    /// The served receiver's latest fix: what GGA reports.
    var lastFix: Position?
    /// How outside text is quoted: without this source's password and credentials.
    let redaction: Redaction

    public init(settings: Settings) {
        self.settings = settings
        health = CorrectionsHealth(state: .off, since: 0)
        redaction = Redaction(hidingCredentialsOf: settings.source)
        head = NTRIPResponseHead(maximumBytes: Self.maximumHeadBytes, redaction: redaction)
    }

    /// The request bytes of the current dialect (what `connected` sends).
    public var request: [UInt8] {
        NTRIPRequest.bytes(for: settings.source, userAgent: settings.userAgent, revision: requestRevision)
    }

    // MARK: Events

    /// Starts the client: `.connect` (and `.stateChanged(.connecting)`). Ignored unless stopped.
    public mutating func start(now: Int64) -> [Action] {
        guard phase == .idle else { return [] }
        var actions: [Action] = []
        consecutiveFailures = 0
        change(to: .connecting, now: now, &actions)
        actions.append(.log(.info, "NTRIP: connecting to \(settings.source)"))
        connect(now: now, &actions)
        return actions
    }

    /// The connection is up (TLS included): sends the request.
    public mutating func connected(now: Int64) -> [Action] {
        guard phase == .connecting else { return [] }
        phase = .awaitingAnswer
        deadline = now + Self.answerTimeout
        return [.send(request)]
    }

    /// Bytes read from the connection.
    public mutating func received(_ bytes: Span<UInt8>, now: Int64) -> [Action] {
        var actions: [Action] = []
        switch phase {
        case .idle, .waiting, .connecting:
            break
        case .awaitingAnswer:
            readAnswer(bytes, now: now, &actions)
        case .readingSourcetable:
            readSourcetable(bytes, now: now, &actions)
        case .streaming:
            readStream(bytes, now: now, &actions)
        }
        return actions
    }

    /// Connecting, TLS or reading failed (DNS, refused, reset, handshake...).
    public mutating func connectionFailed(reason: String, now: Int64) -> [Action] {
        var actions: [Action] = []
        let reason = redaction.quoted(reason)
        switch phase {
        case .idle, .waiting:
            break
        case .connecting:
            fail(.unreachable(reason: reason), now: now, &actions)
        case .awaitingAnswer:
            if head.count == 0 && requestRevision == .version2 {
                fallBackToVersion1(because: "the connection failed before any answer (\(reason))", now: now, &actions)
            } else {
                fail(.unreachable(reason: reason), now: now, &actions)
            }
        case .readingSourcetable:
            finishSourcetable(now: now, &actions)
        case .streaming:
            streamEnded("the connection failed (\(reason))", now: now, &actions)
        }
        return actions
    }

    /// The caster closed the connection (end of input).
    public mutating func connectionClosed(now: Int64) -> [Action] {
        var actions: [Action] = []
        switch phase {
        case .idle, .waiting:
            break
        case .connecting:
            fail(.unreachable(reason: "the connection closed while it was being set up"), now: now, &actions)
        case .awaitingAnswer:
            if head.count > 0 {
                fail(
                    .protocolError(reason: "the caster closed the connection in the middle of its answer"), now: now,
                    &actions)
            } else if requestRevision == .version2 {
                fallBackToVersion1(because: "the caster closed the connection without answering", now: now, &actions)
            } else {
                fail(.unreachable(reason: "the caster closed the connection without answering"), now: now, &actions)
            }
        case .readingSourcetable:
            finishSourcetable(now: now, &actions)
        case .streaming:
            streamEnded("the caster closed the stream", now: now, &actions)
        }
        return actions
    }

    /// Time passed: retries, time-outs and GGA that are due.
    public mutating func tick(now: Int64) -> [Action] {
        var actions: [Action] = []
        switch phase {
        case .idle:
            break
        case .waiting:
            if let next = health.nextAttemptAt, now >= next { connect(now: now, &actions) }
        case .connecting:
            if now >= deadline {
                fail(
                    .unreachable(reason: "no connection within \(Self.seconds(Self.connectTimeout))"), now: now,
                    &actions)
            }
        case .awaitingAnswer:
            guard now >= deadline else { break }
            if head.count == 0 {
                fail(.unreachable(reason: "no answer within \(Self.seconds(Self.answerTimeout))"), now: now, &actions)
            } else {
                let reason = "the answer's head was not complete within \(Self.seconds(Self.answerTimeout))"
                fail(.protocolError(reason: reason + " (\(head.count) bytes came)"), now: now, &actions)
            }
        case .readingSourcetable:
            if now >= deadline { finishSourcetable(now: now, &actions) }
        case .streaming:
            let reference = lastFrameOnConnection ?? streamingSince
            if now - reference >= Self.silenceLimit {
                let limit = Self.seconds(Self.silenceLimit)
                let skipped = framer.statistics.skippedBytes
                let what =
                    now - lastByteAt >= Self.silenceLimit
                    ? "no data for \(limit)" : "no valid RTCM frame for \(limit) (\(skipped) bytes skipped)"
                fail(.noData, now: now, &actions, log: what)
            } else {
                sendGGAIfDue(now: now, &actions)
            }
        }
        return actions
    }

    /// The served receiver's latest epoch. Only fixes matter: they become the GGA sent upstream.
    /// The last one is kept and sent again at each interval while no newer fix comes: a network
    /// caster needs a GGA now and then to keep making corrections for the rover.
    public mutating func position(_ position: Position, now: Int64) -> [Action] {
        // A fix that cannot be written (a latitude out of range) is not kept: a GGA would then be
        // due at every tick and never sent.
        guard GGAWriter.isWritable(position) else { return [] }
        lastFix = position
        var actions: [Action] = []
        sendGGAIfDue(now: now, &actions)
        return actions
    }

    /// Stops the client: `.disconnect` if a connection is open or being opened, state `.off`.
    public mutating func stop(now: Int64) -> [Action] {
        guard phase != .idle else { return [] }
        var actions: [Action] = []
        switch phase {
        case .idle, .waiting: break
        case .connecting, .awaitingAnswer, .readingSourcetable, .streaming: actions.append(.disconnect)
        }
        phase = .idle
        health.nextAttemptAt = nil
        change(to: .off, now: now, &actions)
        actions.append(.log(.info, "NTRIP: corrections from \(settings.source) stopped"))
        return actions
    }

    /// The earliest time `tick` has something to do, or nil when it has nothing (stopped).
    public var nextDeadline: Int64? {
        switch phase {
        case .idle: return nil
        case .waiting: return health.nextAttemptAt
        case .connecting, .awaitingAnswer, .readingSourcetable: return deadline
        case .streaming:
            let silence = (lastFrameOnConnection ?? streamingSince) + Self.silenceLimit
            guard let gga = nextGGAAt else { return silence }
            return min(silence, gga)
        }
    }

    // MARK: Connecting

    private mutating func connect(now: Int64, _ actions: inout [Action]) {
        phase = .connecting
        deadline = now + Self.connectTimeout
        health.connectAttempts += 1
        health.nextAttemptAt = nil
        head = NTRIPResponseHead(maximumBytes: Self.maximumHeadBytes, redaction: redaction)
        sourcetable = NTRIPSourcetable(redaction: redaction)
        dechunker = nil
        framer = RTCM3Framer()
        lastFrameOnConnection = nil
        framesOnConnection = 0
        ggaSentOnConnection = false
        let source = settings.source
        actions.append(
            .log(.debug, "NTRIP: attempt \(health.connectAttempts), NTRIP \(requestRevision.rawValue).0 request"))
        actions.append(.connect(host: source.host, port: source.port, tls: source.usesTLS))
    }

    /// The caster did not take the Rev 2 request: the next request, sent at once, is Rev 1.
    private mutating func fallBackToVersion1(because why: String, now: Int64, _ actions: inout [Action]) {
        requestRevision = .version1
        actions.append(.disconnect)
        actions.append(.log(.info, "NTRIP: \(settings.source): \(why); trying an NTRIP 1.0 request"))
        connect(now: now, &actions)
    }

    // MARK: The answer

    private mutating func readAnswer(_ bytes: Span<UInt8>, now: Int64, _ actions: inout [Action]) {
        let progress: NTRIPResponseHead.Progress
        do throws(NTRIPHeadError) {
            progress = try head.read(bytes)
        } catch {
            fail(.protocolError(reason: error.reason), now: now, &actions)
            return
        }
        guard case .complete(let answer, let consumed) = progress else { return }
        let rest = bytes.extracting(consumed...)
        switch answer {
        case .icy:
            health.revision = 1
            beginStreaming(chunked: false, now: now, &actions)
            readStream(rest, now: now, &actions)
        case .sourcetable:
            health.revision = 1
            beginSourcetable(chunked: false, declaredLength: nil, now: now, &actions)
            readSourcetable(rest, now: now, &actions)
        case .error(let line):
            // NTRIP 1.0 casters (BKG's 1.x) refuse with a bare line and close.
            let lower = ASCII.lowercased(line)
            let quoted = "the caster answered \"\(line)\""
            if lower.contains("password") || lower.contains("unauthori") {
                fail(.loginRefused, now: now, &actions, log: quoted)
            } else if lower.contains("mountpoint") || lower.contains("mount point") {
                fail(.noSuchMountPoint(offered: []), now: now, &actions, log: quoted)
            } else {
                fail(.protocolError(reason: quoted), now: now, &actions)
            }
        case .http(let answer):
            readHTTPAnswer(answer, rest: rest, now: now, &actions)
        }
    }

    private mutating func readHTTPAnswer(
        _ answer: NTRIPAnswer.HTTPAnswer, rest: Span<UInt8>, now: Int64, _ actions: inout [Action]
    ) {
        let statusLine = "\"\(answer.statusLine)\""
        switch answer.status {
        case 200:
            health.revision = 2
            if answer.contentType == "gnss/sourcetable" {
                beginSourcetable(chunked: answer.isChunked, declaredLength: answer.contentLength, now: now, &actions)
                readSourcetable(rest, now: now, &actions)
            } else if answer.contentType == "text/html" {
                // A web server, not a caster: its page would only be skipped as garbage for 30 s.
                fail(.protocolError(reason: "the server answered with a web page (text/html)"), now: now, &actions)
            } else {
                beginStreaming(chunked: answer.isChunked, now: now, &actions)
                readStream(rest, now: now, &actions)
            }
        case 401, 403:
            fail(.loginRefused, now: now, &actions, log: "the caster answered \(statusLine)")
        case 400, 404, 505:
            if requestRevision == .version2 {
                let why = "the caster answered \(statusLine) to an NTRIP 2.0 request"
                fallBackToVersion1(because: why, now: now, &actions)
            } else if answer.status == 404 {
                fail(.noSuchMountPoint(offered: []), now: now, &actions, log: "the caster answered \(statusLine)")
            } else {
                fail(.protocolError(reason: "the caster answered \(statusLine)"), now: now, &actions)
            }
        default:
            fail(.protocolError(reason: "the caster answered \(statusLine)"), now: now, &actions)
        }
    }

    // MARK: The sourcetable

    private mutating func beginSourcetable(chunked: Bool, declaredLength: Int?, now: Int64, _ actions: inout [Action]) {
        phase = .readingSourcetable
        deadline = now + Self.sourcetableTimeout
        // A chunked body's Content-Length means nothing (RFC 9112 §6.3); the chunks end it.
        sourcetable = NTRIPSourcetable(declaredLength: chunked ? nil : declaredLength, redaction: redaction)
        dechunker = chunked ? HTTPChunkedDecoder(streamWithMaximumChunkBytes: Self.maximumChunkBytes) : nil
    }

    private mutating func readSourcetable(_ bytes: Span<UInt8>, now: Int64, _ actions: inout [Action]) {
        if dechunker != nil {
            var table: [UInt8] = []
            do throws(HTTPRequestError) {
                _ = try dechunker!.decode(bytes, into: &table)
            } catch {
                fail(.protocolError(reason: Self.chunkingReason(error)), now: now, &actions)
                return
            }
            sourcetable.read(table.span)
            if dechunker!.isComplete { sourcetable.finish() }
        } else {
            sourcetable.read(bytes)
        }
        if sourcetable.isComplete { finishSourcetable(now: now, &actions) }
    }

    private mutating func finishSourcetable(now: Int64, _ actions: inout [Action]) {
        sourcetable.finish()
        let log = "the caster sent its sourcetable (\(sourcetable.mountPoints.count) mount points)"
        fail(.noSuchMountPoint(offered: sourcetable.mountPoints), now: now, &actions, log: log)
    }

    // MARK: The stream

    private mutating func beginStreaming(chunked: Bool, now: Int64, _ actions: inout [Action]) {
        phase = .streaming
        streamingSince = now
        lastByteAt = now
        dechunker = chunked ? HTTPChunkedDecoder(streamWithMaximumChunkBytes: Self.maximumChunkBytes) : nil
        change(to: .streaming, now: now, &actions)
        let framing = chunked ? ", chunked" : ""
        actions.append(
            .log(.info, "NTRIP: streaming from \(settings.source) (NTRIP \(health.revision ?? 2).0\(framing))"))
        sendGGAIfDue(now: now, &actions)
    }

    private mutating func readStream(_ bytes: Span<UInt8>, now: Int64, _ actions: inout [Action]) {
        guard !bytes.isEmpty else { return }
        lastByteAt = now
        guard dechunker != nil else {
            frame(bytes, now: now, &actions)
            return
        }
        var payload: [UInt8] = []
        var failure: HTTPRequestError?
        do throws(HTTPRequestError) {
            _ = try dechunker!.decode(bytes, into: &payload)
        } catch {
            failure = error
        }
        // Frames completed before a framing error are good: they go out first.
        frame(payload.span, now: now, &actions)
        if let failure {
            fail(.protocolError(reason: Self.chunkingReason(failure)), now: now, &actions)
        } else if dechunker!.isComplete {
            streamEnded("the caster ended the chunked stream", now: now, &actions)
        }
    }

    /// Frames stream bytes and delivers every valid frame.
    private mutating func frame(_ bytes: Span<UInt8>, now: Int64, _ actions: inout [Action]) {
        guard !bytes.isEmpty else { return }
        health.bytes += bytes.count
        let before = framer.statistics
        var frames: [RTCM3Frame] = []
        framer.append(bytes, into: &frames)
        health.damagedFrames += framer.statistics.damagedFrames - before.damagedFrames
        health.skippedBytes += framer.statistics.skippedBytes - before.skippedBytes
        guard !frames.isEmpty else { return }
        for frame in frames {
            if let station = frame.referenceStationID, station != health.referenceStationID {
                health.referenceStationID = station
                actions.append(.log(.info, "NTRIP: reference station \(station) (message \(frame.messageNumber))"))
            }
            health.lastMessageNumber = frame.messageNumber
            actions.append(.deliver(frame))
        }
        health.frames += frames.count
        health.lastFrameAt = now
        framesOnConnection += frames.count
        lastFrameOnConnection = now
        // A delivered frame proves the source works: the next failure waits the first delay again.
        consecutiveFailures = 0
    }

    /// The stream ended (closed, failed or a last chunk): no data if it never delivered a frame,
    /// else just a reconnect.
    private mutating func streamEnded(_ why: String, now: Int64, _ actions: inout [Action]) {
        if framesOnConnection == 0 {
            fail(.noData, now: now, &actions, log: "\(why) before any valid RTCM frame")
        } else {
            fail(nil, now: now, &actions, log: "\(why) after \(framesOnConnection) frames")
        }
    }

    // MARK: GGA

    /// When the next GGA may go out while streaming, or nil when none will (no fix, interval 0).
    private var nextGGAAt: Int64? {
        guard settings.ggaIntervalSeconds > 0, lastFix != nil else { return nil }
        guard let last = health.lastGGAAt else { return streamingSince }
        let spacing = last + Self.minimumGGASpacing
        guard ggaSentOnConnection else { return spacing }
        return max(spacing, last + Int64(settings.ggaIntervalSeconds) * Self.second)
    }

    private mutating func sendGGAIfDue(now: Int64, _ actions: inout [Action]) {
        guard phase == .streaming, let due = nextGGAAt, now >= due, let fix = lastFix,
            let sentence = GGAWriter.sentence(for: fix)
        else { return }
        actions.append(.send(sentence))
        health.ggaSent += 1
        health.lastGGAAt = now
        ggaSentOnConnection = true
    }

    // MARK: Failures and states

    /// Ends the connection after a failure: `.disconnect`, the failure's state (nil: `.connecting`,
    /// for a failure with no state of its own), a warning, and the next attempt after the backoff.
    private mutating func fail(
        _ state: CorrectionsState?, now: Int64, _ actions: inout [Action], log detail: String? = nil
    ) {
        actions.append(.disconnect)
        consecutiveFailures += 1
        let delay = Self.retryDelay(afterFailures: consecutiveFailures)
        phase = .waiting
        health.nextAttemptAt = now + delay
        if let state {
            change(to: state, now: now, &actions)
        } else if health.state == .streaming {
            change(to: .connecting, now: now, &actions)
        }
        let what = [detail, state?.description].compactMap { $0 }.joined(separator: ": ")
        actions.append(.log(.warning, "NTRIP: \(settings.source): \(what); next attempt in \(Self.seconds(delay))"))
    }

    /// The wait before the next attempt after `failures` consecutive failures: 1, 2, 4, 8, 16, 30,
    /// 30... seconds.
    public static func retryDelay(afterFailures failures: Int) -> Int64 {
        let exponent = min(max(failures - 1, 0), 16)
        return min(firstRetryDelay << Int64(exponent), maximumRetryDelay)
    }

    private mutating func change(to state: CorrectionsState, now: Int64, _ actions: inout [Action]) {
        guard state != health.state else { return }
        health.state = state
        health.since = now
        actions.append(.stateChanged(state))
    }

    // MARK: Text

    static func chunkingReason(_ error: HTTPRequestError) -> String {
        switch error {
        case .contentTooLarge: "a chunk of the stream is larger than \(maximumChunkBytes) bytes"
        default: "the chunked framing is broken: \(error.message)"
        }
    }

    /// `ns` as "N s".
    static func seconds(_ ns: Int64) -> String {
        "\(ns / second) s"
    }
}
