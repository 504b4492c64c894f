// Field values and scanners: exact fixed-point decimals, times, dates, coordinates.
@testable import NMEA0183
import TestSupport
import Testing

/// Runs a field scanner on `text` placed in field 1 (and `extra` in field 2) of a valid sentence.
enum FieldScan {
    static func line(_ text: String, _ extra: String? = nil) -> [UInt8] {
        TestLine.sentence("GPTXT," + text + (extra.map { "," + $0 } ?? ""))
    }

    static func decimal(_ text: String) -> Result<NMEADecimal?, NMEAError> {
        let bytes = line(text)
        return Result { () throws(NMEAError) in try NMEASentence(validating: bytes.span).decimal(1) }
    }

    static func integer(_ text: String) -> Result<Int?, NMEAError> {
        let bytes = line(text)
        return Result { () throws(NMEAError) in try NMEASentence(validating: bytes.span).integer(1) }
    }

    static func character(_ text: String) -> Result<UInt8?, NMEAError> {
        let bytes = line(text)
        return Result { () throws(NMEAError) in try NMEASentence(validating: bytes.span).character(1) }
    }

    static func time(_ text: String) -> Result<NMEATime?, NMEAError> {
        let bytes = line(text)
        return Result { () throws(NMEAError) in try NMEASentence(validating: bytes.span).time(1) }
    }

    static func date(_ text: String, monthFirst: Bool) -> Result<NMEADate?, NMEAError> {
        let bytes = line(text)
        return Result { () throws(NMEAError) in
            try NMEASentence(validating: bytes.span).date(1, monthFirst: monthFirst)
        }
    }

    static func latitude(_ text: String, _ hemisphere: String) -> Result<NMEACoordinate?, NMEAError> {
        let bytes = line(text, hemisphere)
        return Result { () throws(NMEAError) in try NMEASentence(validating: bytes.span).latitude(1) }
    }

    static func longitude(_ text: String, _ hemisphere: String) -> Result<NMEACoordinate?, NMEAError> {
        let bytes = line(text, hemisphere)
        return Result { () throws(NMEAError) in try NMEASentence(validating: bytes.span).longitude(1) }
    }
}

/// One scanner input and its expected result.
struct ScanRow<Value: Equatable & Sendable>: Sendable, CustomTestStringConvertible {
    let text: String
    let expected: Result<Value?, NMEAError>
    var testDescription: String { "\"\(text)\" → \(expected)" }

    init(_ text: String, _ value: Value?) {
        self.text = text
        expected = .success(value)
    }

    init(_ text: String, throws error: NMEAError) {
        self.text = text
        expected = .failure(error)
    }
}

private func dec(_ value: Int64, _ scale: UInt8) -> NMEADecimal {
    NMEADecimal(value: value, scale: scale)
}

private let bad1 = NMEAError.invalidField(index: 1)
private let bad2 = NMEAError.invalidField(index: 2)

@Suite("Field values", .tags(.unit))
struct FieldValueTests {
    // MARK: NMEADecimal

    static let decimals: [ScanRow<NMEADecimal>] = [
        ScanRow("", nil),
        ScanRow("0", dec(0, 0)),
        ScanRow("12", dec(12, 0)),
        ScanRow("07", dec(7, 0)),
        ScanRow("-12.340", dec(-12340, 3)),
        ScanRow("+3", dec(3, 0)),
        ScanRow("+3.25", dec(325, 2)),
        ScanRow("-31.442", dec(-31442, 3)),
        ScanRow(".5", dec(5, 1)),
        ScanRow("-.5", dec(-5, 1)),
        ScanRow("+.05", dec(5, 2)),
        ScanRow("5.", dec(5, 0)),
        ScanRow("-5.", dec(-5, 0)),
        ScanRow("0.000", dec(0, 3)),
        ScanRow("007.50", dec(750, 2)),
        ScanRow("4134.49795459", dec(413_449_795_459, 8)),
        ScanRow("123456789012345678", dec(123_456_789_012_345_678, 0)),  // 18 digits
        ScanRow("-999999999999999999", dec(-999_999_999_999_999_999, 0)),
        ScanRow("1234567890.12345678", dec(123_456_789_012_345_678, 8)),
        ScanRow(".123456789012345678", dec(123_456_789_012_345_678, 18)),
        ScanRow("1234567890123456789", throws: bad1),  // 19 digits
        ScanRow("-1234567890123456789", throws: bad1),
        ScanRow("123456789.0123456789", throws: bad1),
        ScanRow("1..2", throws: bad1),
        ScanRow("1.2.3", throws: bad1),
        ScanRow("..", throws: bad1),
        ScanRow("-", throws: bad1),
        ScanRow("+", throws: bad1),
        ScanRow(".", throws: bad1),
        ScanRow("-.", throws: bad1),
        ScanRow("--1", throws: bad1),
        ScanRow("+-1", throws: bad1),
        ScanRow("1-", throws: bad1),
        ScanRow("1e5", throws: bad1),
        ScanRow("0x1A", throws: bad1),
        ScanRow(" 1", throws: bad1),
        ScanRow("1 ", throws: bad1),
        ScanRow("12a", throws: bad1),
        ScanRow("EHT-6.777", throws: bad1),
    ]

