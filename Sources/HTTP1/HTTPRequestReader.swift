// Whole requests (head and body) from a connection's buffer, in order: the piece the server loop
// calls after every read.
//
// The reader is a small value-type state machine over the same buffer the connection owns. The
// caller passes the buffered bytes and the index where the current request starts; between calls
// it may append bytes and may drop bytes before `start` (shifting `start`), but it must not change
// the bytes from `start` on until the reader returns the request. The reader remembers how far it
// got (the parsed head, the chunked decoder's state), so a head or body that arrives one byte per
// read is not rescanned from its start each time.
//
// Content-Length bodies stay in the caller's buffer (`HTTPRequest.body(in:)` is a view); chunked
// bodies are decoded into an array the request owns.

/// A complete request: its head and body.
public struct HTTPRequest: Sendable, Equatable {
    /// The head; its ranges are indices into the bytes the request was read from.
    public var head: HTTPRequestHead
    /// Indices of the whole request (head and body as sent) in those bytes. The next request, if
    /// any, starts at `range.upperBound`.
    public var range: Range<Int>
    /// For a Content-Length body: its indices in the bytes; empty for no body and for chunked.
    var bodyRange: Range<Int>
    /// For a chunked body: the decoded bytes.
    var decodedBody: [UInt8]
    var isChunked: Bool

    /// The body: a view into `bytes` (Content-Length), or into the decoded chunked body.
    @_lifetime(copy bytes, borrow self)
    public func body(in bytes: Span<UInt8>) -> Span<UInt8> {
        if isChunked { return decodedBody.span }
        return bytes.extracting(bodyRange)
    }

    /// A copy of the body (for JSON decoders that take an array).
    public func bodyBytes(in bytes: Span<UInt8>) -> [UInt8] {
        if isChunked { return decodedBody }
        var copy: [UInt8] = []
        copy.reserveCapacity(bodyRange.count)
        for i in bodyRange { copy.append(bytes[i]) }
        return copy
    }

    /// Bytes in the (decoded) body.
    public var bodyCount: Int { isChunked ? decodedBody.count : bodyRange.count }

    /// Whether the server must stop reading requests on this connection after answering this
    /// one: the client asked to close (RFC 9112 §9.6: the server "MUST NOT process any further
    /// requests received on that connection"), or the connection becomes a WebSocket.
    public var endsConnection: Bool { !head.keepAlive || head.isWebSocketUpgrade }
}

/// Reads requests one after another from a connection's buffered bytes.
public struct HTTPRequestReader: Sendable {
    /// What `next(in:from:)` found.
    public enum Event: Sendable, Equatable {
        /// The request is incomplete; call again when more bytes have arrived. `sendContinue` is
        /// true once per request: when its head expects `100-continue` and the body has not all
        /// arrived, the server writes `HTTP/1.1 100 Continue` now (`HTTPResponseWriter.writeContinue`).
        case needMore(sendContinue: Bool)
        /// A complete request; the next one starts at `request.range.upperBound`.
        case request(HTTPRequest)
    }

    enum State: Sendable, Equatable {
        /// Waiting for a head; `scanned` bytes from `start` were already found incomplete.
        case head(scanned: Int)
        /// Head parsed (its `start` is 0 here): waiting until `total` bytes from `start` are there.
        case contentBody(HTTPRequestHead, total: Int)
        /// Head parsed: decoding a chunked body; `scanned` bytes from `start` are consumed.
        case chunkedBody(HTTPRequestHead, HTTPChunkedDecoder, scanned: Int)
    }

    var state = State.head(scanned: 0)
    var decodedBody: [UInt8] = []

    public init() {}

    /// True between requests: no part of a request has been seen. A connection idle in this state
    /// is closed quietly at its idle timeout; one stuck mid-request gets 408 (RFC 9110 §15.5.9).
    public var isBetweenRequests: Bool { state == .head(scanned: 0) }

    /// The head of the request whose body is still arriving (indices relative to its `start`,
    /// which is 0 here), e.g. to refuse it with 401 or 413 before the body arrives.
    public var pendingHead: HTTPRequestHead? {
        switch state {
        case .head: nil
        case .contentBody(let head, _), .chunkedBody(let head, _, _): head
        }
    }

