// Binary receivers end to end. `tmm-bridge decode` of what gpsd 3.22 wrote to a live watch
// (Tests/Fixtures/gpsd-json: a u-blox and a SiRF receiver) checked against gpsd's TPVs read by
// Foundation's JSON parser (not libgps); and gpsd's own regression logs of binary receivers played
// through a pty, gpsd and `tmm-bridge run` to a LocationV2 client
// (tmmtools/endtoend/binary_suite.py), every fix exact. The logs that run in about a minute are
// here; `make hwtest` plays them all.
import Foundation
import TestSupport
import Testing

@Suite("Binary receivers: gpsd's reports, exact", .tags(.integration))
struct BinaryReceiverTests {
    static let fixtures = Fixtures.repositoryRoot + "/Tests/Fixtures/gpsd-json/"

    /// gpsd's last TPV with a fix for each time, in order of first appearance: what a client must get.
    static func expectedFixes(
        in text: String
    ) throws -> [(time: String, latitude: Double, longitude: Double, altHAE: Double?)] {
        var order: [String] = []
        var last: [String: (Double, Double, Double?)] = [:]
        // gpsd ends lines with CRLF, one Character to Swift: split on any line end.
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix(#"{"class":"TPV""#) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            guard let mode = object["mode"] as? Int, mode >= 2, let time = object["time"] as? String,
                let lat = object["lat"] as? Double, let lon = object["lon"] as? Double
            else { continue }
            if last[time] == nil { order.append(time) }
            last[time] = (lat, lon, object["altHAE"] as? Double)
        }
        return order.map { ($0, last[$0]!.0, last[$0]!.1, last[$0]!.2) }
    }

    @Test(
        "decode of a gpsd watch: one epoch per fix time, gpsd's last word on it, to 1e-9 degree and 1 mm",
        // Not sirfstarv.log.watch: gpsd dates its MID 2 fixes 1999 (the log's `# Date:` header
        // does not parse, so the GPS week rolls over) and its MID 41 fixes 2019, one timeline
        // jumping 20 years at every message; no epoch order can be "gpsd's" there.
        arguments: ["ublox-neo-m8t.log.watch", "neo-m8n.log.watch"])
    func decodeWatchCapture(name: String) throws {
        let path = Self.fixtures + name
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let expected = try Self.expectedFixes(in: text)
        try #require(!expected.isEmpty)
        let run = try runBridge(["decode", path])
        #expect(run.status == 0, "\(run.stderr)")
        let fixes = try run.lines.map { try jsonObject($0) }.filter { $0["latitude"] is Double }
        #expect(fixes.count == expected.count, "epochs with a fix: \(fixes.count), gpsd's fix times: \(expected.count)")
        for (fix, want) in zip(fixes, expected) {
            let latitude = try #require(fix["latitude"] as? Double)
            let longitude = try #require(fix["longitude"] as? Double)
            #expect(
                abs(latitude - want.latitude) < 1e-9 && abs(longitude - want.longitude) < 1e-9, "\(want.time): \(fix)")
            if let altHAE = want.altHAE {
                #expect(abs((fix["altitude"] as? Double ?? .nan) - altHAE) < 0.001, "\(want.time)")
            }
        }
        // The pseudo-NMEA between the reports is not read, and says so.
        #expect(run.stderr.contains("NMEA sentences (gpsd's JSON is read, not its NMEA)"), "\(run.stderr)")
    }

    @Test("decode refuses JSON with no fix in it, and names both formats")
    func decodeWithoutFixes() throws {
        let run = try runBridge(
            ["decode", "-"],
            stdin: Array(
                #"{"class":"VERSION","release":"3.22"}\#n{"class":"TPV","mode":1}\#n{"class":"TPV","mode":3,"lat":"#
                    .utf8))
        #expect(run.status == 1)
        #expect(run.stderr.contains("no TPV reports found") && run.stderr.contains("gpspipe -w"), "\(run.stderr)")
        #expect(
            run.stderr.contains("1 lines that are not gpsd JSON"),
            "the truncated TPV is dropped and counted: \(run.stderr)")
    }

    /// gpsd 3.22's binary-driver logs that together play in about 80 s: one of each driver, and the logs below.
    static let quickLogs = [
        "bu303-climbing.log", "bu303-moving.log", "bu303-stillfix.log", "ublox-sirf1.log", "garmin18x-bin.log",
        "geostar-geos1m-binary.log", "greis-binary.log", "greis-test2.log", "italk-binary.log", "navcom.log",
        "oncore-binary.log", "skytraq-bin.log", "superstar2.log", "trimble-lassen_iq.log", "trimble-smt-360.log",
        "trimble-smtx.log", "ublox-aek-4t.log", "ublox-lea-4t.log", "ublox-neo-m8n.log", "ublox-neo-m8t-s.log",
        "ublox-neo-m8t.log", "ublox-zed-f9p-hp.log", "ublox-zed-f9p-sfrbx.log", "zodiac.log",
        // Each pins a fix: a TPV glued to an unfinished GSV (pos-hold), gpsd relaying another
        // gpsd's JSON (navisys), up to three TPVs of one time (bin2d), epochs a period apart in
        // receiver time (f9t-rtcm3).
        "oncore-binary-pos-hold.log", "navisys-gr701w.log", "trimble-lasseniq-bin2d.log", "ublox-zed-f9t-rtcm3.log",
    ]

    /// The fetched suite (scripts/fetch-gpsd-suite.sh, `make gpsd-suite`): `GPSD_SUITE_DIR`, else
    /// `.build/gpsd-suite`.
    static let suiteDirectory: String = {
        if let dir = ProcessInfo.processInfo.environment["GPSD_SUITE_DIR"], !dir.isEmpty { return dir }
        return Fixtures.repositoryRoot + "/.build/gpsd-suite"
    }()

    @Test(
        "gpsd's binary logs through a pty, gpsd and tmm-bridge run: every fix reaches V2 once, exact",
        .enabled(
            if: FileManager.default.fileExists(atPath: suiteDirectory + "/binary"),
            "gpsd's suite is not fetched: scripts/fetch-gpsd-suite.sh (make test runs it)"))
    func binaryLogsAreExact() throws {
        let results = NSTemporaryDirectory() + "tmm-binary-suite-\(getpid()).json"
        defer { try? FileManager.default.removeItem(atPath: results) }
        let suite = PythonTools.command(
            "endtoend.binary_suite",
            [
                try bridgeBinary().path, "--suite", Self.suiteDirectory,
                "--expect-exact", "--json", results, "--logs", Self.quickLogs.joined(separator: ","),
            ])
        let (status, output) = try runTool(suite.executable, suite.arguments, seconds: 300)
        #expect(status == 0, "binary_suite.py:\n\(output)")
    }
}
