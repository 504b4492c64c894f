// Hexadecimal digits: the one home for reading and writing them. Percent escapes
// (RFC 3986 §2.1), chunk sizes (RFC 9112 §7.1), NMEA checksums, udev's `\x2f` escapes and
// Bluetooth addresses all read hex digits of either case through `Hex.value`.

/// Hexadecimal digits over bytes.
public enum Hex {
    /// The value of the hexadecimal digit `c` (`0-9`, `A-F`, `a-f`), or nil.
    @inlinable @inline(__always)
    public static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c &- 0x30  // 0-9
        case 0x41...0x46: c &- 0x41 &+ 10  // A-F
        case 0x61...0x66: c &- 0x61 &+ 10  // a-f
        default: nil
        }
    }

    /// Whether `c` is a hexadecimal digit of either case.
    @inlinable @inline(__always)
    public static func isDigit(_ c: UInt8) -> Bool { value(c) != nil }

    /// The byte spelled by the two digits `high` and `low` (either case), or nil when one is not a
    /// hexadecimal digit.
    @inlinable @inline(__always)
    public static func byte(high: UInt8, low: UInt8) -> UInt8? {
        guard let h = value(high), let l = value(low) else { return nil }
        return h << 4 | l
    }

    /// The digit for the low four bits of `nibble`: `0-9` then `A-F`, or `a-f` when not
    /// `uppercase`.
    @inlinable @inline(__always)
    public static func digit(_ nibble: UInt8, uppercase: Bool = true) -> UInt8 {
        let n = nibble & 0x0F
        return n < 10 ? 0x30 &+ n : (uppercase ? 0x41 : 0x61) &+ n &- 10
    }

    /// Appends the two digits of `byte`, high nibble first.
    @inlinable
    public static func append(_ byte: UInt8, uppercase: Bool = true, to out: inout [UInt8]) {
        out.append(digit(byte >> 4, uppercase: uppercase))
        out.append(digit(byte, uppercase: uppercase))
    }

    /// The digits of every byte of `bytes`, two per byte, high nibble first (`"0A1B"`).
    public static func encode(_ bytes: Span<UInt8>, uppercase: Bool = true) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for i in bytes.indices { append(bytes[i], uppercase: uppercase, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes spelled by `text`, two digits each (either case); nil for an odd count or a byte
    /// that is not a hexadecimal digit.
    public static func decode(_ text: Span<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 2)
        var i = 0
        while i < text.count {
            guard let b = byte(high: text[i], low: text[i + 1]) else { return nil }
            out.append(b)
            i += 2
        }
        return out
    }

    /// `decode` for a string.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let bytes = Array(text.utf8)
        return decode(bytes.span)
    }
}
