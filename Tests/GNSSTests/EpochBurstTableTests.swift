// One row per receiver style: synthetic bursts in the order that kind of receiver sends them,
// fed one sentence at a time, with every cycle's values made distinct (speed, course, accuracy,
// DOPs and satellites depend on the cycle number) so an epoch that mixed two cycles, missed a
// sentence of its own cycle or was emitted twice shows up as a wrong value, not just a count.
import GNSS
import NMEA0183
import TestSupport
import Testing

/// What one cycle of a synthetic receiver says, and what its epoch must therefore carry.
struct SyntheticCycle {
    var sentences: [String]
    /// Time of day of the cycle in milliseconds (nil: the receiver sends no time, e.g. no fix).
    var time: Int?
    var hasFix = true
    var speedKnots: Double?
    var course: Double?
    var sigmaLatitude: Double?
    var pdop: Double?
    var satellitesInUse: Int?
    var satellitesInView: Int?
}

/// A receiver style: how it orders its burst, and how promptly its epochs can be emitted.
struct ReceiverStyle: CustomStringConvertible, Sendable {
    var name: String
    var cycles: Int
    var burst: @Sendable (Int) -> SyntheticCycle
    /// Late sentences the style must produce (a sentence the learned cycle did not contain yet).
    var lateSentences = 0
    /// Least share of epochs emitted on their own last sentence, once the closer is learned.
    var promptShare = 0.9
    /// Cycles at the start whose values may be incomplete (sentences dropped as late while the
    /// assembler learns); their times are still checked.
    var settleCycles = 0
    var description: String { name }
}

// MARK: - Sentence builders (fields vary with the cycle so that mixing is visible)

private func hhmmss(_ ms: Int) -> String {
    func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
    let centis = ms % 1000 / 10
    return two(ms / 3_600_000) + two(ms / 60_000 % 60) + two(ms / 1000 % 60) + "." + two(centis)
}

private func gga(_ talker: String, _ time: String, quality: Int = 1, satellites: Int) -> String {
    "\(talker)GGA,\(time),4807.03800,N,01131.00000,E,\(quality),"
        + "\(satellites < 10 ? "0" : "")\(satellites),0.9,545.4,M,47.3,M,,"
}

private func rmc(_ talker: String, _ time: String, knots: Double, course: Double) -> String {
    "\(talker)RMC,\(time),A,4807.03800,N,01131.00000,E,\(knots),\(course),010126,,,A"
}

private func gsa(_ talker: String, pdop: Double, ids: [Int], system: Int? = nil) -> String {
    let fields = (0..<12).map { $0 < ids.count ? (ids[$0] < 10 ? "0\(ids[$0])" : "\(ids[$0])") : "" }
    return "\(talker)GSA,A,3,\(fields.joined(separator: ",")),\(pdop),0.9,1.2" + (system.map { ",\($0)" } ?? "")
}

private func gst(_ talker: String, _ time: String, sigma: Double) -> String {
    "\(talker)GST,\(time),1.0,,,,\(sigma),\(sigma),0.020"
}

/// A complete GSV group for `ids` (4 per sentence), SNR varying with the cycle.
private func gsv(_ talker: String, ids: [Int], cycle: Int) -> [String] {
    let groups = stride(from: 0, to: ids.count, by: 4).map { Array(ids[$0..<min($0 + 4, ids.count)]) }
    return groups.enumerated().map { n, group in
        let sats = group.map { "\($0 < 10 ? "0" : "")\($0),45,120,\(20 + cycle % 30)" }.joined(separator: ",")
        return "\(talker)GSV,\(groups.count),\(n + 1),\(ids.count),\(sats)"
    }
}

private let base = 36_000_000  // 10:00:00.000

/// The standard values of cycle `i`, so each row only says where the sentences go.
private func values(_ i: Int) -> (knots: Double, course: Double, sigma: Double, pdop: Double) {
    (Double(i + 1), Double(10 * i), 0.01 * Double(i + 1), 1.0 + 0.1 * Double(i))
}

