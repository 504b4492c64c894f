/// Percent-encoding for URL query values (RFC 3986 §2.1), pure Swift.
public enum PercentEncoding {
    /// True for RFC 3986 unreserved bytes (`A-Z a-z 0-9 - . _ ~`), the only ones `encode` leaves as is.
    @inline(__always)
    static func isUnreserved(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// `text` with every byte outside the unreserved set written as `%XX` (upper-case hex): a space
    /// is `%20`, never `+`, so both `HttpUtility.ParseQueryString` and RFC 3986 decoders read it back.
    public static func encode(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for c in text.utf8 {
            if isUnreserved(c) {
                out.append(c)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(c >> 4)])
                out.append(hexDigits[Int(c & 15)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    @inline(__always)
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Decodes `%XX` escapes once. `+` stays `+` (it is a legal scheme character in a callback URL).
    /// nil when a `%` is not followed by two hex digits.
    public static func decodeBytes(_ bytes: Span<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, let hi = hexValue(bytes[i + 1]), let lo = hexValue(bytes[i + 2]) else {
                    return nil
                }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(c)
                i += 1
            }
        }
        return out
    }

    /// Decodes `%XX` escapes once; nil on a broken escape or when the result is not valid UTF-8.
    public static func decode(_ text: some StringProtocol) -> String? {
        let bytes = Array(text.utf8)
        guard let decoded = decodeBytes(bytes.span) else { return nil }
        return String(validating: decoded, as: UTF8.self)
    }
}
