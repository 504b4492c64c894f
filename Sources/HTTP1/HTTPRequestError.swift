/// Why a request was rejected. Each case is named after the rule the request broke and maps to
/// the status the server answers with (`status`).
///
/// Every one of these ends the connection: the server writes the error response with
/// `Connection: close` and closes, because after a framing error it cannot know where the next
/// request would start (RFC 9112 §9.6, §11.2).
public enum HTTPRequestError: Error, Equatable, Hashable, Sendable, CaseIterable {
    // MARK: Request line (RFC 9112 §3)

    /// The method is empty or holds a byte that is not a `tchar` (RFC 9110 §9.1: `method = token`).
    case methodNotToken
    /// The method is longer than `HTTPLimits.maxMethodLength`; RFC 9112 §3: "A server that receives
    /// a method longer than any that it implements SHOULD respond with a 501".
    case methodTooLong
    /// The request line is not `method SP request-target SP HTTP-version` followed by the line end
    /// (two spaces, a tab, trailing whitespace, an HTTP/0.9 line without a version).
    case invalidRequestLine
    /// A byte that may not appear in a request-target: a control, DEL, non-ASCII or `#`.
    case targetCharacterNotAllowed
    /// The request-target is in none of the four forms of RFC 9112 §3.2, or in a form the method
    /// may not use (`*` only with OPTIONS, authority-form only with CONNECT).
    case invalidTargetForm
    /// The request-target is longer than `HTTPLimits.maxTargetLength` (RFC 9112 §3: "A server that
    /// receives a request-target longer than any URI it wishes to parse MUST respond with a 414").
    case targetTooLong
    /// The version is not `HTTP/` DIGIT `.` DIGIT (RFC 9112 §2.3; `HTTP` is case-sensitive).
    case malformedVersion
    /// A well-formed version whose major number is not 1 (HTTP/0.9, HTTP/2.0 over this syntax).
    case unsupportedVersion

    // MARK: Field lines (RFC 9112 §5, RFC 9110 §5)

    /// A CR not followed by LF (RFC 9112 §2.2: "a recipient of such a bare CR MUST consider that
    /// element to be invalid").
    case bareCarriageReturn
    /// Whitespace between the request line and the first field line (RFC 9112 §2.2).
    case whitespaceAfterRequestLine
    /// A field name that is empty or holds a byte that is not a `tchar` (RFC 9110 §5.1).
    case fieldNameNotToken
    /// Whitespace between a field name and the colon (RFC 9112 §5.1: "A server MUST reject, with a
    /// response status code of 400 (Bad Request), any received request message that contains
    /// whitespace between a header field name and colon").
    case whitespaceBeforeColon
    /// A field line without a colon.
    case missingColon
    /// A field line continued on the next line with leading whitespace (obs-fold, RFC 9112 §5.2:
    /// the server "MUST either reject the message by sending a 400 (Bad Request)" or unfold it; we
    /// reject).
    case obsoleteLineFolding
    /// NUL, another control byte (HTAB excepted) or DEL in a field value (RFC 9110 §5.5).
    case fieldValueCharacterNotAllowed
    /// More than `HTTPLimits.maxFieldCount` field lines (RFC 6585 §5, 431).
    case tooManyFields
    /// The head (request line, fields and the empty line) is longer than
    /// `HTTPLimits.maxHeadBytes`, or the trailer section longer than `HTTPLimits.maxTrailerBytes`.
    case headerSectionTooLarge

    // MARK: Semantics of the head (RFC 9112 §3.2, §6, §9; RFC 9110 §10.1.1)

    /// An HTTP/1.1 request without `Host` (RFC 9112 §3.2: "A server MUST respond with a 400 (Bad
    /// Request) status code to any HTTP/1.1 request message that lacks a Host header field").
    case missingHost
    /// More than one `Host` field line (RFC 9112 §3.2, same sentence).
    case duplicateHost
    /// A `Content-Length` that is not `1*DIGIT` (or a list of them), RFC 9110 §8.6.
    case invalidContentLength
    /// `Content-Length` values that differ (RFC 9110 §8.6, RFC 9112 §6.3 item 5).
    case conflictingContentLength
    /// Both `Transfer-Encoding` and `Content-Length` (RFC 9112 §6.3 item 3: "ought to be handled
    /// as an error"; a smuggling attempt).
    case contentLengthWithTransferEncoding
    /// `Transfer-Encoding` whose final coding is not `chunked`, or `chunked` applied twice
    /// (RFC 9112 §6.3 item 4: "the server MUST respond with the 400 (Bad Request) status code").
    case chunkedNotFinal
    /// A transfer coding other than `chunked` (RFC 9112 §6.1: "A server that receives a request
    /// message with a transfer coding it does not understand SHOULD respond with 501").
    case unsupportedTransferCoding
    /// `Transfer-Encoding` in an HTTP/1.0 request (RFC 9112 §6.1: the framing "MUST" be treated
    /// as faulty).
    case transferEncodingInHTTP10
    /// An `Expect` member other than `100-continue` (RFC 9110 §10.1.1: the server "MAY respond
    /// with a 417 (Expectation Failed)").
    case unsupportedExpectation
    /// The declared or decoded body is longer than `HTTPLimits.maxBodyBytes` (RFC 9110 §15.5.14).
    case contentTooLarge

