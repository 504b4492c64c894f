import ByteCoding

// A caster's answer, read incrementally up to where its payload starts.
//
// Casters answer in one of four shapes, and only the HTTP one has a header section:
//
//   ICY 200 OK                  NTRIP 1.0 stream (Icecast's status line); RTCM follows the line
//   SOURCETABLE 200 OK          NTRIP 1.0 sourcetable; header lines and the table follow
//   HTTP/1.1 200 OK ... (empty) NTRIP 2.0 (or a plain HTTP server): status, fields, empty line
//   ERROR - Bad Password        old NTRIP 1.0 casters' refusals, one line and then close
//
// After `ICY 200 OK` everything is stream, as RTKLIB's stream.c reads it: some casters send a few
// header lines and an empty line after it and some send nothing, and since header text never holds
// the preamble byte 0xD3, the RTCM framer skips such lines as garbage either way. After
// `SOURCETABLE 200 OK` the sourcetable reader skips the header lines the same way (gpsd's
// net_ntrip.c does too): it only looks for `STR;` and `ENDSOURCETABLE` lines.
//
// Limits: the head's bytes are counted as they come and refused past `maximumBytes`, so an endless
// header or a 10 MB line costs at most that much memory. A first line that cannot start any of the
// four shapes (binary RTCM from a raw TCP server, a banner) is refused at its first bytes.

/// What the caster's answer says, once its head is complete.
public enum NTRIPAnswer: Equatable, Sendable {
    /// `ICY 200 OK`: an NTRIP 1.0 stream; every later byte is stream.
    case icy
    /// `SOURCETABLE 200 OK`: an NTRIP 1.0 sourcetable follows.
    case sourcetable
    /// An HTTP status line and its fields.
    case http(HTTPAnswer)
    /// `ERROR - ...`: an NTRIP 1.0 refusal (the line as `Redaction.quoted` makes it).
    case error(line: String)

    /// The fields of an HTTP answer the client acts on.
    public struct HTTPAnswer: Equatable, Sendable {
        /// The status code, 100...999.
        public var status: Int
        /// The status line as `Redaction.quoted` makes it, for messages.
        public var statusLine: String
        /// `Transfer-Encoding` ends with `chunked`.
        public var isChunked: Bool
        /// `Content-Type`'s media type, lower-cased, without parameters (`gnss/sourcetable`).
        public var contentType: String?
        /// `Content-Length`, when it is a plain decimal number.
        public var contentLength: Int?

        public init(
            status: Int, statusLine: String, isChunked: Bool = false, contentType: String? = nil,
            contentLength: Int? = nil
        ) {
            self.status = status
            self.statusLine = statusLine
            self.isChunked = isChunked
            self.contentType = contentType
            self.contentLength = contentLength
        }
    }
}

/// Why a caster's answer cannot be an NTRIP head.
public struct NTRIPHeadError: Error, Equatable, Sendable {
    /// One sentence for the protocol-error state and the log.
    public let reason: String
}

/// Reads a caster's answer head from bytes in any chunking.
public struct NTRIPResponseHead: Sendable {
    /// What `read` found.
    public enum Progress: Equatable, Sendable {
        /// The head is incomplete: every byte was consumed.
        case needMore
        /// The head ended after `consumed` bytes of this call's input; the rest is payload.
        case complete(NTRIPAnswer, consumed: Int)
    }

    /// The most bytes of head accepted.
    public let maximumBytes: Int
    /// How the caster's text is quoted in answers and errors.
    let redaction: Redaction
    /// Bytes of head read so far.
    public private(set) var count = 0

    /// The line being read, without its line end; never longer than `maximumBytes`.
    private var line: [UInt8] = []
    private var http: NTRIPAnswer.HTTPAnswer?
    private var done = false

    /// Status lines start with one of these (or with a prefix of one, while they arrive).
    private static let statusStarts: [[UInt8]] = ["HTTP/", "ICY ", "SOURCETABLE ", "ERROR"].map { Array($0.utf8) }

    /// A reader that refuses heads over `maximumBytes` and quotes the caster's text through `redaction`.
    public init(maximumBytes: Int, redaction: Redaction = .none) {
        self.maximumBytes = maximumBytes
        self.redaction = redaction
    }

