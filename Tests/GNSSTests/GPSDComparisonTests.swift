// Validation against real receivers: every capture in Tests/Fixtures/nmea is decoded and each
// epoch compared with what gpsd 3.22 itself reported for it (the `.log.chk` golden files).
// GPSDSuiteComparisonTests runs the same comparison over every NMEA capture of gpsd's whole
// regression suite (fetched by scripts/fetch-gpsd-suite.sh).
//
// gpsd reports several TPVs per epoch, so the comparison is per time of day: the last TPV and
// the last GST gpsd printed for that time against our one Position (Tests/Fixtures/nmea/README.md
// explains why, and why dates are ignored: gpsd 3.22 moves pre-2017 dates 1024 weeks on).
// Satellites in use: gpsd 3.22's TPV has no satellite count and its SKY has no time; SKY's
// `uSat` (satellites of the GSV sky that a GSA listed as used) is compared with our
// `sky.usedCount` (the same rule) for the time of the last timed sentence gpsd echoed before that
// SKY (see Tests/Fixtures/gpsd-suite.md). Two epochs of ours with one time of day are a
// difference too ("duplicate epoch").
// Every difference that remains is listed in `knownDifferences` with its reason and asserted to
// occur exactly as listed: a new difference fails, and so does a listed one that went away.
// `GPSD_SUITE_PRINT=1 swift test --filter GPSD` prints every current difference in the tables'
// Swift syntax (reasons of listed differences kept, new ones marked TODO).
import Foundation
import GNSS
import NMEA0183
import TestSupport
import Testing

/// Where a capture and its `.chk` come from.
enum CaptureSet: Sendable {
    /// Tests/Fixtures/nmea (committed).
    case fixtures
    /// gpsd's whole suite as scripts/fetch-gpsd-suite.sh selected it.
    case gpsdSuite

    func bytes(_ name: String) throws -> [UInt8] {
        switch self {
        case .fixtures: try Fixtures.bytes(name)
        case .gpsdSuite: try GPSDSuite.bytes(name)
        }
    }

    func lines(_ name: String) throws -> [[UInt8]] {
        switch self {
        case .fixtures: try Fixtures.lines(name)
        case .gpsdSuite: try GPSDSuite.lines(name)
        }
    }
}

/// One field of one epoch where we and gpsd disagree.
struct Difference: Hashable, CustomStringConvertible {
    var capture: String
    var time: String
    var field: String
    /// Both values, for the printed tables ("ours 8, gpsd 10"); not part of the identity.
    var detail = ""
    var description: String { "\(capture) \(time) \(field)" }

    init(capture: String, time: String, field: String, detail: String = "") {
        self.capture = capture
        self.time = time
        self.field = field
        self.detail = detail
    }

    static func == (a: Difference, b: Difference) -> Bool {
        a.capture == b.capture && a.time == b.time && a.field == b.field
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(capture)
        hasher.combine(time)
        hasher.combine(field)
    }
}

/// The values gpsd printed for one time of day.
struct GPSDEpoch {
    /// False when only a SKY was attributed to this time (gpsd printed no TPV with it).
    var hasTPV = false
    var mode = 0
    var lat: Double?
    var lon: Double?
    var altMSL: Double?
    var altHAE: Double?
    var speed: Double?
    var track: Double?
    var gstLat: Double?
    var gstLon: Double?
    var gstAlt: Double?
    /// `uSat` of the last SKY gpsd printed while this was the time of its latest timed sentence.
    var uSat: Int?
}

/// Time of day in milliseconds from gpsd's ISO time ("2020-03-18T13:28:19.600Z").
func millisecondsOfDay(iso: String) -> Int? {
    guard let t = iso.firstIndex(of: "T") else { return nil }
    let clock = iso[iso.index(after: t)...].dropLast()  // drop "Z"
    let parts = clock.split(separator: ":")
    guard parts.count == 3, let h = Int(parts[0]), let m = Int(parts[1]), let s = Double(parts[2]) else { return nil }
    return (h * 3600 + m * 60) * 1000 + Int((s * 1000).rounded())
}

