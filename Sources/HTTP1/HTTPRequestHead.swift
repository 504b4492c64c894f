import ByteCoding

// The HTTP/1.1 request-head parser, after picohttpparser's `phr_parse_request`.
//
// Stateless and restartable: `parse` reads the bytes of a connection's read buffer and either
// returns `.needMore` (nothing consumed; call again with the same bytes plus whatever arrived),
// returns the parsed head and how many bytes it took, or throws the rule the bytes broke. It never
// looks at a byte past `HTTPLimits.maxHeadBytes`, so a prefix of the input either needs more,
// completes the same way, or fails with the same error as the whole input (the fuzzer checks
// this).
//
// Zero-copy: the head stores offsets (UInt16, relative to the request's first byte) of the
// method, target, path, query and each field's name and value, in an inline table of
// `HTTPLimits.maxFieldCount` entries; no heap allocation. The head is a plain value that outlives
// the parse (the connection keeps it while the body arrives); its accessors take the bytes back
// (`head.path(in: buffer)`), which must hold the request at the same indices as when it was parsed.
//
// Line ends: CRLF, or a bare LF (RFC 9112 §2.2: "a recipient MAY recognize a single LF as a line
// terminator and ignore any preceding CR"), as picohttpparser, nginx and Node accept. A bare CR is
// an error. The risk bare LF carries, request smuggling through a proxy that frames differently,
// needs a proxy in front; the bridge listens on loopback for local clients.
//
// Semantic checks that need the whole head (Host, Content-Length, Transfer-Encoding, Expect,
// Connection) run once the empty line has arrived.

/// A parsed request head: method, target, version, field lines and the framing the server needs.
public struct HTTPRequestHead: Sendable {
    /// What `parse` found in the bytes it was given.
    public enum ParseResult: Sendable, Equatable {
        /// The head is incomplete: nothing was consumed; call again when more bytes arrive.
        case needMore
        /// The head ends `consumed` bytes after `start` (its empty line included). A body, if
        /// any, follows (see `framing`).
        case complete(HTTPRequestHead, consumed: Int)
    }

    /// One field line: name and value (without surrounding whitespace) as offsets from `start`.
    struct Field: Sendable, Equatable {
        var nameStart: UInt16
        var nameEnd: UInt16
        var valueStart: UInt16
        var valueEnd: UInt16

        static let empty = Field(nameStart: 0, nameEnd: 0, valueStart: 0, valueEnd: 0)
    }

    /// Index in the parsed bytes of the request's first byte (any empty lines before the request
    /// line included). All ranges the accessors return are indices into the same bytes.
    public internal(set) var start: Int
    /// Bytes of the head, from `start` through the empty line that ends it.
    public private(set) var length: Int
    /// The method (`.other` for a token we do not know; its bytes are `method(in:)`).
    public private(set) var method: HTTPMethod
    /// `HTTP/1.0` or `HTTP/1.1` (a higher 1.x minor version parses as 1.1).
    public private(set) var version: HTTPVersion
    /// Which of the four request-target forms the request uses.
    public private(set) var targetForm: HTTPTargetForm
    /// How the body is delimited: none, `Content-Length`, or chunked.
    public private(set) var framing: HTTPBodyFraming
    /// Whether the connection stays open after the response: HTTP/1.1 unless `Connection: close`;
    /// HTTP/1.0 only with `Connection: keep-alive` (RFC 9112 §9.3).
    public private(set) var keepAlive: Bool
    /// An HTTP/1.1 request with `Expect: 100-continue` (ignored in HTTP/1.0, RFC 9110 §10.1.1).
    public private(set) var expectsContinue: Bool
    /// A WebSocket opening handshake: `GET`, HTTP/1.1, `Connection` lists `upgrade` and `Upgrade`
    /// lists `websocket` (RFC 6455 §4.2.1; the WebSocket target checks the rest).
    public private(set) var isWebSocketUpgrade: Bool
    /// Number of field lines.
    public private(set) var fieldCount: Int

    // Offsets from `start`.
    var methodStart: UInt16
    var methodEnd: UInt16
    var targetStart: UInt16
    var targetEnd: UInt16
    var pathStart: UInt16
    var pathEnd: UInt16
    /// First byte after `?`, when `hasQuery`.
    var queryStart: UInt16
    var hasQuery: Bool
    var fields: InlineArray<64, Field>  // HTTPLimits.maxFieldCount