    /// Reads `bytes` as the next part of the head.
    /// - Throws: why the answer is not an NTRIP head; the reader is then spent.
    public mutating func read(_ bytes: Span<UInt8>) throws(NTRIPHeadError) -> Progress {
        precondition(!done, "the head is complete")
        for i in bytes.indices {
            let c = bytes[i]
            count += 1
            guard count <= maximumBytes else {
                throw NTRIPHeadError(reason: "the answer's head is longer than \(maximumBytes) bytes")
            }
            if c == ASCII.lf {
                if line.last == ASCII.cr { line.removeLast() }
                if let answer = try endLine() {
                    done = true
                    return .complete(answer, consumed: i + 1)
                }
                line.removeAll(keepingCapacity: true)
                continue
            }
            if http == nil {
                // The status line: ASCII text only, and only what can start a known answer.
                guard ASCII.isPrintable(c) || c == ASCII.tab || c == ASCII.cr else {
                    throw NTRIPHeadError(reason: "the answer starts with binary data, not a status line")
                }
                line.append(c)
                if line.count <= 12
                    && !Self.statusStarts.contains(where: { $0.starts(with: line) || line.starts(with: $0) })
                {
                    throw NTRIPHeadError(
                        reason: "the answer does not start with a status line: \"\(redaction.quoted(line))\"")
                }
            } else {
                // Field lines: RFC 9110 §5.5's field-value bytes (a CR only before the LF).
                guard c == ASCII.tab || c == ASCII.cr || !ASCII.isControl(c) else {
                    throw NTRIPHeadError(reason: "a header line of the answer holds a control character")
                }
                line.append(c)
            }
            if line.count >= 2 && line[line.count - 2] == ASCII.cr {
                throw NTRIPHeadError(reason: "a CR in the answer's head is not followed by LF")
            }
        }
        return .needMore
    }

    /// Handles the complete line in `line`; returns the answer when the head ends with it.
    private mutating func endLine() throws(NTRIPHeadError) -> NTRIPAnswer? {
        guard var answer = http else { return try statusLine() }
        if line.isEmpty { return .http(answer) }
        // `name: value`; lines that are not (obs-fold, junk) are ignored: the client only needs
        // three fields, and a caster's odd extra line is no reason to refuse its stream.
        guard let colon = line.firstIndex(of: ASCII.colon), colon > 0 else { return nil }
        let name = ASCII.lowercased(String(decoding: line[0..<colon], as: UTF8.self))
        let value = ASCII.trimmingBlanks(String(decoding: line[(colon + 1)...], as: UTF8.self))
        switch name {
        case "transfer-encoding":
            let last = value.split(separator: ",").last.map { ASCII.trimmingBlanks($0) } ?? ""
            answer.isChunked = ASCII.equalsIgnoringCase(last, "chunked")
        case "content-type":
            let mediaType = value.split(separator: ";", omittingEmptySubsequences: false).first ?? ""
            answer.contentType = ASCII.lowercased(ASCII.trimmingBlanks(mediaType))
        case "content-length":
            if !value.isEmpty, value.utf8.count <= 18, value.utf8.allSatisfy(ASCII.isDigit) {
                answer.contentLength = Int(value)
            }
        default:
            break
        }
        http = answer
        return nil
    }

    /// Classifies the first line.
    private mutating func statusLine() throws(NTRIPHeadError) -> NTRIPAnswer? {
        let text = redaction.quoted(line)
        if line.starts(with: Array("ICY ".utf8)) {
            guard line.starts(with: Array("ICY 200".utf8)) else {
                throw NTRIPHeadError(reason: "the caster answered \"\(text)\"")
            }
            return .icy
        }
        if line.starts(with: Array("SOURCETABLE ".utf8)) {
            guard line.starts(with: Array("SOURCETABLE 200".utf8)) else {
                throw NTRIPHeadError(reason: "the caster answered \"\(text)\"")
            }
            return .sourcetable
        }
        if line.starts(with: Array("ERROR".utf8)) { return .error(line: text) }
        // HTTP-version SP 3DIGIT [SP reason-phrase] (RFC 9112 §4); HTTP/1.0 and 1.1 only.
        guard line.count >= 12, line.starts(with: Array("HTTP/1.".utf8)), ASCII.isDigit(line[7]),
            line[8] == ASCII.space, ASCII.isDigit(line[9]), ASCII.isDigit(line[10]), ASCII.isDigit(line[11]),
            line.count == 12 || line[12] == ASCII.space
        else { throw NTRIPHeadError(reason: "the status line is malformed: \"\(text)\"") }
        let status = Int(line[9] - ASCII.zero) * 100 + Int(line[10] - ASCII.zero) * 10 + Int(line[11] - ASCII.zero)
        guard status >= 100 else { throw NTRIPHeadError(reason: "the status line is malformed: \"\(text)\"") }
        http = NTRIPAnswer.HTTPAnswer(status: status, statusLine: text)
        return nil
    }
}
