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
        host.utf8.contains(ASCII.colon) ? "[" + host + "]" : host
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
        guard let schemeEnd = firstIndex(of: "://", in: url) else {
            throw NTRIPSourceError("the URL must start with ntrip:// or ntrips://")
        }
        let scheme = ASCII.lowercased(String(decoding: url[0..<schemeEnd], as: UTF8.self))
        let usesTLS: Bool
        switch scheme {
        case "ntrip": usesTLS = false
        case "ntrips": usesTLS = true
        default: throw NTRIPSourceError("the URL must start with ntrip:// or ntrips://")
        }
        let authorityStart = schemeEnd + 3
        let slash = url[authorityStart...].firstIndex(of: ASCII.slash) ?? url.count
        let authority = url[authorityStart..<slash]
        if authority.contains(ASCII.question) || authority.contains(ASCII.hash) {
            throw NTRIPSourceError("the URL has a query or fragment; it takes none")
        }

        // User information: up to the authority's last `@`.
        var user: String?
        var password: String?
        var hostStart = authority.startIndex
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) {
            let info = authority[authority.startIndex..<at]
            let colon = info.firstIndex(of: ASCII.colon)
            let userPart = info[info.startIndex..<(colon ?? info.endIndex)]
            guard let decodedUser = percentDecoded(userPart) else {
                throw NTRIPSourceError("the user name has a malformed %-escape or is not UTF-8")
            }
            guard !decodedUser.isEmpty else { throw NTRIPSourceError("the user name before @ is empty") }
            guard !decodedUser.utf8.contains(ASCII.colon) else {
                throw NTRIPSourceError("the user name holds a colon, which Basic authentication cannot send")
            }
            guard !decodedUser.utf8.contains(where: ASCII.isControl) else {
                throw NTRIPSourceError("the user name holds a control character")
            }
            user = decodedUser
            if let colon {
                guard let decodedPassword = percentDecoded(info[(colon + 1)..<info.endIndex]) else {
                    throw NTRIPSourceError("the password has a malformed %-escape or is not UTF-8")
                }
                guard !decodedPassword.utf8.contains(where: ASCII.isControl) else {
                    throw NTRIPSourceError("the password holds a control character")
                }
                password = decodedPassword
            }
            hostStart = at + 1
        }

        // Host and port.
        let hostAndPort = authority[hostStart..<authority.endIndex]
        let host: String
        var portText: ArraySlice<UInt8>?
        if hostAndPort.first == UInt8(ascii: "[") {
            guard let close = hostAndPort.firstIndex(of: UInt8(ascii: "]")) else {
                throw NTRIPSourceError("the IPv6 address has no closing ]")
            }
            let address = hostAndPort[(hostAndPort.startIndex + 1)..<close]
            guard address.contains(ASCII.colon),
                address.allSatisfy({ Hex.isDigit($0) || $0 == ASCII.colon || $0 == ASCII.dot })
            else { throw NTRIPSourceError("the text in [] is not an IPv6 address") }
            host = String(decoding: address, as: UTF8.self)
            let rest = hostAndPort[(close + 1)..<hostAndPort.endIndex]
            if !rest.isEmpty {
                guard rest.first == ASCII.colon else {
                    throw NTRIPSourceError("only :PORT may follow the IPv6 address")
                }
                portText = rest.dropFirst()
            }
        } else {
            let colon = hostAndPort.firstIndex(of: ASCII.colon)
            let name = hostAndPort[hostAndPort.startIndex..<(colon ?? hostAndPort.endIndex)]
            // RFC 3986 reg-name as DNS uses it: letters, digits, `-`, `.` (and `_`, which some
            // internal names carry). IPv4 addresses are written the same way.
            guard
                name.allSatisfy({
                    ASCII.isAlphanumeric($0) || $0 == ASCII.minus || $0 == ASCII.dot || $0 == ASCII.underscore
                })
            else { throw NTRIPSourceError("the host name holds a character a host name cannot have") }
            host = String(decoding: name, as: UTF8.self)
            if let colon { portText = hostAndPort[(colon + 1)..<hostAndPort.endIndex] }
        }
        guard !host.isEmpty else { throw NTRIPSourceError("the URL names no host") }
        var port = usesTLS ? defaultTLSPort : defaultPort
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(ASCII.isDigit),
                let value = Int(String(decoding: portText, as: UTF8.self)), (1...65535).contains(value)
            else { throw NTRIPSourceError("the port is not a number from 1 to 65535") }
            port = UInt16(value)
        }

        // The mount point: one non-empty segment.
        guard slash < url.count else { throw NTRIPSourceError("the URL names no mount point (ntrip://HOST/MOUNT)") }
        let path = url[(slash + 1)...]
        if path.contains(ASCII.question) || path.contains(ASCII.hash) {
            throw NTRIPSourceError("the URL has a query or fragment; it takes none")
        }
        guard !path.isEmpty else { throw NTRIPSourceError("the URL names no mount point (ntrip://HOST/MOUNT)") }
        guard !path.contains(ASCII.slash) else {
            throw NTRIPSourceError("the mount point must be one name, without /")
        }
        guard let mountPoint = percentDecoded(path) else {
            throw NTRIPSourceError("the mount point has a malformed %-escape or is not UTF-8")
        }
        guard !mountPoint.utf8.contains(where: ASCII.isControl) else {
            throw NTRIPSourceError("the mount point holds a control character")
        }
        return NTRIPSource(
            host: host, port: port, mountPoint: mountPoint, user: user, password: password, usesTLS: usesTLS)
    }

    // MARK: Percent-encoding (RFC 3986 §2.1)

    /// `text` with every byte but the unreserved ones written `%XX` (upper-case digits, as RFC 3986
    /// §2.1 recommends): a user name in `description`, where `:` and `@` would end it.
    public static func percentEncoded(_ text: String) -> String {
        encoded(text) { ASCII.isUnreserved($0) }
    }

    /// `text` as one path segment (RFC 3986 §3.3 `segment`): unreserved bytes, sub-delims, `:` and
    /// `@` as they are, every other byte `%XX`. The request line carries the mount point so: a
    /// caster that compares the path without decoding it still finds `RTCM3+GLO` or `A,B`, while a
    /// space, `/`, `?`, `#`, `%` or non-ASCII byte cannot change the request's meaning.
    public static func pathEncoded(_ text: String) -> String {
        encoded(text) { c in
            switch c {
            case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
                UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
                UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"):
                true
            default:
                ASCII.isUnreserved(c)
            }
        }
    }

    private static func encoded(_ text: String, keeping isKept: (UInt8) -> Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for c in text.utf8 {
            if isKept(c) {
                out.append(c)
            } else {
                out.append(ASCII.percent)
                Hex.append(c, to: &out)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The text `bytes` spell with `%XX` decoded; nil for a malformed escape or bytes that are not UTF-8.
    static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if bytes[i] == ASCII.percent {
                guard i + 2 < bytes.endIndex, let byte = Hex.byte(high: bytes[i + 1], low: bytes[i + 2]) else {
                    return nil
                }
                out.append(byte)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func firstIndex(of pattern: String, in bytes: [UInt8]) -> Int? {
        let needle = Array(pattern.utf8)
        guard bytes.count >= needle.count else { return nil }
        for start in 0...(bytes.count - needle.count) where bytes[start..<(start + needle.count)].elementsEqual(needle)
        {
            return start
        }
        return nil
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
