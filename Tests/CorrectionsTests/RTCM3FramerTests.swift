// The RTCM 3 framer: known frames from the standard and pyrtcm, frames built here with an
// independent bit-at-a-time CRC, every split point, garbage, damage and resynchronisation, the
// length limits, and the station id of 1005/1006.
import Corrections
import TestSupport
import Testing

@Suite("RTCM 3 framer", .tags(.unit))
struct RTCM3FramerTests {
    // MARK: CRC-24Q

    @Test func crcOfKnownFramesMatchesTheirLastThreeBytes() {
        for frame in [KnownFrames.standard1005, KnownFrames.pyrtcm1005, KnownFrames.pyrtcm1007, KnownFrames.pyrtcm1065]
        {
            let body = Array(frame.dropLast(3))
            let sent = UInt32(frame[frame.count - 3]) << 16 | UInt32(frame[frame.count - 2]) << 8 | UInt32(frame.last!)
            #expect(RTCM3Framer.crc24q(body) == sent)
            #expect(bitwiseCRC24Q(body) == sent)
            // Over a whole frame, CRC included, the remainder is zero.
            #expect(RTCM3Framer.crc24q(frame) == 0)
        }
    }

    @Test func tableAndBitwiseCRCAgreeOnRandomInput() {
        var random = SplitMix64(state: 23)
        for length in [0, 1, 2, 3, 17, 255, 1026] {
            let input = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            #expect(RTCM3Framer.crc24q(input.span) == bitwiseCRC24Q(input), "length \(length)")
        }
        #expect(RTCM3Framer.crc24q([]) == 0)
    }

    // MARK: Known frames

