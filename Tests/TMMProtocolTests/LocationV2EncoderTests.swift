import Foundation
import GNSS
import TestSupport
import Testing
import TMMProtocol

@Suite("LocationV2 encoder", .tags(.unit))
struct LocationV2EncoderTests {
    /// §8.7 fix values; the sky is abbreviated (see `Sample.fix`), and fields the bridge does not
    /// know (geoidModel, battery, reference frames, IMU, antenna) are null or neutral.
    static let pinnedFix = """
        {"latitude":-43.52961234,"longitude":172.63623456,"altitude":35.412,"speed":0.03,"bearing":112.5,\
        "geoidModel":null,"hrms":0.012,"vrms":0.021,"satellites":3,"totalSatInUse":24,"totalSatInView":3,\
        "pdop":1.3,"hdop":0.7,"vdop":1.1,"diffAge":1.0,"diffStatus":4,"diffID":"0123","solutionType":"RTK Fixed",\
        "receiverModel":"R12i","receiverSerialNumber":"6123456789","mockProvider":"Trimble Mobile Manager",\
        "appVersion":"3.4.1","battery":null,"mslHeight":20.115,"undulation":15.297,"utcTime":180000.0,\
        "utcTimeStamp":"2024-02-22T18:00:00Z","gpsTimeStamp":"2024-02-22T18:00:18Z","subscriptionType":100,\
        "sourceReferenceFrameName":null,"sourceReferenceFrameEpoch":null,"targetReferenceFrameName":null,\
        "targetReferenceFrameEpoch":null,"imuAlignmentStatus":0,"isTIP":false,"pitch":null,"roll":null,\
        "yaw":null,"pitchPrecision":null,"rollPrecision":null,"yawPrecision":null,"igsAntenna":null,\
        "antennaHeight":0.0,"satelliteView":[{"Id":5,"Elv":62,"Azm":141,"Snr":47,"Use":true,"Type":0},\
        {"Id":12,"Elv":23,"Azm":301,"Snr":38,"Use":true,"Type":4},\
        {"Id":70,"Elv":null,"Azm":null,"Snr":null,"Use":false,"Type":2}],\
        "accuracy":0.012,"verticalAccuracyMeters":0.021,"sourceReferenceEpoch":null}
        """

    /// §8.7 no-fix case, with every field present.
    static let pinnedNoFix = """
        {"latitude":null,"longitude":null,"altitude":null,"speed":null,"bearing":null,"geoidModel":null,\
        "hrms":null,"vrms":null,"satellites":3,"totalSatInUse":0,"totalSatInView":3,"pdop":null,"hdop":null,\
        "vdop":null,"diffAge":null,"diffStatus":null,"diffID":"-1","solutionType":null,"receiverModel":"R12i",\
        "receiverSerialNumber":"6123456789","mockProvider":"Trimble Mobile Manager","appVersion":"3.4.1",\
        "battery":null,"mslHeight":null,"undulation":null,"utcTime":null,"utcTimeStamp":null,"gpsTimeStamp":null,\
        "subscriptionType":100,"sourceReferenceFrameName":null,"sourceReferenceFrameEpoch":null,\
        "targetReferenceFrameName":null,"targetReferenceFrameEpoch":null,"imuAlignmentStatus":0,"isTIP":false,\
        "pitch":null,"roll":null,"yaw":null,"pitchPrecision":null,"rollPrecision":null,"yawPrecision":null,\
        "igsAntenna":null,"antennaHeight":0.0,"satelliteView":[{"Id":5,"Elv":62,"Azm":141,"Snr":null,\
        "Use":false,"Type":0},{"Id":12,"Elv":23,"Azm":301,"Snr":21,"Use":false,"Type":4},\
        {"Id":70,"Elv":null,"Azm":null,"Snr":null,"Use":false,"Type":2}],"accuracy":null,\
        "verticalAccuracyMeters":null,"sourceReferenceEpoch":null}
        """

