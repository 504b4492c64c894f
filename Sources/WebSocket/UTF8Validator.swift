// Incremental UTF-8 validation (Unicode 15, Table 3-7 "Well-Formed UTF-8 Byte Sequences"), so a
// text message is checked as its bytes arrive, across reads and across fragments, and an invalid
// byte fails the connection at once rather than when the message completes.
//
//   Code points          1st byte  2nd byte  3rd byte  4th byte
//   U+0000..U+007F       00..7F
//   U+0080..U+07FF       C2..DF    80..BF
//   U+0800..U+0FFF       E0        A0..BF    80..BF            (no overlongs)
//   U+1000..U+CFFF       E1..EC    80..BF    80..BF
//   U+D000..U+D7FF       ED        80..9F    80..BF            (no surrogates)
//   U+E000..U+FFFF       EE..EF    80..BF    80..BF
//   U+10000..U+3FFFF     F0        90..BF    80..BF    80..BF  (no overlongs)
//   U+40000..U+FFFFF     F1..F3    80..BF    80..BF    80..BF
//   U+100000..U+10FFFF   F4        80..8F    80..BF    80..BF  (nothing above U+10FFFF)

/// A UTF-8 validator that can stop and resume anywhere, even inside a character.
public struct UTF8Validator: Hashable, Sendable {
    /// Continuation bytes still expected for the current character.
    private var needed: UInt8 = 0
    /// The range the next continuation byte must fall in (narrower than 80..BF only for the
    /// second byte after E0, ED, F0 and F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF
    /// Set by the first invalid byte; the validator then rejects everything.
    private var failed = false

    /// A validator at the start of a text.
    public init() {}

    /// True when the bytes so far are valid and end on a character boundary: a message may end here.
    public var isComplete: Bool { needed == 0 && !failed }

    /// Feeds the next bytes; false as soon as they cannot be part of valid UTF-8.
    public mutating func consume(_ bytes: Span<UInt8>) -> Bool {
        guard !failed else { return false }
        var i = 0
        let count = bytes.count
        while i < count {
            let byte = bytes[i]
            i += 1
            if needed == 0 && byte < 0x80 { continue }  // ASCII, the common case
            guard consumeNonASCII(byte) else {
                failed = true
                return false
            }
        }
        return true
    }

    /// Whether `bytes` is, on its own, a complete valid UTF-8 text.
    public static func isValid(_ bytes: Span<UInt8>) -> Bool {
        var validator = UTF8Validator()
        return validator.consume(bytes) && validator.isComplete
    }

    private mutating func consumeNonASCII(_ byte: UInt8) -> Bool {
        if needed > 0 {
            guard byte >= lower && byte <= upper else { return false }
            needed -= 1
            lower = 0x80
            upper = 0xBF
            return true
        }
        switch byte {
        case 0xC2...0xDF: start(1, 0x80, 0xBF)
        case 0xE0: start(2, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: start(2, 0x80, 0xBF)
        case 0xED: start(2, 0x80, 0x9F)
        case 0xF0: start(3, 0x90, 0xBF)
        case 0xF1...0xF3: start(3, 0x80, 0xBF)
        case 0xF4: start(3, 0x80, 0x8F)
        default: return false  // 80..BF without a lead byte, C0/C1 overlongs, F5..FF
        }
        return true
    }

    @inline(__always)
    private mutating func start(_ continuationBytes: UInt8, _ lower: UInt8, _ upper: UInt8) {
        needed = continuationBytes
        self.lower = lower
        self.upper = upper
    }
}