    @Test(arguments: decimals)
    func decimalScan(_ row: ScanRow<NMEADecimal>) {
        #expect(FieldScan.decimal(row.text) == row.expected)
    }

    @Test func parseDecimalReportsTheGivenIndex() throws {
        let good = Array("-6.777".utf8)
        let bad = Array("6.7a".utf8)
        #expect(try NMEASentence.parseDecimal(good.span, index: 11) == dec(-6777, 3))
        #expect(throws: NMEAError.invalidField(index: 11)) { try NMEASentence.parseDecimal(bad.span, index: 11) }
        let empty: [UInt8] = []
        #expect(try NMEASentence.parseDecimal(empty.span, index: 3) == nil)
    }

    static let doubles: [(NMEADecimal, Double)] = [
        (dec(-12340, 3), -12.34),
        (dec(5, 1), 0.5),
        (dec(0, 5), 0),
        (dec(413_449_795_459, 8), 4134.49795459),
        (dec(-31442, 3), -31.442),
        (dec(1, 17), 1e-17),
        (dec(123_456_789_012_345_678, 0), 1.2345678901234568e17),  // nearest Double
        (dec(123_456_789_012_345_678, 18), 0.123456789012345678),
        (dec(7, 0), 7),
    ]

    @Test(arguments: doubles)
    func doubleValue(_ decimal: NMEADecimal, _ expected: Double) {
        // One correctly rounded division: exactly the nearest Double to the decimal.
        #expect(decimal.doubleValue == expected)
    }

    static let rescalings: [(NMEADecimal, UInt8, Int64?)] = [
        (dec(-12345, 3), 3, -12345),
        (dec(-12345, 3), 2, -1234),  // truncates toward zero
        (dec(12345, 3), 2, 1234),
        (dec(12349, 3), 2, 1234),
        (dec(-12345, 3), 0, -12),
        (dec(-12345, 3), 5, -1_234_500),
        (dec(5, 1), 0, 0),
        (dec(15, 1), 0, 1),
        (dec(3605, 1), 0, 360),
        (dec(7, 0), 3, 7000),
        (dec(0, 0), 18, 0),
        (dec(922_337_203_685_477_580, 0), 1, 9_223_372_036_854_775_800),
        (dec(999_999_999_999_999_999, 0), 1, nil),  // overflow
        (dec(-999_999_999_999_999_999, 0), 2, nil),
        (dec(1, 0), 19, nil),
        (dec(1, 0), 18, 1_000_000_000_000_000_000),
    ]

    @Test(arguments: rescalings)
    func rescaled(_ decimal: NMEADecimal, _ scale: UInt8, _ expected: Int64?) {
        #expect(decimal.rescaled(to: scale) == expected)
    }

    static let descriptions: [(NMEADecimal, String)] = [
        (dec(-12340, 3), "-12.340"),
        (dec(12340, 3), "12.340"),
        (dec(5, 3), "0.005"),
        (dec(-5, 3), "-0.005"),
        (dec(123, 3), "0.123"),
        (dec(1234, 3), "1.234"),
        (dec(0, 2), "0.00"),
        (dec(0, 0), "0"),
        (dec(12, 0), "12"),
        (dec(-12, 0), "-12"),
        (dec(5, 1), "0.5"),
        (dec(413_449_795_459, 8), "4134.49795459"),
        (dec(Int64.min, 0), "-9223372036854775808"),
        (dec(Int64.max, 18), "9.223372036854775807"),
    ]

    @Test(arguments: descriptions)
    func description(_ decimal: NMEADecimal, _ expected: String) {
        #expect(decimal.description == expected)
        #expect("\(decimal)" == expected)
    }

    @Test func decimalEqualityIsRepresentational() {
        // 1.50 and 1.5 are different field texts; the type keeps them apart (documented as exact).
        #expect(dec(150, 2) != dec(15, 1))
        #expect(dec(150, 2).doubleValue == dec(15, 1).doubleValue)
    }

    // MARK: Integers and characters

