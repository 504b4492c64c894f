// The authority of a URL an operator writes (RFC 3986 §3.2): `[USER[:PASSWORD]@]HOST[:PORT]`. The one
// home for reading it: the NTRIP client's `ntrip://` and fleet publishing's `mqtt://` both use it.
//
// RFC 3986 readings: the user information ends at the authority's last `@` (a password holding a raw
// `@` still parses, as curl reads it); the user name ends at the first `:`; `%XX` escapes are decoded
// in user and password, and a control character in either is refused after decoding; an IPv6 host is
// written in brackets; a host name is letters, digits, `-`, `.` and `_`; the port is 1-65535. The
// caller finds where the authority ends (at the first `/` for both schemes); a `?` or `#` inside it is
// a query or fragment, which these URLs take none of.
//
// The password is the one secret here: no error carries it or the text around it.

/// What the authority of a URL names.
public struct URLAuthority: Equatable, Sendable {
    /// The user name, decoded; nil without user information (`HOST` alone).
    public var user: String?
    /// The password, decoded; nil without a `:` after the user name (`USER@HOST`).
    public var password: String?
    /// Host name or IP address (an IPv6 address without its brackets).
    public var host: String
    /// The port written; nil: none was, the scheme's default applies.
    public var port: UInt16?

    public init(user: String? = nil, password: String? = nil, host: String, port: UInt16? = nil) {
        self.user = user
        self.password = password
        self.host = host
        self.port = port
    }

    /// Reads `[USER[:PASSWORD]@]HOST[:PORT]`. `userMayHoldColon: false` refuses a user name that
    /// holds a (percent-escaped) `:`, which HTTP Basic authentication cannot send (RFC 7617).
    public static func parse(
        _ bytes: ArraySlice<UInt8>, userMayHoldColon: Bool = true
    ) throws(URLAuthorityError) -> URLAuthority {
        // Raw spaces, controls and non-ASCII are never part of a URL (RFC 3986 §2).
        if let bad = bytes.firstIndex(where: { ASCII.isControl($0) || $0 == ASCII.space || $0 >= 0x80 }) {
            throw .badCharacter(offset: bad - bytes.startIndex)
        }
        if bytes.contains(ASCII.question) || bytes.contains(ASCII.hash) { throw .queryOrFragment }

        // User information: up to the authority's last `@`.
        var user: String?
        var password: String?
        var hostStart = bytes.startIndex
        if let at = bytes.lastIndex(of: UInt8(ascii: "@")) {
            let info = bytes[bytes.startIndex..<at]
            let colon = info.firstIndex(of: ASCII.colon)
            guard let decodedUser = PercentEncoding.decode(info[info.startIndex..<(colon ?? info.endIndex)]) else {
                throw .malformedUser
            }
            guard !decodedUser.isEmpty else { throw .emptyUser }
            guard userMayHoldColon || !decodedUser.utf8.contains(ASCII.colon) else { throw .colonInUser }
            guard !decodedUser.utf8.contains(where: ASCII.isControl) else { throw .controlInUser }
            user = decodedUser
            if let colon {
                guard let decodedPassword = PercentEncoding.decode(info[(colon + 1)..<info.endIndex]) else {
                    throw .malformedPassword
                }
                guard !decodedPassword.utf8.contains(where: ASCII.isControl) else { throw .controlInPassword }
                password = decodedPassword
            }
            hostStart = at + 1
        }

        // Host and port.
        let hostAndPort = bytes[hostStart..<bytes.endIndex]
        let host: String
        var portText: ArraySlice<UInt8>?
        if hostAndPort.first == UInt8(ascii: "[") {
            guard let close = hostAndPort.firstIndex(of: UInt8(ascii: "]")) else { throw .unclosedIPv6 }
            let address = hostAndPort[(hostAndPort.startIndex + 1)..<close]
            guard address.contains(ASCII.colon),
                address.allSatisfy({ Hex.isDigit($0) || $0 == ASCII.colon || $0 == ASCII.dot })
            else { throw .notIPv6 }
            host = String(decoding: address, as: UTF8.self)
            let rest = hostAndPort[(close + 1)..<hostAndPort.endIndex]
            if !rest.isEmpty {
                guard rest.first == ASCII.colon else { throw .textAfterIPv6 }
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
            else { throw .badHostCharacter }
            host = String(decoding: name, as: UTF8.self)
            if let colon { portText = hostAndPort[(colon + 1)..<hostAndPort.endIndex] }
        }
        guard !host.isEmpty else { throw .noHost }
        var port: UInt16?
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(ASCII.isDigit),
                let value = Int(String(decoding: portText, as: UTF8.self)), (1...65535).contains(value)
            else { throw .badPort }
            port = UInt16(value)
        }
        return URLAuthority(user: user, password: password, host: host, port: port)
    }