    /// The bytes of a body declared by `Content-Length` (0 without one, and for chunked bodies).
    public var contentLength: Int {
        if case .contentLength(let length) = framing { return length }
        return 0
    }

    /// Index in the parsed bytes just past the head: where the body or the next request starts.
    public var end: Int { start + length }

    /// Parses the request head at `bytes[start...]`.
    ///
    /// - Parameters:
    ///   - bytes: the connection's buffered input; only `bytes[start...]` is read.
    ///   - start: index of the request's first byte.
    ///   - previousLength: optional, picohttpparser's `last_len`: how many bytes from `start` an
    ///     earlier call on the same (since grown) input returned `.needMore` for. The call then
    ///     only looks for the end of the head in the new bytes and returns `.needMore` at once if
    ///     it has not arrived, so a client sending one byte at a time cannot make the server
    ///     rescan the whole head on every read. Errors in the new bytes are then found when the
    ///     head is complete (or at the size limit) instead of at once. 0 scans everything.
    /// - Returns: `.needMore`, or `.complete(head, consumed:)`.
    /// - Throws: the first rule the bytes break; `error.status` is the response status.
    public static func parse(
        _ bytes: Span<UInt8>, from start: Int = 0, previousLength: Int = 0
    ) throws(HTTPRequestError) -> ParseResult {
        precondition(start >= 0 && start <= bytes.count, "start \(start) outside the \(bytes.count) bytes")
        let available = bytes.count - start
        // Never look past the limit: a prefix of the input then behaves like the whole input.
        let end = start + min(available, HTTPLimits.maxHeadBytes)
        if previousLength > 0, available < HTTPLimits.maxHeadBytes,
            !containsEmptyLine(bytes, from: start + max(0, min(previousLength, available) - 3), to: end)
        {
            return .needMore
        }

        var i = start

        // RFC 9112 §2.2: "a server that is expecting to receive and parse a request-line SHOULD
        // ignore at least one empty line (CRLF) received prior to the request-line".
        while true {
            guard i < end else { return try exhausted(at: i, start) }
            let c = bytes[i]
            if c == ASCII.cr {
                guard i + 1 < end else { return try exhausted(at: i + 1, start) }
                guard bytes[i + 1] == ASCII.lf else { throw .bareCarriageReturn }
                i += 2
            } else if c == ASCII.lf {
                i += 1
            } else {
                break
            }
        }

        // method = token, then exactly one SP (RFC 9112 §3).
        let methodStart = i
        while true {
            guard i < end else { return try exhausted(at: i, start) }
            let c = bytes[i]
            if c == ASCII.space { break }
            guard ASCII.isTokenChar(c) else { throw .methodNotToken }
            i += 1
            guard i - methodStart <= HTTPLimits.maxMethodLength else { throw .methodTooLong }
        }
        guard i > methodStart else { throw .methodNotToken }
        let methodEnd = i
        let method = HTTPMethod(bytes, methodStart..<methodEnd)
        i += 1

        // request-target, then exactly one SP.
        let targetStart = i
        var questionMark = -1
        while true {
            guard i < end else { return try exhausted(at: i, start) }
            let c = bytes[i]
            if c == ASCII.space { break }
            guard ASCII.isTargetChar(c) else {
                // "GET /\r\n" is an HTTP/0.9 request line: no version.
                throw c == ASCII.cr || c == ASCII.lf ? .invalidRequestLine : .targetCharacterNotAllowed
            }
            if c == ASCII.question && questionMark < 0 { questionMark = i }
            i += 1
            guard i - targetStart <= HTTPLimits.maxTargetLength else { throw .targetTooLong }
        }
        guard i > targetStart else { throw .invalidRequestLine }  // two spaces after the method
        let targetEnd = i
        let target = try classifyTarget(bytes, targetStart..<targetEnd, questionMark: questionMark, method: method)
        i += 1

        // HTTP-version = "HTTP/" DIGIT "." DIGIT (RFC 9112 §2.3), then the line end.
        let versionStart = i
        while i < versionStart + 8 {
            guard i < end else { return try exhausted(at: i, start) }
            let c = bytes[i]
            let ok: Bool
            switch i - versionStart {
            case 0: ok = c == UInt8(ascii: "H")
            case 1, 2: ok = c == UInt8(ascii: "T")
            case 3: ok = c == UInt8(ascii: "P")
            case 4: ok = c == ASCII.slash
            case 6: ok = c == ASCII.dot
            default: ok = ASCII.isDigit(c)
            }
            guard ok else { throw .malformedVersion }
            i += 1
        }
        guard bytes[versionStart + 5] == UInt8(ascii: "1") else { throw .unsupportedVersion }
        let version: HTTPVersion = bytes[versionStart + 7] == UInt8(ascii: "0") ? .http1_0 : .http1_1
        guard i < end else { return try exhausted(at: i, start) }
        if bytes[i] == ASCII.cr {
            guard i + 1 < end else { return try exhausted(at: i + 1, start) }
            guard bytes[i + 1] == ASCII.lf else { throw .bareCarriageReturn }
            i += 2
        } else if bytes[i] == ASCII.lf {
            i += 1
        } else {
            throw ASCII.isDigit(bytes[i]) ? .malformedVersion : .invalidRequestLine
        }

        // field-line = field-name ":" OWS field-value OWS (RFC 9112 §5), until an empty line.
        var fields = InlineArray<64, Field>(repeating: .empty)
        let fieldLimit = min(fields.count, HTTPLimits.maxFieldCount)
        var fieldCount = 0
        while true {
            guard i < end else { return try exhausted(at: i, start) }
            let c = bytes[i]
            if c == ASCII.cr {
                guard i + 1 < end else { return try exhausted(at: i + 1, start) }
                guard bytes[i + 1] == ASCII.lf else { throw .bareCarriageReturn }
                i += 2
                break
            }
            if c == ASCII.lf {
                i += 1
                break
            }
            if ASCII.isBlank(c) {
                // A line starting with whitespace continues the previous field (obs-fold).
                throw fieldCount == 0 ? .whitespaceAfterRequestLine : .obsoleteLineFolding
            }
            guard fieldCount < fieldLimit else { throw .tooManyFields }

            let nameStart = i
            while true {
                guard i < end else { return try exhausted(at: i, start) }
                let c = bytes[i]
                if c == ASCII.colon { break }
                if ASCII.isTokenChar(c) {
                    i += 1
                    continue
                }
                if ASCII.isBlank(c) { throw .whitespaceBeforeColon }
                if c == ASCII.cr || c == ASCII.lf { throw .missingColon }
                throw .fieldNameNotToken
            }
            guard i > nameStart else { throw .fieldNameNotToken }
            let nameEnd = i
            i += 1

            var valueStart = i
            var valueEnd = i
            var sawValue = false
            while true {
                guard i < end else { return try exhausted(at: i, start) }
                let c = bytes[i]
                if c == ASCII.cr {
                    guard i + 1 < end else { return try exhausted(at: i + 1, start) }
                    guard bytes[i + 1] == ASCII.lf else { throw .bareCarriageReturn }
                    i += 2
                    break
                }
                if c == ASCII.lf {
                    i += 1
                    break
                }
                guard ASCII.isFieldValueChar(c) else { throw .fieldValueCharacterNotAllowed }
                if !ASCII.isBlank(c) {
                    if !sawValue {
                        valueStart = i
                        sawValue = true
                    }
                    valueEnd = i + 1
                }
                i += 1
            }
            if !sawValue { valueEnd = valueStart }
            fields[fieldCount] = Field(
                nameStart: offset(nameStart, start), nameEnd: offset(nameEnd, start),
                valueStart: offset(valueStart, start), valueEnd: offset(valueEnd, start))
            fieldCount += 1
        }

        var head = HTTPRequestHead(
            start: start, length: i - start, method: method, version: version, targetForm: target.form,
            framing: .none, keepAlive: version == .http1_1, expectsContinue: false, isWebSocketUpgrade: false,
            fieldCount: fieldCount,
            methodStart: offset(methodStart, start), methodEnd: offset(methodEnd, start),
            targetStart: offset(targetStart, start), targetEnd: offset(targetEnd, start),
            pathStart: offset(target.path.lowerBound, start), pathEnd: offset(target.path.upperBound, start),
            queryStart: offset(target.query?.lowerBound ?? targetEnd, start), hasQuery: target.query != nil,
            fields: fields)
        try head.interpretFields(bytes)
        return .complete(head, consumed: i - start)
    }

