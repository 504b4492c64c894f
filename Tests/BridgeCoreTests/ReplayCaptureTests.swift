// The capture replayer's epoch cutting and pacing.
import Testing
import TestSupport

@testable import BridgeCore

@Suite("ReplayCapture", .tags(.unit))
struct ReplayCaptureTests {
    @Test func theTrimbleCaptureIsCutAtEachGGAAndPlayedAtTenHertz() throws {
        let text = String(decoding: try Fixtures.bytes("nmea-rtk.log"), as: UTF8.self)
        let capture = try ReplayCapture(text: text, name: "nmea-rtk.log")
        let sentences = try Fixtures.lines("nmea-rtk.log").filter { $0.first == UInt8(ascii: "$") }
        let ggas = sentences.filter { $0.count > 6 && $0[3...5].elementsEqual("GGA".utf8) }
        #expect(capture.epochs.count == ggas.count)
        #expect(capture.period == 100_000_000)
        // Every sentence is there once, CRLF-terminated, in order; # comment lines are not.
        let replayed = capture.epochs.flatMap { $0 }
        #expect(replayed == sentences.flatMap { $0 + [13, 10] })
        #expect(capture.epochs[0].starts(with: Array("$GNGGA,132819.60".utf8)))
    }

    @Test(arguments: [
        ("1 Hz", ["$GPGGA,120000.00,1", "$GPRMC,120000.00,1", "$GPGGA,120001.00,1"], 1_000_000_000),
        ("5 Hz", ["$GPRMC,120000.0,1", "$GPRMC,120000.2,1", "$GPRMC,120000.4,1"], 200_000_000),
        ("no times", ["$GPGSV,1,1", "$GPGSV,1,1"], 1_000_000_000),
        ("too fast: 1 ms", ["$GPGGA,120000.000,1", "$GPGGA,120000.001,1"], 1_000_000_000),
    ])
    func periodFromTheCapturesOwnTimes(_ name: String, _ lines: [String], _ period: Int64) throws {
        let capture = try ReplayCapture(text: lines.joined(separator: "\n"), name: name)
        #expect(capture.period == period, "\(name)")
    }

    /// Lines NMEA0183 refuses (a boot banner, a bad checksum) are replayed as they are, but never
    /// start an epoch or set the pace: the epochs start at the first valid sentence's type.
    @Test func refusedLinesAreReplayedButNeverStartAnEpoch() throws {
        let lines = [
            "$SkyTraq,Venus6", "$GPGGA,120000.00,1", "$GPRMC,120000.00,1", "$GPGGA,120000.50,1*00",
            "$GPGGA,120001.00,1", "$GPRMC,120001.00,1",
        ]
        let capture = try ReplayCapture(text: lines.joined(separator: "\r\n"), name: "banner.log")
        let epochs = capture.epochs.map { String(decoding: $0, as: UTF8.self) }
        #expect(
            epochs == [
                "$SkyTraq,Venus6\r\n", "$GPGGA,120000.00,1\r\n$GPRMC,120000.00,1\r\n$GPGGA,120000.50,1*00\r\n",
                "$GPGGA,120001.00,1\r\n$GPRMC,120001.00,1\r\n",
            ])
        #expect(capture.period == 1_000_000_000, "the bad-checksum GGA's time is not used")
        #expect(ReplayCapture.sentenceType("$SkyTraq,Venus6") == nil)
        #expect(ReplayCapture.timeOfDay("$GPGGA,120000.50,1*00") == nil)
        let expected: Int64 = (13 * 3600 + 28 * 60 + 20) * 1_000_000_000 + 300_000_000
        let time = ReplayCapture.timeOfDay("$GPRMC,132820.3*70")
        #expect(time == expected, "the checksum is not part of the time field")
    }

    /// The time field is the sentence kind table's (`SentenceKind.row`): GLL's is field 5, so a
    /// capture that starts with GLL (foretrex-201.log, a 2 s receiver) is paced by its GLL times.
    @Test func gllTimesAreReadFromTheirField() throws {
        let expected: Int64 = (20 * 3600 + 0 * 60 + 4) * 1_000_000_000
        #expect(ReplayCapture.timeOfDay("$GPGLL,4111.59903,N,11156.54809,W,200004,A,A") == expected)
        let lines = [
            "$GPGLL,4111.59903,N,11156.54809,W,200004,A,A", "$GPGGA,200004,1",
            "$GPGLL,4111.59903,N,11156.54809,W,200006,A,A", "$GPGGA,200006,1",
            "$GPGLL,4111.59903,N,11156.54809,W,200008,A,A",
        ]
        let capture = try ReplayCapture(text: lines.joined(separator: "\n"), name: "gll.log")
        #expect(capture.epochs.count == 3)
        #expect(capture.period == 2_000_000_000)
    }

    @Test func aCaptureWithoutSentencesIsRefusedWithItsName() {
        #expect(
            throws: ReplayCapture.Failure(message: "empty.log: no NMEA sentences (lines starting with $) to replay")
        ) {
            try ReplayCapture(text: "# only a comment\n\n", name: "empty.log")
        }
    }

    @Test func timeFieldsAreReadFromTheSentencesThatCarryThem() {
        let gga: Int64 = (13 * 3600 + 28 * 60 + 19) * 1_000_000_000 + 600_000_000
        let ggk: Int64 = (10 * 3600 + 29 * 60 + 39) * 1_000_000_000
        #expect(ReplayCapture.timeOfDay("$GNGGA,132819.60,4134") == gga)
        #expect(ReplayCapture.timeOfDay("$PTNL,GGK,102939.00,051910") == ggk)
        #expect(ReplayCapture.timeOfDay("$GPGSV,3,1,12") == nil)
        let leap: Int64 = (23 * 3600 + 59 * 60 + 60) * 1_000_000_000
        #expect(ReplayCapture.timeOfDay("$GPGGA,235960,1") == leap, "a leap second")
        for bad in [
            "$GPGGA,250000,1", "$GPGGA,006000,1", "$GPGGA,000061,1", "$GPGGA,+35959,1", "$GPGGA,-00001,1",
            "$GPGGA,120000.-5,1", "$GPGGA,120000.,1", "$GPGGA,120000.1234567890,1", "$GPGGA,12:00:00,1",
        ] {
            #expect(ReplayCapture.timeOfDay(Substring(bad)) == nil, "\(bad)")
        }
        #expect(ReplayCapture.timeOfDay("$GPGGA,12,x") == nil)
        #expect(ReplayCapture.sentenceType("$PTNL,GGK,1") == "PTNL")
        #expect(ReplayCapture.sentenceType("$GNRMC,1") == "RMC")
    }
}