    /// Every V2 field in wire order with its JSON kind with a fix (all known) and without one.
    static let types: [(key: String, fix: Kind, noFix: Kind)] = [
        ("latitude", .double, .null), ("longitude", .double, .null), ("altitude", .double, .null),
        ("speed", .double, .null), ("bearing", .double, .null), ("geoidModel", .null, .null),
        ("hrms", .double, .null), ("vrms", .double, .null), ("satellites", .integer, .integer),
        ("totalSatInUse", .integer, .integer), ("totalSatInView", .integer, .integer),
        ("pdop", .double, .null), ("hdop", .double, .null), ("vdop", .double, .null),
        ("diffAge", .double, .null), ("diffStatus", .integer, .null), ("diffID", .string, .string),
        ("solutionType", .string, .null), ("receiverModel", .string, .string),
        ("receiverSerialNumber", .string, .string), ("mockProvider", .string, .string),
        ("appVersion", .string, .string), ("battery", .null, .null), ("mslHeight", .double, .null),
        ("undulation", .double, .null), ("utcTime", .double, .null), ("utcTimeStamp", .string, .null),
        ("gpsTimeStamp", .string, .null), ("subscriptionType", .integer, .integer),
        ("sourceReferenceFrameName", .null, .null), ("sourceReferenceFrameEpoch", .null, .null),
        ("targetReferenceFrameName", .null, .null), ("targetReferenceFrameEpoch", .null, .null),
        ("imuAlignmentStatus", .integer, .integer), ("isTIP", .bool, .bool),
        ("pitch", .null, .null), ("roll", .null, .null), ("yaw", .null, .null),
        ("pitchPrecision", .null, .null), ("rollPrecision", .null, .null), ("yawPrecision", .null, .null),
        ("igsAntenna", .null, .null), ("antennaHeight", .double, .double), ("satelliteView", .array, .array),
        ("accuracy", .double, .null), ("verticalAccuracyMeters", .double, .null),
        ("sourceReferenceEpoch", .null, .null),
    ]

    @Test func fixMatchesPinnedOutput() {
        #expect(Sample.v2(Sample.fix) == Self.pinnedFix)
    }

    @Test func noFixMatchesPinnedOutput() {
        #expect(Sample.v2(Sample.noFix) == Self.pinnedNoFix)
    }

    @Test func fixFieldTypes() throws {
        let problems = try typeProblems(Sample.v2(Sample.fix), expected: Self.types.map { ($0.key, $0.fix) })
        #expect(problems == [])
    }

    @Test func noFixFieldTypes() throws {
        let problems = try typeProblems(Sample.v2(Sample.noFix), expected: Self.types.map { ($0.key, $0.noFix) })
        #expect(problems == [])
    }

    /// Without a fix but with a time, only the time fields change kind.
    @Test func noFixWithTimeFieldTypes() throws {
        let table = Self.types.map { row -> (String, Kind) in
            switch row.key {
            case "utcTime": (row.key, .double)
            case "utcTimeStamp", "gpsTimeStamp": (row.key, .string)
            default: (row.key, row.noFix)
            }
        }
        let text = Sample.v2(Sample.noFixWithTime)
        #expect(try typeProblems(text, expected: table) == [])
        #expect(try RawJSON.member("utcTime", in: text) == "132819.6")
        #expect(try RawJSON.member("utcTimeStamp", in: text) == #""2020-03-18T13:28:19.600Z""#)
        #expect(try RawJSON.member("gpsTimeStamp", in: text) == #""2020-03-18T13:28:37.600Z""#)
    }

    /// A fix where everything but the coordinates is unknown: unknown numbers are null, the
    /// identity strings unknown are null, counts stay integers.
    @Test func sparseFixUnknownsAreNull() throws {
        let identity = ReceiverIdentity(appVersion: "0.1.0")
        let text = Sample.v2(Sample.sparseFix, identity: identity)
        let table = Self.types.map { row -> (String, Kind) in
            switch row.key {
            case "latitude", "longitude": (row.key, .double)
            case "diffStatus": (row.key, .integer)
            case "solutionType", "diffID", "mockProvider", "appVersion": (row.key, .string)
            default: (row.key, row.noFix == .string ? .null : row.noFix)
            }
        }
        #expect(try typeProblems(text, expected: table) == [])
        #expect(try RawJSON.member("diffStatus", in: text) == "1")
        #expect(try RawJSON.member("solutionType", in: text) == #""Autonomous""#)
        #expect(try RawJSON.member("totalSatInUse", in: text) == "0")
        #expect(try RawJSON.member("satelliteView", in: text) == "[]")
    }

