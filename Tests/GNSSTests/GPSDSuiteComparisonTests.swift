// The GPSDComparisonTests comparison over every NMEA 0183 capture of gpsd 3.22's whole
// regression suite (test/daemon of Debian 12's gpsd source package, fetched by
// scripts/fetch-gpsd-suite.sh into .build/gpsd-suite; `make test` fetches it). Skipped, saying
// so, when the suite is not there. Every difference is listed in `gpsdSuiteKnownDifferences`
// (GPSDSuiteKnownDifferences.swift) with its cause and asserted to occur exactly: a new one
// fails, and so does one that went away. `GPSD_SUITE_PRINT=1` prints the current list in the
// table's Swift syntax. Tests/Fixtures/gpsd-suite.md has the rules and the triage.
import Foundation
import GNSS
import TestSupport
import Testing

@Suite(
    "Every NMEA capture of gpsd 3.22's regression suite matches gpsd's own reports", .tags(.unit),
    .enabled(if: GPSDSuite.isPresent, Comment(rawValue: GPSDSuite.missingMessage)))
struct GPSDSuiteComparisonTests {
    @Test(arguments: GPSDSuite.captureNames)
    func epochsMatchGPSD(_ capture: String) throws {
        let differences = try compare(capture, in: .gpsdSuite)
        let expected = gpsdSuiteKnownDifferences.filter { $0.key.capture == capture }
        let unexplained = differences.filter { expected[$0] == nil }
        let vanished = expected.keys.filter { !differences.contains($0) }.sorted { $0.description < $1.description }
        #expect(unexplained.isEmpty, "unexplained differences from gpsd: \(unexplained)")
        #expect(vanished.isEmpty, "listed differences that no longer occur: \(vanished)")
    }

    @Test(arguments: GPSDSuite.captureNames)
    func everyGPSDEpochIsCompared(_ capture: String) throws {
        // Guards the comparison itself: a parse failure would otherwise compare nothing.
        let gpsd = try gpsdEpochs(capture, in: .gpsdSuite)
        let ours = try ourEpochs(capture, in: .gpsdSuite)
        let timed = gpsd.filter { $0.value.mode >= 2 }
        let matched = timed.keys.filter { ours.positions[$0] != nil }.count
        if let reason = gpsdSuiteCapturesWithoutFixes[capture] {
            #expect(timed.isEmpty, "listed as without timed fixes (\(reason)) but gpsd has \(timed.count)")
        } else {
            #expect(
                !timed.isEmpty, "gpsd reports no timed fix for this capture: list it in gpsdSuiteCapturesWithoutFixes")
            #expect(matched * 10 >= timed.count * 9, "only \(matched) of \(timed.count) gpsd fixes matched")
        }
    }

    @Test func theSelectionIsTheExpectedOne() {
        // The fetch script's rule picked exactly these captures (a partial fetch or a changed
        // rule fails here), and the tables name no other capture.
        let fetched = Set(GPSDSuite.captureNames)
        #expect(
            fetched == Set(gpsdSuiteCaptures), "fetched: \(fetched.symmetricDifference(gpsdSuiteCaptures).sorted())")
        let tableCaptures = Set(gpsdSuiteKnownDifferences.keys.map(\.capture))
            .union(gpsdSuiteCapturesWithoutFixes.keys)
        #expect(tableCaptures.isSubset(of: fetched), "\(tableCaptures.subtracting(fetched).sorted())")
    }

    @Test func everyListedDifferenceHasACause() {
        let todo = gpsdSuiteKnownDifferences.filter { $0.value == .todo }.keys
        #expect(todo.isEmpty, "differences without a cause: \(todo.sorted { $0.description < $1.description })")
    }

    /// `GPSD_SUITE_PRINT=1`: prints every current difference of the suite as the
    /// `gpsdSuiteKnownDifferences` groups (listed causes kept, new ones `.todo`), a summary per
    /// cause, and checks the whole table at once.
    @Test(.enabled(if: printDifferenceTables, "set GPSD_SUITE_PRINT=1 to print the suite's difference table"))
    func printKnownDifferences() throws {
        var all: [Difference] = []
        for capture in GPSDSuite.captureNames { all += try compare(capture, in: .gpsdSuite) }
        print(gpsdSuiteTableSource(all))
        if let dumpCapture { print(try epochDump(dumpCapture, in: .gpsdSuite)) }
        if printDetails {
            print(all.map { "// \($0.capture) \($0.time) \($0.field): \($0.detail)" }.joined(separator: "\n"))
        }
        #expect(
            Set(all) == Set(gpsdSuiteKnownDifferences.keys), "the table above differs from gpsdSuiteKnownDifferences")
    }
}

