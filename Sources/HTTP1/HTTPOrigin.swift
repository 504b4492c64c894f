import ByteCoding

// Origins (RFC 6454) for the `allowed-origins` setting: a configured entry and a request's
// `Origin` field are parsed into the same normal form, so checking a request is a set lookup and
// `https://A.example:443` in the configuration matches a browser's `https://a.example`.
//
// Browsers send the serialized origin of the page (RFC 6454 §6.2, WHATWG HTML "serialization of
// an origin"): lower-case scheme and host, the port only when it is not the scheme's default, no
// path; `null` for opaque origins (file:// pages, sandboxed frames, data: URLs). Anything else in
// an `Origin` field comes from a non-browser client, which the check does not need to please.

/// A serialized origin in normal form (scheme and host lower-cased, the scheme's default port
/// dropped), or the opaque origin `null`.
public struct HTTPOrigin: Sendable, Hashable, CustomStringConvertible {
    /// `https://app.example`, `http://[::1]:8080`, `chrome-extension://abcdef`, or `null`.
    public let serialization: String

    public var description: String { serialization }

    /// The origin file:// pages and sandboxed documents send. It is shared by every such page, so
    /// allowing it allows all of them: the setting takes it only when listed.
    public static let null = HTTPOrigin(serialization: "null")

    private init(serialization: String) {
        self.serialization = serialization
    }

    /// Parses `text` (an entry of `allowed-origins`).
    public init(_ text: String) throws(HTTPOriginError) {
        let bytes = Array(text.utf8)
        try self.init(bytes.span, 0..<bytes.count)
    }

    /// Parses `bytes[range]` (an `Origin` field value, or a configured entry).
    public init(_ bytes: Span<UInt8>, _ range: Range<Int>) throws(HTTPOriginError) {
        // `null` is a keyword, not a scheme: browsers send it lower-case, and nothing else means it.
        if ASCII.equals(bytes, range, "null") {
            self = .null
            return
        }
        let end = range.upperBound
        // scheme "://" first: without it this is not an origin at all ("app.example",
        // "localhost:8080"), whatever the bytes before it.
        var colon = range.lowerBound
        while colon < end, bytes[colon] != ASCII.colon { colon += 1 }
        guard end - colon >= 3, bytes[colon + 1] == ASCII.slash, bytes[colon + 2] == ASCII.slash else {
            throw .notSchemeHostPort
        }
        // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986 §3.1), case-insensitive.
        var scheme: [UInt8] = []
        for i in range.lowerBound..<colon { scheme.append(ASCII.lowercased(bytes[i])) }
        guard ASCII.isScheme(scheme) else { throw .invalidScheme }
        // Browsers send `null` for file:// pages, never a file origin; say so rather than "no path".
        if scheme == Array("file".utf8) { throw .fileScheme }
        var cursor = colon + 3
        // The authority runs to the end: an origin has no path, query or fragment, and no userinfo.
        for i in cursor..<end {
            switch bytes[i] {
            case ASCII.slash, ASCII.question, ASCII.hash: throw .hasPath
            case UInt8(ascii: "@"): throw .hasUserinfo
            default: continue
            }
        }
        var host: [UInt8] = []
        if cursor < end, bytes[cursor] == UInt8(ascii: "[") {
            // IP-literal (RFC 3986 §3.2.2): checked by shape; the bracketed text is kept, lower-cased.
            host.append(bytes[cursor])
            cursor += 1
            while cursor < end, bytes[cursor] != UInt8(ascii: "]") {
                let c = bytes[cursor]
                guard Hex.value(c) != nil || c == ASCII.colon || c == ASCII.dot else { throw .invalidHost }
                host.append(ASCII.lowercased(c))
                cursor += 1
            }
            guard cursor < end, host.count > 1 else { throw .invalidHost }
            host.append(bytes[cursor])
            cursor += 1
        } else {
            // reg-name or IPv4 as browsers serialize them: ASCII only (an international name is
            // sent in its punycode form), so percent-escapes and sub-delims never occur.
            while cursor < end, bytes[cursor] != ASCII.colon {
                guard ASCII.isUnreserved(bytes[cursor]) else { throw .invalidHost }
                host.append(ASCII.lowercased(bytes[cursor]))
                cursor += 1
            }
        }
        if host.isEmpty { throw .emptyHost }
        var port: Int?
        if cursor < end {
            guard bytes[cursor] == ASCII.colon else { throw .invalidHost }
            cursor += 1
            // 1-65535 in its shortest form: what a browser sends, and one spelling per port.
            guard end - cursor >= 1, end - cursor <= 5, bytes[cursor] != UInt8(ascii: "0") else { throw .invalidPort }
            var value = 0
            while cursor < end {
                guard ASCII.isDigit(bytes[cursor]) else { throw .invalidPort }
                value = value * 10 + Int(bytes[cursor] - UInt8(ascii: "0"))
                cursor += 1
            }
            guard value <= 65_535 else { throw .invalidPort }
            port = value
        }
        let schemeText = String(decoding: scheme, as: UTF8.self)
        if let value = port, Self.defaultPort(schemeText) == value { port = nil }
        serialization = schemeText + "://" + String(decoding: host, as: UTF8.self) + (port.map { ":\($0)" } ?? "")
    }

