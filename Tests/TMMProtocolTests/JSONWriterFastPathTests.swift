// Edge cases of the writer's fast paths: verbatim key runs, digits written in eight-digit groups,
// the one-reservation fixed-point numbers, and the satellite objects written in place.
import Foundation
import GNSS
import TestSupport
import Testing
import TMMProtocol

/// Writes with `body` and returns the text.
private func written(_ body: (inout JSONWriter) -> Void) -> String {
    var writer = JSONWriter(reservingCapacity: 16)
    body(&writer)
    return String(decoding: writer.bytes, as: UTF8.self)
}

@Suite("JSONWriter fast paths", .tags(.unit))
struct JSONWriterFastPathTests {
    /// Expected spellings recorded from the writer before the fast paths (per-byte appends).
    @Test(arguments: [
        // Rounding carries through every digit into the integer part.
        (9.9999995, 6, "10.0"),
        (-9.9999995, 6, "-10.0"),
        (9.9999995, 7, "9.9999995"),
        (9.99999949, 7, "9.9999995"),
        (0.99999995, 7, "1.0"),
        (99_999.999_999_99, 7, "100000.0"),
        (1.0 - 1e-16, 15, "1.0"),
        // Negative zero, and negatives that round to zero, lose their sign.
        (-0.0, 10, "0.0"),
        (-0.000_000_04, 7, "0.0"),
        // Large values: whole parts of 16 to 19 digits cross both digit-group boundaries.
        (1e15, 5, "1000000000000000.0"),
        (1e16, 4, "10000000000000000.0"),
        (1e17, 3, "100000000000000000.0"),
        (9.2e17, 2, "920000000000000000.0"),
        (8.99e17, 1, "899000000000000000.0"),
        (1e18, 0, "1000000000000000000.0"),
        (8.99e18, 0, "8990000000000000000.0"),
        // Scaled past 10^18: the fraction shows the double's binary value, as before.
        (123_456_789.123_456_789, 10, "123456789.1234567936"),
    ])
    func numberEdgeCases(value: Double, decimals: Int, expected: String) {
        #expect(written { $0.number(value, decimals: decimals) } == expected)
    }

    @Test func nonFiniteAndNilAreNull() {
        #expect(written { $0.number(.nan, decimals: 7) } == "null")
        #expect(written { $0.number(.infinity, decimals: 0) } == "null")
        #expect(written { $0.number(-.infinity, decimals: 15) } == "null")
        #expect(written { $0.number(nil as Double?, decimals: 3) } == "null")
        #expect(written { $0.integer(nil as Int?) } == "null")
    }

    /// Lengths on each side of the eight-digit groups, and the zero padding inside a group.
    @Test(arguments: [
        (9, "9"), (10, "10"), (99_999_999, "99999999"), (100_000_000, "100000000"),
        (100_000_001, "100000001"), (1_000_000_000_000_000, "1000000000000000"),
        (9_999_999_999_999_999, "9999999999999999"), (10_000_000_000_000_000, "10000000000000000"),
        (10_000_000_000_000_001, "10000000000000001"), (1_000_000_000_000_000_000, "1000000000000000000"),
        (-100_000_000, "-100000000"), (Int.max, "9223372036854775807"), (Int.min, "-9223372036854775808"),
    ])
    func integerDigitGroups(value: Int, expected: String) {
        #expect(written { $0.integer(value) } == expected)
    }

    /// Fractions whose leading zeros and trimmed trailing zeros span the digit groups.
    @Test(arguments: [
        (Int64(1), 18, "0.000000000000000001"),
        (Int64(-100_000_000), 17, "-0.000000001"),
        (Int64(1_000_000_000_000_000_001), 18, "1.000000000000000001"),
        (Int64(123_456_789_012_345_678), 9, "123456789.012345678"),
        (Int64(100_000_000_000_000_000), 0, "100000000000000000.0"),
    ])
    func fixedPointDigitGroups(scaled: Int64, decimals: Int, expected: String) {
        #expect(written { $0.fixedPoint(scaled: scaled, decimals: decimals) } == expected)
    }

    /// Zero padding within a group, across groups, and beyond UInt64's 20 digits.
    @Test func paddedDigits() {
        let text = written {
            $0.beginString()
            $0.appendStringDigits(7, minimumDigits: 4)
            $0.appendStringDigits(123, minimumDigits: 10)
            $0.appendStringDigits(UInt64.max, minimumDigits: 22)
            $0.appendStringDigits(5, minimumDigits: 0)
            $0.endString()
        }
        #expect(text == #""0007000000012300184467440737095516155""#)
    }

    @Test func verbatimKeyIsCopiedAsIsWithoutSeparators() {
        let text = written {
            $0.beginObject()
            $0.verbatimKey(#""a":"#)
            $0.integer(1)
            $0.verbatimKey(#","b":null,"c":"#)
            $0.beginArray()
            $0.integer(2)
            $0.verbatimKey(#",{"d":"#)  // a run may open an object inside an array
            $0.bool(true)
            $0.endObject()
            $0.endArray()
            $0.field("e", integer: 3)  // and the automatic comma still follows a value
            $0.endObject()
        }
        #expect(text == #"{"a":1,"b":null,"c":[2,{"d":true}],"e":3}"#)
    }

    /// Text without escapes takes the bulk copy, text with one takes the escaping loop: both
    /// inside one message, and long enough not to be a small string.
    @Test func stringsWithAndWithoutEscapes() {
        let plain = String(repeating: "Trimble R12i ", count: 4)
        let escaped = plain + "\"\n"
        let text = written {
            $0.beginArray()
            $0.string(plain)
            $0.string(escaped)
            $0.endArray()
        }
        #expect(text == "[\"\(plain)\",\"\(plain)\\\"\\u000a\"]")
    }

    /// The widest satellite object (five-digit id, `-32768` twice, three-digit SNR and type)
    /// fits the in-place reservation, in V2 (nulls) and V1 (zeros), after a narrow one.
    @Test func widestSatelliteObjectFits() throws {
        var position = Position()
        position.sky.merge(Satellite(id: 1, constellation: .gps))
        position.sky.merge(
            Satellite(
                id: 65_535, constellation: .irnss, elevation: -32_768, azimuth: -32_768,
                snr: 255, used: false))
        let wide = #"{"Id":65535,"Elv":-32768,"Azm":-32768,"Snr":255,"Use":false,"Type":7}"#
        let v2 = try RawJSON.member("satelliteView", in: Sample.v2(position))
        #expect(v2 == #"[{"Id":1,"Elv":null,"Azm":null,"Snr":null,"Use":false,"Type":0},"# + wide + "]")
        let v1 = try RawJSON.member("satelliteView", in: Sample.v1(position))
        #expect(v1 == #"[{"Id":1,"Elv":0,"Azm":0,"Snr":0,"Use":false,"Type":0},"# + wide + "]")
    }

    @Test func emptySkyIsAnEmptyArray() throws {
        #expect(try RawJSON.member("satelliteView", in: Sample.v2(Position())) == "[]")
        #expect(try RawJSON.member("satelliteView", in: Sample.v1(Position())) == "[]")
    }
}
