// NMEASentence(validating:): the acceptance rule, one table row per broken rule, plus field
// access, talkers and sentence kinds.
@testable import NMEA0183
import TestSupport
import Testing

/// Line builders shared by the NMEA0183 unit tests.
enum TestLine {
    /// XOR of `body` (the bytes between `$` and `*`).
    static func checksum(_ body: some Sequence<UInt8>) -> UInt8 {
        body.reduce(0, ^)
    }

    /// Two upper-case hex digits.
    static func hex(_ value: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: [digits[Int(value >> 4)], digits[Int(value & 0xF)]], as: UTF8.self)
    }

    /// `$` + body + `*` + the correct checksum, so a row breaks only the rule it means to break.
    static func sentence(_ body: String) -> [UInt8] {
        sentence(bytes: Array(body.utf8))
    }

    static func sentence(bytes body: [UInt8]) -> [UInt8] {
        [UInt8(ascii: "$")] + body + [UInt8(ascii: "*")] + Array(hex(checksum(body)).utf8)
    }

    /// A copy of a delivered span.
    static func copy(_ span: Span<UInt8>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(span.count)
        for i in span.indices { bytes.append(span[i]) }
        return bytes
    }

    static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// Splits the text between `$` and `*` (or the end) on commas: the independent oracle for
    /// `NMEASentence.field(_:)`.
    static func naiveFields(_ line: [UInt8]) -> [[UInt8]] {
        var body = line.dropFirst()
        if let star = body.firstIndex(of: UInt8(ascii: "*")) { body = body[..<star] }
        return body.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map { Array($0) }
    }
}

/// What a validated sentence looked like, copied out of the `~Escapable` view.
struct ValidatedLine: Equatable {
    var bytes: [UInt8]
    var fields: [[UInt8]]
    var hasChecksum: Bool
    var talker: Talker
    var kind: SentenceKind

    init(_ line: [UInt8]) throws(NMEAError) {
        let s = try NMEASentence(validating: line.span)
        bytes = TestLine.copy(s.bytes)
        fields = (0..<s.fieldCount).map { TestLine.copy(s.field($0)) }
        hasChecksum = s.hasChecksum
        talker = s.talker
        kind = s.kind
    }

    init(_ text: String) throws(NMEAError) {
        try self.init(Array(text.utf8))
    }
}

/// One line the validator must reject, and why.
struct RejectRow: Sendable, CustomTestStringConvertible {
    let name: String
    let line: [UInt8]
    let error: NMEAError
    var testDescription: String { name }

    init(_ name: String, _ line: [UInt8], _ error: NMEAError) {
        self.name = name
        self.line = line
        self.error = error
    }

    init(_ name: String, _ text: String, _ error: NMEAError) {
        self.init(name, Array(text.utf8), error)
    }
}

/// One line the validator must accept, with what it must record.
struct AcceptRow: Sendable, CustomTestStringConvertible {
    let name: String
    let line: [UInt8]
    /// The sentence bytes (trailing spaces removed).
    let bytes: [UInt8]
    let hasChecksum: Bool
    let fieldCount: Int
    var testDescription: String { name }

    init(_ name: String, _ line: [UInt8], bytes: [UInt8]? = nil, hasChecksum: Bool = true, fieldCount: Int) {
        self.name = name
        self.line = line
        self.bytes = bytes ?? line
        self.hasChecksum = hasChecksum
        self.fieldCount = fieldCount
    }

    init(_ name: String, _ text: String, bytes: String? = nil, hasChecksum: Bool = true, fieldCount: Int) {
        self.init(
            name, Array(text.utf8), bytes: bytes.map { Array($0.utf8) }, hasChecksum: hasChecksum,
            fieldCount: fieldCount)
    }
}

@Suite("NMEASentence validation", .tags(.unit))
struct SentenceValidationTests {
    static func sentence(_ body: String) -> [UInt8] { TestLine.sentence(body) }

