// The acceptance rule (NMEASentence's doc comment) must accept and reject exactly what gpsd 3.22
// accepted and rejected on the real captures: gpsd echoes every sentence it accepted into the
// `.log.chk` (it watches with `"nmea":true`), so the `$` lines of a `.chk` are gpsd's verdict.
import NMEA0183
import TestSupport
import Testing

/// `$` lines of a `.chk` that gpsd produced from the *comment* header of the log (its lexer reads
/// `$GP` inside `#` text as a sentence start); our framer skips comment lines whole.
let gpsdCommentEchoes: [String: Set<String>] = [
    "quectel.log": ["$GPRMC.", "$GPGGA and #"],
    "neo-m8n.log": ["$GPGSV for GNSS sats"],
]

/// Sentences gpsd rejected, per capture, with the rule each breaks (also asserted below).
let gpsdRejections: [String: (count: Int, rule: String)] = [
    "firefly-II.log": (23, "bad checksum (every GGA)"),
    "venus634lp.log": (3, "boot banner address is not upper case ($SkyTraq, $Kernel, $ver)"),
    "et-332.log": (1, "terminal escape codes (0x1B) inside a GSA"),
]

@Suite("Sentence acceptance matches gpsd 3.22 on every capture", .tags(.unit))
struct GPSDAcceptanceTests {
    @Test(arguments: Fixtures.captureNames)
    func acceptsExactlyWhatGPSDAccepted(_ capture: String) throws {
        var gpsdAccepted = Set<[UInt8]>()
        for line in try Fixtures.lines(capture + ".chk") where line.first == UInt8(ascii: "$") {
            gpsdAccepted.insert(line)
        }
        let echoes = gpsdCommentEchoes[capture, default: []]
        var accepted: [[UInt8]] = []
        var rejected: [[UInt8]] = []
        var framer = NMEAFramer()
        let bytes = try Fixtures.bytes(capture)
        framer.feed(bytes.span) { line in
            let copy = (0..<line.count).map { line[$0] }
            if (try? NMEASentence(validating: line)) != nil {
                accepted.append(copy)
            } else {
                rejected.append(copy)
            }
        }
        // Everything we accept, gpsd accepted.
        let extra = accepted.filter { !gpsdAccepted.contains($0) }
        #expect(extra.isEmpty, "accepted but gpsd rejected: \(extra.map { String(decoding: $0, as: UTF8.self) })")
        // Everything gpsd accepted from the data (not its comment-header quirk), we accept.
        let acceptedSet = Set(accepted)
        let missing = gpsdAccepted.filter {
            !acceptedSet.contains($0) && !echoes.contains(String(decoding: $0, as: UTF8.self))
        }
        #expect(
            missing.isEmpty, "gpsd accepted but we rejected: \(missing.map { String(decoding: $0, as: UTF8.self) })")
        // The comment echoes really are in gpsd's output (the list is not stale).
        for echo in echoes { #expect(gpsdAccepted.contains(Array(echo.utf8)), "\(echo) not in \(capture).chk") }
        // And the rejections are exactly the documented ones. The et-332 GSA is abandoned by the
        // framer itself (non-printable byte), so it never reaches the validator.
        let expectedRejections = gpsdRejections[capture]?.count ?? 0
        let framerDrops = framer.statistics.invalidByteLines
        #expect(rejected.count + framerDrops == expectedRejections, "\(gpsdRejections[capture]?.rule ?? "none")")
    }

    @Test func sentenceWithoutChecksumIsAcceptedAsGPSDDoes() throws {
        // sl869.log: `$GPTXT,01,01,02,ANTSTATUS=OPEN` has no `*hh`; gpsd 3.22 passes it through.
        let line = try #require(try Fixtures.lines("sl869.log").first { $0.starts(with: Array("$GPTXT".utf8)) })
        let hasChecksum = try NMEASentence(validating: line.span).hasChecksum
        #expect(!hasChecksum)
        #expect(try Fixtures.lines("sl869.log.chk").contains(line))
    }
}
