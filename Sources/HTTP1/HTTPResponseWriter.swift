import ByteCoding

// Serialises responses into one reusable byte buffer: the server writes `bytes` to the socket,
// then calls `removeAll()` and reuses the capacity for the next response.
//
// The writer trusts its caller: names and values come from our own code, and a CR, LF or NUL in
// one would split the response (header injection), so that is a programmer error (precondition).

/// The CORS headers a response carries (TMM-API.md §4.1: the web sample calls the REST API from
/// another origin with `PUT`, `Authorization` and `Content-Type: application/json`, so browsers
/// send a preflight).
public enum HTTPCORSHeaders: Sendable, Hashable {
    /// No CORS headers.
    case none
    /// An actual (non-preflight) response: `Access-Control-Allow-Origin: *`.
    case allowAnyOrigin
    /// A preflight (`OPTIONS`) response: `Allow-Origin: *`, `Allow-Methods`, `Allow-Headers`,
    /// `Max-Age`, and `Allow-Private-Network: true` (Chrome's Private Network Access preflight
    /// asks for it when a public page calls localhost; harmless otherwise).
    case preflight(maxAgeSeconds: Int)
    /// An actual response to a listed origin (`allowed-origins`): `Access-Control-Allow-Origin:
    /// <origin>` and `Vary: Origin` (a cache must not give this answer to another origin).
    case allowOrigin(String)
    /// A preflight from a listed origin: `.preflight`'s fields with the origin instead of `*`,
    /// and `Vary: Origin`.
    case preflightForOrigin(String, maxAgeSeconds: Int)
    /// `Vary: Origin` alone: a list is configured, so the response depends on `Origin`, but
    /// grants nothing (no `Origin` sent, or a refused one).
    case varyOrigin

    /// Methods the REST API serves.
    public static let allowedMethods = "GET, PUT, OPTIONS"
    /// Request headers the clients send: the access code and the JSON content type.
    public static let allowedHeaders = "Authorization, Content-Type"
    /// Max-Age we send: 10 minutes (Chrome caps it at 2 hours, Firefox at 24).
    public static let defaultMaxAge = 600
}

