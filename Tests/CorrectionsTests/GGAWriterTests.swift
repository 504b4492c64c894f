// The upstream GGA: exact bytes, what our own NMEA0183 parser reads back, rounding and carries,
// and positions that must not be sent.
@testable import Corrections
import GNSS
import NMEA0183
import TestSupport
import Testing

/// A position with the fields GGA carries.
func fixPosition(
    latitude: Double = 48.1173, longitude: Double = -11.516666666666667, quality: FixQuality = .rtkFixed,
    nanosecondsOfDay: Int64? = ((12 * 60 + 35) * 60 + 19) * 1_000_000_000 + 500_000_000
) -> Position {
    var position = Position()
    position.time = nanosecondsOfDay.map { UTCTimestamp(date: nil, nanosecondsOfDay: $0) }
    position.latitude = latitude
    position.longitude = longitude
    position.quality = quality
    position.satellitesInUse = 12
    position.hdop = 0.8
    position.mslHeight = 1666.5
    position.undulation = -16.5
    position.diffAge = 1.0
    position.diffStationID = 1
    return position
}

@Suite("Upstream GGA", .tags(.unit))
struct GGAWriterTests {
    static func text(_ position: Position) -> String? {
        GGAWriter.sentence(for: position).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Decodes `line` (with its CRLF) with NMEA0183's validator and GGA decoder.
    static func decoded(_ line: [UInt8]) throws -> GGA? {
        #expect(line.suffix(2) == [0x0D, 0x0A])
        let body = Array(line.dropLast(2))
        let sentence = try NMEASentence(validating: body.span)
        let hasChecksum = sentence.hasChecksum
        #expect(hasChecksum)
        guard case .gga(let gga) = try NMEAMessage(sentence) else { return nil }
        return gga
    }

    @Test func exactBytes() {
        #expect(
            Self.text(fixPosition())
                == "$GPGGA,123519.50,4807.03800000,N,01131.00000000,W,4,12,0.8,1666.5,M,-16.5,M,1.0,0001*49\r\n")
        var south = Position()
        south.latitude = -33.833333333333336
        south.longitude = 151
        south.quality = .autonomous
        south.satellitesInUse = 8
        #expect(Self.text(south) == "$GPGGA,,3350.00000000,S,15100.00000000,E,1,08,,,M,,M,,*49\r\n")
    }

    @Test func parsesWithOurOwnNMEAParser() throws {
        let position = fixPosition(latitude: 47.123456789, longitude: 8.987654321)
        let line = try #require(GGAWriter.sentence(for: position))
        let gga = try #require(try Self.decoded(line))
        #expect(gga.time == NMEATime(hours: 12, minutes: 35, seconds: 19, nanoseconds: 500_000_000))
        let latitude = try #require(gga.latitude).degrees
        let longitude = try #require(gga.longitude).degrees
        #expect(abs(latitude - 47.123456789) < 1e-9)
        #expect(abs(longitude - 8.987654321) < 1e-9)
        #expect(gga.quality == 4)
        #expect(gga.satellitesInUse == 12)
        #expect(gga.hdop?.doubleValue == 0.8)
        #expect(gga.altitudeMSL?.doubleValue == 1666.5)
        #expect(gga.geoidSeparation?.doubleValue == -16.5)
        #expect(gga.dgpsAge?.doubleValue == 1.0)
        #expect(gga.dgpsStation == 1)
    }

    @Test(arguments: FixQuality.allCases)
    func everyFixQualityRoundTrips(_ quality: FixQuality) throws {
        let position = fixPosition(quality: quality)
        guard quality != .noFix else {
            #expect(GGAWriter.sentence(for: position) == nil)
            return
        }
        let line = try #require(GGAWriter.sentence(for: position))
        let gga = try #require(try Self.decoded(line))
        #expect(gga.quality.flatMap { FixQuality(ggaQuality: $0) } == quality)
    }

    @Test func manyPositionsRoundTripWithinTheirPrecision() throws {
        var random = SplitMix64(state: 10)
        for _ in 0..<500 {
            let latitude = Double.random(in: -90...90, using: &random)
            let longitude = Double.random(in: -180...180, using: &random)
            let line = try #require(GGAWriter.sentence(for: fixPosition(latitude: latitude, longitude: longitude)))
            #expect(line.count <= NMEASentence.maxLength + 2)
            let gga = try #require(try Self.decoded(line))
            // 8 decimals of a minute: half a unit is 1/12e9 of a degree.
            let readLatitude = try #require(gga.latitude).degrees
            let readLongitude = try #require(gga.longitude).degrees
            #expect(abs(readLatitude - latitude) < 1e-9, "\(latitude)")
            #expect(abs(readLongitude - longitude) < 1e-9, "\(longitude)")
        }
    }

    @Test func minutesThatRoundUpCarryIntoTheDegrees() {
        // 9.99999999999 degrees is 9° 59.9999999994', which rounds to 60.00000000': written 10° 00'.
        #expect(GGAWriter.angle(9.99999999999, degreeDigits: 2) == "1000.00000000")
        #expect(GGAWriter.angle(179.999999999999, degreeDigits: 3) == "18000.00000000")
        #expect(GGAWriter.angle(0, degreeDigits: 3) == "00000.00000000")
        #expect(GGAWriter.angle(-0.5, degreeDigits: 2) == "0030.00000000")
    }

    @Test func timeIsTruncatedNeverRoundedIntoTheNextDay() {
        #expect(GGAWriter.time(nanosecondsOfDay: 86_399_999_999_999) == "235959.99")
        #expect(GGAWriter.time(nanosecondsOfDay: 86_400_500_000_000) == "235960.50")  // leap second
        #expect(GGAWriter.time(nanosecondsOfDay: 0) == "000000.00")
        #expect(GGAWriter.time(nanosecondsOfDay: 3_723_045_000_000) == "010203.04")
    }

    @Test func decimalsAndPadding() {
        #expect(GGAWriter.decimal(0.75, decimals: 1) == "0.8")
        #expect(GGAWriter.decimal(-0.04, decimals: 1) == "0.0")
        #expect(GGAWriter.decimal(-16.5, decimals: 1) == "-16.5")
        #expect(GGAWriter.decimal(nil, decimals: 1) == "")
        #expect(GGAWriter.decimal(.nan, decimals: 1) == "")
        #expect(GGAWriter.decimal(.infinity, decimals: 1) == "")
        #expect(GGAWriter.decimal(12, decimals: 0) == "12")
    }

    @Test func noSentenceWithoutAUsableFix() {
        var noPosition = fixPosition()
        noPosition.latitude = nil
        #expect(GGAWriter.sentence(for: noPosition) == nil)
        #expect(GGAWriter.sentence(for: fixPosition(quality: .noFix)) == nil)
        #expect(GGAWriter.sentence(for: fixPosition(latitude: 91)) == nil)
        #expect(GGAWriter.sentence(for: fixPosition(longitude: .nan)) == nil)
        #expect(GGAWriter.sentence(for: Position()) == nil)
    }

    @Test func outOfRangeCountsAreClamped() throws {
        var position = fixPosition()
        position.satellitesInUse = 140
        position.diffStationID = 123_456
        let line = try #require(GGAWriter.sentence(for: position))
        let gga = try #require(try Self.decoded(line))
        #expect(gga.satellitesInUse == 99 && gga.dgpsStation == 9999)
    }
}
