// Base64 (RFC 4648 §4, standard alphabet, with padding), without Foundation.
//
// Decoding is strict about the alphabet, padding and length (a multiple of four, `=` only at the
// end) but, as RFC 4648 §3.5 allows, does not reject non-zero pad bits: RFC 6455 §4.1's own
// example key, "AQIDBAUGBwgJCgsMDQ4PEC==" (erratum 3150), was made by such an encoder, and a
// client built from it still deserves a handshake.

/// Base64 encoding and decoding with the standard alphabet and `=` padding.
public enum Base64 {
    private static let alphabet: InlineArray<64, UInt8> = [
        0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4A, 0x4B, 0x4C, 0x4D,  // A-M
        0x4E, 0x4F, 0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A,  // N-Z
        0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6A, 0x6B, 0x6C, 0x6D,  // a-m
        0x6E, 0x6F, 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A,  // n-z
        0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x2B, 0x2F,  // 0-9 + /
    ]
    private static let pad = UInt8(ascii: "=")

    /// The Base64 text of `bytes`, padded to a multiple of four characters.
    public static func encode(_ bytes: Span<UInt8>) -> String {
        String(decoding: encodeToBytes(bytes), as: UTF8.self)
    }

    /// The Base64 text of `bytes` as ASCII bytes.
    public static func encodeToBytes(_ bytes: Span<UInt8>) -> [UInt8] {
        let count = bytes.count
        var out: [UInt8] = []
        out.reserveCapacity((count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= count {
            let group = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out.append(symbol(group >> 18))
            out.append(symbol(group >> 12))
            out.append(symbol(group >> 6))
            out.append(symbol(group))
            i += 3
        }
        switch count - i {
        case 1:
            let group = UInt32(bytes[i]) << 16
            out.append(symbol(group >> 18))
            out.append(symbol(group >> 12))
            out.append(pad)
            out.append(pad)
        case 2:
            let group = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out.append(symbol(group >> 18))
            out.append(symbol(group >> 12))
            out.append(symbol(group >> 6))
            out.append(pad)
        default:
            break
        }
        return out
    }

    /// The bytes encoded by `text`, or nil if it is not padded standard Base64.
    ///
    /// Rejected: a length that is not a multiple of four, any byte outside `A-Z a-z 0-9 + /`
    /// (whitespace and the URL-safe `-` `_` included), `=` anywhere but the last one or two
    /// positions, and `===`. Accepted: non-zero pad bits (RFC 4648 §3.5 "MAY").
    public static func decode(_ text: Span<UInt8>) -> [UInt8]? {
        let count = text.count
        guard count % 4 == 0 else { return nil }
        guard count > 0 else { return [] }
        var padding = 0
        if text[count - 1] == pad { padding = text[count - 2] == pad ? 2 : 1 }
        var out: [UInt8] = []
        out.reserveCapacity(count / 4 * 3 - padding)
        var i = 0
        while i < count {
            let last = i + 4 == count
            let used = last ? 4 - padding : 4  // symbols that carry bits in this group
            var group: UInt32 = 0
            for j in 0..<4 {
                let value: UInt32
                if j < used {
                    guard let v = self.value(text[i + j]) else { return nil }
                    value = v
                } else {
                    value = 0  // a pad position, already known to be `=`
                }
                group = group << 6 | value
            }
            out.append(UInt8(truncatingIfNeeded: group >> 16))
            if used >= 3 { out.append(UInt8(truncatingIfNeeded: group >> 8)) }
            if used == 4 { out.append(UInt8(truncatingIfNeeded: group)) }
            i += 4
        }
        return out
    }

    /// `decode` for a string.
    public static func decode(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        return decode(bytes.span)
    }

    @inline(__always)
    private static func symbol(_ sextet: UInt32) -> UInt8 {
        alphabet[Int(sextet & 0x3F)]
    }

    @inline(__always)
    private static func value(_ c: UInt8) -> UInt32? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(c &- UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(c &- UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(c &- UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
