import ByteCoding

/// Percent-encoding for URL query values (RFC 3986 §2.1), pure Swift.
public enum PercentEncoding {
    /// `text` with every byte outside RFC 3986's unreserved set (`A-Z a-z 0-9 - . _ ~`) written as
    /// `%XX` (upper-case hex): a space is `%20`, never `+`, so both `HttpUtility.ParseQueryString`
    /// and RFC 3986 decoders read it back.
    public static func encode(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for c in text.utf8 {
            if ASCII.isUnreserved(c) {
                out.append(c)
            } else {
                out.append(ASCII.percent)
                Hex.append(c, to: &out)
            }
        }
        return String(decoding: out, as: UTF8.self)
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

    /// Decodes `%XX` escapes once; nil on a broken escape or when the result is not valid UTF-8.
    public static func decode(_ text: some StringProtocol) -> String? {
        let bytes = Array(text.utf8)
        guard let decoded = decodeBytes(bytes.span) else { return nil }
        return String(validating: decoded, as: UTF8.self)
    }
}
