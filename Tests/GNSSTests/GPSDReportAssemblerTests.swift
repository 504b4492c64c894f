// The JSON source's epoch rules (GPSDReportAssembler): one epoch per fix time, heights as gpsd
// gives them, accuracy from GST or the receiver's own estimate, gpsd's status mapped to TMM's
// quality. Values are gpsd 3.22's own TPVs from its regression suite (ublox-zed-f9p-hp.log.chk,
// sirfstarv.log.chk).
import GNSS
import TestSupport
import Testing

@Suite("gpsd report epochs", .tags(.unit))
struct GPSDReportAssemblerTests {
    static func time(_ seconds: Int64, _ nanoseconds: Int64 = 0) -> UTCTimestamp {
        UTCTimestamp(unixSeconds: seconds, nanoseconds: nanoseconds)
    }

    /// 2019-04-22T21:19:21.000Z, from the ZED-F9P log.
    static let t0: Int64 = 1_555_967_961

    static func fix(_ seconds: Int64?, mode: Int = 3, status: Int = 0, latitude: Double = -45.877525200) -> GPSDFix {
        GPSDFix(
            time: seconds.map { time($0) }, mode: mode, status: status, latitude: latitude, longitude: 170.500132800,
            altitudeHAE: 29.3380, altitudeMSL: 27.5480, geoidSeparation: 5.124, speed: 0.307, track: 217.8765,
            climb: 0.104, eph: 14.360, epv: 12.851)
    }

    /// Plays the reports 1 ms apart, then lets the hold end.
    static func run(
        _ reports: [GPSDReport], receiverAccuracy: Bool = false
    ) -> (positions: [Position], GPSDReportAssembler) {
        var assembler = GPSDReportAssembler()
        assembler.receiverAccuracy = receiverAccuracy
        var positions: [Position] = []
        var now: Int64 = 0
        for report in reports {
            now += 1_000_000
            assembler.report(report, now: now) { positions.append($0) }
        }
        assembler.idle(now: now + GPSDReportAssembler.longestHold) { positions.append($0) }
        return (positions, assembler)
    }

    @Test("A TPV is one epoch, at gpsd's full precision, heights as gpsd gives them")
    func fixIsAnEpoch() throws {
        let (positions, _) = Self.run([.fix(Self.fix(Self.t0))])
        let p = try #require(positions.first)
        #expect(positions.count == 1)
        #expect(p.latitude == -45.877525200)
        #expect(p.longitude == 170.500132800)
        #expect(p.ellipsoidalHeight == 29.3380 && p.altitude == 29.3380)
        #expect(p.mslHeight == 27.5480)
        #expect(p.undulation == 5.124)
        #expect(p.speed == 0.307 && p.bearing == 217.8765)
        #expect(p.quality == .autonomous)
        #expect(p.time == Self.time(Self.t0))
        #expect(p.hrms == nil && p.vrms == nil, "eph/epv are gpsd's model unless the driver says otherwise")
    }

    @Test("u-blox: eph/epv are the receiver's hAcc/vAcc and stand in for GST")
    func receiverAccuracy() throws {
        let (positions, _) = Self.run([.fix(Self.fix(Self.t0))], receiverAccuracy: true)
        let p = try #require(positions.first)
        #expect(p.hrms == 14.360)
        #expect(p.vrms == 12.851)
    }

    @Test("GST of the same time gives hrms/vrms; of another time, none")
    func noise() throws {
        let gst = GPSDNoise(
            time: Self.time(Self.t0), rms: 2.1, latitudeError: 0.03, longitudeError: 0.04, altitudeError: 0.05)
        let (same, _) = Self.run([.noise(gst), .fix(Self.fix(Self.t0))], receiverAccuracy: true)
        #expect(abs(try #require(same.first?.hrms) - 0.05) < 1e-12)
        #expect(same.first?.vrms == 0.05)
        let (other, _) = Self.run([.noise(gst), .fix(Self.fix(Self.t0 + 1))])
        #expect(other.first?.hrms == nil)
    }

