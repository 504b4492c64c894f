import Foundation
import TestSupport
import Testing
import TMMProtocol

/// Writes one value with `body` and returns the text.
private func written(_ body: (inout JSONWriter) -> Void) -> String {
    var writer = JSONWriter(reservingCapacity: 64)
    body(&writer)
    return String(decoding: writer.bytes, as: UTF8.self)
}

@Suite("JSONWriter numbers", .tags(.unit))
struct JSONWriterNumberTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var value: Double
        var decimals: Int
        var expected: String
        var testDescription: String { "\(value) d=\(decimals) → \(expected)" }
    }

    static let cases: [Case] = [
        // The doc's spellings.
        Case(value: 35.412, decimals: 4, expected: "35.412"),
        Case(value: 180_000.0, decimals: 3, expected: "180000.0"),
        Case(value: -43.52961234, decimals: 10, expected: "-43.52961234"),
        Case(value: 172.63623456, decimals: 10, expected: "172.63623456"),
        Case(value: 0.03, decimals: 3, expected: "0.03"),
        Case(value: 1.0, decimals: 2, expected: "1.0"),
        Case(value: 2024.14, decimals: 2, expected: "2024.14"),
        // Zeros and trimming: at least one digit after the point.
        Case(value: 0, decimals: 2, expected: "0.0"),
        Case(value: 0, decimals: 0, expected: "0.0"),
        Case(value: 123.456, decimals: 0, expected: "123.0"),
        Case(value: 1.5, decimals: 3, expected: "1.5"),
        Case(value: 10.10, decimals: 4, expected: "10.1"),
        Case(value: 1e-10, decimals: 10, expected: "0.0000000001"),
        Case(value: 0.0001, decimals: 3, expected: "0.0"),
        // Rounding: nearest, ties away from zero, carries into the integer part.
        Case(value: 1.23456, decimals: 2, expected: "1.23"),
        Case(value: 1.23556, decimals: 3, expected: "1.236"),
        Case(value: 0.125, decimals: 2, expected: "0.13"),
        Case(value: -0.125, decimals: 2, expected: "-0.13"),
        Case(value: 2.5, decimals: 0, expected: "3.0"),
        Case(value: -2.5, decimals: 0, expected: "-3.0"),
        Case(value: 9.999, decimals: 2, expected: "10.0"),
        Case(value: 99.96, decimals: 1, expected: "100.0"),
        Case(value: 5e-11, decimals: 10, expected: "0.0000000001"),
        Case(value: 0.012000000000000002, decimals: 3, expected: "0.012"),
        Case(value: 20.115 + 15.297, decimals: 4, expected: "35.412"),
        // Negatives and negative zero.
        Case(value: -1.5, decimals: 2, expected: "-1.5"),
        Case(value: -0.4, decimals: 3, expected: "-0.4"),
        Case(value: -179.9999999999, decimals: 10, expected: "-179.9999999999"),
        Case(value: -0.0, decimals: 2, expected: "0.0"),
        Case(value: -0.004, decimals: 2, expected: "0.0"),
        Case(value: -1e-300, decimals: 10, expected: "0.0"),
        // Huge values: fewer decimals, then null.
        Case(value: 1e15, decimals: 3, expected: "1000000000000000.0"),
        Case(value: 1e16, decimals: 3, expected: "10000000000000000.0"),
        Case(value: -1e17, decimals: 10, expected: "-100000000000000000.0"),
        Case(value: 8.5e18, decimals: 2, expected: "8500000000000000000.0"),
        Case(value: 9e18, decimals: 0, expected: "null"),
        Case(value: -1e19, decimals: 0, expected: "null"),
        Case(value: 1e300, decimals: 2, expected: "null"),
        Case(value: .greatestFiniteMagnitude, decimals: 10, expected: "null"),
        Case(value: .leastNonzeroMagnitude, decimals: 10, expected: "0.0"),
        // Not finite.
        Case(value: .nan, decimals: 3, expected: "null"),
        Case(value: -.nan, decimals: 3, expected: "null"),
        Case(value: .infinity, decimals: 3, expected: "null"),
        Case(value: -.infinity, decimals: 3, expected: "null"),
        // Out-of-range decimals are clamped to 0...15.
        Case(value: 1.5, decimals: -3, expected: "2.0"),
        Case(value: 0.1, decimals: 40, expected: "0.1"),
    ]

    @Test(arguments: cases)
    func number(_ c: Case) throws {
        let text = written { $0.number(c.value, decimals: c.decimals) }
        #expect(text == c.expected)
        // Whatever is written is valid JSON, and a number reads back within half a unit.
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)
        if let number = parsed as? NSNumber, c.decimals <= 15, c.value.magnitude < 1e15 {
            #expect((number.doubleValue - c.value).magnitude <= 0.5 * pow(10, -Double(max(c.decimals, 0))) + 1e-12)
        }
    }

    @Test func optionalNumberNilIsNull() {
        #expect(written { $0.number(nil as Double?, decimals: 2) } == "null")
        #expect(written { $0.number(Double?.some(2), decimals: 2) } == "2.0")
    }

    @Test(arguments: [
        (Int64(132_819_600), 3, "132819.6"),
        (Int64(180_000_000), 3, "180000.0"),
        (Int64(0), 3, "0.0"),
        (Int64(5), 3, "0.005"),
        (Int64(-5), 3, "-0.005"),
        (Int64(-120), 2, "-1.2"),
        (Int64(42), 0, "42.0"),
        (Int64.max, 18, "9.223372036854775807"),
        (Int64.min, 0, "-9223372036854775808.0"),
        (Int64.min, 18, "-9.223372036854775808"),
    ])
    func fixedPoint(scaled: Int64, decimals: Int, expected: String) {
        #expect(written { $0.fixedPoint(scaled: scaled, decimals: decimals) } == expected)
    }

    @Test(arguments: [
        (0, "0"), (7, "7"), (-7, "-7"), (100, "100"), (1_000_000, "1000000"),
        (Int.max, "9223372036854775807"), (Int.min, "-9223372036854775808"),
    ])
    func integer(value: Int, expected: String) {
        #expect(written { $0.integer(value) } == expected)
    }

    @Test func literals() {
        #expect(written { $0.null() } == "null")
        #expect(written { $0.bool(true) } == "true")
        #expect(written { $0.bool(false) } == "false")
        #expect(written { $0.bool(nil as Bool?) } == "null")
        #expect(written { $0.integer(nil as Int?) } == "null")
        #expect(written { $0.string(nil as String?) } == "null")
    }
}

