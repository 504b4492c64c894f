import ByteCoding

// Where corrections come from, as an operator writes it: `ntrip://[USER[:PASS]@]HOST[:PORT]/MOUNT`
// (`ntrips://` for TLS), the form RTKLIB's str2str, u-center and most NTRIP clients take.
//
// RFC 3986 readings: the authority ends at the first `/`; the user information ends at its last
// `@` (a password holding a raw `@` still parses, as curl reads it); the user name ends at the
// first `:` (RFC 7617: a Basic user-id cannot hold one); `%XX` escapes are decoded in user,
// password and mount point; an IPv6 host is written in brackets. The mount point is exactly one
// non-empty path segment: NTRIP has no deeper paths, and an empty one asks for the sourcetable,
// which is no source of corrections.
//
// The password is the one secret here: no error message quotes it or the URL around it, and
// `description` leaves it out.

/// An NTRIP caster and mount point, with the credentials to use there.
public struct NTRIPSource: Equatable, Sendable, CustomStringConvertible {
    /// Host name or IP address (an IPv6 address without its brackets).
    public var host: String
    public var port: UInt16
    /// The mount point, decoded (`ntrip://h/A%20B` is `A B`); percent-encoded again on the wire.
    public var mountPoint: String
    public var user: String?
    public var password: String?
    /// `ntrips://`: the connection is TLS.
    public var usesTLS: Bool

    /// The IANA port of NTRIP (`ntrip://` without a port).
    public static let defaultPort: UInt16 = 2101
    /// `ntrips://` without a port: HTTPS's, where TLS casters (e.g. RTK2go's, EUREF's) listen.
    public static let defaultTLSPort: UInt16 = 443

    public init(
        host: String, port: UInt16 = 2101, mountPoint: String, user: String? = nil, password: String? = nil,
        usesTLS: Bool = false
    ) {
        self.host = host
        self.port = port
        self.mountPoint = mountPoint
        self.user = user
        self.password = password
        self.usesTLS = usesTLS
    }

    /// `ntrip://user@host:2101/MOUNT`, never the password: safe for logs, status and events. User and
    /// mount point are percent-encoded where needed, so the text parses back to this source (without
    /// its password).
    public var description: String {
        var text = usesTLS ? "ntrips://" : "ntrip://"
        if let user { text += Self.percentEncoded(user) + "@" }
        text += hostForURL + ":" + String(port) + "/" + Self.pathEncoded(mountPoint)
        return text
    }

    /// The host as a URL or a Host field writes it: an IPv6 address in brackets.
    public var hostForURL: String {
        URLAuthority.hostForURL(host)
    }

    // MARK: Parsing

    /// Reads `ntrip://[USER[:PASS]@]HOST[:PORT]/MOUNT` or `ntrips://...`. Percent-decodes user,
    /// password and mount point; IPv6 hosts in brackets. Never puts the password in an error.
    public static func parse(_ url: String) -> Result<NTRIPSource, NTRIPSourceError> {
        do throws(NTRIPSourceError) {
            return .success(try parseThrowing(Array(url.utf8)))
        } catch {
            return .failure(error)
        }
    }

    private static func parseThrowing(_ url: [UInt8]) throws(NTRIPSourceError) -> NTRIPSource {
        // Raw spaces and controls are never part of a URL (RFC 3986 §2); refusing them up front
        // also keeps them out of every later message. Non-ASCII must be percent-encoded.
        if let bad = url.firstIndex(where: { ASCII.isControl($0) || $0 == ASCII.space || $0 >= 0x80 }) {
            throw NTRIPSourceError("the URL holds a space, control or non-ASCII character at offset \(bad)")
        }
        guard let parts = URLAuthority.split(url) else {
            throw NTRIPSourceError("the URL must start with ntrip:// or ntrips://")
        }
        let usesTLS: Bool
        switch parts.scheme {
        case "ntrip": usesTLS = false
        case "ntrips": usesTLS = true
        default: throw NTRIPSourceError("the URL must start with ntrip:// or ntrips://")
        }
        // User information, host and port (ByteCoding's URLAuthority); Basic authentication
        // cannot send a user name holding a colon.
        let authority: URLAuthority
        do throws(URLAuthorityError) {
            authority = try URLAuthority.parse(parts.authority, userMayHoldColon: false)
        } catch {
            throw NTRIPSourceError(error.description)
        }
        let port = authority.port ?? (usesTLS ? defaultTLSPort : defaultPort)

        // The mount point: one non-empty segment.
        guard !parts.rest.isEmpty else {
            throw NTRIPSourceError("the URL names no mount point (ntrip://HOST/MOUNT)")
        }
        let path = parts.rest.dropFirst()
        if path.contains(ASCII.question) || path.contains(ASCII.hash) {
            throw NTRIPSourceError("the URL has a query or fragment; it takes none")
        }
        guard !path.isEmpty else { throw NTRIPSourceError("the URL names no mount point (ntrip://HOST/MOUNT)") }
        guard !path.contains(ASCII.slash) else {
            throw NTRIPSourceError("the mount point must be one name, without /")
        }
        guard let mountPoint = PercentEncoding.decode(path) else {
            throw NTRIPSourceError("the mount point has a malformed %-escape or is not UTF-8")
        }
        guard !mountPoint.utf8.contains(where: ASCII.isControl) else {
            throw NTRIPSourceError("the mount point holds a control character")
        }
        return NTRIPSource(
            host: authority.host, port: port, mountPoint: mountPoint, user: authority.user,
            password: authority.password, usesTLS: usesTLS)
    }

    // MARK: Percent-encoding (RFC 3986 §2.1; ByteCoding's PercentEncoding)

    /// `text` with every byte but the unreserved ones written `%XX` (upper-case digits, as RFC 3986
    /// §2.1 recommends): a user name in `description`, where `:` and `@` would end it.
    public static func percentEncoded(_ text: String) -> String {
        PercentEncoding.encode(text)
    }

    /// `text` as one path segment (RFC 3986 §3.3 `segment`): unreserved bytes, sub-delims, `:` and
    /// `@` as they are, every other byte `%XX`. The request line carries the mount point so: a
    /// caster that compares the path without decoding it still finds `RTCM3+GLO` or `A,B`, while a
    /// space, `/`, `?`, `#`, `%` or non-ASCII byte cannot change the request's meaning.
    public static func pathEncoded(_ text: String) -> String {
        PercentEncoding.encodePathSegment(text)
    }
}

/// Why a corrections URL was refused: one sentence naming the part at fault, never the password.
public struct NTRIPSourceError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String

    init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