    @Test("One epoch per time: the last TPV of a time is served, the earlier ones counted")
    func oneEpochPerTime() {
        // sirfstarv: MID 2 and MID 41 each report the second 02:17:18; u-blox: NAV-PVT, then
        // NAV-HPPOSLLH at the cycle's end.
        let (positions, assembler) = Self.run([
            .fix(Self.fix(Self.t0, latitude: 44.068759300)), .fix(Self.fix(Self.t0, latitude: 44.068761122)),
            .fix(Self.fix(Self.t0 + 1)),
        ])
        #expect(positions.map(\.latitude) == [44.068761122, -45.877525200])
        #expect(assembler.statistics.repeated == 1)
        #expect(assembler.statistics.epochs == 2)
    }

    @Test("The hold: a fix is served when a later time arrives or the hold ends, not before")
    func hold() {
        var assembler = GPSDReportAssembler()
        var served: [UTCTimestamp?] = []
        assembler.fix(Self.fix(Self.t0), now: 0) { served.append($0.time) }
        #expect(served.isEmpty && assembler.deadline == GPSDReportAssembler.longestHold)
        assembler.idle(now: GPSDReportAssembler.longestHold - 1) { served.append($0.time) }
        #expect(served.isEmpty)
        assembler.fix(Self.fix(Self.t0 + 1), now: 1_000) { served.append($0.time) }
        #expect(served == [Self.time(Self.t0)], "a later time serves the held fix at once")
        // The period is now known (1 s): a quarter of it is over the longest hold.
        #expect(assembler.hold == GPSDReportAssembler.longestHold)
        assembler.idle(now: 1_000 + GPSDReportAssembler.longestHold) { served.append($0.time) }
        #expect(served.count == 2)
        // 20 Hz: a quarter period, 12.5 ms.
        var fast = GPSDReportAssembler()
        for k: Int64 in 0..<3 {
            fast.fix(GPSDFix(time: Self.time(Self.t0, k * 50_000_000), mode: 3, latitude: 1, longitude: 2), now: k) {
                _ in
            }
        }
        #expect(fast.hold == 12_500_000)
    }

    /// gpsd 3.22's u-blox driver with NAV-DOP, NAV-PVT, NAV-HPPOSLLH at 10 Hz (hwtests/README.md,
    /// "UBX receivers and gpsd 3.22"): every epoch's first TPV is NAV-PVT's (1e-7°); the precise
    /// one (HPPOSLLH) comes 1 ms later in even epochs and only with the next epoch's NAV-DOP,
    /// 99 ms later, in odd ones. Time runs in 5 ms steps with the session's idle checks.
    @Test("A stream that re-reports a time after the hold is waited for: gpsd's last TPV of each time is served")
    func lateReportsAreWaitedFor() {
        let period: Int64 = 100_000_000
        func fix(_ epoch: Int64, precise: Bool) -> GPSDFix {
            GPSDFix(
                time: Self.time(Self.t0, epoch * period), mode: 3, latitude: precise ? 1.000000001 : 1.0, longitude: 2)
        }
        var assembler = GPSDReportAssembler()
        var served: [(time: UTCTimestamp?, latitude: Double?)] = []
        var now: Int64 = 0
        func advance(to t: Int64) {
            while now < t {
                now += 5_000_000
                assembler.idle(now: now) { served.append(($0.time, $0.latitude)) }
            }
        }
        func play(epochs: Range<Int64>, lateEvery: Int64?) {
            for epoch in epochs {
                advance(to: epoch * period)
                let previousWasLate = lateEvery.map { (epoch - 1) % $0 == 0 } ?? false
                if epoch > epochs.lowerBound, previousWasLate {
                    assembler.fix(fix(epoch - 1, precise: true), now: now) { served.append(($0.time, $0.latitude)) }
                }
                assembler.fix(fix(epoch, precise: false), now: now) { served.append(($0.time, $0.latitude)) }
                if !(lateEvery.map { epoch % $0 == 0 } ?? false) {
                    advance(to: now + 1_000_000)
                    assembler.fix(fix(epoch, precise: true), now: now) { served.append(($0.time, $0.latitude)) }
                }
            }
        }
        play(epochs: 0..<40, lateEvery: 2)
        advance(to: now + 2 * period)
        #expect(served.count == 40, "one epoch per time")
        #expect(served.map(\.time) == (0..<40).map { Self.time(Self.t0, $0 * period) })
        // Epoch 0 is served at its hold, before its precise TPV: that late TPV teaches the wait.
        #expect(served.first?.latitude == 1.0)
        #expect(served.dropFirst().allSatisfy { $0.latitude == 1.000000001 }, "\(served.map(\.latitude))")
        #expect(assembler.statistics.reportedAfterServing == 1)
        #expect(assembler.waitsForLaterTime)
        #expect(assembler.waitingHold == period + period / 4)

        // The receiver's set changes (no NAV-DOP): every precise TPV within 1 ms. After
        // `waitingCalmEpochs` such epochs the short hold is back.
        served.removeAll()
        play(epochs: 50..<(50 + Int64(GPSDReportAssembler.waitingCalmEpochs) + 5), lateEvery: nil)
        advance(to: now + 2 * period)
        #expect(served.allSatisfy { $0.latitude == 1.000000001 })
        #expect(!assembler.waitsForLaterTime)
        #expect(assembler.statistics.reportedAfterServing == 1)
    }

