import Foundation
import GNSS
import TestSupport
import Testing
import TMMProtocol

@Suite("LocationV1 encoder", .tags(.unit))
struct LocationV1EncoderTests {
    /// §8.6 field order with the §8.7 fix values (sky abbreviated, see `Sample.fix`).
    static let pinnedFix = """
        {"latitude":-43.52961234,"longitude":172.63623456,"altitude":35.412,"speed":0.03,"bearing":112.5,\
        "accuracy":0.012,"verticalAccuracyMeters":0.021,"satellites":3,"totalSatInView":3,\
        "pdop":1.3,"hdop":0.7,"vdop":1.1,"diffAge":1.0,"diffStatus":4,"diffID":"0123","vrms":0.021,"hrms":0.012,\
        "receiverModel":"R12i","mockProvider":"Trimble Mobile Manager","appVersion":"3.4.1","battery":null,\
        "geoidModel":null,"mslHeight":20.115,"undulation":15.297,"utcTime":180000.0,\
        "utcTimeStamp":"2024-02-22T18:00:00Z","gpsTimeStamp":"2024-02-22T18:00:18Z","subscriptionType":100,\
        "satelliteView":[{"Id":5,"Elv":62,"Azm":141,"Snr":47,"Use":true,"Type":0},\
        {"Id":12,"Elv":23,"Azm":301,"Snr":38,"Use":true,"Type":4},\
        {"Id":70,"Elv":0,"Azm":0,"Snr":0,"Use":false,"Type":2}]}
        """

    /// No fix: numbers are 0 (diffStatus 0 = no fix), null only where V1 documents it or for
    /// unknown strings.
    static let pinnedNoFix = """
        {"latitude":0.0,"longitude":0.0,"altitude":0.0,"speed":0.0,"bearing":0.0,"accuracy":0.0,\
        "verticalAccuracyMeters":0.0,"satellites":3,"totalSatInView":3,"pdop":0.0,"hdop":0.0,"vdop":0.0,\
        "diffAge":0.0,"diffStatus":0,"diffID":"-1","vrms":0.0,"hrms":0.0,"receiverModel":"R12i",\
        "mockProvider":"Trimble Mobile Manager","appVersion":"3.4.1","battery":null,"geoidModel":null,\
        "mslHeight":null,"undulation":null,"utcTime":0.0,"utcTimeStamp":null,"gpsTimeStamp":null,\
        "subscriptionType":100,"satelliteView":[{"Id":5,"Elv":62,"Azm":141,"Snr":0,"Use":false,"Type":0},\
        {"Id":12,"Elv":23,"Azm":301,"Snr":21,"Use":false,"Type":4},\
        {"Id":70,"Elv":0,"Azm":0,"Snr":0,"Use":false,"Type":2}]}
        """

    /// Every V1 field in wire order with its JSON kind with a fix (all known) and without one.
    static let types: [(key: String, fix: Kind, noFix: Kind)] = [
        ("latitude", .double, .double), ("longitude", .double, .double), ("altitude", .double, .double),
        ("speed", .double, .double), ("bearing", .double, .double), ("accuracy", .double, .double),
        ("verticalAccuracyMeters", .double, .double), ("satellites", .integer, .integer),
        ("totalSatInView", .integer, .integer), ("pdop", .double, .double), ("hdop", .double, .double),
        ("vdop", .double, .double), ("diffAge", .double, .double), ("diffStatus", .integer, .integer),
        ("diffID", .string, .string), ("vrms", .double, .double), ("hrms", .double, .double),
        ("receiverModel", .string, .string), ("mockProvider", .string, .string),
        ("appVersion", .string, .string), ("battery", .null, .null), ("geoidModel", .null, .null),
        ("mslHeight", .double, .null), ("undulation", .double, .null), ("utcTime", .double, .double),
        ("utcTimeStamp", .string, .null), ("gpsTimeStamp", .string, .null),
        ("subscriptionType", .integer, .integer), ("satelliteView", .array, .array),
    ]

    /// The only V1 fields that may ever be null: documented `| null` numbers and strings.
    static let nullable: Set<String> = [
        "battery", "mslHeight", "undulation", "receiverModel", "geoidModel", "utcTimeStamp", "gpsTimeStamp",
    ]

    @Test func fixMatchesPinnedOutput() {
        #expect(Sample.v1(Sample.fix) == Self.pinnedFix)
    }

    @Test func noFixMatchesPinnedOutput() {
        #expect(Sample.v1(Sample.noFix) == Self.pinnedNoFix)
    }