func formatTime(_ ms: Int) -> String {
    let h = ms / 3_600_000, m = ms / 60000 % 60, s = ms / 1000 % 60, f = ms % 1000
    func pad(_ v: Int, _ n: Int) -> String {
        let t = String(v)
        return String(repeating: "0", count: max(0, n - t.count)) + t
    }
    return "\(pad(h, 2)):\(pad(m, 2)):\(pad(s, 2)).\(pad(f, 3))"
}

/// Time of day in milliseconds of an NMEA sentence gpsd echoed into the `.chk`, for the
/// sentences that carry one (GGA, GNS, RMC, GST, ZDA: field 1; GLL: field 5); nil otherwise.
func sentenceMillisecondsOfDay(_ line: [UInt8]) -> Int? {
    guard line.first == UInt8(ascii: "$"), line.count > 7 else { return nil }
    let fields = line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
    guard fields[0].count == 6 else { return nil }
    let kind = String(decoding: fields[0].suffix(3), as: UTF8.self)
    let index: Int
    switch kind {
    case "GGA", "GNS", "RMC", "GST", "ZDA": index = 1
    case "GLL": index = 5
    default: return nil
    }
    guard fields.count > index else { return nil }
    let field = String(decoding: fields[index], as: UTF8.self)
    guard field.count >= 6, let h = Int(field.prefix(2)), let m = Int(field.dropFirst(2).prefix(2)),
        let s = Double(field.dropFirst(4)), h < 24, m < 60, s < 61
    else { return nil }
    return (h * 3600 + m * 60) * 1000 + Int((s * 1000).rounded())
}

/// gpsd's per-time view of a capture: the last TPV and last GST for each time of day, and the
/// `uSat` of the last SKY printed while that time was current.
func gpsdEpochs(_ capture: String, in set: CaptureSet = .fixtures) throws -> [Int: GPSDEpoch] {
    var epochs: [Int: GPSDEpoch] = [:]
    var sentenceTime: Int?
    for bytes in try set.lines(capture + ".chk") {
        if bytes.first == UInt8(ascii: "$") {
            if let time = sentenceMillisecondsOfDay(bytes) { sentenceTime = time }
            continue
        }
        guard bytes.first == UInt8(ascii: "{"),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let cls = object["class"] as? String
        else { continue }
        if cls == "SKY" {
            // gpsd 3.22's SKY has no time: it belongs to the cycle gpsd was reading. gpsd 3.27's
            // (gpsd-head/) are partial, one constellation each: not comparable, skipped.
            guard !capture.hasPrefix("gpsd-head/"), let key = sentenceTime, let used = object["uSat"] as? Int else {
                continue
            }
            epochs[key, default: GPSDEpoch()].uSat = used
            continue
        }
        guard let iso = object["time"] as? String, let key = millisecondsOfDay(iso: iso) else { continue }
        var epoch = epochs[key] ?? GPSDEpoch()
        switch cls {
        case "TPV":
            // The last TPV of a time stamp is gpsd's final word on that epoch.
            epoch.hasTPV = true
            epoch.mode = object["mode"] as? Int ?? 0
            epoch.lat = object["lat"] as? Double
            epoch.lon = object["lon"] as? Double
            epoch.altMSL = object["altMSL"] as? Double
            epoch.altHAE = object["altHAE"] as? Double
            epoch.speed = object["speed"] as? Double
            epoch.track = object["track"] as? Double
        case "GST":
            epoch.gstLat = object["lat"] as? Double
            epoch.gstLon = object["lon"] as? Double
            epoch.gstAlt = object["alt"] as? Double
        default: continue
        }
        epochs[key] = epoch
    }
    return epochs
}

