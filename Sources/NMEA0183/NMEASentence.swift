/// One validated NMEA 0183 sentence: a view into the caller's bytes plus the offsets of its
/// fields. Nothing is copied; the sentence lives no longer than the bytes it was parsed from.
///
/// Acceptance rule (pinned by tests against gpsd 3.22 on every capture in Tests/Fixtures):
/// - the line starts with `$`, holds only printable ASCII (0x20...0x7E) and no second `$`, and is
///   at most `maxLength` bytes once trailing spaces are removed;
/// - the address field is upper-case letters and digits, starting with a letter (`GPGGA`,
///   `PTNL`); this rejects receiver boot banners such as `$SkyTraq,Venus6`, as gpsd does;
/// - a `*` must be followed by exactly two hexadecimal digits that equal the XOR of every byte
///   between `$` and `*`; either case of hex digit is accepted and checked;
/// - a sentence **without** `*` is accepted unchecked (`hasChecksum == false`), as gpsd 3.22
///   accepts it (for example the `$GPTXT` in sl869.log).
public struct NMEASentence: ~Escapable {
    /// NMEA 0183 allows 82 bytes, but real receivers exceed it: Trimble's `$PTNL,GGK` and
    /// high-precision GGA run to about 95, u-blox `$PUBX` to about 120 (gpsd allows 130 in
    /// later versions). 160 leaves margin and keeps every field offset within a `UInt8`.
    public static let maxLength = 160
    /// GSV with NMEA 4.10 signal ids has 21 fields; 64 leaves room for proprietary sentences.
    public static let maxFields = 64

    /// The whole sentence from `$` to the last checksum digit (trailing spaces removed).
    public let bytes: Span<UInt8>
    /// `ends[i]` is the offset of the `,`, `*` or end of line that closes field `i`.
    private var ends: InlineArray<64, UInt8>
    /// Number of fields including the address (field 0).
    public private(set) var fieldCount: Int
    /// False for a sentence that carried no `*hh` checksum.
    public let hasChecksum: Bool

    /// Validates one line (without its CR/LF) and records its field boundaries.
    @_lifetime(copy line)
    public init(validating line: Span<UInt8>) throws(NMEAError) {
        var end = line.count
        while end > 0 && line[end - 1] == ASCII.space { end -= 1 }
        guard end > 0, line[0] == ASCII.dollar else { throw .missingStart }
        guard end <= Self.maxLength else { throw .tooLong(end) }

        var ends = InlineArray<64, UInt8>(repeating: 0)
        var fields = 0
        var sum: UInt8 = 0
        var i = 1
        var star = -1
        while i < end {
            let byte = line[i]
            if byte == ASCII.star {
                star = i
                break
            }
            guard byte >= 0x20, byte <= 0x7E, byte != ASCII.dollar else { throw .invalidByte(offset: i) }
            if byte == ASCII.comma {
                guard fields < Self.maxFields - 1 else { throw .tooManyFields }
                ends[fields] = UInt8(truncatingIfNeeded: i)
                fields += 1
            }
            sum ^= byte
            i += 1
        }
        ends[fields] = UInt8(truncatingIfNeeded: i)
        fields += 1

        if star >= 0 {
            guard end - star == 3,
                let high = ASCII.hexValue(line[star + 1]), let low = ASCII.hexValue(line[star + 2])
            else {
                // A stray `*` inside a field, or a checksum of the wrong length, is malformed.
                for j in (star + 1)..<end where line[j] < 0x20 || line[j] > 0x7E || line[j] == ASCII.dollar {
                    throw .invalidByte(offset: j)
                }
                throw .malformedChecksum
            }
            let expected = high << 4 | low
            guard expected == sum else { throw .badChecksum(expected: expected, computed: sum) }
        }

        // Address: upper-case letters and digits, starting with a letter.
        let addressEnd = Int(ends[0])
        guard addressEnd > 1, ASCII.isUpper(line[1]) else { throw .invalidAddress }
        for j in 2..<addressEnd where !(ASCII.isUpper(line[j]) || ASCII.isDigit(line[j])) {
            throw .invalidAddress
        }

        self.bytes = line.extracting(0..<end)
        self.ends = ends
        self.fieldCount = fields
        self.hasChecksum = star >= 0
    }

    /// Bytes of field `index` (0 is the address, e.g. `GPGGA`); empty when absent or empty.
    @_lifetime(copy self)
    public func field(_ index: Int) -> Span<UInt8> {
        guard index >= 0, index < fieldCount else { return bytes.extracting(0..<0) }
        let start = index == 0 ? 1 : Int(ends[index - 1]) + 1
        return bytes.extracting(start..<Int(ends[index]))
    }

    /// True when field `index` exists and is not empty.
    public func hasValue(_ index: Int) -> Bool {
        guard index > 0, index < fieldCount else { return index == 0 }
        return Int(ends[index]) > Int(ends[index - 1]) + 1
    }

    /// The talker of a standard sentence (`GP` in `GPGGA`), or `.proprietary` for `P...`.
    public var talker: Talker {
        let address = field(0)
        if address[0] == UInt8(ascii: "P") { return .proprietary }
        guard address.count >= 3 else { return .other(0) }
        return Talker(first: address[0], second: address[1])
    }

    /// Which typed decoder handles this sentence, from the address (and for `$PTNL` the id field).
    public var kind: SentenceKind {
        let address = field(0)
        if address.count == 5 && address[0] != UInt8(ascii: "P") {
            return SentenceKind(formatter: address[2], address[3], address[4])
        }
        if address.count == 4, address[0] == UInt8(ascii: "P"), address[1] == UInt8(ascii: "T"),
            address[2] == UInt8(ascii: "N"), address[3] == UInt8(ascii: "L")
        {
            // Trimble puts the sentence id in field 1: `$PTNL,GGK,...`.
            let id = field(1)
            if id.count == 3, id[0] == UInt8(ascii: "G"), id[1] == UInt8(ascii: "G"), id[2] == UInt8(ascii: "K") {
                return .ptnlGGK
            }
        }
        return .unknown
    }
}
