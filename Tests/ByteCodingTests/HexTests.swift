// Hexadecimal digits: every byte value against an independent reference (the standard library's
// radix parsing), and a malformed-input table for the decoders.
import ByteCoding
import TestSupport
import Testing

@Suite("Hex", .tags(.unit))
struct HexTests {
    @Test func valueOfEveryByteMatchesTheStandardLibrary() {
        for byte in UInt8.min...UInt8.max {
            let reference = byte < 0x80 ? UInt8(String(UnicodeScalar(byte)), radix: 16) : nil
            #expect(Hex.value(byte) == reference, "byte \(byte)")
            #expect(Hex.isDigit(byte) == (reference != nil), "byte \(byte)")
        }
    }

    @Test func digitsOfEveryNibble() {
        for nibble in UInt8(0)...15 {
            let lower = String(nibble, radix: 16)
            #expect(Hex.digit(nibble, uppercase: false) == Array(lower.utf8)[0])
            #expect(Hex.digit(nibble) == Array(lower.uppercased().utf8)[0])
            #expect(Hex.digit(nibble | 0xF0) == Hex.digit(nibble), "only the low four bits count")
            #expect(Hex.value(Hex.digit(nibble)) == nibble)
        }
    }

    @Test func byteOfEveryPairRoundTrips() {
        for byte in UInt8.min...UInt8.max {
            var upper: [UInt8] = []
            Hex.append(byte, to: &upper)
            var lower: [UInt8] = []
            Hex.append(byte, uppercase: false, to: &lower)
            #expect(String(decoding: lower, as: UTF8.self) == (byte < 16 ? "0" : "") + String(byte, radix: 16))
            #expect(Hex.byte(high: upper[0], low: upper[1]) == byte)
            #expect(Hex.byte(high: lower[0], low: upper[1]) == byte, "cases mix")
        }
    }

    @Test func encodeAndDecode() {
        #expect(Hex.encode([0x00, 0x0A, 0xFF, 0x5C].span) == "000AFF5C")
        #expect(Hex.encode([0x00, 0x0A, 0xFF, 0x5C].span, uppercase: false) == "000aff5c")
        #expect(Hex.encode([UInt8]().span) == "")
        #expect(Hex.decode("000aFF5c") == [0x00, 0x0A, 0xFF, 0x5C])
        #expect(Hex.decode("") == [])
    }

    @Test(arguments: ["0", "abc", "0g", "g0", " 0a", "0a ", "0x0a", "+1", "-1", "0A\n", "\u{FF10}\u{FF10}", "%41"])
    func decodeRefusesMalformedText(text: String) {
        #expect(Hex.decode(text) == nil)
    }

    @Test(arguments: [
        (UInt8(ascii: "g"), UInt8(ascii: "0")), (0x30, 0x2F), (0x3A, 0x30), (0x40, 0x41), (0x47, 0x30),
        (0x60, 0x61), (0x30, 0x67), (0x00, 0x30), (0xB0, 0x30), (0x30, 0xC1),
    ])
    func byteRefusesANonDigit(high: UInt8, low: UInt8) {
        #expect(Hex.byte(high: high, low: low) == nil)
    }
}