    /// `$GPHDT,123.456,T*32` as bytes with `byte` inserted at offset 9 (after "$GPHDT,12"), with
    /// a checksum that is correct over the modified body.
    static func hdtWith(_ byte: UInt8) -> [UInt8] {
        TestLine.sentence(bytes: Array("GPHDT,12".utf8) + [byte] + Array("3.456,T".utf8))
    }

    @Test func checksumHelperIsRight() throws {
        // Known values: the HDT example and real fixture lines, recomputed.
        #expect(TestLine.text(Self.sentence("GPHDT,123.456,T")) == "$GPHDT,123.456,T*32")
        #expect(TestLine.hex(0x0A) == "0A")
        #expect(TestLine.hex(0xF0) == "F0")
        let lines = try Fixtures.lines("nmea-rtk.log").filter { $0.first == UInt8(ascii: "$") }
        #expect(lines.count > 100)
        for line in lines {
            let star = try #require(line.firstIndex(of: UInt8(ascii: "*")))
            #expect(TestLine.sentence(bytes: Array(line[1..<star])) == line, "\(TestLine.text(line))")
        }
    }

    // MARK: Rejections

    static let rejections: [RejectRow] = [
        RejectRow("missing $", "GPHDT,123.456,T*32", .missingStart),
        RejectRow("empty line", "", .missingStart),
        RejectRow("only spaces", "   ", .missingStart),
        RejectRow("leading space", " $GPHDT,123.456,T*32", .missingStart),
        RejectRow("`!` start (AIS encapsulation)", "!GPHDT,123.456,T*32", .missingStart),
        RejectRow("too long: 161 bytes", FramerTests.line(length: 161), .tooLong(161)),
        RejectRow("too long: 200 bytes", FramerTests.line(length: 200), .tooLong(200)),
        RejectRow(
            "too long after trailing spaces are removed", FramerTests.line(length: 161) + [0x20, 0x20],
            .tooLong(161)),
        RejectRow("non-printable byte 0x01", hdtWith(0x01), .invalidByte(offset: 9)),
        RejectRow("non-printable byte ESC", hdtWith(0x1B), .invalidByte(offset: 9)),
        RejectRow("non-printable byte TAB", hdtWith(0x09), .invalidByte(offset: 9)),
        RejectRow("non-printable byte DEL", hdtWith(0x7F), .invalidByte(offset: 9)),
        RejectRow("non-ASCII byte 0xB0", hdtWith(0xB0), .invalidByte(offset: 9)),
        RejectRow("CR inside the line", hdtWith(0x0D), .invalidByte(offset: 9)),
        RejectRow("embedded $", sentence("GPHDT,12$3.456,T"), .invalidByte(offset: 9)),
        RejectRow("embedded $ right after the start", sentence("$GPHDT,123.456,T"), .invalidByte(offset: 1)),
        RejectRow("non-printable byte after `*`", Array("$GPHDT,123.456,T*3".utf8) + [0x01], .invalidByte(offset: 18)),
        RejectRow("$ after `*`", "$GPHDT,123.456,T*3$", .invalidByte(offset: 18)),
        RejectRow(
            "non-printable without a checksum", Array("$GPTXT,a".utf8) + [0x00] + Array("b".utf8),
            .invalidByte(offset: 8)),
        RejectRow("lower-case address", sentence("gphdt,123.456,T"), .invalidAddress),
        RejectRow("mixed-case address", sentence("GPHdT,123.456,T"), .invalidAddress),
        RejectRow("empty address", sentence(",123.456,T"), .invalidAddress),
        RejectRow("bare $", "$", .invalidAddress),
        RejectRow("bare $ with a correct checksum", "$*00", .invalidAddress),
        RejectRow("address starting with a digit", sentence("1PHDT,123.456,T"), .invalidAddress),
        RejectRow("address with punctuation", sentence("GP-DT,123.456,T"), .invalidAddress),
        RejectRow("address with a space", sentence("GP DT,123.456,T"), .invalidAddress),
        RejectRow("boot banner (venus634lp.log)", "$SkyTraq,Venus6", .invalidAddress),
        RejectRow("too many fields: 65", sentence("GPTXT" + String(repeating: ",", count: 64)), .tooManyFields),
        RejectRow("too many fields: 71", sentence("GPTXT" + String(repeating: ",1", count: 70)), .tooManyFields),
        RejectRow("`*` with one hex digit", "$GPHDT,123.456,T*3", .malformedChecksum),
        RejectRow("`*` with three hex digits", "$GPHDT,123.456,T*32A", .malformedChecksum),
        RejectRow("`*` with no digits", "$GPHDT,123.456,T*", .malformedChecksum),
        RejectRow("`*` followed by non-hex (second digit)", "$GPHDT,123.456,T*3G", .malformedChecksum),
        RejectRow("`*` followed by non-hex (first digit)", "$GPHDT,123.456,T*G2", .malformedChecksum),
        RejectRow("`*` followed by spaces inside", "$GPHDT,123.456,T* 32", .malformedChecksum),
        RejectRow("stray `*` inside a field", "$GPHDT,123*456,T*32", .malformedChecksum),
        RejectRow("bad checksum", "$GPHDT,123.456,T*33", .badChecksum(expected: 0x33, computed: 0x32)),
        RejectRow("bad checksum, lower-case hex", "$GPHDT,123.456,T*3a", .badChecksum(expected: 0x3A, computed: 0x32)),
        RejectRow(
            "bad checksum checked before the address", "$gphdt,123.456,T*00",
            .badChecksum(expected: 0x00, computed: 0x12)),  // 0x32 with five letters' 0x20 bit flipped
        RejectRow(
            "bad checksum (firefly-II.log GGA)",
            "$GPGGA,005947.00,3715.6616,N,12157.6709,W,,11,0.8,86.0,M,-30.1,M,,*54",
            .badChecksum(expected: 0x54, computed: 0x56)),
        RejectRow(
            "Trimble manual GGK example (checksum 48 is wrong, 4B is right)",
            "$PTNL,GGK,172814.00,071296,3723.46587704,N,12202.26957864,W,3,06,1.7,EHT-6.777,M*48",
            .badChecksum(expected: 0x48, computed: 0x4B)),
    ]

