// ASCII classes, case and comparison: every byte value against the standard library's Unicode
// properties restricted to ASCII, plus tables for the scheme rule and the comparisons.
import ByteCoding
import TestSupport
import Testing

@Suite("ASCII", .tags(.unit))
struct ASCIITests {
    private static func character(_ byte: UInt8) -> Character { Character(UnicodeScalar(byte)) }

    @Test func classesOfEveryByteMatchTheStandardLibrary() {
        for byte in UInt8.min...UInt8.max {
            let c = Self.character(byte)
            let ascii = byte < 0x80
            #expect(ASCII.isDigit(byte) == (ascii && c.isNumber), "byte \(byte)")
            #expect(ASCII.isUpper(byte) == (ascii && c.isUppercase), "byte \(byte)")
            #expect(ASCII.isLower(byte) == (ascii && c.isLowercase), "byte \(byte)")
            #expect(ASCII.isLetter(byte) == (ascii && c.isLetter), "byte \(byte)")
            #expect(ASCII.isAlphanumeric(byte) == (ascii && (c.isLetter || c.isNumber)), "byte \(byte)")
            #expect(ASCII.isBlank(byte) == (byte == 0x20 || byte == 0x09), "byte \(byte)")
            #expect(ASCII.isPrintable(byte) == (byte >= 0x20 && byte <= 0x7E), "byte \(byte)")
            #expect(ASCII.isControl(byte) == (byte < 0x20 || byte == 0x7F), "byte \(byte)")
            #expect(
                ASCII.isUnreserved(byte) == (ascii && (c.isLetter || c.isNumber || "-._~".contains(c))), "byte \(byte)")
        }
    }

    @Test func caseOfEveryByte() {
        for byte in UInt8.min...UInt8.max {
            let c = Self.character(byte)
            let lower = byte < 0x80 ? Array(c.lowercased().utf8)[0] : byte
            let upper = byte < 0x80 ? Array(c.uppercased().utf8)[0] : byte
            #expect(ASCII.lowercased(byte) == lower, "byte \(byte)")
            #expect(ASCII.uppercased(byte) == upper, "byte \(byte)")
        }
        // Only A-Z fold: Unicode lower-casing would turn "İ" and "Å" (U+212B) into other letters.
        #expect(ASCII.lowercased("TmmRegister://İÅ") == "tmmregister://İÅ")
        #expect(ASCII.lowercased(Substring("ABC")) == "abc")
    }

    @Test(arguments: [
        ("tmmregister", true), ("TrimbleMobileManager", true), ("a", true), ("x+y-z.1", true), ("A1", true),
        ("", false), ("1abc", false), ("+abc", false), (".a", false), ("a_b", false), ("a b", false), ("a:b", false),
        ("é", false), ("a/b", false),
    ])
    func schemeRule(text: String, isScheme: Bool) {
        #expect(ASCII.isScheme(text.utf8) == isScheme)
    }

    @Test func comparisons() {
        #expect(ASCII.equalsIgnoringCase("Sec-WebSocket-Key", "sec-websocket-KEY"))
        #expect(!ASCII.equalsIgnoringCase("Upgrade", "Upgrade "))
        #expect(!ASCII.equalsIgnoringCase("é", "É"), "non-ASCII letters do not fold")
        #expect(!ASCII.equalsIgnoringCase("[", "{"), "only letters fold, not the bytes 0x20 apart")
        let bytes = Array("xxCONTENT-lengthxx".utf8)
        func equalsIgnoringCase(_ range: Range<Int>, _ text: String) -> Bool {
            ASCII.equalsIgnoringCase(bytes.span, range, text)
        }
        func equals(_ range: Range<Int>, _ text: String) -> Bool { ASCII.equals(bytes.span, range, text) }
        #expect(equalsIgnoringCase(2..<16, "content-length"))
        #expect(!equalsIgnoringCase(2..<15, "content-length"))
        #expect(!equalsIgnoringCase(2..<17, "content-length"))
        #expect(equals(2..<9, "CONTENT"))
        #expect(!equals(2..<9, "content"), "case counts")
        #expect(!equals(2..<9, "CONTEN"))
    }

    @Test func trimming() {
        #expect(ASCII.trimmingBlanks(" \t websocket\t ") == "websocket")
        #expect(ASCII.trimmingBlanks("a b") == "a b")
        #expect(ASCII.trimmingBlanks(" \t ") == "")
        #expect(ASCII.trimmingBlanks("\nx\r") == "\nx\r", "only SP and HTAB are blanks")
        let bytes = Array("  ab  ".utf8)
        #expect(ASCII.trimmingBlanks(bytes.span, 0..<6) == 2..<4)
        #expect(ASCII.trimmingBlanks(bytes.span, 0..<2) == 2..<2)
    }
}