    @Test("A report without a fix never replaces a held fix of its time")
    func noFixDoesNotReplace() {
        let (positions, _) = Self.run([.fix(Self.fix(Self.t0)), .fix(Self.fix(Self.t0, mode: 1))])
        #expect(positions.map(\.hasFix) == [true])
    }

    @Test("A fix replaces a no-fix report of the same time; a late TPV is dropped")
    func noFixThenFixAndLate() {
        let (positions, assembler) = Self.run([
            .fix(Self.fix(Self.t0, mode: 1)), .fix(Self.fix(Self.t0)), .fix(Self.fix(Self.t0 + 1)),
            .fix(Self.fix(Self.t0)),
        ])
        #expect(positions.map(\.hasFix) == [true, true])
        #expect(assembler.statistics.late == 1)
    }

    @Test("A time far back (a receiver reset, a replay from the start) starts afresh")
    func timeJump() {
        let (positions, _) = Self.run([.fix(Self.fix(Self.t0 + 3600)), .fix(Self.fix(Self.t0))])
        #expect(positions.count == 2)
    }

    @Test("A TPV without time serves only the loss of a fix")
    func timelessNoFix() {
        let (positions, assembler) = Self.run([
            .fix(Self.fix(nil, mode: 1)), .fix(Self.fix(Self.t0)), .fix(Self.fix(nil, mode: 1)),
            .fix(Self.fix(nil, mode: 1)),
        ])
        #expect(positions.map(\.hasFix) == [true, false])
        #expect(assembler.statistics.repeated == 2)
    }

    @Test("No fix: no position, heights or accuracy, even when gpsd sent stale values")
    func noFixCarriesNoPosition() throws {
        let (positions, _) = Self.run([.fix(Self.fix(Self.t0, mode: 1))], receiverAccuracy: true)
        let p = try #require(positions.first)
        #expect(p.latitude == nil && p.altitude == nil && p.hrms == nil && p.quality == .noFix)
    }

    @Test("SKY: satellites and DOPs kept for the fixes after it; a SKY without satellites keeps them")
    func sky() throws {
        var sky = GPSDSky(time: Self.time(Self.t0), pdop: 5.8, hdop: 2.2, vdop: 5.4, satellitesUsed: 1)
        sky.satellites.merge(Satellite(id: 25, constellation: .gps, elevation: 67, azimuth: 225, snr: 22, used: true))
        sky.satellites.merge(Satellite(id: 29, constellation: .gps, elevation: 61, azimuth: 312, snr: 25))
        let dopsOnly = GPSDSky(time: Self.time(Self.t0 + 1), pdop: 6.4, hdop: 2.6, vdop: 5.8)
        // The first fix is served (by the second's arrival) before the DOPs-only SKY comes.
        let (positions, _) = Self.run([
            .sky(sky), .fix(Self.fix(Self.t0)), .fix(Self.fix(Self.t0 + 1)), .sky(dopsOnly),
            .fix(Self.fix(Self.t0 + 2)),
        ])
        let first = try #require(positions.first)
        #expect(first.sky.count == 2 && first.satellitesUsed == 1 && first.satellitesInView == 2)
        #expect(first.pdop == 5.8 && first.hdop == 2.2 && first.vdop == 5.4)
        #expect(positions[2].sky.count == 2 && positions[2].hdop == 2.6)
    }

