// Base64 (RFC 4648): the one type that replaced WebSocket's strict and TMMProtocol's tolerant
// decoders (issue 10). The tables below are the two old types' tests, merged: every malformed
// input is refused by the strict reading, and each tolerance is refused until its option is on.
import ByteCoding
import Foundation
import TestSupport
import Testing

@Suite("Base64 (RFC 4648)", .tags(.unit))
struct Base64Tests {
    /// RFC 4648 §10 test vectors.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test(arguments: vectors)
    func rfc4648Vectors(plain: String, encoded: String) {
        #expect(Base64.encode(Array(plain.utf8).span) == encoded)
        #expect(Base64.encode(plain) == encoded)
        #expect(Base64.encodeToBytes(Array(plain.utf8).span) == Array(encoded.utf8))
        #expect(Base64.decode(encoded) == Array(plain.utf8))
        #expect(Base64.decode(encoded, options: .lenient) == Array(plain.utf8))
    }

    @Test func everyLengthMatchesFoundationAndRoundTrips() {
        var state: UInt64 = 4648
        for length in 0...200 {
            let bytes = (0..<length).map { _ -> UInt8 in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
            let text = Base64.encode(bytes)
            #expect(text == Data(bytes).base64EncodedString(), "length \(length)")
            #expect(Base64.decode(text) == bytes, "length \(length)")
            #expect(Base64.decode(text, options: .lenient) == bytes, "length \(length)")
            let unpadded = String(text.reversed().drop { $0 == "=" }.reversed())
            #expect(Base64.decode(unpadded, options: .paddingOptional) == bytes, "length \(length)")
        }
        let all = (0...255).map { UInt8($0) }
        #expect(Base64.decode(Base64.encode(all.span)) == all)
        #expect(Base64.encode([0xFB, 0xFF, 0xBF].span) == "+/+/")
    }

    /// base64url without padding (RFC 4648 §5; JWK members, RFC 7518 §6.3): the standard text with
    /// `-_` for `+/` and no `=`, read back by the decoder's URL-safe, padding-optional reading.
    @Test func urlSafeUnpaddedEncoding() {
        #expect(Base64.encodeURLSafeUnpadded([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64.encodeURLSafeUnpadded([0x01, 0x00, 0x01]) == "AQAB")  // RSA e = 65537
        #expect(Base64.encodeURLSafeUnpadded([]) == "")
        for (plain, encoded) in Self.vectors {
            let expected = encoded.replacingOccurrences(of: "=", with: "")
            #expect(Base64.encodeURLSafeUnpadded(Array(plain.utf8)) == expected)
        }
        let all = (0...255).map { UInt8($0) }
        let text = Base64.encodeURLSafeUnpadded(all)
        #expect(!text.contains("+") && !text.contains("/") && !text.contains("="))
        #expect(Base64.decode(text, options: [.urlSafeLetters, .paddingOptional]) == all)
    }

    /// Refused by every reading: not Base64 whatever the tolerance.
    @Test(arguments: [
        "Q", "Zm9vY", "=", "==", "====", "Z===", "QQ===", "QQQ==", "QUFB=", "Q=Q=", "==QQ", "Zg==Zg==", "Zm9v====",
        "Zm=v", "Z=9v", "QU*B", "QUFB\n", "Zm9v\n", "\tZm9v", "Zm9v\r\n", "\tZm9", "Zm\u{0B}v", "Zm.v", "Zm9v\0",
        "\u{00e9}AAA", "AA%3D",
    ])
    func refusedByEveryReading(text: String) {
        #expect(Base64.decode(text) == nil)
        #expect(Base64.decode(text, options: .lenient) == nil)
    }

    /// One row per tolerance: refused strictly, accepted with its option (and with `.lenient`),
    /// decoding to the bytes of the canonical text.
    struct ToleranceRow: Sendable, CustomTestStringConvertible {
        var text: String
        var option: Base64.DecodingOptions
        var canonical: String
        var testDescription: String { "\(text.debugDescription) needs \(option.rawValue)" }
    }

    static let tolerances: [ToleranceRow] = [
        ToleranceRow(text: "Zg", option: .paddingOptional, canonical: "Zg=="),
        ToleranceRow(text: "Zg=", option: .paddingOptional, canonical: "Zg=="),
        ToleranceRow(text: "QQ=", option: .paddingOptional, canonical: "QQ=="),
        ToleranceRow(text: "Zm9", option: .paddingOptional, canonical: "Zm8="),
        ToleranceRow(text: "Zm9vYg", option: .paddingOptional, canonical: "Zm9vYg=="),
        ToleranceRow(text: "-_-_", option: .urlSafeLetters, canonical: "+/+/"),
        ToleranceRow(text: "Zm-v", option: .urlSafeLetters, canonical: "Zm+v"),
        ToleranceRow(text: "Zm_v", option: .urlSafeLetters, canonical: "Zm/v"),
        ToleranceRow(text: "a b=", option: .spaceAsPlus, canonical: "a+b="),
        ToleranceRow(text: " Zm9", option: .spaceAsPlus, canonical: "+Zm9"),
    ]

    @Test(arguments: tolerances)
    func eachToleranceNeedsItsOption(row: ToleranceRow) throws {
        let expected = try #require(Base64.decode(row.canonical))
        #expect(Base64.decode(row.text) == nil)
        #expect(Base64.decode(row.text, options: row.option) == expected)
        #expect(Base64.decode(row.text, options: .lenient) == expected)
        let others: [Base64.DecodingOptions] = [.paddingOptional, .urlSafeLetters, .spaceAsPlus].filter {
            $0 != row.option
        }
        #expect(Base64.decode(row.text, options: Base64.DecodingOptions(others)) == nil)
    }

    @Test func emptyTextIsNoBytes() {
        #expect(Base64.decode("") == [])
        #expect(Base64.decode("", options: .lenient) == [])
    }

    @Test func acceptsNonZeroPadBits() {
        // RFC 4648 §3.5 lets decoders accept them; RFC 6455 §4.1's own example had them (erratum 3150).
        #expect(Base64.decode("AQIDBAUGBwgJCgsMDQ4PEC==") == Array(1...16))
        #expect(Base64.decode("AQIDBAUGBwgJCgsMDQ4PEA==") == Array(1...16))
        #expect(Base64.decode("Zh==") == [0x66])
        #expect(Base64.decode("Zh", options: .lenient) == [0x66])
    }

    @Test func decodesSpansAndSubstrings() {
        let bytes = Array("xxZm9vxx".utf8)
        #expect(Base64.decode(bytes.span.extracting(2..<6)) == Array("foo".utf8))
        let text = "?Zm9v"
        #expect(Base64.decode(text.dropFirst()) == Array("foo".utf8))
    }
}
