import ByteCoding
import HTTP1

// The server side of the opening handshake (RFC 6455 §4.2), as pure functions over a request whose
// head the HTTP layer has already parsed. The SHA-1 comes from the caller (OpenSSL in the platform
// tier); the token lists are here, Base64 is ByteCoding's, and the response bytes are written by
// HTTP1's `HTTPResponseWriter`, the one HTTP response writer of the package.
//
// What is checked (§4.2.1), and the response when it fails:
//   1. method GET                                        else 405, `Allow: GET`
//   2. HTTP/1.1 or later                                 else 400
//   3. `Upgrade` lists the token `websocket` (any case)  else 426, `Upgrade: websocket`
//   4. `Connection` lists the token `upgrade` (any case) else 426, `Upgrade: websocket`
//   5. exactly one `Sec-WebSocket-Version`, equal to 13  else 426, `Sec-WebSocket-Version: 13`
//                                                        (400 if the field appears twice)
//   6. exactly one `Sec-WebSocket-Key`, Base64 of 16 bytes  else 400
// Not checked here: `Host` (the HTTP layer's 400); `Origin`, which the owner checks against its
// `allowed-origins` setting before it gets here (§4.2.2 leaves the origin policy to the server,
// and the policy is configuration: HTTP1's HTTPOriginPolicy, the same for REST and WebSocket, so
// this target stays free of it; by default every origin is served, as TMM's web clients come
// from anywhere); the request target (routing is the owner's). Subprotocols and extensions
// offered by the client are ignored: none is selected, so none may be used (§4.2.2).

/// A request head that asks for a WebSocket upgrade, as the HTTP layer parsed it.
public struct WebSocketUpgradeRequest: Sendable {
    /// The request method, e.g. `GET` (compared case-sensitively, as HTTP methods are).
    public var method: String
    /// HTTP major version (1 for `HTTP/1.1`).
    public var versionMajor: Int
    /// HTTP minor version (1 for `HTTP/1.1`).
    public var versionMinor: Int
    /// Every header field in order, names as sent (matched case-insensitively here), values with
    /// or without surrounding spaces. Repeated fields stay separate entries.
    public var headers: [(name: String, value: String)]

    /// A request head.
    public init(method: String, versionMajor: Int = 1, versionMinor: Int = 1, headers: [(name: String, value: String)])
    {
        self.method = method
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.headers = headers
    }

    /// Values of every field called `name` (case-insensitive), in order.
    public func values(of name: String) -> [String] {
        headers.filter { ASCII.equalsIgnoringCase($0.name, name) }.map(\.value)
    }
}

/// Why the server refuses an upgrade request; each case knows the HTTP response to send.
public enum WebSocketHandshakeError: Error, Hashable, Sendable {
    /// §4.2.1 item 1: "An HTTP/1.1 or higher GET request".
    case methodNotGET
    /// §4.2.1 item 1: HTTP/1.0 or older.
    case httpVersionTooOld
    /// §4.2.1 item 3: no `Upgrade` field listing `websocket`.
    case missingUpgradeWebSocket
    /// §4.2.1 item 4: no `Connection` field listing `upgrade`.
    case missingConnectionUpgrade
    /// §4.2.1 item 6 and §4.4: no `Sec-WebSocket-Version`, or one other than 13.
    case unsupportedVersion
    /// `Sec-WebSocket-Version` sent more than once (§11.3.5: "MUST NOT appear more than once in
    /// an HTTP request").
    case duplicateVersion
    /// §4.2.1 item 5: no `Sec-WebSocket-Key`.
    case missingKey
    /// `Sec-WebSocket-Key` sent more than once (§11.3.1).
    case duplicateKey
    /// §4.2.1 item 5: the key is not Base64 of exactly 16 bytes.
    case invalidKey

    /// The HTTP status to answer with.
    public var status: HTTPStatus {
        switch self {
        case .methodNotGET: .methodNotAllowed
        case .missingUpgradeWebSocket, .missingConnectionUpgrade, .unsupportedVersion: .upgradeRequired
        case .httpVersionTooOld, .duplicateVersion, .missingKey, .duplicateKey, .invalidKey: .badRequest
        }
    }

    /// Header fields the response must carry besides `Content-*` and `Connection`.
    public var headers: [(name: String, value: String)] {
        switch self {
        case .methodNotGET: [("Allow", "GET")]
        // RFC 9110 §15.5.22: a 426 "MUST send an Upgrade header field".
        case .missingUpgradeWebSocket, .missingConnectionUpgrade: [("Upgrade", "websocket")]
        // §4.4: "... and a |Sec-WebSocket-Version| header field indicating the version(s) the
        // server is capable of understanding."
        case .unsupportedVersion: [("Upgrade", "websocket"), ("Sec-WebSocket-Version", "13")]
        case .duplicateVersion: [("Sec-WebSocket-Version", "13")]
        case .httpVersionTooOld, .missingKey, .duplicateKey, .invalidKey: []
        }
    }

    /// One line for the response body and logs.
    public var explanation: String {
        switch self {
        case .methodNotGET: "a WebSocket handshake must be a GET request"
        case .httpVersionTooOld: "a WebSocket handshake needs HTTP/1.1"
        case .missingUpgradeWebSocket: "this endpoint speaks WebSocket only: send Upgrade: websocket"
        case .missingConnectionUpgrade: "the Connection header must list the upgrade token"
        case .unsupportedVersion: "only WebSocket version 13 (RFC 6455) is supported"
        case .duplicateVersion: "Sec-WebSocket-Version appears more than once"
        case .missingKey: "Sec-WebSocket-Key is missing"
        case .duplicateKey: "Sec-WebSocket-Key appears more than once"
        case .invalidKey: "Sec-WebSocket-Key must be the Base64 of 16 bytes"
        }
    }