    /// Reads the request starting at `bytes[start]`.
    ///
    /// - Throws: the rule the request broke. The reader is then spent: answer with the error's
    ///   status and close the connection.
    public mutating func next(in bytes: Span<UInt8>, from start: Int) throws(HTTPRequestError) -> Event {
        precondition(start >= 0 && start <= bytes.count, "start \(start) outside the \(bytes.count) bytes")
        let available = bytes.count - start
        switch state {
        case .head(let scanned):
            switch try HTTPRequestHead.parse(bytes, from: start, previousLength: scanned) {
            case .needMore:
                state = .head(scanned: available)
                return .needMore(sendContinue: false)
            case .complete(var head, let consumed):
                head.start = 0
                switch head.framing {
                case .none:
                    return finish(head, start: start, headLength: consumed, total: consumed)
                case .contentLength(let length):
                    state = .contentBody(head, total: consumed + length)
                case .chunked:
                    state = .chunkedBody(head, HTTPChunkedDecoder(), scanned: consumed)
                }
                let event = try next(in: bytes, from: start)
                if case .needMore = event { return .needMore(sendContinue: head.expectsContinue) }
                return event
            }
        case .contentBody(let head, let total):
            guard available >= total else { return .needMore(sendContinue: false) }
            return finish(head, start: start, headLength: head.length, total: total)
        case .chunkedBody(let head, var decoder, let scanned):
            let consumed = try decoder.decode(bytes.extracting((start + scanned)...), into: &decodedBody)
            guard decoder.isComplete else {
                state = .chunkedBody(head, decoder, scanned: scanned + consumed)
                return .needMore(sendContinue: false)
            }
            return finish(head, start: start, headLength: head.length, total: scanned + consumed)
        }
    }

    /// Hands out the request at `start` and resets for the next one.
    private mutating func finish(_ head: HTTPRequestHead, start: Int, headLength: Int, total: Int) -> Event {
        var head = head
        head.start = start
        let isChunked = head.framing == .chunked
        let body = isChunked ? decodedBody : []
        let request = HTTPRequest(
            head: head, range: start..<(start + total),
            bodyRange: isChunked ? head.end..<head.end : head.end..<(start + total),
            decodedBody: body, isChunked: isChunked)
        state = .head(scanned: 0)
        decodedBody = []
        return .request(request)
    }
}

/// Every request `HTTPRequestReader.readAll` could read from one buffer, in order.
public struct HTTPRequestBatch: Sendable, Equatable {
    /// The complete requests, to be answered in this order (RFC 9112 §9.3.2: "A server MUST send
    /// its responses to those requests in the same order that the requests were received").
    public var requests: [HTTPRequest] = []
    /// Index just past the last complete request: bytes before it may be dropped.
    public var end: Int
    /// The error that stopped reading: answer `requests` first, then this error, then close.
    public var error: HTTPRequestError?
    /// The last request ends the connection (`Connection: close`, or a WebSocket upgrade): the
    /// bytes after `end` are not requests to answer.
    public var endsConnection = false
    /// Write `100 Continue` now (see `HTTPRequestReader.Event.needMore`).
    public var sendContinue = false
}

extension HTTPRequestReader {
    /// The pipelining helper: reads every complete request in `bytes[start...]` in order, stopping
    /// at an incomplete request, at an error, or after a request that ends the connection.
    public mutating func readAll(in bytes: Span<UInt8>, from start: Int = 0) -> HTTPRequestBatch {
        var batch = HTTPRequestBatch(end: start)
        while true {
            do {
                switch try next(in: bytes, from: batch.end) {
                case .needMore(let sendContinue):
                    batch.sendContinue = sendContinue
                    return batch
                case .request(let request):
                    batch.requests.append(request)
                    batch.end = request.range.upperBound
                    if request.endsConnection {
                        batch.endsConnection = true
                        return batch
                    }
                }
            } catch {
                batch.error = error
                return batch
            }
        }
    }
}
