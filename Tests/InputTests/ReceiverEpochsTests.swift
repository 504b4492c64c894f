// A receiver's two sources (ReceiverEpochs): the driver gpsd names picks the NMEA parser or
// gpsd's reports, the other stream is ignored, and a switch mid-stream serves no epoch twice,
// mixes none and loses none.
import GNSS
import Input
import TestSupport
import Testing

@Suite("Receiver epoch sources", .tags(.unit))
struct ReceiverEpochsTests {
    /// 2019-04-22, the day of the ZED-F9P log.
    static let day: Int64 = 1_555_891_200

    static func tpv(_ secondOfDay: Int64, latitude: Double = -45.8775252) -> GPSDReport {
        .fix(
            GPSDFix(
                time: UTCTimestamp(unixSeconds: day + secondOfDay), mode: 3, status: 0, latitude: latitude,
                longitude: 170.5001328, altitudeHAE: 29.338, altitudeMSL: 27.548, geoidSeparation: 5.124))
    }

    /// One NMEA cycle (GGA + RMC) at 21:19:SS, positions as gpsd's pseudo-NMEA rounds them.
    static func cycle(_ second: Int) -> [[UInt8]] {
        let s = second < 10 ? "0\(second)" : String(second)
        return [
            TestNMEA.sentence("GPGGA,2119\(s).00,4552.6515,S,17030.0080,E,1,12,0.77,27.55,M,5.124,M,,"),
            TestNMEA.sentence("GPRMC,2119\(s).00,A,4552.6515,S,17030.0080,E,0.5968,217.876,220419,25.7,E"),
        ]
    }

    final class Collector {
        var positions: [Position] = []
    }

    static func feed(_ epochs: inout ReceiverEpochs, _ lines: [[UInt8]], into collector: Collector) {
        for line in lines {
            epochs.sentence(line.span, now: 0) { collector.positions.append($0) }
        }
    }

    @Test(
        "Drivers: NMEA families and the unnamed start on the parser, every other driver on gpsd's reports",
        arguments: [
            ("NMEA0183", EpochSource.nmea), ("", .nmea), ("MTK-3301", .nmea), ("Ashtech", .nmea),
            ("u-blox", .gpsdReports), ("SiRF", .gpsdReports), ("Trimble TSIP", .gpsdReports),
            ("GREIS", .gpsdReports), ("Skytraq", .gpsdReports), ("Navcom NCT", .gpsdReports),
        ])
    func driverSource(driver: String, source: EpochSource) {
        #expect(GPSDDriver(driver).source == source)
    }

    @Test("Only u-blox's eph/epv are taken as the receiver's accuracy")
    func receiverAccuracy() {
        #expect(GPSDDriver("u-blox").reportsReceiverAccuracy)
        #expect(!GPSDDriver("SiRF").reportsReceiverAccuracy && !GPSDDriver("NMEA0183").reportsReceiverAccuracy)
    }

    @Test("NMEA driver: sentences make epochs, gpsd's TPVs are ignored")
    func nmeaSource() {
        var epochs = ReceiverEpochs()
        let collector = Collector()
        epochs.driver("NMEA0183") { collector.positions.append($0) }
        epochs.report(Self.tpv(76_761), now: 0) { collector.positions.append($0) }
        Self.feed(&epochs, Self.cycle(21) + Self.cycle(22), into: collector)
        epochs.finish { collector.positions.append($0) }
        #expect(collector.positions.count == 2)
        #expect(collector.positions.allSatisfy { $0.latitude.map { abs($0 + 45.877525) < 1e-6 } ?? false })
        #expect(epochs.statistics.ignoredReports == 1)
    }

    @Test("Binary driver: TPVs make epochs, gpsd's pseudo-NMEA is ignored")
    func reportSource() {
        var epochs = ReceiverEpochs()
        let collector = Collector()
        epochs.driver("u-blox") { collector.positions.append($0) }
        Self.feed(&epochs, Self.cycle(21), into: collector)
        epochs.report(Self.tpv(76_761), now: 0) { collector.positions.append($0) }
        #expect(collector.positions.isEmpty && epochs.deadline != nil, "held for a later report of its time")
        epochs.finish { collector.positions.append($0) }
        #expect(collector.positions.map(\.latitude) == [-45.8775252])
        #expect(epochs.statistics.ignoredSentences == 2)
    }

    @Test("NMEA → u-blox mid-stream: no epoch twice, none mixed, none lost")
    func switchMidStream() throws {
        var epochs = ReceiverEpochs()
        let collector = Collector()
        epochs.driver("NMEA0183") { collector.positions.append($0) }
        // Cycles 21 and 22 complete on NMEA (22's end is learned from 21's), 23 is cut by the switch.
        Self.feed(&epochs, Self.cycle(21) + Self.cycle(22) + Self.cycle(22) + [Self.cycle(23)[0]], into: collector)
        let servedOnNMEA = collector.positions.count
        epochs.driver("u-blox") { collector.positions.append($0) }
        // gpsd's reports of 22 (already served) and 23 (cut short on NMEA) and 24.
        for second: Int64 in [76_762, 76_763, 76_764] {
            epochs.report(Self.tpv(second, latitude: -45.87752), now: second) { collector.positions.append($0) }
        }
        epochs.finish { collector.positions.append($0) }
        let seconds = collector.positions.compactMap { $0.time.map { $0.nanosecondsOfDay / 1_000_000_000 } }
        #expect(seconds == Array(76_761...76_764).prefix(servedOnNMEA).map { $0 } + Array(76_763...76_764))
        #expect(Set(seconds).count == seconds.count, "an epoch served twice")
        #expect(epochs.statistics.sourceSwitches == 1)
        #expect(epochs.reports.statistics.repeated == 1)
        // The epochs after the switch are gpsd's reports whole: nothing of the NMEA cycle in them.
        #expect(collector.positions.suffix(2).allSatisfy { $0.latitude == -45.87752 && $0.ellipsoidalHeight == 29.338 })
    }

    @Test("A closed device forgets its driver: the next one starts on the parser")
    func closeForgetsDriver() {
        var epochs = ReceiverEpochs()
        var served = 0
        epochs.driver("u-blox") { _ in }
        epochs.report(Self.tpv(76_761), now: 0) { _ in served += 1 }
        epochs.sourceClosed { _ in served += 1 }
        #expect(served == 1, "the held fix is served when the device closes")
        #expect(epochs.source == .nmea)
    }
}