    /// A complete HTTP/1.1 response: status line, `headers`, a plain-text body with
    /// `explanation`, and `Connection: close` (the server closes after sending it), which also
    /// lists `Upgrade` when the response carries an `Upgrade` field (RFC 9110 §7.8: "A sender of
    /// Upgrade MUST also send an "Upgrade" connection option").
    /// (This target has no clock, so the response carries no `Date`; the bridge answers with
    /// its own error response instead, see BridgeCore's HTTPExchange.)
    public var responseBytes: [UInt8] {
        let body = Array((explanation + "\n").utf8)
        var writer = HTTPResponseWriter(capacity: 256)
        writer.writeResponse(
            status, date: nil, contentType: "text/plain; charset=utf-8", body: body.span, keepAlive: false,
            extraHeaders: headers)
        return writer.bytes
    }
}

/// The opening handshake, server side.
public enum WebSocketHandshake {
    /// The GUID every server appends to the client's key before hashing (§1.3).
    public static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    /// The one protocol version spoken (§4.4).
    public static let version = "13"
    /// A SHA-1 digest, from whatever implementation the caller has (OpenSSL in this project).
    public typealias SHA1Digest = InlineArray<20, UInt8>

    /// `Sec-WebSocket-Accept` for `key`: Base64(SHA-1(key + GUID)) (§4.2.2 item 5.4).
    ///
    /// - Parameters:
    ///   - key: the `Sec-WebSocket-Key` value as received (surrounding spaces are ignored).
    ///   - sha1: the SHA-1 of the given bytes.
    public static func acceptValue(forKey key: String, sha1: (Span<UInt8>) -> SHA1Digest) -> String {
        let input = Array(trimmingOWS(key).utf8) + Array(acceptGUID.utf8)
        let digest = sha1(input.span)
        return Base64.encode(digest.span)
    }

    /// Checks that `request` is a valid version-13 upgrade request and returns its key (trimmed).
    ///
    /// - Throws: the first rule broken, in the order of the file comment.
    public static func validate(_ request: WebSocketUpgradeRequest) throws(WebSocketHandshakeError) -> String {
        // §4.2.1: "An HTTP/1.1 or higher GET request, including a "Request-URI" ..."
        guard request.method == "GET" else { throw .methodNotGET }
        guard request.versionMajor > 1 || (request.versionMajor == 1 && request.versionMinor >= 1) else {
            throw .httpVersionTooOld
        }
        // §4.2.1: "An |Upgrade| header field containing the value "websocket", treated as an
        // ASCII case-insensitive value."
        guard request.values(of: "Upgrade").contains(where: { listContainsToken($0, "websocket") }) else {
            throw .missingUpgradeWebSocket
        }
        // §4.2.1: "A |Connection| header field that includes the token "Upgrade", treated as an
        // ASCII case-insensitive value." (Firefox sends `Connection: keep-alive, Upgrade`.)
        guard request.values(of: "Connection").contains(where: { listContainsToken($0, "upgrade") }) else {
            throw .missingConnectionUpgrade
        }
        // §4.2.1: "A |Sec-WebSocket-Version| header field, with a value of 13."
        let versions = request.values(of: "Sec-WebSocket-Version")
        guard versions.count <= 1 else { throw .duplicateVersion }
        guard let version = versions.first, trimmingOWS(version) == Self.version else { throw .unsupportedVersion }
        // §4.2.1: "A |Sec-WebSocket-Key| header field with a base64-encoded value that, when
        // decoded, is 16 bytes in length."
        let keys = request.values(of: "Sec-WebSocket-Key")
        guard keys.count <= 1 else { throw .duplicateKey }
        guard let rawKey = keys.first else { throw .missingKey }
        let key = trimmingOWS(rawKey)
        guard key.utf8.count == 24, let decoded = Base64.decode(key), decoded.count == 16 else { throw .invalidKey }
        return key
    }

    /// Validates `request` and returns the whole `101 Switching Protocols` response to send.
    ///
    /// - Throws: why the upgrade is refused; send its `responseBytes` and close.
    public static func response(
        to request: WebSocketUpgradeRequest, sha1: (Span<UInt8>) -> SHA1Digest
    ) throws(WebSocketHandshakeError) -> [UInt8] {
        let key = try validate(request)
        return switchingProtocolsResponse(acceptValue: acceptValue(forKey: key, sha1: sha1))
    }

    /// The `101 Switching Protocols` response for an accept value (§4.2.2 item 5).
    public static func switchingProtocolsResponse(acceptValue: String) -> [UInt8] {
        var writer = HTTPResponseWriter(capacity: 160)
        writer.writeStatusLine(.switchingProtocols)
        writer.writeHeader("Upgrade", "websocket")
        writer.writeHeader("Connection", "Upgrade")
        writer.writeHeader("Sec-WebSocket-Accept", acceptValue)
        writer.endHead()
        return writer.bytes
    }
}

// MARK: - HTTP token helpers (ASCII only, as HTTP field syntax is)

/// Whether the comma-separated `list` holds `token`, compared ASCII case-insensitively.
func listContainsToken(_ list: String, _ token: String) -> Bool {
    list.split(separator: ",", omittingEmptySubsequences: true).contains { element in
        ASCII.equalsIgnoringCase(trimmingOWS(element), token)
    }
}

/// `text` without leading and trailing spaces and tabs (HTTP's optional whitespace).
func trimmingOWS(_ text: some StringProtocol) -> String {
    ASCII.trimmingBlanks(text)
}
