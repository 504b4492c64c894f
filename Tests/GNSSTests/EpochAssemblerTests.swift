import GNSS
import NMEA0183
import TestSupport
import Testing

/// `$` + body + `*hh` with the correct checksum, CRLF-terminated.
func nmea(_ body: String) -> [UInt8] {
    var sum: UInt8 = 0
    for byte in body.utf8 { sum ^= byte }
    let hex = Array("0123456789ABCDEF".utf8)
    return Array("$\(body)*".utf8) + [hex[Int(sum >> 4)], hex[Int(sum & 15)], 13, 10]
}

/// Feeds sentences one at a time and records, for each emitted epoch, the index of the sentence
/// that completed it.
struct Harness {
    var decoder = NMEAStreamDecoder()
    var emitted: [(after: Int, position: Position)] = []
    var fed = 0

    mutating func feed(_ bodies: [String], now: Int64 = 0) {
        for body in bodies {
            let bytes = nmea(body)
            let index = fed
            var collected: [Position] = []
            decoder.feed(bytes.span, now: now) { collected.append($0) }
            emitted += collected.map { (index, $0) }
            fed += 1
        }
    }

    mutating func flush(now: Int64) {
        var collected: [Position] = []
        decoder.flushIfStale(now: now) { collected.append($0) }
        emitted += collected.map { (fed, $0) }
    }

    mutating func finish() {
        var collected: [Position] = []
        decoder.finish { collected.append($0) }
        emitted += collected.map { (fed, $0) }
    }
}

/// A Trimble-style 10 Hz cycle: GGA then RMC (nmea-rtk.log's shape).
func trimbleCycle(_ time: String, quality: Int = 4) -> [String] {
    [
        "GNGGA,\(time),4134.49795459,N,09345.03431408,W,\(quality),10,0.9,278.161,M,-31.442,M,6.6,0133",
        "GNRMC,\(time),A,4134.49795459,N,09345.03431408,W,0.148,124.888,180320,11.5985,E,R",
    ]
}