    @Test(
        """
        Checked: a fix out of range, without a position or at a time no epoch can hold is dropped \
        (Fuzz/run-gpsd-json.sh's findings)
        """
    )
    func invalidFixes() {
        var outside = Self.fix(Self.t0, latitude: 92.57)
        var noLongitude = Self.fix(Self.t0 + 1)
        noLongitude.longitude = nil
        var year720 = Self.fix(nil)
        year720.time = UTCTimestamp(date: CalendarDate(year: 720, month: 1, day: 1), nanosecondsOfDay: 0)
        outside.status = 2
        let (positions, assembler) = Self.run([
            .fix(outside), .fix(noLongitude), .fix(year720), .fix(Self.fix(Self.t0 + 2)),
        ])
        #expect(positions.count == 1 && positions[0].time == Self.time(Self.t0 + 2))
        #expect(assembler.statistics.invalid == 3)
        #expect(year720.time?.unixNanoseconds == nil, "no trap: nil")
    }

    @Test("A timeless no-fix report between two reports of one time does not serve that time twice")
    func timelessNoFixDoesNotReopenATime() {
        let (positions, _) = Self.run([.fix(Self.fix(Self.t0)), .fix(Self.fix(nil, mode: 1)), .fix(Self.fix(Self.t0))])
        #expect(positions.map(\.hasFix) == [true, false])
    }

    @Test("continueAfter: fixes up to the last NMEA epoch are not served again, by date or by time of day")
    func continueAfter() {
        var assembler = GPSDReportAssembler()
        var served: [UTCTimestamp?] = []
        assembler.continueAfter(Self.time(Self.t0))
        for t in [Self.t0 - 1, Self.t0, Self.t0 + 1] { assembler.fix(Self.fix(t), now: 0) { served.append($0.time) } }
        assembler.flush { served.append($0.time) }
        #expect(served == [Self.time(Self.t0 + 1)])

        var timeOfDay = GPSDReportAssembler()
        served = []
        let noDate = UTCTimestamp(date: nil, nanosecondsOfDay: Self.time(Self.t0).nanosecondsOfDay)
        timeOfDay.continueAfter(noDate)
        for t in [Self.t0, Self.t0 + 1] { timeOfDay.fix(Self.fix(t), now: 0) { served.append($0.time) } }
        timeOfDay.flush { served.append($0.time) }
        #expect(served == [Self.time(Self.t0 + 1)])
    }

    @Test(
        "gpsd's mode and status map to TMM's quality",
        arguments: [
            (1, 2, FixQuality.noFix), (0, 0, .noFix), (2, 0, .autonomous), (3, 1, .autonomous), (3, 2, .dgps),
            (3, 3, .rtkFixed), (3, 4, .rtkFloat), (3, 5, .estimated), (3, 6, .autonomous), (3, 7, .manual),
            (3, 8, .simulated), (3, 9, .pps), (3, 42, .autonomous),
        ])
    func quality(mode: Int, status: Int, expected: FixQuality) {
        #expect(FixQuality(gpsdMode: mode, status: status) == expected)
    }

    @Test("Unix time to UTCTimestamp, before and after the epoch")
    func unixTime() {
        let t = UTCTimestamp(unixSeconds: Self.t0, nanoseconds: 500_000_000)
        #expect(t.date == CalendarDate(year: 2019, month: 4, day: 22))
        #expect(t.nanosecondsOfDay == (21 * 3600 + 19 * 60 + 21) * 1_000_000_000 + 500_000_000)
        #expect(t.unixNanoseconds == Self.t0 * 1_000_000_000 + 500_000_000)
        let before = UTCTimestamp(unixSeconds: -1)
        #expect(
            before.date == CalendarDate(year: 1969, month: 12, day: 31) && before.nanosecondsOfDay == 86_399_000_000_000
        )
    }

    @Test("Satellite numbers and constellations from gpsd's SKY")
    func satelliteNumbers() {
        #expect(Constellation(gpsdGNSSID: 6, prn: 70) == .glonass)
        #expect(Constellation(gpsdGNSSID: nil, prn: 305) == .galileo)
        #expect(Constellation(gpsdGNSSID: nil, prn: 140) == .sbas)
        #expect(Satellite.gpsdNumber(prn: 305, svid: 5, in: .galileo) == 5)
        #expect(Satellite.gpsdNumber(prn: 70, svid: 6, in: .glonass) == 70)
        #expect(Satellite.gpsdNumber(prn: 412, svid: 0, in: .beidou) == 412)
    }
}
