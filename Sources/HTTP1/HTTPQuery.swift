import ByteCoding

/// Query strings as `application/x-www-form-urlencoded` (the WHATWG URL standard's parser, which
/// browsers' `URLSearchParams` and the TMM web sample use): pairs separated by `&`, name and value
/// by the first `=`, `+` is a space, `%XX` is the byte 0xXX, and a `%` not followed by two hex
/// digits stays a literal `%` (WHATWG's rule: never an error).
public enum HTTPQuery {
    /// The decoded value of the first pair whose decoded name equals `key` (case-sensitive, as
    /// WHATWG compares), or nil. A name without `=` has the empty value.
    public static func value(of key: String, in query: Span<UInt8>) -> [UInt8]? {
        var pairStart = 0
        while pairStart <= query.count {
            var pairEnd = pairStart
            while pairEnd < query.count && query[pairEnd] != ASCII.ampersand { pairEnd += 1 }
            if pairEnd > pairStart {
                var separator = pairStart
                while separator < pairEnd && query[separator] != ASCII.equals { separator += 1 }
                if decodedEquals(query, pairStart..<separator, key) {
                    return separator < pairEnd ? decode(query.extracting((separator + 1)..<pairEnd)) : []
                }
            }
            pairStart = pairEnd + 1
        }
        return nil
    }

    /// `value(of:in:)` as a String; decoded bytes that are not UTF-8 become U+FFFD (as WHATWG).
    public static func string(of key: String, in query: Span<UInt8>) -> String? {
        guard let bytes = value(of: key, in: query) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Decodes one name or value: `+` to space, `%XX` to its byte, anything else as is.
    public static func decode(_ component: Span<UInt8>) -> [UInt8] {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(component.count)
        var i = 0
        while i < component.count {
            decoded.append(decodedByte(component, &i, component.count))
        }
        return decoded
    }

    /// The decoded byte at `i` (advancing `i` past its 1 or 3 bytes).
    @inline(__always)
    static func decodedByte(_ bytes: Span<UInt8>, _ i: inout Int, _ end: Int) -> UInt8 {
        let c = bytes[i]
        if c == ASCII.plus {
            i += 1
            return ASCII.space
        }
        if c == ASCII.percent, i + 2 < end, let byte = Hex.byte(high: bytes[i + 1], low: bytes[i + 2]) {
            i += 3
            return byte
        }
        i += 1
        return c
    }

    /// Whether `bytes[range]`, decoded, equals the UTF-8 of `key`, without building the decoded
    /// bytes.
    static func decodedEquals(_ bytes: Span<UInt8>, _ range: Range<Int>, _ key: String) -> Bool {
        var i = range.lowerBound
        for c in key.utf8 {
            guard i < range.upperBound, decodedByte(bytes, &i, range.upperBound) == c else { return false }
        }
        return i == range.upperBound
    }
}