let receiverStyles: [ReceiverStyle] = [
    style("GGA first, RMC last (Trimble RTK, 10 Hz)", cycles: 30) { i in
        let t = base + 100 * i, v = values(i)
        return SyntheticCycle(
            sentences: [
                gga("GN", hhmmss(t), quality: 4, satellites: 10),
                rmc("GN", hhmmss(t), knots: v.knots, course: v.course),
            ],
            time: t, speedKnots: v.knots, course: v.course, satellitesInUse: 10)
    },
    style("talker switch: GN sentences, then GP ones (receiver drops GLONASS)", cycles: 30) { i in
        let t = base + 100 * i, v = values(i)
        let talker = i < 12 ? "GN" : "GP"
        return SyntheticCycle(
            sentences: [
                gga(talker, hhmmss(t), quality: 2, satellites: 9),
                rmc(talker, hhmmss(t), knots: v.knots, course: v.course),
            ],
            time: t, speedKnots: v.knots, course: v.course, satellitesInUse: 9)
    },
    style("RMC first, then GGA, GSA, GSV (u-blox 6)", cycles: 12) { i in
        let t = base + 1000 * i, v = values(i)
        let ids = [2, 5, 12, 15, 18, 21, 24]
        return SyntheticCycle(
            sentences: [
                rmc("GP", hhmmss(t), knots: v.knots, course: v.course), "GPVTG,\(v.course),T,,M,\(v.knots),N,,K,A",
                gga("GP", hhmmss(t), satellites: 7), gsa("GP", pdop: v.pdop, ids: ids),
            ] + gsv("GP", ids: ids, cycle: i),
            time: t, speedKnots: v.knots, course: v.course, pdop: v.pdop, satellitesInUse: 7, satellitesInView: 7)
    },
    style("one GGA per constellation, same time (SiRFstar V)", cycles: 12) { i in
        let t = base + 1000 * i, v = values(i)
        return SyntheticCycle(
            sentences: [
                gga("GP", hhmmss(t), satellites: 8), gga("GL", hhmmss(t), satellites: 2),
                gsa("GN", pdop: v.pdop, ids: [2, 5, 12, 15, 18, 21, 24, 29]), gsa("GN", pdop: v.pdop, ids: [65, 66]),
                rmc("GN", hhmmss(t), knots: v.knots, course: v.course),
            ],
            time: t, speedKnots: v.knots, course: v.course, pdop: v.pdop, satellitesInUse: 10)
    },
    style("GNS only, NMEA 4.10 GSA per system (multi-GNSS)", cycles: 12) { i in
        let t = base + 1000 * i, v = values(i)
        return SyntheticCycle(
            sentences: [
                "GNGNS,\(hhmmss(t)),4807.03800,N,01131.00000,E,AAN,12,0.9,545.4,47.3,,,V",
                gsa("GN", pdop: v.pdop, ids: [2, 5, 12, 15, 18, 21], system: 1),
                gsa("GN", pdop: v.pdop, ids: [65, 66, 67, 68, 69, 70], system: 2),
            ],
            time: t, pdop: v.pdop, satellitesInUse: 12)
    },
    style("GSA and GSV before the GGA (NMEA 4.10 system ids)", cycles: 12) { i in
        let t = base + 1000 * i, v = values(i)
        let ids = [2, 5, 12, 15, 18]
        return SyntheticCycle(
            sentences: [gsa("GN", pdop: v.pdop, ids: ids, system: 1)] + gsv("GP", ids: ids, cycle: i)
                + [gga("GN", hhmmss(t), satellites: 5), rmc("GN", hhmmss(t), knots: v.knots, course: v.course)],
            time: t, speedKnots: v.knots, course: v.course, pdop: v.pdop, satellitesInUse: 5, satellitesInView: 5)
    },
    style("GST last (SkyTraq, Septentrio)", cycles: 12) { i in
        let t = base + 1000 * i, v = values(i)
        return SyntheticCycle(
            sentences: [
                gga("GP", hhmmss(t), quality: 2, satellites: 9), rmc("GP", hhmmss(t), knots: v.knots, course: v.course),
                gsa("GP", pdop: v.pdop, ids: [1, 3, 6, 9, 11, 14, 17, 19, 22]), gst("GP", hhmmss(t), sigma: v.sigma),
            ],
            time: t, speedKnots: v.knots, course: v.course, sigmaLatitude: v.sigma, pdop: v.pdop, satellitesInUse: 9)
    },
    style("VTG after RMC, GLL mid-burst (Telit)", cycles: 12) { i in
        let t = base + 1000 * i, v = values(i)
        return SyntheticCycle(
            sentences: [
                gga("GP", hhmmss(t), satellites: 6), "GPGLL,4807.03800,N,01131.00000,E,\(hhmmss(t)),A,A",
                gsa("GP", pdop: v.pdop, ids: [1, 3, 6, 9, 11, 14]),
            ] + gsv("GP", ids: [1, 3, 6, 9, 11, 14], cycle: i)
                + [rmc("GP", hhmmss(t), knots: v.knots, course: v.course), "GPVTG,\(v.course),T,,M,\(v.knots),N,,K,A"],
            time: t, speedKnots: v.knots, course: v.course, pdop: v.pdop, satellitesInUse: 6, satellitesInView: 6)
    },
    style("GSV every 5th cycle, at the end of it", cycles: 21, promptShare: 0.15) { i in
        let t = base + 1000 * i, v = values(i)
        let ids = [2, 5, 12, 15, 18, 21]
        return SyntheticCycle(
            sentences: [
                gga("GP", hhmmss(t), satellites: 6), rmc("GP", hhmmss(t), knots: v.knots, course: v.course),
                gsa("GP", pdop: v.pdop, ids: ids),
            ] + (i % 5 == 0 ? gsv("GP", ids: ids, cycle: i) : []),
            time: t, speedKnots: v.knots, course: v.course, pdop: v.pdop, satellitesInUse: 6, satellitesInView: 6)
    },
    style("GGA at 10 Hz, RMC at 1 Hz", cycles: 35, promptShare: 0.05) { i in
        let t = base + 100 * i, v = values(i)
        let whole = i % 10 == 0
        return SyntheticCycle(
            sentences: [gga("GN", hhmmss(t), quality: 5, satellites: 14)]
                + (whole ? [rmc("GN", hhmmss(t), knots: v.knots, course: v.course)] : []),
            time: t, speedKnots: whole ? v.knots : nil, course: whole ? v.course : nil, satellitesInUse: 14)
    },
    style("GGA at 10 Hz, RMC at 1 Hz, first seen mid-second", cycles: 35, late: 1, promptShare: 0.05) { i in
        let t = base + 100 * (i + 3), v = values(i)
        let whole = (i + 3) % 10 == 0
        // The first RMC (at 10:00:01) arrives after its GGA closed the epoch: counted late, lost.
        let speedExpected = whole && i + 3 > 10
        return SyntheticCycle(
            sentences: [gga("GN", hhmmss(t), quality: 5, satellites: 14)]
                + (whole ? [rmc("GN", hhmmss(t), knots: v.knots, course: v.course)] : []),
            time: t, speedKnots: speedExpected ? v.knots : nil, course: speedExpected ? v.course : nil,
            satellitesInUse: 14)
    },
    style("GST on every 3rd cycle only (after RMC)", cycles: 16, late: 1, promptShare: 0.25) { i in
        let t = base + 1000 * (i + 1), v = values(i)
        let withGST = (i + 1) % 3 == 0
        // The first GST (cycle 2) follows an epoch RMC already closed: late, lost; from then on the
        // assembler waits for GST, and cycles without one close on the next GGA's new time.
        let sigmaExpected = withGST && i > 2
        return SyntheticCycle(
            sentences: [
                gga("GP", hhmmss(t), quality: 2, satellites: 9), rmc("GP", hhmmss(t), knots: v.knots, course: v.course),
            ]
                + (withGST ? [gst("GP", hhmmss(t), sigma: v.sigma)] : []),
            time: t, speedKnots: v.knots, course: v.course, sigmaLatitude: sigmaExpected ? v.sigma : nil,
            satellitesInUse: 9)
    },
    style("GLL first, its time rounded its own way (Magellan eXplorist)", cycles: 12) { i in
        let t = base + 1000 * i + 300, v = values(i)
        // GLL says .295 or .305 for the .30 fix: one cycle, stamped with the GGA's time.
        let gllTime = hhmmss(t).prefix(7) + (i % 2 == 0 ? "295" : "305")
        return SyntheticCycle(
            sentences: [
                "GPGLL,4807.03800,N,01131.00000,E,\(gllTime),A,A", gga("GP", hhmmss(t), satellites: 5),
                rmc("GP", hhmmss(t), knots: v.knots, course: v.course),
            ],
            time: t, speedKnots: v.knots, course: v.course, satellitesInUse: 5)
    },
    style("ZDA two seconds ahead of the fixes, sometimes twice", cycles: 12, promptShare: 0.3) { i in
        // (A repeated ZDA moves the learned closer between the 1st and 2nd ZDA: those cycles end one
        // period later, on the next GGA. The values stay right.)
        let t = base + 1000 * i, v = values(i)
        let zda = "GPZDA,\(hhmmss(t + 2000)),01,01,2026,00,00"
        return SyntheticCycle(
            sentences: [
                gga("GP", hhmmss(t), satellites: 7), rmc("GP", hhmmss(t), knots: v.knots, course: v.course), zda,
            ]
                + (i % 3 == 1 ? [zda] : []),
            time: t, speedKnots: v.knots, course: v.course, satellitesInUse: 7)
    },
    style("burst order changes every cycle (chartplotter relay)", cycles: 20, late: 4, promptShare: 0, settle: 5) { i in
        let t = base + 1000 * i, v = values(i)
        let pair = [gga("GP", hhmmss(t), satellites: 8), rmc("GP", hhmmss(t), knots: v.knots, course: v.course)]
        // Whichever sentence the assembler learns as closer comes first in the next cycle: after 4
        // late sentences it gives up on a closer and every cycle is complete again.
        return SyntheticCycle(
            sentences: i % 2 == 0 ? pair : pair.reversed(), time: t, speedKnots: v.knots,
            course: v.course, satellitesInUse: 8)
    },
    style("no fix: empty times, per-constellation GGA", cycles: 10) { _ in
        SyntheticCycle(
            sentences: [
                "GPGGA,,,,,,0,00,99.99,,,,,,", "GLGGA,,,,,,0,00,99.99,,,,,,", "GPRMC,,V,,,,,,,,,,N",
                "GPGSA,A,1,,,,,,,,,,,,,99.99,99.99,99.99",
            ],
            time: nil, hasFix: false, satellitesInUse: 0)
    },
    style("no fix then fix: empty times give way to timed bursts", cycles: 12, promptShare: 0.5) { i in
        if i < 4 {
            return SyntheticCycle(
                sentences: ["GPGGA,,,,,,0,00,99.99,,,,,,", "GPRMC,,V,,,,,,,,,,N"],
                time: nil, hasFix: false, satellitesInUse: 0)
        }
        let t = base + 1000 * i, v = values(i)
        return SyntheticCycle(
            sentences: [gga("GP", hhmmss(t), satellites: 5), rmc("GP", hhmmss(t), knots: v.knots, course: v.course)],
            time: t, speedKnots: v.knots, course: v.course, satellitesInUse: 5)
    },
]