    /// The input ran out at index `i` (`i == end` of the scan): `.needMore`, unless the head
    /// already spans `maxHeadBytes` bytes and so cannot end in time.
    private static func exhausted(at i: Int, _ start: Int) throws(HTTPRequestError) -> ParseResult {
        if i - start >= HTTPLimits.maxHeadBytes { throw .headerSectionTooLarge }
        return .needMore
    }

    @inline(__always)
    private static func offset(_ index: Int, _ start: Int) -> UInt16 {
        UInt16(truncatingIfNeeded: index - start)  // < maxHeadBytes (8 KiB), see HTTPLimits
    }

    /// Whether `bytes[from..<to]` holds LF LF or LF CR LF: a candidate end of a head.
    private static func containsEmptyLine(_ bytes: Span<UInt8>, from: Int, to: Int) -> Bool {
        var i = from
        while i + 1 < to {
            if bytes[i] == ASCII.lf {
                if bytes[i + 1] == ASCII.lf { return true }
                if bytes[i + 1] == ASCII.cr, i + 2 < to, bytes[i + 2] == ASCII.lf { return true }
            }
            i += 1
        }
        return false
    }

    /// Sorts the target into its form (RFC 9112 §3.2) and finds its path and query.
    private static func classifyTarget(
        _ bytes: Span<UInt8>, _ target: Range<Int>, questionMark: Int, method: HTTPMethod
    ) throws(HTTPRequestError) -> (form: HTTPTargetForm, path: Range<Int>, query: Range<Int>?) {
        let query: Range<Int>? = questionMark >= 0 ? (questionMark + 1)..<target.upperBound : nil
        let pathEnd = questionMark >= 0 ? questionMark : target.upperBound
        let first = bytes[target.lowerBound]
        if first == ASCII.slash {
            return (.origin, target.lowerBound..<pathEnd, query)
        }
        if first == ASCII.star && target.count == 1 {
            // §3.2.4: "The asterisk-form of request-target is only used for a server-wide OPTIONS".
            guard method == .options else { throw .invalidTargetForm }
            return (.asterisk, target, nil)
        }
        if method == .connect {
            // §3.2.3: authority-form is host ":" port, "only used for CONNECT requests".
            for i in target where bytes[i] == ASCII.slash || bytes[i] == ASCII.question || bytes[i] == UInt8(ascii: "@")
            {
                throw .invalidTargetForm
            }
            return (.authority, target.upperBound..<target.upperBound, nil)
        }
        // §3.2.2 absolute-form: "http" or "https" "://" authority path-abempty [ "?" query ].
        var i = target.lowerBound
        while i < target.upperBound, ASCII.isLetter(bytes[i]) { i += 1 }
        let scheme = target.lowerBound..<i
        guard ASCII.equalsIgnoringCase(bytes, scheme, "http") || ASCII.equalsIgnoringCase(bytes, scheme, "https"),
            i + 3 <= target.upperBound, bytes[i] == ASCII.colon, bytes[i + 1] == ASCII.slash,
            bytes[i + 2] == ASCII.slash
        else { throw .invalidTargetForm }
        i += 3
        let authorityStart = i
        while i < pathEnd, bytes[i] != ASCII.slash { i += 1 }
        guard i > authorityStart else { throw .invalidTargetForm }  // "http:///path": no host
        return (.absolute, i..<pathEnd, query)
    }

