// "Zero heap allocations per sentence in steady state", proven with a malloc counter
// (Tests/Support/CAllocationCounter) over a long run of real sentences.
import NMEA0183
import TestSupport
import Testing

/// Every capture concatenated: 5 800+ real sentences from 16 receivers, comments included.
func captureCorpus() throws -> [UInt8] {
    var all: [UInt8] = []
    for name in Fixtures.captureNames { all += try Fixtures.bytes(name) }
    return all
}

@Suite(
    "Zero heap allocations per sentence", .tags(.unit),
    .enabled(if: isOptimizedBuild, Comment(rawValue: allocationTestsNeedOptimizedBuild)))
struct AllocationTests {
    /// Passes over the corpus in the measured run: about 117 000 sentences.
    static let passes = 20

    @Test func framingValidationAndDecodingAllocateNothing() throws {
        let bytes = try captureCorpus()
        var framer = NMEAFramer()
        var decoded = 0
        var failed = 0
        func pass() {
            // 4 KiB chunks, like reads from a socket, so sentences straddle chunk boundaries.
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + 4096, bytes.count)
                framer.feed(bytes.span.extracting(offset..<end)) { line in
                    do {
                        let sentence = try NMEASentence(validating: line)
                        _ = try NMEAMessage(sentence)
                        decoded += 1
                    } catch {
                        failed += 1
                    }
                }
                offset = end
            }
        }
        pass()  // warm-up: lazy globals, generic metadata
        decoded = 0
        let allocations = countAllocations {
            for _ in 0..<Self.passes { pass() }
        }
        #expect(decoded > 100_000, "the run must be long enough to mean something")
        #expect(failed > 0, "the corpus includes rejected and unsupported sentences")
        #expect(allocations == 0, "\(allocations) allocations over \(decoded) decoded sentences")
    }

    @Test func theCounterSeesAllocations() {
        // Guards the two tests above: a counter that never counts would make them pass.
        let allocations = countAllocations {
            let array = [UInt8](repeating: 1, count: 4096)
            precondition(array.count == 4096)
        }
        #expect(allocations >= 1)
    }
}
