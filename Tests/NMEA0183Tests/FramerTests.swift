// NMEAFramer: bytes in arbitrary chunks in, complete sentences out. Every chunking of the same
// stream must yield the same sentences, and every dropped byte or line must be counted exactly.
@testable import NMEA0183
import TestSupport
import Testing

/// What a framer produced: the sentences (copied out of the delivered spans) and its counters.
struct FramedOutput: Equatable, CustomStringConvertible {
    var sentences: [[UInt8]] = []
    var statistics = NMEAFramer.Statistics()

    var description: String {
        "\(sentences.count) sentences \(sentences.prefix(3).map(TestLine.text))..., \(statistics)"
    }
}

@Suite("NMEAFramer", .tags(.unit))
struct FramerTests {
    // MARK: Helpers

    /// Frames `bytes` as consecutive chunks ending at `cuts` (ascending offsets inside `bytes`).
    static func frame(_ bytes: [UInt8], cuts: [Int] = [], framer: inout NMEAFramer) -> [[UInt8]] {
        var sentences: [[UInt8]] = []
        var start = 0
        for end in cuts + [bytes.count] {
            framer.feed(bytes.span.extracting(start..<end)) { line in
                sentences.append(TestLine.copy(line))
            }
            start = end
        }
        return sentences
    }

    static func frame(_ bytes: [UInt8], cuts: [Int] = []) -> FramedOutput {
        var framer = NMEAFramer()
        let sentences = frame(bytes, cuts: cuts, framer: &framer)
        return FramedOutput(sentences: sentences, statistics: framer.statistics)
    }

    static func frame(_ text: String, cuts: [Int] = []) -> FramedOutput {
        frame(Array(text.utf8), cuts: cuts)
    }

    /// Frames `bytes` in chunks of `size` bytes.
    static func frame(_ bytes: [UInt8], chunkSize size: Int) -> FramedOutput {
        frame(bytes, cuts: Array(stride(from: size, to: bytes.count, by: size)))
    }

    /// Random chunk sizes in `1...maxChunk`.
    static func randomCuts(count: Int, maxChunk: Int, seed: UInt64) -> [Int] {
        var rng = SplitMix64(state: seed)
        var cuts: [Int] = []
        var offset = Int.random(in: 1...maxChunk, using: &rng)
        while offset < count {
            cuts.append(offset)
            offset += Int.random(in: 1...maxChunk, using: &rng)
        }
        return cuts
    }

    /// Frames `bytes` split into two chunks at `split` and folds the result into a cheap
    /// fingerprint (FNV-1a over the sentences with a separator, plus the counters), so that every
    /// split position of a capture can be tried without copying each sentence.
    static func fingerprint(_ bytes: [UInt8], split: Int) -> (hash: UInt64, statistics: NMEAFramer.Statistics) {
        var framer = NMEAFramer()
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        let deliver: (Span<UInt8>) -> Void = { line in
            for i in line.indices {
                hash = (hash ^ UInt64(line[i])) &* 0x100_0000_01B3
            }
            hash = (hash ^ 0x1FF) &* 0x100_0000_01B3  // sentence separator (not a byte value)
        }
        framer.feed(bytes.span.extracting(0..<split), deliver)
        framer.feed(bytes.span.extracting(split..<bytes.count), deliver)
        return (hash, framer.statistics)
    }

    /// The sentence lines of a clean capture (every line is `$...` or a `#` comment), as the
    /// independent oracle for the framer.
    static func expectedSentences(_ capture: String) throws -> [[UInt8]] {
        try Fixtures.lines(capture).filter { $0.first == UInt8(ascii: "$") }
    }

    static let capture = "ublox-zed-f9p-nmea.log"

    // MARK: A real capture, chunked every way

    @Test func realCaptureWholeMatchesTheLinesOfTheFile() throws {
        let bytes = try Fixtures.bytes(Self.capture)
        let expected = try Self.expectedSentences(Self.capture)
        let comments = try Fixtures.lines(Self.capture).filter { $0.first == UInt8(ascii: "#") }.count
        #expect(expected.count == 1015)
        #expect(comments == 12)
        let out = Self.frame(bytes)
        #expect(out.sentences == expected)
        var stats = NMEAFramer.Statistics()
        stats.sentences = 1015
        stats.commentLines = 12
        #expect(out.statistics == stats)
    }