    /// The checks that need every field: Host, framing, persistence, expectations, upgrade.
    private mutating func interpretFields(_ bytes: Span<UInt8>) throws(HTTPRequestError) {
        var hostCount = 0
        var contentLength = -1  // -1: none seen
        var contentLengthInvalid = false
        var contentLengthConflict = false
        var transferEncodingSeen = false
        var codings = 0
        var chunkedCount = 0
        var lastIsChunked = false
        var connectionClose = false
        var connectionKeepAlive = false
        var connectionUpgrade = false
        var upgradeWebSocket = false
        var expectContinue = false
        var expectOther = false

        for index in 0..<fieldCount {
            let name = nameRange(index)
            let value = valueRange(index)
            switch name.count {
            case 4 where ASCII.equalsIgnoringCase(bytes, name, "host"):
                hostCount += 1
            case 14 where ASCII.equalsIgnoringCase(bytes, name, "content-length"):
                // RFC 9110 §8.6: 1*DIGIT; a list of identical values ("42, 42") MAY be accepted.
                var cursor = value.lowerBound
                var elements = 0
                while let element = nextListElement(bytes, &cursor, value.upperBound) {
                    elements += 1
                    guard let n = Self.decimal(bytes, element) else {
                        contentLengthInvalid = true
                        break
                    }
                    if contentLength >= 0 && contentLength != n { contentLengthConflict = true }
                    contentLength = n
                }
                if elements == 0 { contentLengthInvalid = true }
            case 17 where ASCII.equalsIgnoringCase(bytes, name, "transfer-encoding"):
                transferEncodingSeen = true
                var cursor = value.lowerBound
                while let element = nextListElement(bytes, &cursor, value.upperBound) {
                    codings += 1
                    lastIsChunked = ASCII.equalsIgnoringCase(bytes, element, "chunked")
                    if lastIsChunked { chunkedCount += 1 }
                }
            case 10 where ASCII.equalsIgnoringCase(bytes, name, "connection"):
                var cursor = value.lowerBound
                while let option = nextListElement(bytes, &cursor, value.upperBound) {
                    if ASCII.equalsIgnoringCase(bytes, option, "close") {
                        connectionClose = true
                    } else if ASCII.equalsIgnoringCase(bytes, option, "keep-alive") {
                        connectionKeepAlive = true
                    } else if ASCII.equalsIgnoringCase(bytes, option, "upgrade") {
                        connectionUpgrade = true
                    }
                }
            case 7 where ASCII.equalsIgnoringCase(bytes, name, "upgrade"):
                var cursor = value.lowerBound
                while let proto = nextListElement(bytes, &cursor, value.upperBound) {
                    if ASCII.equalsIgnoringCase(bytes, proto, "websocket") { upgradeWebSocket = true }
                }
            case 6 where ASCII.equalsIgnoringCase(bytes, name, "expect"):
                var cursor = value.lowerBound
                while let expectation = nextListElement(bytes, &cursor, value.upperBound) {
                    if ASCII.equalsIgnoringCase(bytes, expectation, "100-continue") {
                        expectContinue = true
                    } else {
                        expectOther = true
                    }
                }
            default:
                break
            }
        }

        // RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any
        // HTTP/1.1 request message that lacks a Host header field and to any request message
        // that contains more than one Host header field line".
        guard hostCount <= 1 else { throw .duplicateHost }
        guard hostCount == 1 || version == .http1_0 else { throw .missingHost }

        guard !contentLengthInvalid else { throw .invalidContentLength }
        guard !contentLengthConflict else { throw .conflictingContentLength }

        if transferEncodingSeen {
            // RFC 9112 §6.1: "A server or client that receives an HTTP/1.0 message containing a
            // Transfer-Encoding header field MUST treat the message as if the framing is faulty".
            guard version == .http1_1 else { throw .transferEncodingInHTTP10 }
            // §6.3 item 3: both present "ought to be handled as an error" (request smuggling).
            guard contentLength < 0 else { throw .contentLengthWithTransferEncoding }
            // §6.3 item 4: chunked not final → 400; §6.1: a coding we do not know → 501.
            guard codings > 0, lastIsChunked else { throw .chunkedNotFinal }
            guard chunkedCount == codings else { throw .unsupportedTransferCoding }
            // §6.1: "A sender MUST NOT apply the chunked transfer coding more than once".
            guard chunkedCount == 1 else { throw .chunkedNotFinal }
            framing = .chunked
        } else if contentLength >= 0 {
            guard contentLength <= HTTPLimits.maxBodyBytes else { throw .contentTooLarge }
            framing = .contentLength(contentLength)
        }

        // RFC 9110 §10.1.1: "A server that receives a 100-continue expectation in an HTTP/1.0
        // request MUST ignore that expectation"; other expectations MAY get 417.
        if version == .http1_1 {
            guard !expectOther else { throw .unsupportedExpectation }
            expectsContinue = expectContinue
        }

        // RFC 9112 §9.3: HTTP/1.1 persists unless "close"; HTTP/1.0 only with "keep-alive".
        keepAlive = !connectionClose && (version == .http1_1 || connectionKeepAlive)
        isWebSocketUpgrade = method == .get && version == .http1_1 && connectionUpgrade && upgradeWebSocket
    }