    @Test(arguments: rejections)
    func rejects(_ row: RejectRow) {
        #expect(throws: row.error) { try ValidatedLine(row.line) }
    }

    // MARK: Acceptances

    static let rtkGGA = "$GNGGA,132819.60,4134.49795459,N,09345.03431408,W,2,10,0.9,278.161,M,-31.442,M,6.6,0133*6A"

    static let acceptances: [AcceptRow] = [
        AcceptRow("real GGA (nmea-rtk.log)", rtkGGA, fieldCount: 15),
        AcceptRow(
            "real RMC with NMEA 4.10 status (ublox)",
            "$GNRMC,003956.00,A,4552.65403,S,17030.00668,E,0.025,,120419,,,A,V*07",
            fieldCount: 14),
        AcceptRow(
            "lower-case hex checksum, correct",
            "$GNGGA,132819.60,4134.49795459,N,09345.03431408,W,2,10,0.9,278.161,M,-31.442,M,6.6,0133*6a",
            fieldCount: 15),
        AcceptRow(
            "no checksum (sl869.log)", "$GPTXT,TELIT SW Version: SL869 v3.1.2.1 -STD -N96", hasChecksum: false,
            fieldCount: 2),
        AcceptRow("trailing spaces trimmed", "$GPHDT,123.456,T*32   ", bytes: "$GPHDT,123.456,T*32", fieldCount: 3),
        AcceptRow(
            "trailing spaces trimmed without checksum", "$GPTXT,ab  ", bytes: "$GPTXT,ab", hasChecksum: false,
            fieldCount: 2),
        AcceptRow("spaces before `*` are data", sentence("GPTXT,ab  "), fieldCount: 2),
        AcceptRow("exactly 160 bytes", FramerTests.line(length: 160), fieldCount: 2),
        AcceptRow(
            "160 bytes plus trailing spaces", FramerTests.line(length: 160) + [0x20, 0x20, 0x20],
            bytes: FramerTests.line(length: 160), fieldCount: 2),
        AcceptRow("exactly 64 fields", sentence("GPTXT" + String(repeating: ",", count: 63)), fieldCount: 64),
        AcceptRow("only empty fields", sentence("GPGSA,,,"), fieldCount: 4),
        AcceptRow("address only", sentence("GPHDT"), fieldCount: 1),
        AcceptRow("address only, no checksum", "$GPHDT", hasChecksum: false, fieldCount: 1),
        AcceptRow("address with digits", sentence("A1B2C,1"), fieldCount: 2),
        AcceptRow(
            "Trimble GGK, checksum recomputed",
            sentence("PTNL,GGK,172814.00,071296,3723.46587704,N,12202.26957864,W,3,06,1.7,EHT-6.777,M"),
            fieldCount: 13),
        AcceptRow("checksum 00", "$AA*00", fieldCount: 1),
    ]