    static let integers: [ScanRow<Int>] = [
        ScanRow("", nil),
        ScanRow("0", 0),
        ScanRow("07", 7),
        ScanRow("0133", 133),
        ScanRow("999999999", 999_999_999),
        ScanRow("1234567890", throws: bad1),
        ScanRow("-1", throws: bad1),
        ScanRow("+1", throws: bad1),
        ScanRow("1.0", throws: bad1),
        ScanRow(" 1", throws: bad1),
        ScanRow("1a", throws: bad1),
        ScanRow("A", throws: bad1),
    ]

    @Test(arguments: integers)
    func integerScan(_ row: ScanRow<Int>) {
        #expect(FieldScan.integer(row.text) == row.expected)
    }

    static let characters: [ScanRow<UInt8>] = [
        ScanRow("", nil),
        ScanRow("A", UInt8(ascii: "A")),
        ScanRow("7", UInt8(ascii: "7")),
        ScanRow(" ", UInt8(ascii: " ")),
        ScanRow("AV", throws: bad1),
        ScanRow("A ", throws: bad1),
    ]

    @Test(arguments: characters)
    func characterScan(_ row: ScanRow<UInt8>) {
        #expect(FieldScan.character(row.text) == row.expected)
    }

    // MARK: Time

    static func ns(_ h: Int64, _ m: Int64, _ s: Int64, _ nanos: Int64 = 0) -> NMEATime {
        NMEATime(nanosecondsOfDay: ((h * 60 + m) * 60 + s) * 1_000_000_000 + nanos)
    }

    static let times: [ScanRow<NMEATime>] = [
        ScanRow("", nil),
        ScanRow("000000", NMEATime(nanosecondsOfDay: 0)),
        ScanRow("132819.60", NMEATime(nanosecondsOfDay: 48_499_600_000_000)),
        ScanRow("003956.00", NMEATime(nanosecondsOfDay: 2_396_000_000_000)),
        ScanRow("053229.438", ns(5, 32, 29, 438_000_000)),
        ScanRow("123456.7", ns(12, 34, 56, 700_000_000)),
        ScanRow("123456.123456789", ns(12, 34, 56, 123_456_789)),
        ScanRow("235959", ns(23, 59, 59)),
        ScanRow("235959.999999999", NMEATime(nanosecondsOfDay: 86_399_999_999_999)),
        ScanRow("235960", NMEATime(nanosecondsOfDay: 86_400_000_000_000)),  // leap second
        ScanRow("235960.5", NMEATime(nanosecondsOfDay: 86_400_500_000_000)),
        ScanRow("240000", throws: bad1),  // hour 24
        ScanRow("236000", throws: bad1),  // minute 60
        ScanRow("235961", throws: bad1),  // second 61
        ScanRow("125960", throws: bad1),  // second 60 exists only at 23:59:60
        ScanRow("000060", throws: bad1),
        ScanRow("235860", throws: bad1),
        ScanRow("995959", throws: bad1),
        ScanRow("12345", throws: bad1),  // too short
        ScanRow("1", throws: bad1),
        ScanRow("1234567", throws: bad1),  // 7th character is not a point
        ScanRow("123456.", throws: bad1),  // point without digits
        ScanRow("123456.1234567890", throws: bad1),  // 10 fraction digits
        ScanRow("123456.5a", throws: bad1),
        ScanRow("123456..5", throws: bad1),
        ScanRow("12:34:56", throws: bad1),
        ScanRow("12345a", throws: bad1),
        ScanRow("-12345", throws: bad1),
        ScanRow(" 123456", throws: bad1),
    ]

    @Test(arguments: times)
    func timeScan(_ row: ScanRow<NMEATime>) {
        #expect(FieldScan.time(row.text) == row.expected)
    }

    @Test func timeComponents() {
        let t = NMEATime(hours: 13, minutes: 28, seconds: 19, nanoseconds: 600_000_000)
        #expect(t.nanosecondsOfDay == 48_499_600_000_000)
        #expect(t.hours == 13)
        #expect(t.minutes == 28)
        #expect(t.seconds == 19)
        #expect(t.nanoseconds == 600_000_000)
        let end = NMEATime(hours: 23, minutes: 59, seconds: 59, nanoseconds: 999_999_999)
        #expect(end.hours == 23)
        #expect(end.minutes == 59)
        #expect(end.seconds == 59)
        #expect(end.nanoseconds == 999_999_999)
        #expect(!end.isLeapSecond)
        #expect(NMEATime(hours: 0, minutes: 0, seconds: 0) == NMEATime(nanosecondsOfDay: 0))
    }