    /// The applied antenna height (REST /antenna) is sent, 0.0 when none is applied; a change
    /// reaches the next message even when the writer remembers the run it sits in.
    @Test func antennaHeightIsTheAppliedOne() throws {
        var encoder = LocationV2Encoder()
        var identity = ReceiverIdentity(appVersion: "0.1.0")
        encoder.encode(Sample.fix, identity: identity)
        #expect(try RawJSON.member("antennaHeight", in: String(decoding: encoder.bytes, as: UTF8.self)) == "0.0")
        identity.antennaHeight = 1.8
        encoder.encode(Sample.fix, identity: identity)
        #expect(try RawJSON.member("antennaHeight", in: String(decoding: encoder.bytes, as: UTF8.self)) == "1.8")
        encoder.encode(Sample.fix, identity: identity)
        #expect(try RawJSON.member("antennaHeight", in: String(decoding: encoder.bytes, as: UTF8.self)) == "1.8")
        identity.antennaHeight = -0.12345
        encoder.encode(Sample.noFix, identity: identity)
        #expect(try RawJSON.member("antennaHeight", in: String(decoding: encoder.bytes, as: UTF8.self)) == "-0.1235")
    }

    @Test func satelliteElementTypes() throws {
        for (position, kinds) in [
            (Sample.fix, [Kind.integer, .integer, .integer, .integer, .bool, .integer]),
            (Sample.noFix, [Kind.integer, .integer, .integer, .null, .bool, .integer]),
        ] {
            let view = try RawJSON.member("satelliteView", in: Sample.v2(position))
            let elements = try RawJSON.elements(view)
            #expect(elements.count == 3)
            let keys = ["Id", "Elv", "Azm", "Snr", "Use", "Type"]
            #expect(try typeProblems(elements[0], expected: Array(zip(keys, kinds))) == [])
            let unknown: [Kind] = [.integer, .null, .null, .null, .bool, .integer]
            #expect(try typeProblems(elements[2], expected: Array(zip(keys, unknown))) == [])
        }
    }

    /// Every position field that needs a fix is hidden without one, even when the receiver still
    /// reports stale values.
    @Test func staleValuesWithoutFixAreNull() throws {
        var position = Sample.fix
        position.quality = .noFix
        let text = Sample.v2(position)
        for key in [
            "latitude", "longitude", "altitude", "speed", "bearing", "hrms", "vrms", "pdop", "hdop",
            "vdop", "diffAge", "diffStatus", "solutionType", "mslHeight", "undulation", "accuracy",
            "verticalAccuracyMeters",
        ] {
            #expect(try RawJSON.member(key, in: text) == "null", "\(key)")
        }
        #expect(try RawJSON.member("diffID", in: text) == #""-1""#)
        #expect(try RawJSON.member("utcTime", in: text) == "180000.0")
        #expect(try RawJSON.member("satellites", in: text) == "3")
    }

    /// A quality without coordinates is not a fix.
    @Test func qualityWithoutCoordinatesIsNoFix() throws {
        var position = Sample.fix
        position.longitude = nil
        let text = Sample.v2(position)
        #expect(try RawJSON.member("latitude", in: text) == "null")
        #expect(try RawJSON.member("diffStatus", in: text) == "null")
    }

    @Test func identityStringsAreEscaped() throws {
        let identity = ReceiverIdentity(
            receiverModel: "R\"12\"\\i\n", receiverSerialNumber: "Zürich",
            appVersion: "0.1.0")
        let text = Sample.v2(Sample.fix, identity: identity)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["receiverModel"] as? String == "R\"12\"\\i\n")
        #expect(object["receiverSerialNumber"] as? String == "Zürich")
        #expect(object["appVersion"] as? String == "0.1.0")
    }

    /// One text frame stays under the 10 240 bytes one old client reads at once (TMM-API.md §6.3)
    /// even with a full sky of wide values, and fits the default buffer without growing.
    @Test func fullSkyFitsOneFrame() {
        var position = Sample.fix
        position.sky.removeAll()
        for i in 0..<SkyView.capacity {
            position.sky.merge(
                Satellite(
                    id: UInt16(300 + i), constellation: .beidou, elevation: -10,
                    azimuth: 359, snr: 55, used: false))
        }
        #expect(position.sky.count == SkyView.capacity)
        var encoder = LocationV2Encoder()
        encoder.encode(position, identity: Sample.identity)
        #expect(encoder.bytes.count < 10_240)
        #expect(encoder.bytes.count <= 16_384)
    }

    @Test func spanMatchesBytes() {
        var encoder = LocationV2Encoder()
        encoder.encode(Sample.fix, identity: Sample.identity)
        let span = encoder.span
        #expect((0..<span.count).map { span[$0] } == encoder.bytes)
        #expect(encoder.withBytes { $0.count } == encoder.bytes.count)
    }

    @Test func encodeReplacesThePreviousMessage() {
        var encoder = LocationV2Encoder()
        encoder.encode(Sample.fix, identity: Sample.identity)
        encoder.encode(Sample.noFix, identity: Sample.identity)
        #expect(String(decoding: encoder.bytes, as: UTF8.self) == Self.pinnedNoFix)
    }
}

