// Base64 (RFC 4648 §4: alphabet `A-Z a-z 0-9 + /`, `=` padding), without Foundation. The one
// Base64 of the package: the WebSocket handshake decodes keys strictly, registration
// URLs leniently; the difference is `DecodingOptions`, not a second type.
//
// Both readings accept non-zero pad bits, as RFC 4648 §3.5 allows ("MAY"): RFC 6455 §4.1's own
// example key, "AQIDBAUGBwgJCgsMDQ4PEC==" (erratum 3150), was made by such an encoder, and a client
// built from it still deserves a handshake. Whoever needs the canonical text (access codes)
// re-encodes and compares.

/// Base64 encoding (the padded standard form, or base64url without padding for JWKs) and
/// decoding (strict by default, looser by option).
public enum Base64 {
    /// How much a decoder tolerates besides padded standard Base64.
    public struct DecodingOptions: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Padding may be missing or partial (`QQ`, `QQ=` read as `QQ==`); when present it must
        /// still fit the length (`QUJD=`, `QUI==` are refused). Without it the length must be a
        /// multiple of four and padding complete.
        public static let paddingOptional = DecodingOptions(rawValue: 1 << 0)
        /// The URL-safe letters of RFC 4648 §5, `-` and `_`, read as `+` and `/` (mixed freely with
        /// the standard ones).
        public static let urlSafeLetters = DecodingOptions(rawValue: 1 << 1)
        /// A space reads as `+`: a `+` that some layer form-decoded (`application/x-www-form-urlencoded`
        /// turns `+` into a space). Other whitespace is still refused.
        public static let spaceAsPlus = DecodingOptions(rawValue: 1 << 2)

        /// Padded standard Base64 only: the length a multiple of four, `=` only in the last one or
        /// two positions, no byte outside the alphabet (whitespace, `-` and `_` included).
        public static let strict: DecodingOptions = []
        /// What registration URLs need (TMM-API.md §3.2: apps hand-build them): every tolerance.
        public static let lenient: DecodingOptions = [.paddingOptional, .urlSafeLetters, .spaceAsPlus]
    }

    private static let pad = UInt8(ascii: "=")

    // MARK: Encoding

    /// The padded standard Base64 text of `bytes`, as ASCII bytes.
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

    /// The padded standard Base64 text of `bytes`.
    public static func encode(_ bytes: Span<UInt8>) -> String {
        String(decoding: encodeToBytes(bytes), as: UTF8.self)
    }

    /// The padded standard Base64 text of `bytes`.
    public static func encode(_ bytes: [UInt8]) -> String {
        encode(bytes.span)
    }

    /// The padded standard Base64 text of the UTF-8 bytes of `text`.
    public static func encode(_ text: String) -> String {
        encode(Array(text.utf8))
    }

    /// The base64url text of `bytes` without padding (RFC 4648 §5, as RFC 7518 §6.3 wants a
    /// JWK's `n` and `e`): `-` and `_` for `+` and `/`, no `=`.
    public static func encodeURLSafeUnpadded(_ bytes: [UInt8]) -> String {
        var text = encodeToBytes(bytes.span)
        while text.last == pad { text.removeLast() }
        for index in text.indices {
            if text[index] == UInt8(ascii: "+") {
                text[index] = UInt8(ascii: "-")
            } else if text[index] == UInt8(ascii: "/") {
                text[index] = UInt8(ascii: "_")
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    // MARK: Decoding

    /// The bytes `text` encodes, or nil when it is not Base64 as `options` read it.
    ///
    /// Always refused: a byte outside the alphabet (and outside what `options` add), `=` anywhere
    /// but the last one or two positions, three `=`, and a length that leaves a single symbol in
    /// the last group (it cannot carry a whole byte).
    public static func decode(_ text: Span<UInt8>, options: DecodingOptions = .strict) -> [UInt8]? {
        // Up to two trailing '=' are padding; a third, or one in the middle, is not in the
        // alphabet and fails below.
        var end = text.count
        var padding = 0
        while end > 0 && text[end - 1] == pad && padding < 2 {
            end -= 1
            padding += 1
        }
        let remainder = end % 4  // symbols in the last, partial group
        if remainder == 1 { return nil }
        if options.contains(.paddingOptional) {
            if padding > 0 && (remainder == 0 || padding > 4 - remainder) { return nil }
        } else {
            guard remainder == 0 ? padding == 0 : remainder + padding == 4 else { return nil }
        }
        var out: [UInt8] = []
        out.reserveCapacity(end / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var bits = 0
        for i in 0..<end {
            guard let v = value(text[i], options) else { return nil }
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

    /// `decode` for a string.
    public static func decode(_ text: some StringProtocol, options: DecodingOptions = .strict) -> [UInt8]? {
        let bytes = Array(text.utf8)
        return decode(bytes.span, options: options)
    }

    // MARK: Symbols

    @inline(__always)
    private static func symbol(_ sextet: UInt32) -> UInt8 {
        let s = UInt8(truncatingIfNeeded: sextet & 0x3F)
        switch s {
        case 0..<26: return UInt8(ascii: "A") &+ s
        case 26..<52: return UInt8(ascii: "a") &+ (s &- 26)
        case 52..<62: return UInt8(ascii: "0") &+ (s &- 52)
        case 62: return UInt8(ascii: "+")
        default: return UInt8(ascii: "/")
        }
    }

    @inline(__always)
    private static func value(_ c: UInt8, _ options: DecodingOptions) -> UInt32? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(c &- UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(c &- UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(c &- UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        case UInt8(ascii: "-") where options.contains(.urlSafeLetters): 62
        case UInt8(ascii: "_") where options.contains(.urlSafeLetters): 63
        case UInt8(ascii: " ") where options.contains(.spaceAsPlus): 62
        default: nil
        }
    }
}