    /// `1*DIGIT` as an Int, saturating at `Int.max` (any such value is over the body limit).
    private static func decimal(_ bytes: Span<UInt8>, _ range: Range<Int>) -> Int? {
        var value = 0
        for i in range {
            let c = bytes[i]
            guard ASCII.isDigit(c) else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int(c &- UInt8(ascii: "0")))
            value = o1 || o2 ? Int.max : sum
        }
        return value
    }

    // MARK: Ranges (indices into the parsed bytes)

    /// Index range of field `index`'s name.
    func nameRange(_ index: Int) -> Range<Int> {
        let field = fields[index]
        return (start + Int(field.nameStart))..<(start + Int(field.nameEnd))
    }

    /// Index range of field `index`'s value, without leading and trailing whitespace.
    func valueRange(_ index: Int) -> Range<Int> {
        let field = fields[index]
        return (start + Int(field.valueStart))..<(start + Int(field.valueEnd))
    }

    /// Index range of the method.
    public var methodRange: Range<Int> { (start + Int(methodStart))..<(start + Int(methodEnd)) }
    /// Index range of the whole request-target.
    public var targetRange: Range<Int> { (start + Int(targetStart))..<(start + Int(targetEnd)) }
    /// Index range of the path (still percent-encoded); see `HTTPTargetForm` for each form.
    public var pathRange: Range<Int> { (start + Int(pathStart))..<(start + Int(pathEnd)) }
    /// Index range of the query (after `?`, still encoded), or nil without a `?`.
    public var queryRange: Range<Int>? {
        hasQuery ? (start + Int(queryStart))..<(start + Int(targetEnd)) : nil
    }
    /// Index range of the whole head.
    public var range: Range<Int> { start..<(start + length) }
}