    @Test func leapSecondComponents() {
        // The type documents 23:59:60 as 86 400 s, and `seconds` adds 60 for it: the components of
        // a leap second must read back as 23:59:60, not 24:00:60.
        let leap = NMEATime(hours: 23, minutes: 59, seconds: 60, nanoseconds: 500_000_000)
        #expect(leap.nanosecondsOfDay == 86_400_500_000_000)
        #expect(leap.hours == 23)
        #expect(leap.minutes == 59)
        #expect(leap.seconds == 60)
        #expect(leap.nanoseconds == 500_000_000)
        #expect(leap.isLeapSecond)
        #expect(NMEATime(hours: 23, minutes: 59, seconds: 60).isLeapSecond)
        #expect(!NMEATime(hours: 23, minutes: 59, seconds: 59, nanoseconds: 999_999_999).isLeapSecond)
    }

    @Test func timeOrdering() {
        #expect(Self.ns(0, 0, 0) < Self.ns(0, 0, 0, 1))
        #expect(Self.ns(12, 0, 0) < Self.ns(23, 59, 60))
        #expect(!(Self.ns(12, 0, 0) < Self.ns(12, 0, 0)))
        #expect(
            [Self.ns(3, 0, 0), Self.ns(1, 0, 0), Self.ns(2, 0, 0)].sorted() == [
                Self.ns(1, 0, 0), Self.ns(2, 0, 0), Self.ns(3, 0, 0),
            ])
    }

    // MARK: Date

    static let dates: [(String, Bool, Result<NMEADate?, NMEAError>)] = [
        ("", false, .success(nil)),
        ("120419", false, .success(NMEADate(year: 2019, month: 4, day: 12))),
        ("180320", false, .success(NMEADate(year: 2020, month: 3, day: 18))),
        ("071296", true, .success(NMEADate(year: 1996, month: 7, day: 12))),  // Trimble mmddyy
        ("071296", false, .success(NMEADate(year: 1996, month: 12, day: 7))),
        ("290280", false, .success(NMEADate(year: 1980, month: 2, day: 29))),
        ("311279", false, .success(NMEADate(year: 2079, month: 12, day: 31))),
        ("010100", false, .success(NMEADate(year: 2000, month: 1, day: 1))),
        ("001219", false, .failure(bad1)),  // day 0
        ("321219", false, .failure(bad1)),  // day 32
        ("011319", false, .failure(bad1)),  // month 13
        ("010019", false, .failure(bad1)),  // month 0
        ("131296", true, .failure(bad1)),  // month 13, month first
        ("070096", true, .failure(bad1)),  // day 0, month first
        ("073296", true, .failure(bad1)),  // day 32, month first
        ("12041", false, .failure(bad1)),
        ("1204190", false, .failure(bad1)),
        ("12a419", false, .failure(bad1)),
        ("12.419", false, .failure(bad1)),
        ("-12041", false, .failure(bad1)),
    ]

    @Test(arguments: dates)
    func dateScan(_ text: String, _ monthFirst: Bool, _ expected: Result<NMEADate?, NMEAError>) {
        #expect(FieldScan.date(text, monthFirst: monthFirst) == expected)
    }

    @Test(arguments: [(0, 2000), (1, 2001), (19, 2019), (79, 2079), (80, 1980), (96, 1996), (99, 1999)])
    func expandYear(_ twoDigits: Int, _ year: Int) {
        #expect(NMEADate.expandYear(twoDigits) == year)
    }

    // MARK: Coordinates

    static let degreeExamples: [(NMEADecimal, Double)] = [
        (dec(413_449_795_459, 8), 41.574965909833333333),  // 4134.49795459 N
        (dec(-934_503_431_408, 8), -93.750571901333333333),  // 09345.03431408 W
        (dec(372_346_587_704, 8), 37.391097950666666667),
        (dec(-1_220_226_957_864, 8), -122.03782631066666667),
        (dec(-455_265_403, 5), -45.877567166666666667),  // 4552.65403 S
        (dec(1_703_000_668, 5), 170.50011133333333333),
        (dec(384_423_965, 5), 38.7373275),
        (dec(0, 4), 0),
        (dec(9000, 0), 90),
        (dec(18000, 0), 180),
        (dec(-18000, 0), -180),
        (dec(1, 4), 1.0 / 600_000),  // 0000.0001: a ten-thousandth of a minute
        (dec(4134, 0), 41 + 34.0 / 60),
        (dec(12345, 1), 12.575),
        (dec(5_959_999_999_999_999, 12), 59.999999999999983333),
        (dec(1, 12), 1.0 / 60e12),
    ]

    @Test(arguments: degreeExamples)
    func coordinateDegrees(_ raw: NMEADecimal, _ expected: Double) {
        let degrees = NMEACoordinate(raw: raw).degrees
        #expect(abs(degrees - expected) <= 1e-12, "\(raw) → \(degrees), expected \(expected)")
    }

    static let latitudes: [(String, String, Result<NMEACoordinate?, NMEAError>)] = [
        ("4134.49795459", "N", .success(NMEACoordinate(raw: dec(413_449_795_459, 8)))),
        ("4134.49795459", "S", .success(NMEACoordinate(raw: dec(-413_449_795_459, 8)))),
        ("4552.65403", "S", .success(NMEACoordinate(raw: dec(-455_265_403, 5)))),
        ("9000.0000", "N", .success(NMEACoordinate(raw: dec(90_000_000, 4)))),
        ("9000.0000", "S", .success(NMEACoordinate(raw: dec(-90_000_000, 4)))),
        ("8959.9999", "S", .success(NMEACoordinate(raw: dec(-89_599_999, 4)))),
        ("0000.0000", "S", .success(NMEACoordinate(raw: dec(0, 4)))),
        ("4134", "N", .success(NMEACoordinate(raw: dec(4134, 0)))),
        ("0.5", "N", .success(NMEACoordinate(raw: dec(5, 1)))),
        ("4134.123456789012", "N", .success(NMEACoordinate(raw: dec(4_134_123_456_789_012, 12)))),
        ("", "N", .success(nil)),
        ("", "", .success(nil)),
        ("4134.1234567890123", "N", .failure(bad1)),  // 13 minute decimals
        ("9000.0001", "N", .failure(bad1)),  // > 90
        ("9100.0000", "N", .failure(bad1)),
        ("18000.0000", "N", .failure(bad1)),
        ("4160.0000", "N", .failure(bad1)),  // minutes 60
        ("4199.0", "N", .failure(bad1)),
        ("-4134.5", "N", .failure(bad1)),  // sign belongs in the hemisphere
        ("+4134.5", "N", .success(NMEACoordinate(raw: dec(41345, 1)))),
        ("4134.4979545X", "N", .failure(bad1)),
        ("4134.5", "E", .failure(bad2)),
        ("4134.5", "W", .failure(bad2)),
        ("4134.5", "n", .failure(bad2)),
        ("4134.5", "NN", .failure(bad2)),
        ("4134.5", "", .failure(bad2)),
        ("4134.5", "X", .failure(bad2)),
    ]

    @Test(arguments: latitudes)
    func latitudeScan(_ text: String, _ hemisphere: String, _ expected: Result<NMEACoordinate?, NMEAError>) {
        #expect(FieldScan.latitude(text, hemisphere) == expected)
    }

    static let longitudes: [(String, String, Result<NMEACoordinate?, NMEAError>)] = [
        ("09345.03431408", "W", .success(NMEACoordinate(raw: dec(-934_503_431_408, 8)))),
        ("17030.00668", "E", .success(NMEACoordinate(raw: dec(1_703_000_668, 5)))),
        ("18000.0", "W", .success(NMEACoordinate(raw: dec(-180_000, 1)))),
        ("17959.9999", "E", .success(NMEACoordinate(raw: dec(179_599_999, 4)))),
        ("00000.000", "E", .success(NMEACoordinate(raw: dec(0, 3)))),
        ("", "W", .success(nil)),
        ("18000.1", "E", .failure(bad1)),  // > 180
        ("18100", "E", .failure(bad1)),
        ("17960.0", "E", .failure(bad1)),  // minutes 60
        ("-09345.0", "E", .failure(bad1)),
        ("0934a.0", "E", .failure(bad1)),
        ("09345.0", "N", .failure(bad2)),
        ("09345.0", "S", .failure(bad2)),
        ("09345.0", "e", .failure(bad2)),
        ("09345.0", "", .failure(bad2)),
    ]

    @Test(arguments: longitudes)
    func longitudeScan(_ text: String, _ hemisphere: String, _ expected: Result<NMEACoordinate?, NMEAError>) {
        #expect(FieldScan.longitude(text, hemisphere) == expected)
    }

    @Test func scannedCoordinateDegrees() throws {
        // End to end: text → exact raw value → degrees.
        let lat = try #require(try FieldScan.latitude("4134.49795459", "N").get())
        let lon = try #require(try FieldScan.longitude("09345.03431408", "W").get())
        #expect(abs(lat.degrees - 41.574965909833333) <= 1e-12)
        #expect(abs(lon.degrees - -93.750571901333333) <= 1e-12)
    }
}