    @Test func knownFramesAreDeliveredAsReceived() {
        let stream = KnownFrames.standard1005 + KnownFrames.pyrtcm1005 + KnownFrames.pyrtcm1007 + KnownFrames.pyrtcm1065
        let (found, statistics, buffered) = frames(of: stream)
        #expect(
            found.map(\.bytes) == [
                KnownFrames.standard1005, KnownFrames.pyrtcm1005, KnownFrames.pyrtcm1007, KnownFrames.pyrtcm1065,
            ])
        #expect(found.map(\.messageNumber) == [1005, 1005, 1007, 1065])
        #expect(found.map(\.referenceStationID) == [2003, 0, nil, nil])
        #expect(statistics == RTCM3Framer.Statistics(frames: 4, damagedFrames: 0, skippedBytes: 0))
        #expect(buffered == 0)
    }

    @Test func standardExampleHoldsAPreambleByteInItsPayload() {
        // Its payload's third byte is 0xD3: the framer must not start a frame there.
        #expect(KnownFrames.standard1005[5] == 0xD3)
        let (found, statistics, _) = frames(of: [0x00] + KnownFrames.standard1005)
        #expect(found.count == 1 && statistics.skippedBytes == 1)
    }

    @Test func validatingInitAcceptsExactlyOneWellFormedFrame() {
        #expect(RTCM3Frame(validating: KnownFrames.standard1005)?.messageNumber == 1005)
        #expect(RTCM3Frame(validating: KnownFrames.standard1005 + [0]) == nil)
        #expect(RTCM3Frame(validating: Array(KnownFrames.standard1005.dropLast())) == nil)
        var damaged = KnownFrames.standard1005
        damaged[10] ^= 0x01
        #expect(RTCM3Frame(validating: damaged) == nil)
        #expect(RTCM3Frame(validating: []) == nil)
        #expect(RTCM3Frame(validating: makeFrame([])) != nil)
    }

    // MARK: Chunking

    @Test func everySplitPointGivesTheSameFrames() {
        let stream =
            bytes("garbage") + KnownFrames.standard1005 + makeFrame(payload(message: 1077, length: 300))
            + [0xD3, 0xFF] + KnownFrames.pyrtcm1007 + bytes("$GPGGA,junk\r\n") + KnownFrames.pyrtcm1065
        let whole = frames(of: stream)
        #expect(whole.frames.count == 4)
        for split in 0...stream.count {
            let halves = frames(of: stream, splits: [split])
            #expect(halves.frames == whole.frames && halves.statistics == whole.statistics, "split at \(split)")
        }
        let drip = frames(of: stream, splits: Array(1..<stream.count))
        #expect(drip.frames == whole.frames && drip.statistics == whole.statistics)
    }

    @Test func everyPairOfSplitPointsGivesTheSameFrames() {
        let stream = KnownFrames.pyrtcm1007 + [0xD3, 0x00] + KnownFrames.pyrtcm1065
        let whole = frames(of: stream)
        for first in 0...stream.count {
            for second in first...stream.count {
                let pieces = frames(of: stream, splits: [first, second])
                #expect(pieces.frames == whole.frames && pieces.statistics == whole.statistics, "\(first), \(second)")
            }
        }
    }

    // MARK: Garbage, damage, truncation

    @Test func garbageBetweenFramesIsSkippedAndCounted() {
        let junk = bytes("ICY 200 OK\r\nServer: x\r\n\r\n")
        let stream = junk + KnownFrames.pyrtcm1005 + [0x00, 0xD3, 0x80, 0x01] + KnownFrames.pyrtcm1007 + junk
        let (found, statistics, buffered) = frames(of: stream)
        #expect(found.map(\.bytes) == [KnownFrames.pyrtcm1005, KnownFrames.pyrtcm1007])
        // 0xD3 0x80: reserved bits set, no frame: skipped, not damaged.
        #expect(statistics.damagedFrames == 0)
        #expect(statistics.skippedBytes == junk.count * 2 + 4)
        #expect(buffered == 0)
    }

    @Test func corruptedCRCIsDroppedCountedAndTheNextFrameFound() {
        var damaged = KnownFrames.pyrtcm1005
        damaged[damaged.count - 1] ^= 0xFF
        let stream = damaged + KnownFrames.pyrtcm1007
        let (found, statistics, _) = frames(of: stream)
        #expect(found.map(\.bytes) == [KnownFrames.pyrtcm1007])
        #expect(statistics.damagedFrames == 1)
        #expect(statistics.skippedBytes == damaged.count)
    }

    @Test func aFrameHiddenInsideAFalseCandidateIsFound() {
        // A false preamble whose declared length swallows a real frame: after its CRC fails, the
        // search resumes at the byte after it and finds the real frame inside.
        let stream = [0xD3, 0x00, 0x40] + KnownFrames.pyrtcm1007 + Array(repeating: 0x11, count: 80)
        let (found, statistics, buffered) = frames(of: stream)
        #expect(found.map(\.bytes) == [KnownFrames.pyrtcm1007])
        #expect(statistics.damagedFrames == 1)
        #expect(statistics.skippedBytes + KnownFrames.pyrtcm1007.count + buffered == stream.count)
    }

    @Test func truncatedFrameIsHeldNotDelivered() {
        let frame = KnownFrames.standard1005
        for length in 0..<frame.count {
            let (found, statistics, buffered) = frames(of: Array(frame[0..<length]))
            #expect(found.isEmpty && statistics.damagedFrames == 0, "prefix of \(length)")
            #expect(buffered == length, "prefix of \(length)")
        }
        // A truncated frame followed by whole ones: once enough bytes came to decide the truncated
        // candidate, its CRC fails and the frames inside its claimed length are still found.
        let stream = Array(KnownFrames.pyrtcm1005[0..<10]) + KnownFrames.pyrtcm1007 + KnownFrames.pyrtcm1065
        let (found, statistics, _) = frames(of: stream)
        #expect(found.map(\.bytes) == [KnownFrames.pyrtcm1007, KnownFrames.pyrtcm1065])
        #expect(statistics.damagedFrames == 1 && statistics.skippedBytes == 10)
    }

    @Test func everyByteIsInAFrameSkippedOrBuffered() {
        var random = SplitMix64(state: 1005)
        for round in 0..<50 {
            var stream: [UInt8] = []
            for _ in 0..<8 {
                switch Int.random(in: 0..<4, using: &random) {
                case 0: stream += makeFrame(payload(message: Int.random(in: 0...4095, using: &random), length: 40))
                case 1:
                    stream += (0..<Int.random(in: 0..<30, using: &random)).map { _ in
                        UInt8.random(in: 0...255, using: &random)
                    }
                case 2: stream += [0xD3, 0x00, UInt8.random(in: 0...255, using: &random)]
                default: stream += KnownFrames.pyrtcm1065
                }
            }
            let split = Int.random(in: 0...stream.count, using: &random)
            let (found, statistics, buffered) = frames(of: stream, splits: [split])
            let framed = found.reduce(0) { $0 + $1.bytes.count }
            #expect(framed + statistics.skippedBytes + buffered == stream.count, "round \(round)")
            #expect(statistics.frames == found.count)
            #expect(buffered <= RTCM3Frame.maximumFrameBytes)
        }
    }

    /// A malformed candidate in front of a good frame, and what the framer must count for it.
    struct Malformed: Sendable, CustomTestStringConvertible {
        let rule: String
        let bytes: [UInt8]
        let damaged: Int
        var testDescription: String { rule }
    }

    static let malformed: [Malformed] = [
        Malformed(rule: "preamble alone", bytes: [0xD3], damaged: 0),
        Malformed(rule: "reserved bits set", bytes: [0xD3, 0x80, 0x00], damaged: 0),
        Malformed(rule: "lowest reserved bit set (an 11-bit length)", bytes: [0xD3, 0x04, 0x13], damaged: 0),
        Malformed(rule: "empty payload, wrong CRC", bytes: [0xD3, 0x00, 0x00, 0x00, 0x00, 0x01], damaged: 1),
        Malformed(
            rule: "CRC of another frame", bytes: Array(KnownFrames.pyrtcm1005.dropLast(3)) + [0x6F, 0xC7, 0xEA],
            damaged: 1),
        Malformed(
            rule: "payload bit flipped", bytes: KnownFrames.standard1005.enumerated().map { $0 == 12 ? $1 ^ 0x10 : $1 },
            damaged: 2),
        Malformed(rule: "text", bytes: bytes("SOURCETABLE 200 OK\r\n"), damaged: 0),
    ]

    @Test(arguments: malformed)
    func malformedCandidateIsSkippedAndTheNextFrameFound(_ row: Malformed) {
        let stream = row.bytes + KnownFrames.pyrtcm1065 + Array(repeating: 0, count: 1100)
        for split in [0, 1, row.bytes.count, row.bytes.count + 5] {
            let (found, statistics, _) = frames(of: stream, splits: [split])
            #expect(found.map(\.bytes) == [KnownFrames.pyrtcm1065], "split at \(split)")
            #expect(statistics.damagedFrames == row.damaged, "split at \(split)")
        }
    }

    // MARK: Lengths

    @Test func frameOfMaximumLength() {
        let frame = makeFrame(payload(message: 4094, length: 1023, filler: 0xD3))
        #expect(frame.count == 1029 && frame.count == RTCM3Frame.maximumFrameBytes)
        #expect(frame[1] == 0x03 && frame[2] == 0xFF)
        let (found, statistics, _) = frames(of: bytes("x") + frame + frame, splits: [500])
        #expect(found.map(\.bytes) == [frame, frame])
        #expect(found.first?.payloadLength == 1023 && found.first?.messageNumber == 4094)
        #expect(statistics.skippedBytes == 1)
    }

    @Test func lengthFieldHasTenBitsSoReservedBitsNeverMakeALongerFrame() {
        // 0xD3 0x04 0x00 would be a length of 1024 if the field had 11 bits: it is a reserved bit,
        // so this is no frame and the framer never waits for 1024 bytes.
        let stream = [0xD3, 0x04, 0x00] + KnownFrames.pyrtcm1007
        let (found, statistics, buffered) = frames(of: stream)
        #expect(found.map(\.bytes) == [KnownFrames.pyrtcm1007])
        #expect(statistics.skippedBytes == 3 && statistics.damagedFrames == 0 && buffered == 0)
    }

    @Test func emptyAndShortPayloads() {
        let empty = makeFrame([])
        let one = makeFrame([0x3E])
        let (found, _, _) = frames(of: empty + one)
        #expect(found.map(\.bytes) == [empty, one])
        #expect(found.map(\.messageNumber) == [0, 0])
        #expect(found.map(\.referenceStationID) == [nil, nil])
    }

    @Test func bufferedBytesNeverExceedOneFrame() {
        // A huge append of a candidate that declares the longest length, then junk: memory stays at
        // one frame at most, whatever the append size.
        var framer = RTCM3Framer()
        var found: [RTCM3Frame] = []
        let big = [0xD3, 0x03, 0xFF] + Array(repeating: UInt8(0x00), count: 100_000)
        framer.append(big.span, into: &found)
        #expect(found.isEmpty)
        #expect(framer.bufferedCount <= RTCM3Frame.maximumFrameBytes)
        #expect(framer.statistics.damagedFrames == 1)
        #expect(framer.statistics.skippedBytes + framer.bufferedCount == big.count)
    }

    // MARK: Message number and station

    @Test(arguments: [(1005, 2003), (1006, 4095), (1006, 0), (1005, 1)])
    func stationIDOf1005And1006(_ message: Int, _ station: Int) {
        let frame = RTCM3Frame(validating: makeFrame(payload(message: message, station: station, length: 21)))
        #expect(frame?.messageNumber == message)
        #expect(frame?.referenceStationID == station)
    }

    @Test(arguments: [1001, 1004, 1012, 1074, 1077, 1087, 1097, 1127, 1137, 1230])
    func observationsCarryTheStationID(_ message: Int) {
        let frame = RTCM3Frame(validating: makeFrame(payload(message: message, station: 7, length: 21)))
        #expect(frame?.messageNumber == message)
        #expect(frame?.referenceStationID == 7)
    }

    @Test(arguments: [1007, 1008, 1019, 1045, 1065, 1138, 4095])
    func otherMessagesHaveNoStationID(_ message: Int) {
        let frame = RTCM3Frame(validating: makeFrame(payload(message: message, station: 7, length: 21)))
        #expect(frame?.messageNumber == message)
        #expect(frame?.referenceStationID == nil)
    }

    @Test func a1005TooShortForItsStationHasNone() {
        let frame = RTCM3Frame(validating: makeFrame([0x3E, 0xD0]))
        #expect(frame?.messageNumber == 1005)
        #expect(frame?.referenceStationID == nil)
    }
}