private func style(
    _ name: String, cycles: Int, late: Int = 0, promptShare: Double = 0.9, settle: Int = 0,
    _ burst: @escaping @Sendable (Int) -> SyntheticCycle
) -> ReceiverStyle {
    ReceiverStyle(
        name: name, cycles: cycles, burst: burst, lateSentences: late, promptShare: promptShare,
        settleCycles: settle)
}

@Suite("Epoch assembly per receiver style (synthetic bursts)", .tags(.unit))
struct EpochBurstTableTests {
    @Test(arguments: receiverStyles)
    func oneCompleteEpochPerCycle(_ style: ReceiverStyle) throws {
        let cycles = (0..<style.cycles).map(style.burst)
        var h = Harness()
        for cycle in cycles { h.feed(cycle.sentences) }
        h.finish()

        // Exactly one epoch per cycle, in order, each with its own cycle's time.
        try #require(
            h.emitted.count == cycles.count,
            """
            \(h.emitted.count) epochs for \(cycles.count) cycles: \
            \(h.emitted.map { $0.position.time?.nanosecondsOfDay ?? -1 })
            """
        )
        var seen = Set<Int64>()
        for (index, (epoch, cycle)) in zip(h.emitted.map(\.position), cycles).enumerated() {
            let label = "\(style.name), cycle \(index)"
            let time = epoch.time.map { Int($0.nanosecondsOfDay / 1_000_000) }
            #expect(time == cycle.time, "\(label): time")
            if let t = epoch.time?.nanosecondsOfDay {
                #expect(seen.insert(t).inserted, "\(label): a second epoch for one time")
            }
            if index < style.settleCycles { continue }
            #expect(epoch.hasFix == cycle.hasFix, "\(label): fix")
            #expect(
                epoch.speed.map { ($0 / metresPerKnot * 1000).rounded() / 1000 } == cycle.speedKnots, "\(label): speed")
            #expect(epoch.bearing == cycle.course, "\(label): course")
            #expect(epoch.sigmaLatitude == cycle.sigmaLatitude, "\(label): accuracy (GST)")
            if let pdop = cycle.pdop { #expect(epoch.pdop == pdop, "\(label): PDOP of its own GSA") }
            #expect(epoch.satellitesUsed == cycle.satellitesInUse ?? 0, "\(label): satellites in use")
            if let inView = cycle.satellitesInView, index % 5 == 0 || style.name.hasPrefix("GSV") == false {
                #expect(epoch.sky.count == inView, "\(label): satellites in view")
            }
        }