extension HTTPRequestHead: Equatable {
    public static func == (lhs: HTTPRequestHead, rhs: HTTPRequestHead) -> Bool {
        guard lhs.start == rhs.start, lhs.length == rhs.length, lhs.method == rhs.method,
            lhs.version == rhs.version, lhs.targetForm == rhs.targetForm, lhs.framing == rhs.framing,
            lhs.keepAlive == rhs.keepAlive, lhs.expectsContinue == rhs.expectsContinue,
            lhs.isWebSocketUpgrade == rhs.isWebSocketUpgrade, lhs.fieldCount == rhs.fieldCount,
            lhs.methodStart == rhs.methodStart, lhs.methodEnd == rhs.methodEnd,
            lhs.targetStart == rhs.targetStart, lhs.targetEnd == rhs.targetEnd,
            lhs.pathStart == rhs.pathStart, lhs.pathEnd == rhs.pathEnd,
            lhs.queryStart == rhs.queryStart, lhs.hasQuery == rhs.hasQuery
        else { return false }
        for index in 0..<lhs.fieldCount where lhs.fields[index] != rhs.fields[index] { return false }
        return true
    }
}

/// The next non-empty element of the comma-separated list in `bytes[cursor..<end]` (RFC 9110
/// §5.6.1), trimmed of whitespace, advancing `cursor` past it; nil at the end. Empty elements
/// (`a,,b`, a leading or trailing comma) are skipped, as the RFC asks recipients to accept them.
/// Quoted strings are not special: none of the fields we read as lists carries one.
func nextListElement(_ bytes: Span<UInt8>, _ cursor: inout Int, _ end: Int) -> Range<Int>? {
    while cursor < end {
        var i = cursor
        while i < end && bytes[i] != ASCII.comma { i += 1 }
        let element = ASCII.trimmingBlanks(bytes, cursor..<i)
        cursor = i + 1
        if !element.isEmpty { return element }
    }
    return nil
}