@Suite("JSONWriter strings", .tags(.unit))
struct JSONWriterStringTests {
    @Test(arguments: [
        ("", #""""#),
        ("R12i", #""R12i""#),
        ("a\"b", #""a\"b""#),
        ("a\\b", #""a\\b""#),
        ("\\\"", #""\\\"""#),
        ("/", #""/""#),
        ("\u{0}", #""\u0000""#),
        ("\u{1}x", #""\u0001x""#),
        ("\t", #""\u0009""#),
        ("line\nnext", #""line\u000anext""#),
        ("\r\n", #""\u000d\u000a""#),
        ("\u{8}\u{C}", #""\u0008\u000c""#),
        ("\u{1B}", #""\u001b""#),
        ("\u{1F}", #""\u001f""#),
        (" ", #"" ""#),
        ("\u{7F}", "\"\u{7F}\""),
        ("Zürich", "\"Zürich\""),
        ("東京", "\"東京\""),
        ("🛰️", "\"🛰️\""),
        ("\u{2028}", "\"\u{2028}\""),
    ])
    func escaping(input: String, expected: String) throws {
        let text = written { $0.string(input) }
        #expect(text == expected)
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)
        #expect(parsed as? String == input)
    }

    @Test func keysAreEscapedToo() throws {
        let text = written {
            $0.beginObject()
            $0.field("a\"b", integer: 1)
            $0.endObject()
        }
        #expect(text == #"{"a\"b":1}"#)
    }
}

@Suite("JSONWriter structure", .tags(.unit))
struct JSONWriterStructureTests {
    @Test func commasAreAutomatic() {
        let text = written {
            $0.beginObject()
            $0.field("a", integer: 1)
            $0.key("b")
            $0.beginArray()
            $0.integer(1)
            $0.number(2, decimals: 1)
            $0.beginObject()
            $0.endObject()
            $0.beginArray()
            $0.endArray()
            $0.null()
            $0.endArray()
            $0.key("c")
            $0.beginObject()
            $0.field("d", string: "e")
            $0.nullField("f")
            $0.endObject()
            $0.field("g", bool: true)
            $0.endObject()
        }
        #expect(text == #"{"a":1,"b":[1,2.0,{},[],null],"c":{"d":"e","f":null},"g":true}"#)
    }

    @Test func resetKeepsCapacityAndForgetsTheSeparator() {
        var writer = JSONWriter(reservingCapacity: 256)
        let capacity = writer.capacity
        #expect(capacity >= 256)
        writer.beginObject()
        writer.field("a", integer: 1)
        writer.endObject()
        #expect(writer.count == 7)
        writer.reset()
        #expect(writer.count == 0)
        #expect(writer.capacity == capacity)
        writer.integer(5)
        #expect(writer.bytes == Array("5".utf8))
    }

    @Test func spanAndWithBytesShowTheSameBytes() {
        var writer = JSONWriter()
        writer.string("x")
        let span = writer.span
        let viaSpan = (0..<span.count).map { span[$0] }
        let viaClosure = writer.withBytes { bytes in (0..<bytes.count).map { bytes[$0] } }
        #expect(viaSpan == Array(#""x""#.utf8))
        #expect(viaClosure == viaSpan)
    }
}
