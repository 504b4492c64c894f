// Percent-encoding (RFC 3986 §2.1): the one home for writing and reading `%XX` escapes. TMMProtocol's
// registration query values, the NTRIP client's URL and mount point, and the MQTT broker URL use these.

/// Percent-encoding and -decoding over UTF-8 bytes, pure Swift.
public enum PercentEncoding {
    /// `text` with every byte outside RFC 3986's unreserved set (`A-Z a-z 0-9 - . _ ~`) written as
    /// `%XX` (upper-case hex, as RFC 3986 §2.1 recommends): a space is `%20`, never `+`, so both
    /// `HttpUtility.ParseQueryString` and RFC 3986 decoders read it back; `:` and `@` are escaped, so
    /// the result may stand as a URL's user name.
    public static func encode(_ text: String) -> String {
        encode(text) { ASCII.isUnreserved($0) }
    }

    /// `text` as one path segment (RFC 3986 §3.3 `segment`): unreserved bytes, sub-delims, `:` and
    /// `@` as they are, every other byte `%XX`. A server that compares the path without decoding it
    /// still finds `RTCM3+GLO` or `A,B`, while a space, `/`, `?`, `#`, `%` or non-ASCII byte cannot
    /// change the request's meaning.
    public static func encodePathSegment(_ text: String) -> String {
        encode(text) { isPathSegmentCharacter($0) }
    }

    /// `text` with the bytes `isKept` accepts as they are and every other byte `%XX`.
    public static func encode(_ text: String, keeping isKept: (UInt8) -> Bool) -> String {
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

    /// A byte RFC 3986 §3.3 lets a path segment hold unescaped (`pchar` less `%`): unreserved,
    /// sub-delims (`!$&'()*+,;=`), `:` and `@`.
    public static func isPathSegmentCharacter(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"):
            true
        default:
            ASCII.isUnreserved(c)
        }
    }

    /// Decodes `%XX` escapes once (either case of hex digit). `+` stays `+` (it is a legal scheme
    /// character in a callback URL, and only HTML forms mean a space by it). nil when a `%` is not
    /// followed by two hex digits.
    public static func decodeBytes(_ bytes: Span<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            if c == ASCII.percent {
                guard i + 2 < bytes.count, let byte = Hex.byte(high: bytes[i + 1], low: bytes[i + 2]) else {
                    return nil
                }
                out.append(byte)
                i += 3
            } else {
                out.append(c)
                i += 1
            }
        }
        return out
    }

    /// The text `bytes` spell with `%XX` decoded once; nil on a broken escape or when the result is
    /// not valid UTF-8.
    public static func decode(_ bytes: Span<UInt8>) -> String? {
        guard let decoded = decodeBytes(bytes) else { return nil }
        return String(validating: decoded, as: UTF8.self)
    }

    /// `decode` for a slice of a URL's bytes.
    public static func decode(_ bytes: ArraySlice<UInt8>) -> String? {
        decode(bytes.span)
    }

    /// `decode` for a string.
    public static func decode(_ text: some StringProtocol) -> String? {
        let bytes = Array(text.utf8)
        return decode(bytes.span)
    }
}
