// Epoch assembly must not allocate either: the gpsd thread runs it for every sentence.
import GNSS
import NMEA0183
import TestSupport
import Testing

@Suite(
    "Epoch assembly allocates nothing", .tags(.unit),
    .enabled(if: isOptimizedBuild, Comment(rawValue: allocationTestsNeedOptimizedBuild)))
struct EpochAssemblyAllocationTests {
    static let passes = 20

    @Test func epochAssemblyAllocatesNothing() throws {
        let bytes = try corpusOfAllCaptures()
        var decoder = NMEAStreamDecoder()
        var epochs = 0
        var lastLatitude = 0.0
        func pass() {
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + 4096, bytes.count)
                decoder.feed(bytes.span.extracting(offset..<end), now: Int64(offset)) { position in
                    epochs += 1
                    lastLatitude = position.latitude ?? lastLatitude
                }
                offset = end
            }
            decoder.finish { _ in epochs += 1 }
        }
        pass()
        epochs = 0
        let allocations = countAllocations {
            for _ in 0..<Self.passes { pass() }
        }
        #expect(epochs > 10_000, "20 passes over every capture: about 700 receiver cycles each")
        #expect(lastLatitude != 0)
        #expect(allocations == 0, "\(allocations) allocations over \(epochs) epochs")
    }

}

/// Every capture concatenated, comments included.
func corpusOfAllCaptures() throws -> [UInt8] {
    var all: [UInt8] = []
    for name in Fixtures.captureNames { all += try Fixtures.bytes(name) }
    return all
}