    @Test func fixFieldTypes() throws {
        let problems = try typeProblems(Sample.v1(Sample.fix), expected: Self.types.map { ($0.key, $0.fix) })
        #expect(problems == [])
    }

    @Test func noFixFieldTypes() throws {
        let problems = try typeProblems(Sample.v1(Sample.noFix), expected: Self.types.map { ($0.key, $0.noFix) })
        #expect(problems == [])
    }

    @Test func noFixWithTimeFieldTypes() throws {
        let table = Self.types.map { row -> (String, Kind) in
            row.key == "utcTimeStamp" || row.key == "gpsTimeStamp" ? (row.key, .string) : (row.key, row.noFix)
        }
        let text = Sample.v1(Sample.noFixWithTime)
        #expect(try typeProblems(text, expected: table) == [])
        #expect(try RawJSON.member("utcTime", in: text) == "132819.6")
    }

    /// Whatever is unknown, V1 numbers are never null and only the documented fields may be.
    @Test(arguments: ["fix", "noFix", "noFixWithTime", "sparseFix", "empty"])
    func onlyDocumentedFieldsAreNull(_ name: String) throws {
        let position =
            switch name {
            case "fix": Sample.fix
            case "noFix": Sample.noFix
            case "noFixWithTime": Sample.noFixWithTime
            case "sparseFix": Sample.sparseFix
            default: Position()
            }
        let text = Sample.v1(position, identity: ReceiverIdentity(appVersion: "0.1.0"))
        let members = try RawJSON.members(text)
        #expect(members.map(\.key) == Self.types.map(\.key))
        for (key, raw) in members where raw == "null" {
            #expect(Self.nullable.contains(key), "\(key) is null in \(name)")
        }
        for element in try RawJSON.elements(try RawJSON.member("satelliteView", in: text)) {
            #expect(!element.contains("null"))
        }
        _ = try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    @Test func sparseFixWritesZeros() throws {
        let text = Sample.v1(Sample.sparseFix)
        #expect(try RawJSON.member("latitude", in: text) == "1.5")
        #expect(try RawJSON.member("longitude", in: text) == "-2.25")
        for key in [
            "altitude", "speed", "bearing", "accuracy", "verticalAccuracyMeters", "pdop", "hdop", "vdop",
            "diffAge", "vrms", "hrms", "utcTime",
        ] {
            #expect(try RawJSON.member(key, in: text) == "0.0", "\(key)")
        }
        #expect(try RawJSON.member("diffStatus", in: text) == "1")
        #expect(try RawJSON.member("mslHeight", in: text) == "null")
    }

    /// A non-finite or unprintable number is 0 in V1 (null in V2), except in `| null` fields.
    @Test func nonFiniteNumbers() throws {
        var position = Sample.fix
        position.speed = .nan
        position.bearing = .infinity
        position.sigmaAltitude = 1e300  // vrms
        position.mslHeight = -.infinity
        let v1 = Sample.v1(position)
        #expect(try RawJSON.member("speed", in: v1) == "0.0")
        #expect(try RawJSON.member("bearing", in: v1) == "0.0")
        #expect(try RawJSON.member("vrms", in: v1) == "0.0")
        #expect(try RawJSON.member("verticalAccuracyMeters", in: v1) == "0.0")
        #expect(try RawJSON.member("mslHeight", in: v1) == "null")
        #expect(try RawJSON.member("altitude", in: v1) == "0.0")
        let v2 = Sample.v2(position)
        for key in ["speed", "bearing", "vrms", "verticalAccuracyMeters", "mslHeight", "altitude"] {
            #expect(try RawJSON.member(key, in: v2) == "null", "\(key)")
        }
    }

    @Test func satelliteElementTypes() throws {
        let view = try RawJSON.member("satelliteView", in: Sample.v1(Sample.noFix))
        let keys = ["Id", "Elv", "Azm", "Snr", "Use", "Type"]
        let kinds: [Kind] = [.integer, .integer, .integer, .integer, .bool, .integer]
        for element in try RawJSON.elements(view) {
            #expect(try typeProblems(element, expected: Array(zip(keys, kinds))) == [])
        }
    }

    @Test func spanMatchesBytes() {
        var encoder = LocationV1Encoder()
        encoder.encode(Sample.fix, identity: Sample.identity)
        let span = encoder.span
        #expect((0..<span.count).map { span[$0] } == encoder.bytes)
        #expect(encoder.withBytes { $0.count } == encoder.bytes.count)
    }
}