    @Test func realCaptureOneByteAtATime() throws {
        let bytes = try Fixtures.bytes(Self.capture)
        let whole = Self.frame(bytes)
        let bytewise = Self.frame(bytes, chunkSize: 1)
        #expect(bytewise == whole)
        #expect(bytewise.sentences.count == 1015)
    }

    @Test(arguments: [2, 3, 7, 64, 81, 82, 83, 159, 160, 161, 4096])
    func realCaptureFixedChunkSizes(_ size: Int) throws {
        let bytes = try Fixtures.bytes(Self.capture)
        #expect(Self.frame(bytes, chunkSize: size) == Self.frame(bytes))
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func realCaptureRandomChunkSizes(_ seed: UInt64) throws {
        let bytes = try Fixtures.bytes(Self.capture)
        let whole = Self.frame(bytes)
        for maxChunk in [8, 100, 300] {
            let cuts = Self.randomCuts(count: bytes.count, maxChunk: maxChunk, seed: seed)
            let out = Self.frame(bytes, cuts: cuts)
            #expect(out == whole, "seed \(seed), chunks up to \(maxChunk) bytes")
        }
    }

    /// Every capture (CR LF, LF, debug text, escape codes, UTF-8 in comments): byte-at-a-time and
    /// random chunks give exactly what one whole chunk gives, counters included.
    @Test(arguments: Fixtures.captureNames)
    func everyCaptureChunkingInvariant(_ capture: String) throws {
        let bytes = try Fixtures.bytes(capture)
        let whole = Self.frame(bytes)
        #expect(whole.sentences.count > 10)
        #expect(Self.frame(bytes, chunkSize: 1) == whole)
        #expect(Self.frame(bytes, cuts: Self.randomCuts(count: bytes.count, maxChunk: 200, seed: 42)) == whole)
    }

    /// Two chunks, split at every byte position. The whole u-blox capture would be 58 370² byte
    /// steps in a debug build, so this runs over its first 120 lines (comment header, CR LF, GSV
    /// lines close to 82 bytes: about 7 KB) and over the whole of two smaller captures.
    @Test(arguments: ["ublox-zed-f9p-nmea.log", "et-332.log", "firefly-II.log"])
    func splitAtEveryBytePosition(_ capture: String) throws {
        var bytes = try Fixtures.bytes(capture)
        if capture == Self.capture {
            var lines = 0
            let cut = bytes.indices.first { i in
                if bytes[i] == UInt8(ascii: "\n") { lines += 1 }
                return lines == 120
            }
            bytes = Array(bytes[...(try #require(cut))])
        }
        let reference = Self.fingerprint(bytes, split: 0)
        // The fingerprint itself must see the sentences: compare with the copying framer.
        let whole = Self.frame(bytes)
        #expect(whole.sentences.count > 60)
        #expect(reference.statistics == whole.statistics)
        var mismatches: [Int] = []
        for split in 1...bytes.count {
            let result = Self.fingerprint(bytes, split: split)
            if result.hash != reference.hash || result.statistics != reference.statistics {
                mismatches.append(split)
            }
        }
        #expect(mismatches.isEmpty, "split positions that changed the output: \(mismatches.prefix(20))")
        if let first = mismatches.first {
            // Show the difference for the first failing position.
            #expect(Self.frame(bytes, cuts: [first]) == whole)
        }
    }

    @Test func fingerprintDetectsADifferentOutput() {
        // Guard for the test above: the fingerprint must change when a sentence byte changes.
        let a = Array("$GPHDT,1.0,T*00\r\n$GPHDT,2.0,T*00\r\n".utf8)
        var b = a
        b[9] = UInt8(ascii: "5")
        #expect(Self.fingerprint(a, split: 3).hash != Self.fingerprint(b, split: 3).hash)
        // And sentence boundaries matter, not only the bytes.
        let c = Array("$GPHDT,1.0,T*00$GPHDT,2.0,T*00\r\n".utf8)
        #expect(Self.fingerprint(a, split: 3).hash != Self.fingerprint(c, split: 3).hash)
    }

    // MARK: Line ends

    static let hdt = "$GPHDT,123.456,T*32"
    static let zda = "$GNZDA,003956.00,12,04,2019,00,00*7C"

    @Test(arguments: ["\r\n", "\n", "\r\r\n", "\r"])
    func lineEndings(_ end: String) {
        let out = Self.frame(Self.hdt + end + Self.zda + end)
        #expect(out.sentences.map(TestLine.text) == [Self.hdt, Self.zda])
        var stats = NMEAFramer.Statistics()
        stats.sentences = 2
        #expect(out.statistics == stats)
    }

    @Test func mixedLineEndingsAndBlankLinesAreNotGarbage() {
        let out = Self.frame("\r\n\n\r" + Self.hdt + "\r\r\n\n\n" + Self.zda + "\n\r\n" + Self.hdt + "\r")
        #expect(out.sentences.map(TestLine.text) == [Self.hdt, Self.zda, Self.hdt])
        #expect(out.statistics.discardedBytes == 0)
        #expect(out.statistics.sentences == 3)
    }

    @Test func sentenceWithoutLineEndIsHeldUntilItEnds() {
        var framer = NMEAFramer()
        let first = Self.frame(Array(Self.hdt.utf8), framer: &framer)
        #expect(first.isEmpty)
        #expect(framer.hasPartialSentence)
        #expect(framer.statistics.sentences == 0)
        let second = Self.frame(Array("\n".utf8), framer: &framer)
        #expect(second.map(TestLine.text) == [Self.hdt])
        #expect(!framer.hasPartialSentence)
        #expect(framer.statistics.sentences == 1)
    }

    @Test func lineEndSplitBetweenCRAndLF() {
        let text = Self.hdt + "\r\n" + Self.zda + "\r\n"
        let split = Self.hdt.utf8.count + 1  // after the CR
        let out = Self.frame(text, cuts: [split])
        #expect(out.sentences.map(TestLine.text) == [Self.hdt, Self.zda])
        #expect(out.statistics.discardedBytes == 0)
    }

    // MARK: Garbage and comments

    @Test func garbageBetweenSentencesIsCounted() {
        let text = "boot: ok\r\n" + Self.hdt + "\r\nxx" + Self.zda + "\r\n\u{0}\u{7}\r\n" + "trailing"
        let out = Self.frame(text)
        #expect(out.sentences.map(TestLine.text) == [Self.hdt, Self.zda])
        var stats = NMEAFramer.Statistics()
        stats.sentences = 2
        stats.discardedBytes = 8 + 2 + 2 + 8  // "boot: ok", "xx", NUL BEL, "trailing"
        #expect(out.statistics == stats)
    }

    @Test func garbageRightBeforeDollarOnTheSameLine() {
        // Text glued to the front of a sentence is dropped and the sentence still delivered.
        let out = Self.frame("GARBAGE" + Self.hdt + "\n")
        #expect(out.sentences.map(TestLine.text) == [Self.hdt])
        #expect(out.statistics.discardedBytes == 7)
    }

    @Test func commentLinesAreSkipped() {
        let text =
            "# Name: test\r\n#\n# $GPGGA inside a comment is not a sentence\n" + Self.hdt + "\r\n"
            + "#trailing comment " + Self.zda + "\r\n" + Self.zda + "\n"
        let out = Self.frame(text)
        #expect(out.sentences.map(TestLine.text) == [Self.hdt, Self.zda])
        var stats = NMEAFramer.Statistics()
        stats.sentences = 2
        stats.commentLines = 4
        #expect(out.statistics == stats)
    }

    @Test func commentRightAfterASentenceEndIsAtLineStart() {
        // A CR alone ends the sentence; the `#` that follows starts a line.
        let out = Self.frame(Self.hdt + "\r# note\n" + Self.zda + "\n")
        #expect(out.sentences.map(TestLine.text) == [Self.hdt, Self.zda])
        #expect(out.statistics.commentLines == 1)
        #expect(out.statistics.discardedBytes == 0)
    }

    @Test func hashNotAtLineStartIsGarbage() {
        // "ab#cd" is garbage (5 bytes), not a comment, so the `$` after it still starts a sentence.
        let out = Self.frame("ab#cd\n  # x " + Self.hdt + "\n")
        #expect(out.sentences.map(TestLine.text) == [Self.hdt])
        var stats = NMEAFramer.Statistics()
        stats.sentences = 1
        stats.discardedBytes = 5 + 6  // "ab#cd", "  # x "
        #expect(out.statistics == stats)
    }

    @Test func commentSplitAcrossChunks() {
        let text = "# a comment with $GPHDT,1.0,T*00 in it\n" + Self.hdt + "\n"
        let whole = Self.frame(text)
        #expect(whole.sentences.map(TestLine.text) == [Self.hdt])
        #expect(whole.statistics.commentLines == 1)
        for split in 1..<text.utf8.count {
            #expect(Self.frame(text, cuts: [split]) == whole, "split at \(split)")
        }
    }

    // MARK: Abandoned lines

    @Test func dollarInMidSentenceRestarts() {
        let text = "$GPGGA,1234" + Self.hdt + "\r\n"
        let out = Self.frame(text)
        #expect(out.sentences.map(TestLine.text) == [Self.hdt])
        var stats = NMEAFramer.Statistics()
        stats.sentences = 1
        stats.truncatedLines = 1
        #expect(out.statistics == stats)
        // The same when the restart happens after the head was carried over from a chunk.
        for split in 1..<text.utf8.count {
            #expect(Self.frame(text, cuts: [split]) == out, "split at \(split)")
        }
    }

    @Test func twoRestartsInOneLine() {
        let out = Self.frame("$A,1$B,2" + Self.zda + "\n")
        #expect(out.sentences.map(TestLine.text) == [Self.zda])
        #expect(out.statistics.truncatedLines == 2)
        #expect(out.statistics.sentences == 1)
    }

    /// A sentence of exactly `length` bytes (`$` to the last checksum digit).
    static func line(length: Int) -> [UInt8] {
        TestLine.sentence("GPTXT," + String(repeating: "A", count: length - 10))
    }

    @Test func lineBuilderMakesTheRequestedLength() {
        #expect(Self.line(length: 160).count == 160)
        #expect(Self.line(length: 161).count == 161)
        #expect(NMEASentence.maxLength == 160)
    }

    /// The carry buffer's size is a literal (InlineArray's must be): it is the longest sentence.
    @Test func carryHoldsTheLongestSentence() {
        #expect(NMEAFramer.Carry.count == NMEASentence.maxLength)
    }

    @Test func lineExactlyAtTheLimitIsDelivered() {
        let line = Self.line(length: NMEASentence.maxLength)
        let bytes = line + Array("\r\n".utf8)
        let whole = Self.frame(bytes)
        #expect(whole.sentences == [line])
        #expect(whole.statistics.overlongLines == 0)
        // Also when the carry buffer has to hold all 160 bytes before the CR arrives.
        for split in 1..<bytes.count {
            #expect(Self.frame(bytes, cuts: [split]) == whole, "split at \(split)")
        }
    }

    @Test func lineOneOverTheLimitIsDroppedAndTheFramerResyncs() {
        let long = Self.line(length: NMEASentence.maxLength + 1)
        let bytes = long + Array(("\r\n" + Self.hdt + "\r\n").utf8)
        let whole = Self.frame(bytes)
        #expect(whole.sentences.map(TestLine.text) == [Self.hdt])
        var stats = NMEAFramer.Statistics()
        stats.sentences = 1
        stats.overlongLines = 1
        #expect(whole.statistics == stats)
        for split in 1..<bytes.count {
            #expect(Self.frame(bytes, cuts: [split]) == whole, "split at \(split)")
        }
        #expect(Self.frame(bytes, chunkSize: 1) == whole)
    }

    @Test func overlongLineRestIsDiscardedUntilTheNextDollar() {
        // 171 bytes: the 161st abandons the line, the 10 after it are garbage, and the `$` glued to
        // the end starts the next sentence.
        let text = "$" + String(repeating: "A", count: 170) + Self.hdt + "\n"
        let whole = Self.frame(text)
        #expect(whole.sentences.map(TestLine.text) == [Self.hdt])
        var stats = NMEAFramer.Statistics()
        stats.sentences = 1
        stats.overlongLines = 1
        stats.discardedBytes = 10
        #expect(whole.statistics == stats)
        for split in 1..<text.utf8.count {
            #expect(Self.frame(text, cuts: [split]) == whole, "split at \(split)")
        }
    }

    @Test func veryLongLineSpreadOverManyChunks() {
        let text = "$" + String(repeating: "B", count: 1000) + "\r\n" + Self.zda + "\r\n"
        let whole = Self.frame(text)
        #expect(whole.sentences.map(TestLine.text) == [Self.zda])
        #expect(whole.statistics.overlongLines == 1)
        #expect(whole.statistics.discardedBytes == 1001 - 161)
        #expect(Self.frame(Array(text.utf8), chunkSize: 7) == whole)
        #expect(Self.frame(Array(text.utf8), chunkSize: 1) == whole)
    }

    @Test(arguments: [0x00, 0x09, 0x1B, 0x7F, 0x80, 0xC3, 0xFF] as [UInt8])
    func nonPrintableByteAbandonsTheLine(_ bad: UInt8) {
        // "$GPGSA,A,3,1" + bad + "5,,*00" CR LF, then a good sentence.
        let bytes = Array("$GPGSA,A,3,1".utf8) + [bad] + Array("5,,*00\r\n\(Self.hdt)\r\n".utf8)
        let whole = Self.frame(bytes)
        #expect(whole.sentences.map(TestLine.text) == [Self.hdt])
        var stats = NMEAFramer.Statistics()
        stats.sentences = 1
        stats.invalidByteLines = 1
        stats.discardedBytes = 6  // "5,,*00", the rest of the abandoned line
        #expect(whole.statistics == stats)
        for split in 1..<bytes.count {
            #expect(Self.frame(bytes, cuts: [split]) == whole, "split at \(split)")
        }
    }

    @Test func realEscapeCodesInsideAGSA() throws {
        // et-332.log line 105: terminal escape codes land inside the checksum of a GSA.
        let line = try #require(try Fixtures.lines("et-332.log").first { $0.contains(0x1B) })
        #expect(line.starts(with: Array("$GPGSA,A,3,26,15".utf8)))
        let out = Self.frame(line + [UInt8(ascii: "\n")] + Array((Self.hdt + "\n").utf8))
        #expect(out.sentences.map(TestLine.text) == [Self.hdt])
        #expect(out.statistics.invalidByteLines == 1)
        // Everything after the first ESC (the other escape codes included) is outside any sentence.
        let firstEscape = try #require(line.firstIndex(of: 0x1B))
        #expect(out.statistics.discardedBytes == line.count - firstEscape - 1)
    }

    // MARK: Carry buffer

    @Test func sentenceSplitAcrossChunksComesFromTheCarryBuffer() {
        var framer = NMEAFramer()
        var out: [String] = []
        let parts = ["$GPHDT,12", "3.4", "56,T*32\r", "\n$GNZDA,003956.00,12,04,", "2019,00,00*7C", "\r\n"]
        for part in parts {
            out += Self.frame(Array(part.utf8), framer: &framer).map(TestLine.text)
        }
        #expect(out == [Self.hdt, Self.zda])
        #expect(framer.statistics.sentences == 2)
        #expect(!framer.hasPartialSentence)
    }

    @Test func chunkWithSentencesOnBothSidesOfACarriedOne() {
        // Chunk 2 completes a carried sentence, holds a whole one, and starts a third.
        let text = Self.hdt + "\r\n" + Self.zda + "\r\n" + Self.hdt + "\r\n"
        let hdtLength = Self.hdt.utf8.count
        let cuts = [5, hdtLength + 2 + Self.zda.utf8.count + 2 + 4]
        let out = Self.frame(text, cuts: cuts)
        #expect(out.sentences.map(TestLine.text) == [Self.hdt, Self.zda, Self.hdt])
        #expect(out.statistics.discardedBytes == 0)
    }

    @Test func emptyChunksChangeNothing() {
        var framer = NMEAFramer()
        var out = Self.frame(Array("$GPHDT,123".utf8), framer: &framer)
        out += Self.frame([], framer: &framer)
        #expect(framer.hasPartialSentence)
        out += Self.frame(Array(".456,T*32\n".utf8), framer: &framer)
        out += Self.frame([], framer: &framer)
        #expect(out.map(TestLine.text) == [Self.hdt])
    }

    @Test func carryIsNotReusedAfterTheCarriedSentenceEnds() {
        // A long sentence is carried, then a short one follows in one chunk: the short one must
        // not pick up bytes left in the carry buffer.
        let long = Self.line(length: 150)
        var framer = NMEAFramer()
        var out = Self.frame(Array(long[..<100]), framer: &framer)
        out += Self.frame(Array(long[100...]) + Array(("\n" + Self.hdt + "\n$GPH").utf8), framer: &framer)
        out += Self.frame(Array("DT,123.456,T*32\n".utf8), framer: &framer)
        #expect(out == [long, Array(Self.hdt.utf8), Array(Self.hdt.utf8)])
    }

    // MARK: reset()

    @Test func resetDropsThePartialSentence() {
        var framer = NMEAFramer()
        _ = Self.frame(Array("$GPHDT,12".utf8), framer: &framer)
        #expect(framer.hasPartialSentence)
        framer.reset()
        #expect(!framer.hasPartialSentence)
        let out = Self.frame(Array(("3.456,T*32\r\n" + Self.zda + "\r\n").utf8), framer: &framer)
        #expect(out.map(TestLine.text) == [Self.zda])
        // The orphaned tail is garbage; statistics survive reset.
        var stats = NMEAFramer.Statistics()
        stats.sentences = 1
        stats.discardedBytes = 10  // "3.456,T*32"
        #expect(framer.statistics == stats)
    }

    @Test func withoutResetTheSameBytesCompleteTheSentence() {
        // Control for the test above.
        var framer = NMEAFramer()
        _ = Self.frame(Array("$GPHDT,12".utf8), framer: &framer)
        let out = Self.frame(Array(("3.456,T*32\r\n" + Self.zda + "\r\n").utf8), framer: &framer)
        #expect(out.map(TestLine.text) == [Self.hdt, Self.zda])
    }

    @Test func resetLeavesAnUnfinishedComment() {
        var framer = NMEAFramer()
        _ = Self.frame(Array("# comment without its line end ".utf8), framer: &framer)
        framer.reset()
        let out = Self.frame(Array((Self.hdt + "\n").utf8), framer: &framer)
        #expect(out.map(TestLine.text) == [Self.hdt])
        #expect(framer.statistics.commentLines == 1)

        // Without reset the sentence is still inside the comment.
        var other = NMEAFramer()
        _ = Self.frame(Array("# comment without its line end ".utf8), framer: &other)
        #expect(Self.frame(Array((Self.hdt + "\n").utf8), framer: &other).isEmpty)
    }

    @Test func resetPutsTheFramerAtALineStart() {
        var framer = NMEAFramer()
        _ = Self.frame(Array("garbage".utf8), framer: &framer)
        framer.reset()
        _ = Self.frame(Array("# now a comment\n".utf8), framer: &framer)
        #expect(framer.statistics.commentLines == 1)
        #expect(framer.statistics.discardedBytes == 7)
    }

    // MARK: Statistics

    @Test func statisticsCountEveryKindOfDropExactly() {
        let overlong = "$" + String(repeating: "X", count: 165)  // 166 bytes: 5 discarded
        var bytes = Array("# header\r\n#\r\n".utf8)  // 2 comments
        bytes += Array("noise\r\n".utf8)  // 5 discarded
        bytes += Array((Self.hdt + "\r\n").utf8)  // sentence 1
        bytes += Array("$GPGGA,1$GPGGA,2".utf8) + Array((Self.zda + "\r\n").utf8)  // 2 truncated, sentence 2
        bytes += Array((overlong + "\r\n").utf8)  // 1 overlong
        bytes += Array("$GPRMC,1".utf8) + [0x01] + Array("23\r\n".utf8)  // 1 invalid byte, 2 discarded
        bytes += Array("x#y\n".utf8)  // 3 discarded
        bytes += Array((Self.hdt + "\r\r\n").utf8)  // sentence 3
        bytes += Array("$\n".utf8)  // sentence 4: a bare `$` is a (bad) sentence for the validator
        let expected = NMEAFramer.Statistics.make(
            sentences: 4, discardedBytes: 5 + 5 + 2 + 3, truncatedLines: 2, overlongLines: 1,
            invalidByteLines: 1, commentLines: 2)
        let whole = Self.frame(bytes)
        #expect(whole.statistics == expected)
        #expect(whole.sentences.map(TestLine.text) == [Self.hdt, Self.zda, Self.hdt, "$"])
        for size in [1, 2, 5, 13] {
            #expect(Self.frame(bytes, chunkSize: size) == whole, "chunks of \(size)")
        }
    }

    @Test func statisticsAccumulateAcrossFeeds() {
        var framer = NMEAFramer()
        for _ in 0..<3 {
            _ = Self.frame(Array(("zz\n# c\n" + Self.hdt + "\n").utf8), framer: &framer)
        }
        #expect(framer.statistics == .make(sentences: 3, discardedBytes: 6, commentLines: 3))
    }
}

extension NMEAFramer.Statistics {
    static func make(
        sentences: Int = 0, discardedBytes: Int = 0, truncatedLines: Int = 0, overlongLines: Int = 0,
        invalidByteLines: Int = 0, commentLines: Int = 0
    ) -> Self {
        var s = Self()
        s.sentences = sentences
        s.discardedBytes = discardedBytes
        s.truncatedLines = truncatedLines
        s.overlongLines = overlongLines
        s.invalidByteLines = invalidByteLines
        s.commentLines = commentLines
        return s
    }
}