/// Our positions for a capture, keyed by time of day in milliseconds (the last one for a time),
/// how many positions each time of day had when that is more than one, and how many positions
/// had no time at all.
func ourEpochs(
    _ capture: String, in set: CaptureSet = .fixtures
) throws
    -> (positions: [Int: Position], duplicates: [Int: Int], untimed: Int)
{
    let bytes = try set.bytes(capture)
    var decoder = NMEAStreamDecoder()
    var positions: [Int: Position] = [:]
    var counts: [Int: Int] = [:]
    var untimed = 0
    let record = { (p: Position) in
        guard let time = p.time else {
            untimed += 1
            return
        }
        let key = Int((Double(time.nanosecondsOfDay) / 1e6).rounded())
        positions[key] = p
        counts[key, default: 0] += 1
    }
    decoder.feed(bytes.span, now: 0, record)
    decoder.finish(record)
    return (positions, counts.filter { $0.value > 1 }, untimed)
}

/// Compares one capture; returns every field that differs.
func compare(_ capture: String, in set: CaptureSet = .fixtures) throws -> [Difference] {
    let gpsd = try gpsdEpochs(capture, in: set)
    let (ours, duplicates, untimed) = try ourEpochs(capture, in: set)
    var differences: [Difference] = []
    func differ(_ key: Int, _ field: String, _ detail: String = "") {
        differences.append(Difference(capture: capture, time: formatTime(key), field: field, detail: detail))
    }
    func check(_ key: Int, _ field: String, _ mine: Double?, _ theirs: Double?, tolerance: Double) {
        guard let theirs else { return }  // gpsd did not report it: nothing to compare
        guard let mine, abs(mine - theirs) <= tolerance else {
            return differ(key, field, "ours \(mine.map { "\($0)" } ?? "nil"), gpsd \(theirs)")
        }
    }
    for (key, g) in gpsd {
        guard let p = ours[key] else {
            if g.mode >= 2 { differ(key, "epoch missing", "gpsd mode \(g.mode)") }
            continue
        }
        if g.mode >= 2 && !p.hasFix { differ(key, "fix missing", "ours quality \(p.quality), gpsd mode \(g.mode)") }
        if g.hasTPV && g.mode < 2 && g.lat == nil && p.hasFix {
            differ(key, "fix gpsd does not report", "ours quality \(p.quality), gpsd mode \(g.mode)")
        }
        // gpsd prints lat/lon with 9 decimals, altitudes with 4, speed 3, track 4, GST 3.
        check(key, "lat", p.latitude, g.lat, tolerance: 1e-7)
        check(key, "lon", p.longitude, g.lon, tolerance: 1e-7)
        check(key, "altMSL", p.mslHeight, g.altMSL, tolerance: 0.001)
        if p.undulation != nil || p.ellipsoidalHeight != nil {
            // Without a geoid separation in the sentence gpsd uses its own geoid model: not decoded.
            check(key, "altHAE", p.altitude, g.altHAE, tolerance: 0.001)
        }
        check(key, "speed", p.speed, g.speed, tolerance: 0.0005 + 1e-9)
        check(key, "track", p.bearing, g.track, tolerance: 0.00005 + 1e-9)
        check(key, "gst.lat", p.sigmaLatitude, g.gstLat, tolerance: 0.0005)
        check(key, "gst.lon", p.sigmaLongitude, g.gstLon, tolerance: 0.0005)
        check(key, "gst.alt", p.sigmaAltitude, g.gstAlt, tolerance: 0.0005)
        if let used = g.uSat, p.sky.usedCount != used {
            differ(
                key, "uSat", "ours \(p.sky.usedCount) (GGA \(p.satellitesInUse.map(String.init) ?? "-")), gpsd \(used)")
        }
    }
    for (key, count) in duplicates {
        differ(key, "duplicate epoch (\(count))")
    }
    if untimed > 0 {
        // Positions without a time: gpsd has nothing to compare them with, and TMM gets them.
        differences.append(Difference(capture: capture, time: "no time", field: "epochs without time (\(untimed))"))
    }
    return differences.sorted { ($0.time, $0.field) < ($1.time, $1.field) }
}