@Suite("Location field mapping (V1 and V2)", .tags(.unit))
struct LocationFieldMappingTests {
    @Test(
        arguments: [
            (nil, "\"-1\""), (0, "\"0000\""), (7, "\"0007\""), (123, "\"0123\""), (133, "\"0133\""),
            (1023, "\"1023\""), (9999, "\"9999\""), (10_000, "\"-1\""), (-5, "\"-1\""),
        ] as [(Int?, String)])
    func diffID(station: Int?, expected: String) throws {
        var position = Sample.fix
        position.diffStationID = station
        #expect(try RawJSON.member("diffID", in: Sample.v2(position)) == expected)
        #expect(try RawJSON.member("diffID", in: Sample.v1(position)) == expected)
    }

    struct TimeCase: CustomTestStringConvertible, Sendable {
        var name: String
        var time: UTCTimestamp?
        var utcTime: String
        var utcTimeStamp: String
        var gpsTimeStamp: String
        var testDescription: String { name }
    }

    static let timeCases: [TimeCase] = [
        TimeCase(
            name: "whole second", time: Sample.time(2024, 2, 22, 18, 0, 0),
            utcTime: "180000.0", utcTimeStamp: #""2024-02-22T18:00:00Z""#,
            gpsTimeStamp: #""2024-02-22T18:00:18Z""#),
        TimeCase(
            name: "tenths", time: Sample.time(2020, 3, 18, 13, 28, 19, nanoseconds: 600_000_000),
            utcTime: "132819.6", utcTimeStamp: #""2020-03-18T13:28:19.600Z""#,
            gpsTimeStamp: #""2020-03-18T13:28:37.600Z""#),
        TimeCase(
            name: "hundredths", time: Sample.time(2024, 7, 1, 12, 0, 0, nanoseconds: 50_000_000),
            utcTime: "120000.05", utcTimeStamp: #""2024-07-01T12:00:00.050Z""#,
            gpsTimeStamp: #""2024-07-01T12:00:18.050Z""#),
        TimeCase(
            name: "sub-millisecond is truncated", time: Sample.time(2024, 7, 1, 12, 0, 0, nanoseconds: 999_999),
            utcTime: "120000.0", utcTimeStamp: #""2024-07-01T12:00:00Z""#,
            gpsTimeStamp: #""2024-07-01T12:00:18Z""#),
        TimeCase(
            name: "last millisecond of the day",
            time: Sample.time(2024, 7, 1, 23, 59, 59, nanoseconds: 999_900_000),
            utcTime: "235959.999", utcTimeStamp: #""2024-07-01T23:59:59.999Z""#,
            gpsTimeStamp: #""2024-07-02T00:00:17.999Z""#),
        TimeCase(
            name: "midnight", time: Sample.time(2024, 1, 1, 0, 0, 0),
            utcTime: "0.0", utcTimeStamp: #""2024-01-01T00:00:00Z""#,
            gpsTimeStamp: #""2024-01-01T00:00:18Z""#),
        TimeCase(
            name: "small hour", time: Sample.time(2024, 1, 1, 0, 0, 7, nanoseconds: 100_000_000),
            utcTime: "7.1", utcTimeStamp: #""2024-01-01T00:00:07.100Z""#,
            gpsTimeStamp: #""2024-01-01T00:00:25.100Z""#),
        TimeCase(
            name: "GPS time crosses the year", time: Sample.time(2024, 12, 31, 23, 59, 50),
            utcTime: "235950.0", utcTimeStamp: #""2024-12-31T23:59:50Z""#,
            gpsTimeStamp: #""2025-01-01T00:00:08Z""#),
        TimeCase(
            name: "leap second",
            time: UTCTimestamp(
                date: CalendarDate(year: 2016, month: 12, day: 31),
                nanosecondsOfDay: 86_400_500_000_000),
            utcTime: "235960.5", utcTimeStamp: #""2016-12-31T23:59:60.500Z""#,
            gpsTimeStamp: #""2017-01-01T00:00:17.500Z""#),
        TimeCase(
            name: "no date", time: UTCTimestamp(date: nil, nanosecondsOfDay: 8 * 3_600_000_000_000),
            utcTime: "80000.0", utcTimeStamp: "null", gpsTimeStamp: "null"),
        TimeCase(
            name: "before GPS time", time: Sample.time(1979, 12, 31, 10, 0, 0),
            utcTime: "100000.0", utcTimeStamp: #""1979-12-31T10:00:00Z""#, gpsTimeStamp: "null"),
        TimeCase(
            name: "invalid date", time: Sample.time(2023, 2, 30, 10, 0, 0),
            utcTime: "100000.0", utcTimeStamp: "null", gpsTimeStamp: "null"),
        TimeCase(
            name: "year beyond 9999", time: Sample.time(10_000, 1, 1, 10, 0, 0),
            utcTime: "100000.0", utcTimeStamp: "null", gpsTimeStamp: "null"),
        TimeCase(
            name: "GPS time beyond 9999", time: Sample.time(9999, 12, 31, 23, 59, 59),
            utcTime: "235959.0", utcTimeStamp: #""9999-12-31T23:59:59Z""#, gpsTimeStamp: "null"),
        TimeCase(
            name: "negative time of day", time: UTCTimestamp(date: nil, nanosecondsOfDay: -1),
            utcTime: "null", utcTimeStamp: "null", gpsTimeStamp: "null"),
        TimeCase(
            name: "time of day too large",
            time: UTCTimestamp(
                date: CalendarDate(year: 2024, month: 1, day: 1),
                nanosecondsOfDay: 86_401_000_000_000),
            utcTime: "null", utcTimeStamp: "null", gpsTimeStamp: "null"),
        TimeCase(name: "no time", time: nil, utcTime: "null", utcTimeStamp: "null", gpsTimeStamp: "null"),
    ]

    @Test(arguments: timeCases)
    func timeFields(_ c: TimeCase) throws {
        var position = Sample.fix
        position.time = c.time
        let v2 = Sample.v2(position)
        #expect(try RawJSON.member("utcTime", in: v2) == c.utcTime)
        #expect(try RawJSON.member("utcTimeStamp", in: v2) == c.utcTimeStamp)
        #expect(try RawJSON.member("gpsTimeStamp", in: v2) == c.gpsTimeStamp)
        // V1: the same, except that an unknown utcTime is 0.0 (a number) rather than null.
        let v1 = Sample.v1(position)
        #expect(try RawJSON.member("utcTime", in: v1) == (c.utcTime == "null" ? "0.0" : c.utcTime))
        #expect(try RawJSON.member("utcTimeStamp", in: v1) == c.utcTimeStamp)
        #expect(try RawJSON.member("gpsTimeStamp", in: v1) == c.gpsTimeStamp)
    }

    @Test(arguments: FixQuality.allCases)
    func quality(_ quality: FixQuality) throws {
        var position = Sample.fix
        position.quality = quality
        let v2 = Sample.v2(position)
        let v1 = Sample.v1(position)
        let status = quality.diffStatus
        #expect(try RawJSON.member("diffStatus", in: v2) == status.map { "\($0)" } ?? "null")
        #expect(try RawJSON.member("diffStatus", in: v1) == "\(status ?? 0)")
        #expect(try RawJSON.member("solutionType", in: v2) == quality.solutionType.map { "\"\($0)\"" } ?? "null")
    }

    /// `totalSatInUse` is the position sentence's count, else the number of satellites marked used.
    @Test func satellitesInUseFallsBackToTheSky() throws {
        var position = Sample.fix
        position.satellitesInUse = nil
        #expect(try RawJSON.member("totalSatInUse", in: Sample.v2(position)) == "2")
        position.satellitesInUse = 17
        #expect(try RawJSON.member("totalSatInUse", in: Sample.v2(position)) == "17")
    }

    /// Altitude is ellipsoidal: the receiver's own ellipsoidal height wins over MSL + undulation.
    @Test func altitudeIsEllipsoidal() throws {
        var position = Sample.fix
        position.ellipsoidalHeight = 35.40004
        #expect(try RawJSON.member("altitude", in: Sample.v2(position)) == "35.4")
        #expect(try RawJSON.member("altitude", in: Sample.v1(position)) == "35.4")
        #expect(try RawJSON.member("mslHeight", in: Sample.v2(position)) == "20.115")
    }
}
