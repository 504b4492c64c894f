// Percent-encoding's one home (RFC 3986 §2.1): what each encoder keeps, every byte round-trips, and a
// malformed-input table for the decoder.
import ByteCoding
import TestSupport
import Testing

@Suite("PercentEncoding", .tags(.unit))
struct PercentEncodingTests {
    @Test func encodeKeepsOnlyUnreserved() {
        #expect(PercentEncoding.encode("AZaz09-._~") == "AZaz09-._~")
        #expect(PercentEncoding.encode("a b/c:d@e%") == "a%20b%2Fc%3Ad%40e%25")
        #expect(PercentEncoding.encode("myapp://x?y=1&z") == "myapp%3A%2F%2Fx%3Fy%3D1%26z")
        #expect(PercentEncoding.encode("é") == "%C3%A9")
        #expect(PercentEncoding.encode("") == "")
    }

    @Test func encodePathSegmentKeepsWhatASegmentMayHold() {
        #expect(
            PercentEncoding.encodePathSegment("RTCM3+GLO,A;b=c:d@e!$&'()*-._~") == "RTCM3+GLO,A;b=c:d@e!$&'()*-._~")
        #expect(
            PercentEncoding.encodePathSegment("a b/c?d#e%f\"g<>[]{}|^`\\")
                == "a%20b%2Fc%3Fd%23e%25f%22g%3C%3E%5B%5D%7B%7D%7C%5E%60%5C")
        #expect(PercentEncoding.encodePathSegment("ü") == "%C3%BC")
    }

    @Test func everyByteClassMatchesRFC3986() {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        let segment = unreserved.union("!$&'()*+,;=:@".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(PercentEncoding.isPathSegmentCharacter(byte) == segment.contains(byte), "byte \(byte)")
            let kept = PercentEncoding.encode(String(decoding: [byte], as: UTF8.self)).utf8.count == 1
            #expect(kept == unreserved.contains(byte) || byte >= 0x80, "byte \(byte)")
        }
    }

    @Test func encodeKeepingUsesTheCallersRule() {
        #expect(PercentEncoding.encode("a/b c", keeping: { $0 != UInt8(ascii: " ") }) == "a/b%20c")
    }

    @Test func decodeReadsEitherCaseAndLeavesPlus() {
        #expect(PercentEncoding.decode("myapp%3A%2F%2Fresponse%2fx") == "myapp://response/x")
        #expect(PercentEncoding.decode("a+b") == "a+b")
        #expect(PercentEncoding.decode("") == "")
        #expect(PercentEncoding.decode("p%40ss%3Aw") == "p@ss:w")
        let bytes = Array("x%41%42y".utf8)
        #expect(PercentEncoding.decode(bytes[1..<7]) == "AB")
        #expect(PercentEncoding.decodeBytes(Array("%00%FF".utf8).span) == [0x00, 0xFF])
    }

    @Test(arguments: [
        ("%", "a lone %"), ("%4", "one digit"), ("%zz", "no hex digits"), ("%4g", "one hex digit"),
        ("abc%", "% at the end"), ("%FF", "not UTF-8"), ("%C3", "truncated UTF-8"),
    ])
    func decodeRefusesMalformed(_ text: String, _ rule: String) {
        #expect(PercentEncoding.decode(text) == nil, "\(rule)")
    }

    @Test func everyTextRoundTrips() {
        for text in ["", "plain", "a b", "é 北京", "100%", "a+b=c&d", "\u{0}\u{7F}", "🙂"] {
            #expect(PercentEncoding.decode(PercentEncoding.encode(text)) == text, "\(text)")
            #expect(PercentEncoding.decode(PercentEncoding.encodePathSegment(text)) == text, "\(text)")
        }
        for byte in UInt8.min...UInt8.max {
            var escaped: [UInt8] = [UInt8(ascii: "%")]
            Hex.append(byte, to: &escaped)
            #expect(PercentEncoding.decodeBytes(escaped.span) == [byte], "byte \(byte)")
        }
    }
}