@Suite("Decoding real receiver captures matches gpsd 3.22's own reports", .tags(.unit))
struct GPSDComparisonTests {
    @Test(arguments: comparedCaptures)
    func epochsMatchGPSD(_ capture: String) throws {
        let differences = try compare(capture)
        let expected = knownDifferences.filter { $0.key.capture == capture }
        let unexplained = differences.filter { expected[$0] == nil }
        let vanished = expected.keys.filter { !differences.contains($0) }
        #expect(unexplained.isEmpty, "unexplained differences from gpsd: \(unexplained)")
        #expect(vanished.isEmpty, "listed differences that no longer occur: \(vanished)")
    }

    @Test(arguments: comparedCaptures)
    func everyGPSDEpochIsCompared(_ capture: String) throws {
        // Guards the comparison itself: a parse failure would otherwise compare nothing.
        let gpsd = try gpsdEpochs(capture).filter { $0.value.hasTPV }
        let ours = try ourEpochs(capture)
        #expect(!gpsd.isEmpty)
        #expect(!ours.positions.isEmpty)
        let matched = gpsd.keys.filter { ours.positions[$0] != nil }.count
        #expect(matched * 10 >= gpsd.count * 9, "only \(matched) of \(gpsd.count) gpsd epochs matched")
    }

    /// `GPSD_SUITE_PRINT=1`: prints every current difference of the fixtures as the
    /// `knownDifferencesByCapture` entries (listed reasons kept, new ones "TODO"), and checks
    /// the whole table at once.
    @Test(.enabled(if: printDifferenceTables, "set GPSD_SUITE_PRINT=1 to print the difference table"))
    func printKnownDifferences() throws {
        var all: [Difference] = []
        for capture in comparedCaptures { all += try compare(capture) }
        var text = "// knownDifferences, current assembler (\(all.count)):\n"
        for d in all {
            let reason =
                knownDifferences[d].map { text in
                    SuiteCause.allCases.first { $0.text == text }.map { "SuiteCause.\($0).text" } ?? swiftLiteral(text)
                } ?? "SuiteCause.todo.text"
            text +=
                "    Difference(capture: \(swiftLiteral(d.capture)), time: \(swiftLiteral(d.time)), "
                + "field: \(swiftLiteral(d.field))):\n        \(reason),\n"
        }
        print(text)
        #expect(Set(all) == Set(knownDifferences.keys), "the table above differs from knownDifferences")
    }
}

/// `GPSD_SUITE_PRINT=1` in the environment: the print tests run.
let printDifferenceTables = ProcessInfo.processInfo.environment["GPSD_SUITE_PRINT"] == "1"

/// A Swift string literal for `text`.
func swiftLiteral(_ text: String) -> String {
    var out = "\""
    for c in text {
        switch c {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        default: out.append(c)
        }
    }
    return out + "\""
}

/// Every top-level capture (gpsd 3.22 golden output) plus the Trimble-firmware capture that only
/// exists in gpsd's newer suite (its `.chk` is gpsd 3.27's; same TPV/GST keys).
let comparedCaptures = Fixtures.captureNames + ["gpsd-head/ericsson-gru04-02-70sec.log"]

/// Every remaining difference from gpsd 3.22, with the reason (see docs/nmea.md).
let ericssonAveragedPosition =
    "gpsd 3.27 decodes Ericsson's proprietary $PERC,GPavp (a once-a-minute averaged position, "
    + "4 decimal minutes, height 1492.2 m) and reports it as the epoch's position; we report the "
    + "epoch's GNS fix and count $PERC as unsupported"

