// EpochStream: the one consumer of NMEA input (gpsd's lines in the bridge, reads in `decode`),
// driven sentence by sentence with no clock but the `now` the tests pass.
import GNSS
import TestSupport
import Testing

/// The cycle `n` of a position, from its time (TestNMEA cycles are 100 ms apart).
private func cycleNumber(_ position: Position) -> Int64? {
    position.time.map { $0.nanosecondsOfDay / 100_000_000 }
}

private extension EpochStream {
    /// `sentence` for a line the test holds in an array.
    mutating func sentence(_ line: [UInt8], now: Int64, _ emit: (Position) -> Void) {
        sentence(line.span, now: now, emit)
    }
}

@Suite("EpochStream: lines in, epochs out, source lifecycle", .tags(.unit))
struct EpochStreamTests {
    @Test func anEpochIsEmittedOnItsClosingSentenceNotOnTheNextCycle() {
        var stream = EpochStream()
        var emitted: [Int64] = []
        // Cycle 0 teaches the assembler that RMC closes the cycle (cycle 1's GGA ends it).
        for line in TestNMEA.cycle(0) { stream.sentence(line.span, now: 0) { emitted.append(cycleNumber($0) ?? -1) } }
        for n in 1..<6 {
            let lines = TestNMEA.cycle(n)
            stream.sentence(lines[0], now: 0) { emitted.append(cycleNumber($0) ?? -1) }
            stream.sentence(lines[1], now: 0) { emitted.append(cycleNumber($0) ?? -1) }
            #expect(emitted.last == Int64(n - 1), "cycle \(n) is not out before its closing sentence")
            stream.sentence(lines[2], now: 0) { emitted.append(cycleNumber($0) ?? -1) }
            #expect(emitted.last == Int64(n), "cycle \(n) is out the moment its RMC is decoded")
        }
        #expect(emitted == [0, 1, 2, 3, 4, 5])
    }

    @Test func linesAndRawBytesOfACaptureGiveTheSameEpochs() throws {
        // gpsd hands over framed lines, `decode` reads raw bytes: one consumer, same epochs.
        let capture = try Fixtures.bytes("nmea-rtk.log")
        var fromLines: [Position] = []
        var lines = EpochStream()
        for line in Fixtures.splitLines(capture) where line.first == UInt8(ascii: "$") {
            lines.sentence(line.span, now: 0) { fromLines.append($0) }
        }
        lines.finish { fromLines.append($0) }
        var fromBytes: [Position] = []
        var bytes = EpochStream()
        bytes.bytes(capture.span, now: 0) { fromBytes.append($0) }
        bytes.finish { fromBytes.append($0) }
        #expect(fromLines.count > 100)
        #expect(fromLines == fromBytes)
        #expect(lines.decoder.statistics.decoded == bytes.decoder.statistics.decoded)
    }

    @Test func aClosedSourceEmitsItsPendingCycleAndTheNextSourceStartsAfresh() {
        var stream = EpochStream()
        var emitted: [Position] = []
        for n in 0..<3 { for line in TestNMEA.cycle(n) { stream.sentence(line.span, now: 0) { emitted.append($0) } } }
        let partial = TestNMEA.cycle(3)
        stream.sentence(partial[0], now: 0) { emitted.append($0) }
        #expect(emitted.count == 3)
        stream.sourceClosed { emitted.append($0) }
        #expect(emitted.map(cycleNumber) == [0, 1, 2, 3], "the device's last cycle comes out at its close")

        // A new receiver with another latitude: nothing of the old one is pending or learned.
        for line in TestNMEA.cycle(10, latitude: "5000.0000000") {
            stream.sentence(line.span, now: 0) { emitted.append($0) }
        }
        #expect(emitted.count == 4, "a fresh assembler learns the closer again: cycle 10 waits for the next cycle")
        stream.sentence(TestNMEA.cycle(11, latitude: "5000.0000000")[0], now: 0) { emitted.append($0) }
        #expect(emitted.map(cycleNumber) == [0, 1, 2, 3, 10])
        #expect(emitted.last?.latitude == 50)
        #expect(stream.decoder.statistics.decoded == 3 * 3 + 1 + 3 + 1, "the counters go on across sources")
    }

    @Test func aLostSourceDropsItsPartialCycle() {
        var stream = EpochStream()
        var emitted: [Position] = []
        for n in 0..<3 { for line in TestNMEA.cycle(n) { stream.sentence(line.span, now: 0) { emitted.append($0) } } }
        let partial = TestNMEA.cycle(3)
        stream.sentence(partial[0], now: 0) { emitted.append($0) }
        stream.sentence(partial[1], now: 0) { emitted.append($0) }
        stream.sourceLost()
        // The reconnected stream starts mid-cycle, with the RMC of a cycle whose GGA was lost.
        stream.sentence(TestNMEA.cycle(20)[2], now: 0) { emitted.append($0) }
        for n in 21..<23 { for line in TestNMEA.cycle(n) { stream.sentence(line.span, now: 0) { emitted.append($0) } } }
        stream.finish { emitted.append($0) }
        #expect(
            !emitted.contains { cycleNumber($0) == 3 },
            "the cut-off cycle is never emitted: \(emitted.map(cycleNumber))")
        #expect(emitted.map(cycleNumber).suffix(2) == [21, 22])
    }

    @Test func idleTimeEmitsACycleThatStalled() {
        var stream = EpochStream()
        var emitted: [Position] = []
        let lines = TestNMEA.cycle(0)
        stream.sentence(lines[0], now: 1_000_000_000) { emitted.append($0) }
        stream.sentence(lines[1], now: 1_000_000_000) { emitted.append($0) }
        stream.idle(now: 1_001_000_000) { emitted.append($0) }
        #expect(emitted.isEmpty, "1 ms is no stall")
        stream.idle(now: 1_000_000_000 + stream.decoder.assembler.staleAfter) { emitted.append($0) }
        #expect(emitted.map(cycleNumber) == [0])
    }
}

@Suite(
    "EpochStream line by line allocates nothing", .tags(.unit),
    .enabled(if: isOptimizedBuild, Comment(rawValue: allocationTestsNeedOptimizedBuild)))
struct EpochStreamAllocationTests {
    /// The gpsd thread's path: every line of every capture through `sentence`, as gpsd frames them.
    @Test func sentencesAllocateNothing() throws {
        let lines = Fixtures.splitLines(try corpusOfAllCaptures()).filter { $0.first == UInt8(ascii: "$") }
        var stream = EpochStream()
        var epochs = 0
        func pass() {
            for (index, line) in lines.enumerated() {
                stream.sentence(line.span, now: Int64(index) * 1_000_000) { _ in epochs += 1 }
            }
            stream.idle(now: Int64(lines.count) * 1_000_000 + 10_000_000_000) { _ in epochs += 1 }
        }
        pass()
        epochs = 0
        let allocations = countAllocations {
            for _ in 0..<5 { pass() }
        }
        #expect(epochs > 1000)
        #expect(allocations == 0, "\(allocations) allocations over \(epochs) epochs")
    }
}