@Suite("Epoch assembly", .tags(.unit))
struct EpochAssemblerTests {
    @Test func learnsTheClosingSentenceAndEmitsOnIt() {
        var h = Harness()
        h.feed(trimbleCycle("132819.60") + trimbleCycle("132819.70") + trimbleCycle("132819.80"))
        // Epoch 1 is only known complete when epoch 2's GGA arrives (sentence 2); from then on
        // each epoch is emitted on its own RMC (sentences 3 and 5), not on the next GGA.
        #expect(h.emitted.map(\.after) == [2, 3, 5])
        #expect(h.decoder.assembler.closer == .rmc)
        #expect(h.decoder.assembler.period == 100_000_000)
        #expect(
            h.emitted.map { $0.position.time?.nanosecondsOfDay }
                == [48_499_600_000_000, 48_499_700_000_000, 48_499_800_000_000])
        #expect(h.decoder.assembler.statistics.closedByTimeChange == 1)
        #expect(h.decoder.assembler.statistics.closedByLearnedCloser == 2)
    }

    @Test func fillsTheFieldsFromGGAAndRMC() throws {
        var h = Harness()
        h.feed(trimbleCycle("132819.60"))
        h.finish()
        let p = try #require(h.emitted.first?.position)
        #expect(abs(try #require(p.latitude) - 41.574965909833) < 1e-11)
        #expect(abs(try #require(p.longitude) - -93.750571901333) < 1e-11)
        #expect(p.mslHeight == 278.161)
        #expect(p.undulation == -31.442)
        #expect(abs(try #require(p.altitude) - 246.719) < 1e-9)
        #expect(p.quality == .rtkFixed)
        #expect(p.quality.diffStatus == 4)
        #expect(p.diffAge == 6.6)
        #expect(p.diffStationID == 133)
        #expect(p.satellitesInUse == 10)
        #expect(p.hdop == 0.9)
        #expect(abs(try #require(p.speed) - 0.148 * 1852 / 3600) < 1e-12)
        #expect(p.bearing == 124.888)
        #expect(p.time?.date == CalendarDate(year: 2020, month: 3, day: 18))
        #expect(p.hrms == nil, "no GST: accuracy is unknown, never derived from DOP")
    }

    @Test func noFixCyclesWithoutTimeAreSeparatedByTheRepeatedSentence() {
        var h = Harness()
        let cycle = ["GPGGA,,,,,,0,00,99.99,,,,,,", "GPRMC,,V,,,,,,,,,,N"]
        h.feed(cycle + cycle + cycle)
        #expect(h.emitted.map(\.after) == [2, 3, 5])
        #expect(h.emitted.allSatisfy { !$0.position.hasFix && $0.position.quality.diffStatus == nil })
    }

    @Test func aCycleThatStopsEarlyIsFlushedByTime() {
        var h = Harness()
        h.feed(trimbleCycle("132819.60") + trimbleCycle("132819.70"), now: 0)
        h.feed([trimbleCycle("132819.80")[0]], now: 1_000)  // GGA only, then silence
        #expect(h.emitted.count == 2)
        let staleAfter = h.decoder.assembler.staleAfter
        #expect(staleAfter == 150_000_000, "1.5 periods of 100 ms")
        h.flush(now: 1_000 + staleAfter - 1)
        #expect(h.emitted.count == 2)
        h.flush(now: 1_000 + staleAfter)
        #expect(h.emitted.count == 3)
        #expect(h.decoder.assembler.statistics.closedByTimeout == 1)
    }

    @Test func aSentenceAfterTheLearnedCloserIsCountedLateAndBecomesTheCloser() {
        var h = Harness()
        h.feed(trimbleCycle("100000.00") + trimbleCycle("100001.00"))
        #expect(h.decoder.assembler.closer == .rmc)
        h.feed(trimbleCycle("100002.00") + ["GNGST,100002.00,1.0,,,,0.011,0.012,0.020"])
        // The GST came after its epoch was emitted: dropped (never a second 10:00:02 epoch), and
        // from now on the cycle waits for it.
        #expect(h.decoder.assembler.statistics.lateSentences == 1)
        #expect(h.decoder.assembler.closer == .gst)
        #expect(h.emitted.filter { $0.position.time?.nanosecondsOfDay == 36_002_000_000_000 }.count == 1)
        h.feed(trimbleCycle("100003.00") + ["GNGST,100003.00,1.0,,,,0.011,0.012,0.020"])
        h.feed(trimbleCycle("100004.00") + ["GNGST,100004.00,1.0,,,,0.011,0.012,0.020"])
        #expect(h.decoder.assembler.closer == .gst)
        let last = h.emitted.last!
        #expect(last.after == h.fed - 1)
        #expect(abs(last.position.hrms! - (0.011 * 0.011 + 0.012 * 0.012).squareRoot()) < 1e-12)
        #expect(last.position.vrms == 0.020)
        #expect(last.position.speed != nil, "the RMC of the cycle is in the epoch GST closed")
        #expect(h.decoder.assembler.statistics.lateSentences == 1)
    }

    @Test(
        arguments: [
            (0, nil), (1, 1), (2, 5), (3, 4), (4, 2), (5, 2), (6, 5), (7, 4), (8, 5), (9, 4), (10, 5), (11, 2),
            (12, 4), (13, 2),
        ] as [(Int, Int?)])
    func trimbleGGKQualityIsRemapped(_ ggk: Int, _ diffStatus: Int?) throws {
        var h = Harness()
        h.feed(["PTNL,GGK,172814.00,071296,3723.46587704,N,12202.26957864,W,\(ggk),06,1.7,EHT-6.777,M"])
        h.finish()
        let p = try #require(h.emitted.first?.position)
        #expect(p.quality.diffStatus == diffStatus)
        if ggk > 0 {
            #expect(p.altitude == -6.777, "GGK's EHT is the ellipsoidal height itself")
            #expect(p.time?.date == CalendarDate(year: 1996, month: 7, day: 12), "GGK dates are mmddyy")
        } else {
            #expect(p.latitude == nil)
        }
    }

    @Test(arguments: [(0, nil), (1, 1), (2, 2), (3, 1), (4, 4), (5, 5), (6, 1), (7, 1), (8, 1)] as [(Int, Int?)])
    func ggaQualityIsCopiedThrough(_ gga: Int, _ diffStatus: Int?) throws {
        var h = Harness()
        h.feed(["GPGGA,120000.00,4807.038,N,01131.002,E,\(gga),08,0.9,545.4,M,47.3,M,,"])
        h.finish()
        #expect(try #require(h.emitted.first).position.quality.diffStatus == diffStatus)
    }

    @Test func skyViewMergesSignalsMarksUsedAndPersists() throws {
        var h = Harness()
        let cycle1 = [
            "GNGGA,000001.00,4807.038,N,01131.002,E,1,03,0.9,545.4,M,47.3,M,,",
            "GNGSA,A,3,05,12,,,,,,,,,,,1.5,0.9,1.2,1",
            "GNGSA,A,3,67,,,,,,,,,,,,1.5,0.9,1.2,2",
            "GPGSV,1,1,02,05,62,141,47,12,23,301,38,1",  // L1
            "GPGSV,1,1,02,05,62,141,49,12,23,301,,6",  // L2: 05 stronger here, 12 without SNR
            "GLGSV,1,1,01,67,10,020,30,1",
            "GNRMC,000001.00,A,4807.038,N,01131.002,E,0.0,,010120,,,A",
        ]
        let cycle2 = [
            "GNGGA,000002.00,4807.038,N,01131.002,E,1,03,0.9,545.4,M,47.3,M,,",
            "GNRMC,000002.00,A,4807.038,N,01131.002,E,0.0,,010120,,,A",
        ]
        h.feed(cycle1 + cycle2 + ["GNGGA,000003.00,4807.038,N,01131.002,E,1,03,0.9,545.4,M,47.3,M,,"])
        #expect(h.emitted.count == 2)
        for (_, p) in h.emitted {  // the second epoch had no GSV/GSA: the sky persists
            #expect(p.sky.count == 3)
            #expect(p.sky.usedCount == 3)
            let five = p.sky[try #require(p.sky.index(of: 5, in: .gps))]
            #expect(five.snr == 49 && five.elevation == 62 && five.azimuth == 141 && five.used)
            let twelve = p.sky[try #require(p.sky.index(of: 12, in: .gps))]
            #expect(twelve.snr == 38)
            #expect(p.sky.index(of: 67, in: .glonass) != nil)
            #expect(p.pdop == 1.5 && p.vdop == 1.2 && p.hdop == 0.9)
        }
    }

    @Test func dateRollsOverAtMidnightWithoutADateSentence() throws {
        var h = Harness()
        h.feed([
            "GPGGA,235959.00,4807.038,N,01131.002,E,1,08,0.9,545.4,M,47.3,M,,",
            "GPRMC,235959.00,A,4807.038,N,01131.002,E,0.0,,311299,,,A",
            "GPGGA,000000.00,4807.038,N,01131.002,E,1,08,0.9,545.4,M,47.3,M,,",
        ])
        h.finish()
        #expect(
            h.emitted.map { $0.position.time?.date } == [
                CalendarDate(year: 1999, month: 12, day: 31), CalendarDate(year: 2000, month: 1, day: 1),
            ])
    }

    @Test func gpsTimeAddsTheLeapSecondsInForce() throws {
        #expect(LeapSeconds.gpsMinusUTC(on: CalendarDate(year: 1980, month: 1, day: 5)) == nil)
        #expect(LeapSeconds.gpsMinusUTC(on: CalendarDate(year: 1980, month: 1, day: 6)) == 0)
        #expect(LeapSeconds.gpsMinusUTC(on: CalendarDate(year: 2015, month: 6, day: 30)) == 16)
        #expect(LeapSeconds.gpsMinusUTC(on: CalendarDate(year: 2015, month: 7, day: 1)) == 17)
        #expect(LeapSeconds.gpsMinusUTC(on: CalendarDate(year: 2016, month: 12, day: 31)) == 17)
        #expect(LeapSeconds.gpsMinusUTC(on: CalendarDate(year: 2024, month: 2, day: 22)) == 18)
        let late = UTCTimestamp(date: CalendarDate(year: 2024, month: 2, day: 29), nanosecondsOfDay: 86_390_000_000_000)
        let gps = try #require(late.gpsTime)
        #expect(gps.date == CalendarDate(year: 2024, month: 3, day: 1))
        #expect(gps.nanosecondsOfDay == 8_000_000_000)
    }

    @Test func calendarConversionRoundTrips() {
        for days in stride(from: -800_000, through: 800_000, by: 997) {
            let date = CalendarDate(daysSinceEpoch: days)
            #expect(date.daysSinceEpoch == days)
            #expect(date.isValid)
        }
        #expect(CalendarDate(year: 2000, month: 2, day: 29).isValid)
        #expect(!CalendarDate(year: 1900, month: 2, day: 29).isValid)
        #expect(!CalendarDate(year: 2023, month: 4, day: 31).isValid)
    }

    @Test func vtgSuppliesSpeedWhenThereIsNoRMC() throws {
        var h = Harness()
        h.feed([
            "GPGGA,120000.00,4807.038,N,01131.002,E,1,08,0.9,545.4,M,47.3,M,,",
            "GPVTG,054.7,T,034.4,M,,N,010.8,K,A",
        ])
        h.finish()
        let p = try #require(h.emitted.first?.position)
        #expect(abs(try #require(p.speed) - 3.0) < 1e-12)
        #expect(p.bearing == 54.7)
    }
}

@Suite("Learned cycle closers on real captures", .tags(.unit))
struct LearnedCloserTests {
    /// The sentence each receiver ends its cycle with, as its log shows.
    static let closers: [(String, SentenceKind)] = [
        ("nmea-rtk.log", .rmc),  // GGA, RMC at 10 Hz
        ("ublox-zed-f9p-nmea.log", .zda),  // ... GST, ZDA, then GBS (not decoded)
        ("telit-he910.log", .vtg),  // GGA, GLL, GSA, GSV, RMC, VTG
        ("skytraq-dgps.log", .gst),
    ]

    @Test(arguments: closers)
    func closerIsLearned(_ capture: String, _ closer: SentenceKind) throws {
        var decoder = NMEAStreamDecoder()
        let bytes = try Fixtures.bytes(capture)
        var epochs = 0
        decoder.feed(bytes.span, now: 0) { _ in epochs += 1 }
        #expect(decoder.assembler.closer == closer)
        let stats = decoder.assembler.statistics
        // Once learned, nearly every epoch is emitted on its closer, not one cycle late.
        #expect(stats.closedByLearnedCloser * 10 >= stats.epochs * 9, "\(stats)")
    }
}