/// Every remaining difference (causes and triage: Tests/Fixtures/gpsd-suite.md). Regenerate with
/// `GPSD_SUITE_PRINT=1 swift test --filter printKnownDifferences`.
let knownDifferences: [Difference: String] = [
    Difference(capture: "beidou-gb.log", time: "05:32:32.438", field: "uSat"): SuiteCause.untriaged.text,
    Difference(capture: "beidou-gb.log", time: "05:32:33.438", field: "uSat"): SuiteCause.untriaged.text,
    Difference(capture: "foretrex-201.log", time: "20:00:04.000", field: "altMSL"): SuiteCause.garminPGRMZ.text,
    Difference(capture: "foretrex-201.log", time: "no time", field: "epochs without time (4)"): SuiteCause
        .noTimeWithoutFix.text,
    Difference(capture: "quectel.log", time: "02:20:23.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "02:20:24.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "02:20:28.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "02:20:29.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "02:20:31.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "02:20:33.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "02:20:34.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "02:20:35.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "02:20:36.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "02:20:38.000", field: "fix gpsd does not report"): SuiteCause
        .fixLostEmptyTime.text,
    Difference(capture: "quectel.log", time: "02:20:47.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "02:20:49.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "02:20:50.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "02:20:51.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "02:20:52.000", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "quectel.log", time: "no time", field: "epochs without time (9)"): SuiteCause.noTimeWithoutFix
        .text,
    Difference(capture: "quectelLC79D-1.log", time: "08:03:59.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:00.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:01.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:02.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:03.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:04.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:05.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:06.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:07.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:08.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:09.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:10.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:11.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:12.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:13.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:14.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:15.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:16.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:17.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:18.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:19.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:20.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:21.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:22.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:23.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:24.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:25.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:26.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "08:04:27.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed.text,
    Difference(capture: "quectelLC79D-1.log", time: "no time", field: "epochs without time (1)"): SuiteCause
        .captureEndsMidCycle.text,
    Difference(capture: "telit-he910.log", time: "10:54:47.408", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "telit-he910.log", time: "10:54:48.408", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "telit-he910.log", time: "10:54:49.408", field: "uSat"): SuiteCause.gpsdNoSNRNotUsed.text,
    Difference(capture: "telit-he910.log", time: "no time", field: "epochs without time (37)"): SuiteCause
        .noTimeWithoutFix.text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:39:56.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:39:57.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:39:58.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:39:59.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:00.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:01.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:02.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:03.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:04.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:05.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:06.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:07.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:08.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:09.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:10.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:11.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:12.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:13.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:14.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:15.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:16.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:17.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:18.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:19.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:20.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:21.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:22.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:23.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "ublox-zed-f9p-nmea.log", time: "00:40:24.000", field: "uSat"): SuiteCause.gpsdMultiGNSSUsed
        .text,
    Difference(capture: "gpsd-head/ericsson-gru04-02-70sec.log", time: "21:37:13.000", field: "altHAE"): SuiteCause
        .ericssonAveragedPosition.text,
    Difference(capture: "gpsd-head/ericsson-gru04-02-70sec.log", time: "21:37:13.000", field: "lat"): SuiteCause
        .ericssonAveragedPosition.text,
    Difference(capture: "gpsd-head/ericsson-gru04-02-70sec.log", time: "21:37:13.000", field: "lon"): SuiteCause
        .ericssonAveragedPosition.text,
    Difference(capture: "gpsd-head/ericsson-gru04-02-70sec.log", time: "21:38:13.000", field: "altHAE"): SuiteCause
        .ericssonAveragedPosition.text,
    Difference(capture: "gpsd-head/ericsson-gru04-02-70sec.log", time: "21:38:13.000", field: "lat"): SuiteCause
        .ericssonAveragedPosition.text,
    Difference(capture: "gpsd-head/ericsson-gru04-02-70sec.log", time: "21:38:13.000", field: "lon"): SuiteCause
        .ericssonAveragedPosition.text,
]