        let stats = h.decoder.assembler.statistics
        #expect(stats.lateSentences == style.lateSentences, "\(style.name): \(stats)")
        #expect(
            Double(stats.closedByLearnedCloser) >= style.promptShare * Double(cycles.count - 2),
            "\(style.name): too few epochs emitted on their own last sentence: \(stats)")
    }

    @Test func perConstellationGGAsSumTheirSatellitesButACombinedOneIsTheTotal() throws {
        var h = Harness()
        h.feed([
            gga("GP", "120000.00", satellites: 8), gga("GL", "120000.00", satellites: 2),
            gga("GN", "120000.00", satellites: 11),
        ])
        h.finish()
        #expect(h.emitted.count == 1)
        #expect(try #require(h.emitted.first).position.satellitesInUse == 11)
    }

    @Test func aRepeatedSentenceWithTheSameTimeStaysInItsEpoch() throws {
        // Some receivers repeat a sentence within a burst; with the same time it is the same epoch.
        var h = Harness()
        h.feed([
            gga("GP", "120000.00", satellites: 8), gga("GP", "120000.00", satellites: 8),
            rmc("GP", "120000.00", knots: 3, course: 90), gga("GP", "120001.00", satellites: 8),
        ])
        h.finish()
        #expect(h.emitted.map { $0.position.satellitesInUse } == [8, 8])
        #expect(h.emitted.first?.position.speed != nil)
    }

    @Test func aSentenceForTheEpochJustEmittedNeverMakesASecondOne() {
        var h = Harness()
        h.feed([
            gga("GP", "120000.00", satellites: 8), rmc("GP", "120000.00", knots: 3, course: 90),
            gga("GP", "120001.00", satellites: 8), rmc("GP", "120001.00", knots: 3, course: 90),
            gga("GP", "120002.00", satellites: 8), rmc("GP", "120002.00", knots: 3, course: 90),
        ])
        // A stray sentence stamped 12:00:02 after that epoch was emitted, then the next second.
        h.feed([gst("GP", "120002.00", sigma: 0.5), gga("GP", "120003.00", satellites: 8)])
        h.finish()
        let times = h.emitted.compactMap { $0.position.time?.nanosecondsOfDay }
        #expect(times.count == Set(times).count)
        #expect(times.count == 4)
    }
}

private let metresPerKnot = 1852.0 / 3600.0