/// Builds HTTP/1.1 responses into a reusable `[UInt8]`.
public struct HTTPResponseWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    /// A writer whose buffer starts with room for `capacity` bytes.
    public init(capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer, keeping its capacity.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    // MARK: Building blocks

    /// `HTTP/1.1 <code> <reason>` CRLF. Responses are always HTTP/1.1 (RFC 9110 §6.2: a server
    /// sends the highest version it conforms to; HTTP/1.0 clients read it).
    public mutating func writeStatusLine(_ status: HTTPStatus) {
        append("HTTP/1.1 ")
        append(String(status.code))
        append(" ")
        append(status.reasonPhrase)
        appendCRLF()
    }

    /// `name: value` CRLF.
    public mutating func writeHeader(_ name: String, _ value: String) {
        for c in name.utf8 { precondition(ASCII.isTokenChar(c), "header name \(name) is not a token") }
        for c in value.utf8 {
            precondition(c == ASCII.tab || c >= 0x20 && c != 0x7F, "header \(name) has a control byte in its value")
        }
        append(name)
        append(": ")
        append(value)
        appendCRLF()
    }

    /// `name: value` CRLF for a number.
    public mutating func writeHeader(_ name: String, _ value: Int) {
        writeHeader(name, String(value))
    }

    /// The empty line that ends the head.
    public mutating func endHead() {
        appendCRLF()
    }

    /// Appends body bytes.
    public mutating func writeBody(_ body: Span<UInt8>) {
        bytes.reserveCapacity(bytes.count + body.count)
        for i in body.indices { bytes.append(body[i]) }
    }

    /// Appends a body given as a String (UTF-8).
    public mutating func writeBody(_ body: String) {
        bytes.append(contentsOf: body.utf8)
    }

    /// The interim `100 Continue` response for a request that sent `Expect: 100-continue`
    /// (RFC 9110 §10.1.1).
    public mutating func writeContinue() {
        writeStatusLine(.continue)
        endHead()
    }

    // MARK: Whole responses

    /// A complete response: status line, `Date`, CORS, `Content-Type`, `Content-Length`,
    /// `Connection`, any `extraHeaders`, the empty line and the body.
    ///
    /// - Parameters:
    ///   - status: the status; 1xx and 204 get neither `Content-Length` nor body.
    ///   - date: the `Date` value (`HTTPDate.imfFixdate`), or nil to send none.
    ///   - contentType: e.g. `application/json`; omitted when nil or the body is empty.
    ///   - body: the content.
    ///   - keepAlive: false sends `Connection: close` (the server closes after writing).
    ///   - requestVersion: an HTTP/1.0 request kept alive gets `Connection: keep-alive`
    ///     (RFC 9112 §9.3: HTTP/1.0 connections close unless it is sent).
    ///   - isHeadRequest: answer to HEAD: the same headers, with the length of `body`, but no body
    ///     (RFC 9110 §9.3.2).
    ///   - cors: which CORS headers to add.
    ///   - extraHeaders: more `(name, value)` pairs, e.g. `Allow` for 405 or `WWW-Authenticate`.
    ///     With an `Upgrade` field the `Connection` field lists `Upgrade` too (RFC 9110 §7.8: "A
    ///     sender of Upgrade MUST also send an "Upgrade" connection option").
    public mutating func writeResponse(
        _ status: HTTPStatus, date: String?, contentType: String? = nil, body: Span<UInt8>,
        keepAlive: Bool, requestVersion: HTTPVersion = .http1_1, isHeadRequest: Bool = false,
        cors: HTTPCORSHeaders = .none, extraHeaders: [(name: String, value: String)] = []
    ) {
        writeStatusLine(status)
        if let date { writeHeader("Date", date) }
        switch cors {
        case .none:
            break
        case .allowAnyOrigin:
            writeHeader("Access-Control-Allow-Origin", "*")
        case .preflight(let maxAge):
            writePreflightHeaders(allowOrigin: "*", maxAge: maxAge)
        case .allowOrigin(let origin):
            writeHeader("Access-Control-Allow-Origin", origin)
            writeHeader("Vary", "Origin")
        case .preflightForOrigin(let origin, let maxAge):
            writePreflightHeaders(allowOrigin: origin, maxAge: maxAge)
            writeHeader("Vary", "Origin")
        case .varyOrigin:
            writeHeader("Vary", "Origin")
        }
        for (name, value) in extraHeaders { writeHeader(name, value) }
        let hasContent = status.allowsContent
        if hasContent {
            if let contentType, !body.isEmpty { writeHeader("Content-Type", contentType) }
            writeHeader("Content-Length", body.count)
        }
        var connection: [String] = []
        if extraHeaders.contains(where: { ASCII.equalsIgnoringCase($0.name, "Upgrade") }) {
            connection.append("Upgrade")
        }
        if !keepAlive {
            connection.append("close")
        } else if requestVersion == .http1_0 {
            connection.append("keep-alive")
        }
        if !connection.isEmpty { writeHeader("Connection", connection.joined(separator: ", ")) }
        endHead()
        if hasContent && !isHeadRequest { writeBody(body) }
    }

    private mutating func writePreflightHeaders(allowOrigin: String, maxAge: Int) {
        writeHeader("Access-Control-Allow-Origin", allowOrigin)
        writeHeader("Access-Control-Allow-Methods", HTTPCORSHeaders.allowedMethods)
        writeHeader("Access-Control-Allow-Headers", HTTPCORSHeaders.allowedHeaders)
        writeHeader("Access-Control-Max-Age", maxAge)
        writeHeader("Access-Control-Allow-Private-Network", "true")
    }

    /// A JSON error response in the shape TMM clients read (TMM-API.md §4.4): old clients look for
    /// `Reason`, the web sample for `error`, so the body carries both:
    /// `{"error":"<message>","Reason":"<message>"}`.
    public mutating func writeError(
        _ status: HTTPStatus, message: String, date: String?, keepAlive: Bool,
        requestVersion: HTTPVersion = .http1_1, isHeadRequest: Bool = false,
        cors: HTTPCORSHeaders = .none, extraHeaders: [(name: String, value: String)] = []
    ) {
        let escaped = Self.jsonEscaped(message)
        let body = Array(("{\"error\":\"" + escaped + "\",\"Reason\":\"" + escaped + "\"}").utf8)
        writeResponse(
            status, date: date, contentType: "application/json", body: body.span, keepAlive: keepAlive,
            requestVersion: requestVersion, isHeadRequest: isHeadRequest, cors: cors, extraHeaders: extraHeaders)
    }

    /// The response to a request the parser rejected: the error's status and message, and
    /// `Connection: close` (the connection cannot continue after a framing error).
    public mutating func writeError(_ error: HTTPRequestError, date: String?, cors: HTTPCORSHeaders = .none) {
        writeError(error.status, message: error.message, date: date, keepAlive: false, cors: cors)
    }

    /// `text` as the inside of a JSON string (RFC 8259 §7).
    static func jsonEscaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    var escape: [UInt8] = Array("\\u00".utf8)
                    Hex.append(UInt8(scalar.value), uppercase: false, to: &escape)
                    out += String(decoding: escape, as: UTF8.self)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    private mutating func appendCRLF() {
        bytes.append(ASCII.cr)
        bytes.append(ASCII.lf)
    }
}
