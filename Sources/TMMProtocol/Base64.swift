/// Standard Base64 (RFC 4648 §4, alphabet `A-Z a-z 0-9 + /`, `=` padding), pure Swift.
///
/// - `encode` always writes the padded standard form (what TMM replies carry, §3.2).
/// - `decode` is tolerant in the ways real registration URLs need and strict otherwise:
///   missing padding is accepted, the URL-safe letters `-` and `_` read as `+` and `/`, and a space
///   reads as `+` (a `+` that some layer form-decoded); partial padding (`QQ=`) is accepted too.
///   Anything else (other characters, padding in the middle or too much of it, a dangling single
///   character) is rejected with `nil`. Non-zero trailing bits are ignored, as RFC 4648 allows.
public enum Base64 {
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The padded standard Base64 text of `bytes`, as ASCII bytes.
    public static func encodeBytes(_ bytes: Span<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let n = UInt32(bytes[i]) << 16
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        } else if rest == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(UInt8(ascii: "="))
        }
        return out
    }

    /// The padded standard Base64 text of `bytes`.
    public static func encode(_ bytes: [UInt8]) -> String {
        String(decoding: encodeBytes(bytes.span), as: UTF8.self)
    }

    /// The padded standard Base64 text of the UTF-8 bytes of `text`.
    public static func encode(_ text: String) -> String {
        encode(Array(text.utf8))
    }

    /// The 6-bit value of one Base64 character (tolerant letters included), or nil.
    @inline(__always)
    static func sextet(_ c: UInt8) -> UInt32? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return UInt32(c - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return UInt32(c - UInt8(ascii: "a") + 26)
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c - UInt8(ascii: "0") + 52)
        case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: " "): return 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): return 63
        default: return nil
        }
    }

    /// Decodes Base64 text (see the type's tolerance rules); nil when it is not Base64.
    public static func decode(_ text: Span<UInt8>) -> [UInt8]? {
        // Strip up to two trailing '=' (padding is optional, but when present it must be right).
        var end = text.count
        var padding = 0
        while end > 0 && text[end - 1] == UInt8(ascii: "=") && padding < 2 {
            end -= 1
            padding += 1
        }
        let remainder = end % 4
        if remainder == 1 { return nil }
        if padding > 0 && (remainder == 0 || padding > 4 - remainder) { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(end / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var bits = 0
        for i in 0..<end {
            guard let v = sextet(text[i]) else { return nil }
            accumulator = accumulator << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        return out
    }

    /// Decodes the Base64 text `text`; nil when it is not Base64.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let bytes = Array(text.utf8)
        return decode(bytes.span)
    }
}