/// `GPSD_SUITE_PRINT=1` and `GPSD_SUITE_DETAILS=1`: the printed table says, per group, both
/// values of its first difference.
let printDetails = ProcessInfo.processInfo.environment["GPSD_SUITE_DETAILS"] == "1"

/// `GPSD_SUITE_DUMP=NAME.log`: the print test also lists every epoch we emit for that capture,
/// in order (to see where an epoch boundary went wrong).
let dumpCapture = ProcessInfo.processInfo.environment["GPSD_SUITE_DUMP"]

/// One line per emitted epoch of `capture`: time, quality, position, speed, track, satellites.
func epochDump(_ capture: String, in set: CaptureSet) throws -> String {
    let bytes = try set.bytes(capture)
    var decoder = NMEAStreamDecoder()
    var positions: [Position] = []
    let record = { (p: Position) in positions.append(p) }
    decoder.feed(bytes.span, now: 0, record)
    decoder.finish(record)
    var text = "// epochs of \(capture):\n"
    func show(_ value: Double?) -> String { value.map { "\($0)" } ?? "-" }
    for p in positions {
        let time = p.time.map { formatTime(Int((Double($0.nanosecondsOfDay) / 1e6).rounded())) } ?? "no time"
        text +=
            "//   \(time) \(p.quality) lat \(show(p.latitude)) lon \(show(p.longitude)) alt \(show(p.mslHeight)) "
            + "speed \(show(p.speed)) track \(show(p.bearing)) GGA sats \(p.satellitesInUse.map(String.init) ?? "-") "
            + "used \(p.sky.usedCount) of \(p.sky.count)\n"
    }
    return text + "//   closer \(decoder.assembler.closer.map { "\($0)" } ?? "none") \(decoder.assembler.statistics)\n"
}

/// One line of the table: these times of one capture differ in one field, for one cause.
struct SuiteDifferenceGroup {
    var capture: String
    var field: String
    var cause: SuiteCause
    var times: [String]

    init(_ capture: String, _ field: String, _ cause: SuiteCause, _ times: [String]) {
        self.capture = capture
        self.field = field
        self.cause = cause
        self.times = times
    }
}

/// The table as a dictionary (a repeated entry is a mistake in the table and traps).
func expand(_ groups: [SuiteDifferenceGroup]) -> [Difference: SuiteCause] {
    var table: [Difference: SuiteCause] = [:]
    for g in groups {
        for time in g.times {
            let d = Difference(capture: g.capture, time: time, field: g.field)
            precondition(table[d] == nil, "gpsdSuiteKnownDifferences lists \(d) twice")
            table[d] = g.cause
        }
    }
    return table
}

/// Swift source for `gpsdSuiteDifferenceGroups` holding exactly `differences`.
func gpsdSuiteTableSource(_ differences: [Difference]) -> String {
    struct Key: Hashable { var capture: String, field: String, cause: String }
    var groups: [Key: [String]] = [:]
    var counts: [String: Int] = [:]
    for d in differences {
        let cause = gpsdSuiteKnownDifferences[d] ?? .todo
        groups[Key(capture: d.capture, field: d.field, cause: "\(cause)"), default: []].append(d.time)
        counts["\(cause)", default: 0] += 1
    }
    var text = "// gpsdSuiteDifferenceGroups, current assembler: \(differences.count) differences\n"
    for (cause, n) in counts.sorted(by: { $0.key < $1.key }) { text += "//   .\(cause): \(n)\n" }
    text += "let gpsdSuiteDifferenceGroups: [SuiteDifferenceGroup] = [\n"
    for key in groups.keys.sorted(by: { ($0.capture, $0.field, $0.cause) < ($1.capture, $1.field, $1.cause) }) {
        let times = groups[key]!.sorted().map(swiftLiteral).joined(separator: ", ")
        if printDetails, let d = differences.first(where: { $0.capture == key.capture && $0.field == key.field }) {
            text += "    // e.g. \(d.time): \(d.detail)\n"
        }
        text += "    .init(\(swiftLiteral(key.capture)), \(swiftLiteral(key.field)), .\(key.cause), [\(times)]),\n"
    }
    return text + "]\n"
}