    // MARK: Chunked body (RFC 9112 §7.1)

    /// A chunk-size line that does not start with a hexadecimal digit, or holds a forbidden byte.
    case invalidChunkSize
    /// A chunk-size line (size and extensions) longer than `HTTPLimits.maxChunkLineBytes`
    /// (RFC 9112 §7.1.1: "A server ought to limit the total length of chunk extensions").
    case chunkLineTooLong
    /// Chunk data not followed by CRLF.
    case chunkDataNotTerminated

    /// The status code the server answers this error with.
    public var status: HTTPStatus {
        switch self {
        case .methodTooLong, .unsupportedTransferCoding: .notImplemented
        case .targetTooLong: .uriTooLong
        case .unsupportedVersion: .httpVersionNotSupported
        case .tooManyFields, .headerSectionTooLarge: .requestHeaderFieldsTooLarge
        case .contentTooLarge: .contentTooLarge
        case .unsupportedExpectation: .expectationFailed
        case .methodNotToken, .invalidRequestLine, .targetCharacterNotAllowed, .invalidTargetForm,
            .malformedVersion, .bareCarriageReturn, .whitespaceAfterRequestLine, .fieldNameNotToken,
            .whitespaceBeforeColon, .missingColon, .obsoleteLineFolding, .fieldValueCharacterNotAllowed,
            .missingHost, .duplicateHost, .invalidContentLength, .conflictingContentLength,
            .contentLengthWithTransferEncoding, .chunkedNotFinal, .transferEncodingInHTTP10,
            .invalidChunkSize, .chunkLineTooLong, .chunkDataNotTerminated:
            .badRequest
        }
    }

    /// A short English sentence for the error body and the log, naming the broken rule.
    public var message: String {
        switch self {
        case .methodNotToken: "the request method is not a token"
        case .methodTooLong: "the request method is longer than any this server implements"
        case .invalidRequestLine: "the request line is not 'method SP target SP HTTP-version'"
        case .targetCharacterNotAllowed: "the request target holds a byte that is not allowed"
        case .invalidTargetForm: "the request target is not in a form this method may use"
        case .targetTooLong: "the request target is too long"
        case .malformedVersion: "the HTTP version is malformed"
        case .unsupportedVersion: "only HTTP/1.0 and HTTP/1.1 are supported"
        case .bareCarriageReturn: "a CR is not followed by LF"
        case .whitespaceAfterRequestLine: "whitespace between the request line and the first header field"
        case .fieldNameNotToken: "a header field name is not a token"
        case .whitespaceBeforeColon: "whitespace between a header field name and the colon"
        case .missingColon: "a header field line has no colon"
        case .obsoleteLineFolding: "a header field is folded over several lines (obs-fold)"
        case .fieldValueCharacterNotAllowed: "a header field value holds a control character"
        case .tooManyFields: "too many header fields"
        case .headerSectionTooLarge: "the header section is too large"
        case .missingHost: "an HTTP/1.1 request must have a Host header field"
        case .duplicateHost: "more than one Host header field"
        case .invalidContentLength: "Content-Length is not a decimal number"
        case .conflictingContentLength: "Content-Length values differ"
        case .contentLengthWithTransferEncoding: "both Content-Length and Transfer-Encoding are present"
        case .chunkedNotFinal: "Transfer-Encoding does not end with a single chunked"
        case .unsupportedTransferCoding: "only the chunked transfer coding is supported"
        case .transferEncodingInHTTP10: "Transfer-Encoding is not allowed in an HTTP/1.0 request"
        case .unsupportedExpectation: "only the 100-continue expectation is supported"
        case .contentTooLarge: "the request body is too large"
        case .invalidChunkSize: "a chunk size is not a hexadecimal number"
        case .chunkLineTooLong: "a chunk size line (with extensions) is too long"
        case .chunkDataNotTerminated: "chunk data is not followed by CRLF"
        }
    }
}