    /// Splits `SCHEME://AUTHORITY[/REST]`: the scheme lower-cased (ASCII), the authority (up to the
    /// first `/` after `://`, or the end), and the rest from that `/` on (empty when there is none).
    /// nil when `url` has no `://` or what precedes it is not a scheme.
    public static func split(
        _ url: [UInt8]
    ) -> (scheme: String, authority: ArraySlice<UInt8>, rest: ArraySlice<UInt8>)? {
        let separator: [UInt8] = [ASCII.colon, ASCII.slash, ASCII.slash]
        guard url.count >= separator.count else { return nil }
        guard
            let schemeEnd = (0...(url.count - separator.count)).first(where: {
                url[$0..<($0 + separator.count)].elementsEqual(separator)
            }), ASCII.isScheme(url[0..<schemeEnd])
        else { return nil }
        let scheme = String(decoding: url[0..<schemeEnd].map { ASCII.lowercased($0) }, as: UTF8.self)
        let authorityStart = schemeEnd + separator.count
        let slash = url[authorityStart...].firstIndex(of: ASCII.slash) ?? url.count
        return (scheme, url[authorityStart..<slash], url[slash...])
    }

    /// `host` as a URL or a Host field writes it: an IPv6 address in brackets.
    public static func hostForURL(_ host: String) -> String {
        host.utf8.contains(ASCII.colon) ? "[" + host + "]" : host
    }
}

/// Why an authority was refused. Its description is one sentence naming the part at fault; none
/// quotes the text, so none can hold the password.
public enum URLAuthorityError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A raw space, control or non-ASCII byte, at this offset into the authority.
    case badCharacter(offset: Int)
    case queryOrFragment
    case malformedUser
    case emptyUser
    /// Only with `userMayHoldColon: false`.
    case colonInUser
    case controlInUser
    case malformedPassword
    case controlInPassword
    case unclosedIPv6
    case notIPv6
    case textAfterIPv6
    case badHostCharacter
    case noHost
    case badPort

    public var description: String {
        switch self {
        case .badCharacter(let offset):
            "the URL authority holds a space, control or non-ASCII character at offset \(offset)"
        case .queryOrFragment: "the URL has a query or fragment; it takes none"
        case .malformedUser: "the user name has a malformed %-escape or is not UTF-8"
        case .emptyUser: "the user name before @ is empty"
        case .colonInUser: "the user name holds a colon, which Basic authentication cannot send"
        case .controlInUser: "the user name holds a control character"
        case .malformedPassword: "the password has a malformed %-escape or is not UTF-8"
        case .controlInPassword: "the password holds a control character"
        case .unclosedIPv6: "the IPv6 address has no closing ]"
        case .notIPv6: "the text in [] is not an IPv6 address"
        case .textAfterIPv6: "only :PORT may follow the IPv6 address"
        case .badHostCharacter: "the host name holds a character a host name cannot have"
        case .noHost: "the URL names no host"
        case .badPort: "the port is not a number from 1 to 65535"
        }
    }
}