    @Test(arguments: acceptances)
    func accepts(_ row: AcceptRow) throws {
        let v = try ValidatedLine(row.line)
        #expect(v.bytes == row.bytes)
        #expect(v.hasChecksum == row.hasChecksum)
        #expect(v.fields.count == row.fieldCount)
        #expect(v.fields == TestLine.naiveFields(row.bytes))
    }

    @Test func lowerCaseChecksumIsReallyChecked() throws {
        // Control for the acceptance row: the same sentence with each digit off by one fails.
        let good = try ValidatedLine(Self.rtkGGA.replacingOccurrences("*6A", "*6a"))
        #expect(good.hasChecksum)
        #expect(throws: NMEAError.badChecksum(expected: 0x6B, computed: 0x6A)) {
            try ValidatedLine(Self.rtkGGA.replacingOccurrences("*6A", "*6b"))
        }
    }

    /// Every sentence line of every capture that carries a checksum and validates: the recorded
    /// fields equal a naive split, and the sentence bytes are the line.
    @Test(arguments: Fixtures.captureNames)
    func fieldsOfEveryAcceptedFixtureLineMatchANaiveSplit(_ capture: String) throws {
        var accepted = 0
        for line in try Fixtures.lines(capture) where line.first == UInt8(ascii: "$") {
            guard let v = try? ValidatedLine(line) else { continue }
            accepted += 1
            var trimmed = line
            while trimmed.last == 0x20 { trimmed.removeLast() }
            #expect(v.bytes == trimmed)
            #expect(v.fields == TestLine.naiveFields(trimmed), "\(TestLine.text(line))")
        }
        #expect(accepted > 10)
    }

    // MARK: Field access

    @Test func fieldAccess() throws {
        let line = Array(Self.rtkGGA.utf8)
        let s = try NMEASentence(validating: line.span)
        let count = s.fieldCount
        let first = TestLine.text(TestLine.copy(s.field(0)))
        let second = TestLine.text(TestLine.copy(s.field(1)))
        let middle = TestLine.text(TestLine.copy(s.field(7)))
        let last = TestLine.text(TestLine.copy(s.field(14)))
        let past = s.field(15).count
        let negative = s.field(-1).count
        let far = s.field(1000).count
        #expect(count == 15)
        #expect(first == "GNGGA")
        #expect(second == "132819.60")
        #expect(middle == "10")
        #expect(last == "0133")  // the checksum is not part of the last field
        #expect(past == 0)
        #expect(negative == 0)
        #expect(far == 0)
    }

    @Test func emptyFieldsAndHasValue() throws {
        // ublox VTG: empty course fields, and a trailing empty field before the checksum.
        let line = Array("$GNVTG,,T,,M,0.025,N,0.045,K,A*3B".utf8)
        let s = try NMEASentence(validating: line.span)
        let values = (0...11).map { s.hasValue($0) }
        let firstEmpty = s.field(1).count
        let thirdEmpty = s.field(3).count
        let negative = s.hasValue(-1)
        #expect(values == [true, false, true, false, true, true, true, true, true, true, false, false])
        #expect(firstEmpty == 0)
        #expect(thirdEmpty == 0)
        #expect(!negative)

        let trailing = Self.sentence("GPGSA,A,,")
        let t = try NMEASentence(validating: trailing.span)
        let tCount = t.fieldCount
        let tValues = (0..<tCount).map { t.hasValue($0) }
        #expect(tCount == 4)
        #expect(tValues == [true, true, false, false])
    }

    @Test func fieldsWithoutChecksumRunToTheEndOfTheLine() throws {
        let v = try ValidatedLine("$GPTXT,01,01,02,ANTSTATUS=OPEN")
        #expect(!v.hasChecksum)
        #expect(v.fields.map(TestLine.text) == ["GPTXT", "01", "01", "02", "ANTSTATUS=OPEN"])
    }

    // MARK: Talkers and kinds

    static let talkers: [(String, Talker)] = [
        ("GP", .gps), ("GL", .glonass), ("GA", .galileo), ("GB", .beidou), ("BD", .beidou),
        ("GQ", .qzss), ("QZ", .qzss), ("GI", .navic), ("GN", .combined),
        ("II", .other(UInt16(UInt8(ascii: "I")) << 8 | UInt16(UInt8(ascii: "I")))),
        ("EC", .other(0x4543)),
        ("GX", .other(0x4758)),
    ]

    @Test(arguments: talkers)
    func talker(_ talker: String, _ expected: Talker) throws {
        let v = try ValidatedLine(Self.sentence(talker + "HDT,123.456,T"))
        #expect(v.talker == expected)
    }

    @Test(arguments: ["PTNL,GGK,1", "PGRME,1", "PUBX,00", "PTNLRBA,1", "PGGA,1", "P"])
    func proprietaryTalker(_ body: String) throws {
        let v = try ValidatedLine(Self.sentence(body))
        #expect(v.talker == .proprietary)
    }

    static let kinds: [(String, SentenceKind)] = [
        ("GPGGA,", .gga), ("GNGNS,", .gns), ("GNRMC,", .rmc), ("GLGLL,", .gll), ("GPVTG,", .vtg),
        ("GNGSA,", .gsa), ("GBGSV,", .gsv), ("GNGST,", .gst), ("GNZDA,", .zda), ("HEHDT,", .hdt),
        ("IIHDT,", .hdt), ("GPHDT", .hdt),
        ("PTNL,GGK,", .ptnlGGK), ("PTNL,GGK", .ptnlGGK),
        ("PTNL,XYZ,", .unknown), ("PTNL,GGKX,", .unknown), ("PTNL,GG,", .unknown), ("PTNL,ggk", .unknown),
        ("PTNL,", .unknown), ("PTNLRBA,", .unknown), ("PTNLGGK,", .unknown), ("PTNX,GGK,", .unknown),
        ("PAGGA,", .unknown),  // proprietary, not a GGA
        ("GPGGAX,", .unknown), ("GPGG,", .unknown), ("GPTXT,", .unknown), ("GPHDG,", .unknown),
        ("GPGSVA,", .unknown),
    ]

    @Test(arguments: kinds)
    func kind(_ body: String, _ expected: SentenceKind) throws {
        let v = try ValidatedLine(Self.sentence(body))
        #expect(v.kind == expected)
    }

    @Test func unknownKindsAreUnsupportedMessages() throws {
        for body in ["GPTXT,01,01,02,HELLO", "PTNL,XYZ,1", "PTNLRBA,1"] {
            let line = Self.sentence(body)
            #expect(throws: NMEAError.unsupportedSentence) {
                let s = try NMEASentence(validating: line.span)
                _ = try NMEAMessage(s)
            }
        }
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> [UInt8] {
        var bytes = Array(utf8)
        let t = Array(target.utf8)
        var i = 0
        while i + t.count <= bytes.count {
            if Array(bytes[i..<(i + t.count)]) == t {
                bytes.replaceSubrange(i..<(i + t.count), with: Array(replacement.utf8))
                return bytes
            }
            i += 1
        }
        return bytes
    }
}
