// The JSON input path must not allocate per epoch either (issue 20, "Cost"): gpsd's lines framed,
// unpacked by libgps and converted (GPSDCaptureReader.feed), then assembled into positions
// (GPSDReportAssembler), in the steady state after a warm-up pass.
import GNSS
import GPSD
import TestSupport
import Testing

@Suite(
    "gpsd's reports to epochs allocate nothing", .tags(.unit),
    .enabled(if: isOptimizedBuild, Comment(rawValue: allocationTestsNeedOptimizedBuild)))
struct GPSDReportAllocationTests {
    static let passes = 20

    /// A binary receiver's watch as gpsd 3.22 writes it (Tests/Fixtures/gpsd-json/README.md)
    /// without the connection's own lines (VERSION, DEVICES, WATCH, DEVICE: once per connection,
    /// and a DEVICE becomes strings): its TPV, SKY and pseudo-NMEA lines, in gpsd's order.
    static func epochLines(_ name: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        for line in try Fixtures.lines("../gpsd-json/" + name) {
            let text = String(decoding: line, as: UTF8.self)
            guard
                text.hasPrefix("$")
                    || ["TPV", "SKY", "GST"].contains(where: { text.hasPrefix("{\"class\":\"\($0)\"") })
            else { continue }
            bytes += line
            bytes += [0x0D, 0x0A]
        }
        return bytes
    }

    @Test(
        "GPSDCaptureReader.feed + GPSDReportAssembler, steady state",
        arguments: ["sirfstarv.log.watch", "ublox-neo-m8t.log.watch"])
    func readerAndAssemblerAllocateNothing(_ name: String) throws {
        let bytes = try Self.epochLines(name)
        let reader = try #require(GPSDCaptureReader())
        var assembler = GPSDReportAssembler()
        assembler.receiverAccuracy = true
        var epochs = 0
        var satellites = 0
        var lastLatitude = 0.0
        var now: Int64 = 0
        func pass(chunk: Int) {
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + chunk, bytes.count)
                reader.feed(bytes.span.extracting(offset..<end)) { item in
                    guard case .report(let report) = item else { return }
                    now += 1_000_000
                    assembler.report(report, now: now) { position in
                        epochs += 1
                        satellites += position.sky.count
                        lastLatitude = position.latitude ?? lastLatitude
                    }
                }
                offset = end
            }
        }
        pass(chunk: 4096)
        let perPass = epochs
        epochs = 0
        let allocations = countAllocations {
            for i in 0..<Self.passes { pass(chunk: i % 2 == 0 ? 4096 : 97) }
        }
        #expect(
            perPass > 20 && epochs >= Self.passes * (perPass - 1), "\(epochs) epochs, \(perPass) in the warm-up pass")
        #expect(satellites > 0 && lastLatitude != 0)
        #expect(reader.statistics.refused == 0 && reader.statistics.reports > 0)
        #expect(allocations == 0, "\(allocations) allocations over \(epochs) epochs of \(name)")
    }
}
