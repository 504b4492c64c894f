import ByteCoding

/// The request method. Methods are case-sensitive (RFC 9110 §9.1): `get` is `.other`.
///
/// The server answers `.other` with 501 and a known method the route does not serve with 405.
public enum HTTPMethod: Sendable, Hashable, CaseIterable {
    case get, head, post, put, delete, options, patch, trace, connect
    /// Any other token; its bytes are `HTTPRequestHead.method(in:)`.
    case other

    /// The method spelled by `bytes[range]` (already known to be a token).
    init(_ bytes: Span<UInt8>, _ range: Range<Int>) {
        func equals(_ name: String) -> Bool { ASCII.equals(bytes, range, name) }
        switch range.count {
        case 3: self = equals("GET") ? .get : equals("PUT") ? .put : .other
        case 4: self = equals("HEAD") ? .head : equals("POST") ? .post : .other
        case 5: self = equals("PATCH") ? .patch : equals("TRACE") ? .trace : .other
        case 6: self = equals("DELETE") ? .delete : .other
        case 7: self = equals("OPTIONS") ? .options : equals("CONNECT") ? .connect : .other
        default: self = .other
        }
    }
}

/// The protocol version of a request.
///
/// `HTTP/1.2` to `HTTP/1.9` parse as `.http1_1`: RFC 9110 §2.5 lets a recipient treat a higher
/// minor version of the same major version as the highest minor version it implements.
public enum HTTPVersion: Sendable, Hashable {
    // The protocol's own spelling: `http10` would read as version ten.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    case http1_0
    // swift-format-ignore: AlwaysUseLowerCamelCase
    case http1_1
}

/// The four forms of request-target (RFC 9112 §3.2).
public enum HTTPTargetForm: Sendable, Hashable {
    /// `/path?query`: what every TMM client sends.
    case origin
    /// `http://host:port/path?query`: sent to proxies, but "a server MUST accept" it (§3.2.2).
    /// The path is the part after the authority (empty when there is none).
    case absolute
    /// `host:port`, only with CONNECT (§3.2.3). The path is empty.
    case authority
    /// `*`, only with OPTIONS (§3.2.4). The path is `*`.
    case asterisk
}

/// How the body of a request is delimited (RFC 9112 §6.3).
public enum HTTPBodyFraming: Sendable, Hashable {
    /// Neither `Content-Length` nor `Transfer-Encoding`: the body is empty.
    case none
    /// `Content-Length: n` (at most `HTTPLimits.maxBodyBytes`).
    case contentLength(Int)
    /// `Transfer-Encoding: chunked`: decoded by `HTTPChunkedDecoder`.
    case chunked
}
