import ByteCoding

/// One validated NMEA 0183 sentence: a view into the caller's bytes plus where its fields end.
/// Nothing is copied; the sentence lives no longer than the bytes it was parsed from.
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
    /// Number of fields including the address (field 0).
    public let fieldCount: Int
    /// False for a sentence that carried no `*hh` checksum.
    public let hasChecksum: Bool
    /// Offset of the `*`, or `bytes.count` without checksum: where the last field ends.
    let fieldsEnd: UInt8
    /// Offset of the `,`, `*` or end of line that closes the address (field 0).
    let addressEnd: UInt8

    /// Validates one line (without its CR/LF) and records where its fields end.
    @_lifetime(copy line)
    public init(validating line: Span<UInt8>) throws(NMEAError) {
        var end = line.count
        while end > 0 && line[end - 1] == ASCII.space { end -= 1 }
        guard end > 0, line[0] == ASCII.dollar else { throw .missingStart }
        guard end <= Self.maxLength else { throw .tooLong(end) }

        var commas = 0
        var addressEnd = -1
        var sum: UInt8 = 0
        var star = -1
        // Indexing a window of exactly the bytes to scan lets the compiler drop the bounds check
        // on every byte; `j` is the offset in `line` minus 1.
        let body = line.extracting(1..<end)
        var j = 0
        while j < body.count {
            let byte = body[j]
            // `,` `*` and `$` are all below `-`: one comparison keeps digits, letters, `.` and `-`
            // (almost every byte) on the short path.
            if byte &- ASCII.minus > 0x7E - ASCII.minus {
                guard byte &- 0x20 <= 0x5E else { throw .invalidByte(offset: j &+ 1) }
                if byte == ASCII.comma {
                    guard commas < Self.maxFields - 1 else { throw .tooManyFields }
                    if commas == 0 { addressEnd = j &+ 1 }
                    commas &+= 1
                } else if byte == ASCII.star {
                    star = j &+ 1
                    break
                } else if byte == ASCII.dollar {
                    throw .invalidByte(offset: j &+ 1)
                }
            }
            sum ^= byte
            j &+= 1
        }
        let i = j &+ 1  // where the scan stopped: the `*`, or `end`
        if addressEnd < 0 { addressEnd = i }

        if star >= 0 {
            guard end - star == 3,
                let high = Hex.value(line[star + 1]), let low = Hex.value(line[star + 2])
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
        try Self.checkAddress(line, end: addressEnd)

        self.bytes = line.extracting(0..<end)
        self.fieldCount = commas &+ 1
        self.hasChecksum = star >= 0
        self.fieldsEnd = UInt8(truncatingIfNeeded: i)
        self.addressEnd = UInt8(truncatingIfNeeded: addressEnd)
    }

    /// The rest of the validation for a line `NMEAFramer` delivers, which the framer has scanned
    /// already: it holds only printable ASCII, no second `$`, at most `maxLength` bytes. `sum` is
    /// the XOR of the bytes after `$` up to the first `*` (`star`, or -1) and `commas` the number
    /// of commas before it. Accepts and rejects exactly as `init(validating:)` does on the same
    /// line, with the same error.
    @_lifetime(copy line)
    init(framed line: Span<UInt8>, sum: UInt8, star: Int, commas: Int) throws(NMEAError) {
        var end = line.count
        while line[end &- 1] == ASCII.space { end &-= 1 }  // line[0] is `$`
        guard commas < Self.maxFields else { throw .tooManyFields }
        let fieldsEnd: Int
        if star >= 0 {
            guard end &- star == 3,
                let high = Hex.value(line[star &+ 1]), let low = Hex.value(line[star &+ 2])
            else { throw .malformedChecksum }
            let expected = high << 4 | low
            guard expected == sum else { throw .badChecksum(expected: expected, computed: sum) }
            fieldsEnd = star
        } else {
            fieldsEnd = end
        }
        // The address is upper-case letters and digits up to the first `,` (or the end of the
        // fields), starting with a letter: the first other byte must be that `,` or that end.
        guard fieldsEnd > 1, ASCII.isUpper(line[1]) else { throw .invalidAddress }
        var addressEnd = 2
        while addressEnd < fieldsEnd {
            let b = line[addressEnd]
            guard ASCII.isUpper(b) || ASCII.isDigit(b) else {
                guard b == ASCII.comma else { throw .invalidAddress }
                break
            }
            addressEnd &+= 1
        }

        self.bytes = line.extracting(0..<end)
        self.fieldCount = commas &+ 1
        self.hasChecksum = star >= 0
        self.fieldsEnd = UInt8(truncatingIfNeeded: fieldsEnd)
        self.addressEnd = UInt8(truncatingIfNeeded: addressEnd)
    }

    /// Address: upper-case letters and digits, starting with a letter.
    @inline(__always)
    private static func checkAddress(_ line: Span<UInt8>, end: Int) throws(NMEAError) {
        guard end > 1, ASCII.isUpper(line[1]) else { throw .invalidAddress }
        var j = 2
        while j < end {
            let b = line[j]
            guard ASCII.isUpper(b) || ASCII.isDigit(b) else { throw .invalidAddress }
            j &+= 1
        }
    }

    /// Bytes of field `index` (0 is the address, e.g. `GPGGA`); empty when absent or empty.
    ///
    /// Finds the field by counting commas from the start. The decoders walk the fields in order
    /// with a `FieldCursor` instead, which reads every byte once.
    @_lifetime(copy self)
    public func field(_ index: Int) -> Span<UInt8> {
        guard index >= 0, index < fieldCount else { return bytes.extracting(0..<0) }
        let limit = Int(fieldsEnd)
        let start = fieldStart(index)
        var end = start
        while end < limit && bytes[end] != ASCII.comma { end &+= 1 }
        return bytes.extracting(start..<end)
    }

    /// True when field `index` exists and is not empty.
    public func hasValue(_ index: Int) -> Bool {
        guard index > 0, index < fieldCount else { return index == 0 }
        return !field(index).isEmpty
    }

    /// A cursor on field 1, for decoders that read the fields in order.
    @_lifetime(copy self)
    func cursor() -> FieldCursor {
        FieldCursor(bytes: bytes, limit: Int(fieldsEnd), position: Int(addressEnd) &+ 1, index: 1)
    }

    /// A cursor on field `index` (past the last field when there is no such field).
    @_lifetime(copy self)
    func cursor(at index: Int) -> FieldCursor {
        let limit = Int(fieldsEnd)
        guard index >= 0, index < fieldCount else {
            return FieldCursor(bytes: bytes, limit: limit, position: limit &+ 1, index: index)
        }
        return FieldCursor(bytes: bytes, limit: limit, position: fieldStart(index), index: index)
    }

    /// Offset of the first byte of field `index` (`0 ..< fieldCount`).
    private func fieldStart(_ index: Int) -> Int {
        var start = 1
        var remaining = index
        while remaining > 0 {
            while bytes[start] != ASCII.comma { start &+= 1 }
            start &+= 1
            remaining &-= 1
        }
        return start
    }

    /// The bytes of the last field (`fieldCount - 1`), found from the end.
    @_lifetime(copy self)
    func lastField() -> Span<UInt8> {
        let end = Int(fieldsEnd)
        var start = end
        while start > 1 && bytes[start &- 1] != ASCII.comma { start &-= 1 }
        return bytes.extracting(start..<end)
    }

    /// The talker of a standard sentence (`GP` in `GPGGA`), or `.proprietary` for `P...`.
    public var talker: Talker {
        if bytes[1] == UInt8(ascii: "P") { return .proprietary }
        guard addressEnd >= 4 else { return .other(0) }
        return Talker(first: bytes[1], second: bytes[2])
    }

    /// Which typed decoder handles this sentence: the row (`SentenceKind.row`) whose tag its
    /// address (and for a proprietary sentence with an id, such as `$PTNL,GGK`, field 1) matches.
    public var kind: SentenceKind {
        if bytes[1] != UInt8(ascii: "P") {
            // A standard address: two talker letters, then the three-letter formatter.
            guard addressEnd == 6 else { return .unknown }
            return SentenceKind(formatter: bytes[3], bytes[4], bytes[5])
        }
        let address = bytes.extracting(1..<Int(addressEnd))
        return SentenceKind.proprietary(address: address) { SentenceTags.packed(field(1)) }
    }
}
