import ByteCoding

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
    private var carry = Carry(repeating: 0)
    /// Room for one whole sentence: `NMEASentence.maxLength` bytes, the longest line the framer
    /// keeps (a longer one is abandoned before it needs more room). Written out because an
    /// InlineArray's size must be a literal; `FramerTests.carryHoldsTheLongestSentence` fails when
    /// the two differ (and an index past the end would trap).
    typealias Carry = InlineArray<160, UInt8>
    private var carried = 0
    private var inSentence = false
    /// Outside a sentence: whether the next byte starts a line, and whether we are in a comment.
    private var atLineStart = true
    private var inComment = false
    /// `feedSentences` only: what it knows of the sentence held in `carry` (see there).
    private var scanSum: UInt8 = 0
    private var scanStar = -1
    private var scanCommas = 0

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
            if !inSentence {
                if outsideSentence(chunk[i]) { start = i }
                i += 1
                continue
            }
            // Inside a sentence: skip ordinary bytes (printable ASCII other than `$`) in a tight
            // loop, no further than the length limit; only the byte that stops it is examined.
            let limit = min(count, start + NMEASentence.maxLength - carried)
            i = Self.skipOrdinary(chunk, from: i, to: limit)
            if i == count { break }
            switch chunk[i] {
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

    /// Frames `chunk` like `feed(_:_:)` and validates each sentence in the same pass over the
    /// bytes: `deliver` gets the line exactly as `feed(_:_:)` would deliver it, and the sentence
    /// that `NMEASentence(validating: line)` would return, or the error it would throw. The
    /// framer computes the checksum and finds the fields while it looks for the line end, so no
    /// byte is read twice; use this rather than `feed` + `NMEASentence(validating:)`.
    ///
    /// Both views are valid only during the call (see `feed(_:_:)`).
    public mutating func feedSentences(
        _ chunk: Span<UInt8>, _ deliver: (Span<UInt8>, borrowing Result<NMEASentence, NMEAError>) -> Void
    ) {
        let count = chunk.count
        var start = 0  // first byte of the current sentence in `chunk` (after `carried` bytes)
        var i = 0
        // Validation state of the current sentence, carried across chunks in `self`.
        var sum = scanSum
        var star = scanStar
        var commas = scanCommas
        while i < count {
            if !inSentence {
                if outsideSentence(chunk[i]) {
                    start = i
                    sum = 0
                    star = -1
                    commas = 0
                }
                i &+= 1
                continue
            }
            // Offsets inside the sentence are `i + base`.
            let base = carried &- start
            let limit = min(count, start &+ NMEASentence.maxLength &- carried)
            if star < 0 {
                // Before the `*`: XOR every byte into the checksum and count the commas. Bytes
                // from `-` to `~` (digits, letters, `.`, `-`: nearly all) take one comparison; the
                // loop stops at any other byte except `,`. (A window of exactly the bytes to scan
                // lets the compiler drop the bounds check on every byte.)
                i = Self.scanFields(chunk.extracting(i..<limit), from: i, sum: &sum, commas: &commas)
            } else {
                // After the `*`: only the end of the line matters.
                i = Self.skipOrdinary(chunk, from: i, to: limit)
            }
            if i == count { break }
            let byte = chunk[i]
            switch byte {
            case ASCII.cr, ASCII.lf:
                inSentence = false
                atLineStart = true
                statistics.sentences += 1
                if carried == 0 {
                    let line = chunk.extracting(start..<i)
                    let result: Result<NMEASentence, NMEAError>
                    do throws(NMEAError) {
                        result = .success(
                            try NMEASentence(framed: line, sum: sum, star: star, commas: commas))
                    } catch {
                        result = .failure(error)
                    }
                    deliver(line, result)
                } else {
                    appendToCarry(chunk, start..<i)
                    let line = carry.span.extracting(0..<carried)
                    let result: Result<NMEASentence, NMEAError>
                    do throws(NMEAError) {
                        result = .success(
                            try NMEASentence(framed: line, sum: sum, star: star, commas: commas))
                    } catch {
                        result = .failure(error)
                    }
                    deliver(line, result)
                    carried = 0
                }
            case ASCII.dollar:
                statistics.truncatedLines += 1
                start = i
                carried = 0
                sum = 0
                star = -1
                commas = 0
            case 0x20...0x7E:
                if i == limit {
                    // carried + (i - start) == maxLength: one byte too many.
                    statistics.overlongLines += 1
                    inSentence = false
                    atLineStart = false
                    carried = 0
                } else if star < 0 {
                    if byte == ASCII.star {
                        star = i &+ base
                    } else {
                        sum ^= byte  // a space or `!"#%&'()+`
                    }
                }
            default:
                statistics.invalidByteLines += 1
                inSentence = false
                atLineStart = false
                carried = 0
            }
            i &+= 1
        }
        if inSentence {
            appendToCarry(chunk, start..<count)
        }
        scanSum = sum
        scanStar = star
        scanCommas = commas
    }

    /// XORs the bytes of `window` (which starts at offset `from` in the chunk) into `sum` and
    /// counts its commas, up to the first byte that is not `,` or `-`...`~`; returns that byte's
    /// offset in the chunk, or the end of the window.
    @inline(__always)
    private static func scanFields(_ window: Span<UInt8>, from: Int, sum: inout UInt8, commas: inout Int) -> Int {
        var j = 0
        var s = sum
        var c = commas
        while j < window.count {
            let b = window[j]
            if b &- ASCII.minus > 0x7E - ASCII.minus {
                guard b == ASCII.comma else { break }
                c &+= 1
            }
            s ^= b
            j &+= 1
        }
        sum = s
        commas = c
        return from &+ j
    }

    /// The offset of the first byte in `from ..< limit` that is not printable ASCII or is a `$`,
    /// or `limit`.
    @inline(__always)
    private static func skipOrdinary(_ chunk: Span<UInt8>, from: Int, to limit: Int) -> Int {
        // (Indexing a window of exactly the bytes to scan lets the compiler drop the bounds check
        // on every byte.)
        let window = chunk.extracting(from..<limit)
        var j = 0
        while j < window.count {
            let b = window[j]
            if b &- 0x20 > 0x5E || b == ASCII.dollar { break }
            j &+= 1
        }
        return from &+ j
    }

    /// One byte outside a sentence (the shared part of both `feed` variants): comments, line
    /// ends and discarded bytes. Returns true when `byte` is the `$` that starts a sentence.
    @inline(__always)
    private mutating func outsideSentence(_ byte: UInt8) -> Bool {
        if inComment {
            // A comment ends at CR or LF, whichever line end the stream uses.
            inComment = byte != ASCII.lf && byte != ASCII.cr
            atLineStart = !inComment
        } else if byte == ASCII.dollar {
            inSentence = true
            carried = 0
            return true
        } else if byte == ASCII.cr || byte == ASCII.lf {
            atLineStart = true
        } else if byte == ASCII.hash && atLineStart {
            inComment = true
            statistics.commentLines += 1
        } else {
            atLineStart = false
            statistics.discardedBytes += 1
        }
        return false
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
