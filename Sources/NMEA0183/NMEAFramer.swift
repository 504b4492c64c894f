// The framer: bytes in arbitrary chunks in, complete sentences out.
//
// Receivers and gpsd deliver NMEA as a byte stream: a read may end in the middle of a sentence,
// lines end in CR LF, LF or (Firefly) CR CR LF, logs carry debug text between sentences, and
// terminal noise can land inside a sentence. The policy is gpsd's "brutally simple" one: any
// unexpected byte abandons the line and the framer waits for the next `$`. A line is never
// repaired; another good one is usually along in less than a second.
//
// Zero-copy: a sentence that lies wholly inside the caller's chunk is delivered as a view into
// that chunk. Lines starting with `#` are comments (gpsd's log format, which gpsd's own lexer
// also skips). Only a sentence split across two reads is assembled in a small inline carry buffer
// (at most `NMEASentence.maxLength` bytes), so steady-state framing never touches the heap.

/// Splits a byte stream into NMEA 0183 sentences (`$` up to, not including, the line end).
public struct NMEAFramer: Sendable {
    /// What the framer dropped, for metrics and logs. Never reset by the framer itself.
    public struct Statistics: Sendable, Equatable {
        /// Sentences delivered.
        public var sentences = 0
        /// Bytes outside any sentence (CR and LF excluded), e.g. debug text between sentences.
        public var discardedBytes = 0
        /// Lines abandoned because a `$` started a new sentence before the line ended.
        public var truncatedLines = 0
        /// Lines abandoned because they exceeded `NMEASentence.maxLength`.
        public var overlongLines = 0
        /// Lines abandoned because of a byte outside printable ASCII.
        public var invalidByteLines = 0
        /// `#` comment lines skipped (gpsd's log format; gpsd's own lexer skips them too).
        public var commentLines = 0

        public init() {}
    }

    public private(set) var statistics = Statistics()

    /// Head of a sentence that began in an earlier chunk.
    private var carry = InlineArray<160, UInt8>(repeating: 0)  // NMEASentence.maxLength
    private var carried = 0
    private var inSentence = false
    /// Outside a sentence: whether the next byte starts a line, and whether we are in a comment.
    private var atLineStart = true
    private var inComment = false

    public init() {}

    /// True while a sentence has started but not ended (its head is held for the next chunk).
    public var hasPartialSentence: Bool { inSentence }

    /// Frames `chunk`, calling `deliver` for each complete sentence in order.
    ///
    /// The span passed to `deliver` is valid only during the call: it points into `chunk`, or
    /// into the framer's carry buffer for a sentence that began in an earlier chunk.
    public mutating func feed(_ chunk: Span<UInt8>, _ deliver: (Span<UInt8>) -> Void) {
        let count = chunk.count
        var start = 0  // first byte of the current sentence in `chunk` (after `carried` bytes)
        var i = 0
        while i < count {
            let byte = chunk[i]
            if !inSentence {
                if inComment {
                    // A comment ends at CR or LF, whichever line end the stream uses.
                    inComment = byte != ASCII.lf && byte != ASCII.cr
                    atLineStart = !inComment
                } else if byte == ASCII.dollar {
                    inSentence = true
                    start = i
                    carried = 0
                } else if byte == ASCII.cr || byte == ASCII.lf {
                    atLineStart = true
                } else if byte == ASCII.hash && atLineStart {
                    inComment = true
                    statistics.commentLines += 1
                } else {
                    atLineStart = false
                    statistics.discardedBytes += 1
                }
                i += 1
                continue
            }
            switch byte {
            case ASCII.cr, ASCII.lf:
                inSentence = false
                atLineStart = true
                statistics.sentences += 1
                if carried == 0 {
                    deliver(chunk.extracting(start..<i))
                } else {
                    appendToCarry(chunk, start..<i)
                    deliver(carry.span.extracting(0..<carried))
                    carried = 0
                }
            case ASCII.dollar:
                statistics.truncatedLines += 1
                start = i
                carried = 0
            case 0x20...0x7E:
                if carried + (i - start) >= NMEASentence.maxLength {
                    statistics.overlongLines += 1
                    inSentence = false
                    atLineStart = false
                    carried = 0
                }
            default:
                statistics.invalidByteLines += 1
                inSentence = false
                atLineStart = false
                carried = 0
            }
            i += 1
        }
        if inSentence {
            appendToCarry(chunk, start..<count)
        }
    }

    /// Drops any partial sentence (for example when the device behind the stream changed).
    public mutating func reset() {
        inSentence = false
        inComment = false
        atLineStart = true
        carried = 0
    }

    private mutating func appendToCarry(_ chunk: Span<UInt8>, _ range: Range<Int>) {
        // The length check in `feed` keeps carried + range.count within capacity.
        for j in range {
            carry[carried] = chunk[j]
            carried += 1
        }
    }
}

/// The bytes the framer and parser care about.
enum ASCII {
    static let dollar = UInt8(ascii: "$")
    static let star = UInt8(ascii: "*")
    static let comma = UInt8(ascii: ",")
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let hash = UInt8(ascii: "#")
    static let dot = UInt8(ascii: ".")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
    static let upperA = UInt8(ascii: "A")
    static let upperZ = UInt8(ascii: "Z")

    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { b &- zero < 10 }
    @inline(__always) static func isUpper(_ b: UInt8) -> Bool { b &- upperA < 26 }

    /// Value of a hexadecimal digit (either case), or nil.
    @inline(__always) static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case zero...nine: b &- zero
        case upperA...UInt8(ascii: "F"): b &- upperA &+ 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b &- UInt8(ascii: "a") &+ 10
        default: nil
        }
    }
}