    /// The ports an origin's serialization leaves out (WHATWG URL "special schemes"; ws and wss
    /// because a non-browser client may name a WebSocket URL's origin).
    private static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "http", "ws": 80
        case "https", "wss": 443
        default: nil
        }
    }
}

/// Why a text is not an origin; `description` says what an origin looks like instead.
public enum HTTPOriginError: Error, Sendable, Equatable, CustomStringConvertible {
    case notSchemeHostPort
    case invalidScheme
    case hasPath
    case hasUserinfo
    case fileScheme
    case emptyHost
    case invalidHost
    case invalidPort

    public var description: String {
        switch self {
        case .notSchemeHostPort: "an origin is scheme://host[:port] (e.g. https://app.example), or null"
        case .invalidScheme: "the scheme must be a letter followed by letters, digits, '+', '-' or '.'"
        case .hasPath: "an origin has no path, query or fragment (drop everything from the '/' after the host)"
        case .hasUserinfo: "an origin has no user name or password (nothing with '@')"
        case .fileScheme: "file:// pages send Origin: null (list null to allow every local file)"
        case .emptyHost: "the host is missing"
        case .invalidHost:
            "the host may hold only ASCII letters, digits, '-', '.', '_' and '~' "
                + "(an international name in its xn-- form), or be an IPv6 address in brackets"
        case .invalidPort: "the port must be a number 1-65535 without leading zeros"
        }
    }
}

/// Which origins may use the servers: any (`*`, TMM's behaviour and the default) or a list.
public enum HTTPOriginPolicy: Sendable, Equatable {
    /// Every origin: CORS `Access-Control-Allow-Origin: *`, WebSocket handshakes from any page.
    case any
    /// Only these origins; a request from another one is refused with 403.
    case only(Set<HTTPOrigin>)

    /// Whether a request from `origin` is served.
    public func allows(_ origin: HTTPOrigin) -> Bool {
        switch self {
        case .any: true
        case .only(let origins): origins.contains(origin)
        }
    }

    /// The decision for a request: what its `Origin` field (if any) asks for under this policy.
    /// A request without `Origin` is always served (native apps, curl and Trimble's mobile
    /// samples send none; browsers always send one on cross-origin fetches and WebSocket
    /// handshakes).
    public func decide(_ head: HTTPRequestHead, in bytes: Span<UInt8>) -> HTTPOriginDecision {
        guard case .only = self else { return .any }
        guard let first = head.index(of: "Origin", in: bytes) else { return .absent }
        let range = head.valueRange(first)
        let sent = makeString(bytes, range)
        // RFC 6454 §7.3: a user agent "MUST NOT include more than one Origin header field"; with
        // two there is no single origin to check, nor to echo.
        if head.index(of: "Origin", from: first + 1, in: bytes) != nil { return .refused(sent) }
        guard let origin = try? HTTPOrigin(bytes, range), allows(origin) else { return .refused(sent) }
        // Echoed as sent, not in normal form: the browser compares Allow-Origin with its own
        // serialization byte for byte (and a parsed origin holds no byte a header may not).
        return .allowed(sent)
    }
}

/// What the server does with a request, from its `Origin` and the policy.
public enum HTTPOriginDecision: Sendable, Equatable {
    /// The policy allows any origin: no field is even read; CORS `*`.
    case any
    /// A list is configured and the request has no `Origin`: served, no Allow-Origin.
    case absent
    /// A listed origin (the field's value as sent, echoed in `Access-Control-Allow-Origin`).
    case allowed(String)
    /// Not listed, not an origin, or more than one `Origin` field: 403 (the value as sent, for
    /// the log).
    case refused(String)

    public var isRefused: Bool {
        if case .refused = self { return true }
        return false
    }

    /// The CORS headers of an actual (non-preflight) response. With a list configured every
    /// response depends on `Origin`, so every one says `Vary: Origin` (Fetch §3.2.5), the refusal
    /// included, and none ever says `*`.
    public var corsHeaders: HTTPCORSHeaders {
        switch self {
        case .any: .allowAnyOrigin
        case .absent, .refused: .varyOrigin
        case .allowed(let origin): .allowOrigin(origin)
        }
    }

    /// The CORS headers of a preflight (`OPTIONS`) response.
    public func preflightHeaders(maxAgeSeconds: Int) -> HTTPCORSHeaders {
        switch self {
        case .any: .preflight(maxAgeSeconds: maxAgeSeconds)
        case .absent, .refused: .varyOrigin
        case .allowed(let origin): .preflightForOrigin(origin, maxAgeSeconds: maxAgeSeconds)
        }
    }
}
