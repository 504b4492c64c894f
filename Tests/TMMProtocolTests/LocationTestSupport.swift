// Shared inputs and a raw JSON scanner for the location encoder tests.
import Foundation
import GNSS
import TMMProtocol

/// Inputs built by hand from TMM-API.md §8.7 (and §8.6 for the second satellite).
enum Sample {
    static let identity = ReceiverIdentity(
        receiverModel: "R12i", receiverSerialNumber: "6123456789", appVersion: "3.4.1")

    static func time(
        _ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int,
        nanoseconds: Int64 = 0
    ) -> UTCTimestamp {
        let seconds = Int64(hour * 3600 + minute * 60 + second)
        return UTCTimestamp(
            date: CalendarDate(year: year, month: month, day: day),
            nanosecondsOfDay: seconds * 1_000_000_000 + nanoseconds)
    }

    /// The §8.7 fix: RTK fixed at -43.52961234, 172.63623456, 2024-02-22 18:00:00 UTC. The sky is
    /// abbreviated to three satellites (the doc's 30 would make the pinned string unreadable), so
    /// `satellites` is 3 while `totalSatInUse` is the GGA count, 24.
    static var fix: Position {
        var p = Position()
        p.time = time(2024, 2, 22, 18, 0, 0)
        p.latitude = -43.52961234
        p.longitude = 172.63623456
        p.mslHeight = 20.115
        p.undulation = 15.297  // altitude = 35.412 (ellipsoidal)
        p.speed = 0.03
        p.bearing = 112.5
        p.quality = .rtkFixed
        p.diffAge = 1.0
        p.diffStationID = 123
        p.pdop = 1.3
        p.hdop = 0.7
        p.vdop = 1.1
        p.sigmaLatitude = 0.0072  // hrms = sqrt(0.0072² + 0.0096²) = 0.012
        p.sigmaLongitude = 0.0096
        p.sigmaAltitude = 0.021
        p.satellitesInUse = 24
        p.sky.merge(Satellite(id: 5, constellation: .gps, elevation: 62, azimuth: 141, snr: 47, used: true))
        p.sky.merge(Satellite(id: 12, constellation: .galileo, elevation: 23, azimuth: 301, snr: 38, used: true))
        p.sky.merge(Satellite(id: 70, constellation: .glonass))
        return p
    }

    /// The §8.7 no-fix case: receiver connected, three satellites in view, none used, no time.
    /// Stale values from an earlier fix are left in to prove they are not sent.
    static var noFix: Position {
        var p = Position()
        p.quality = .noFix
        p.latitude = -43.5  // stale: hidden because there is no fix
        p.hdop = 99.9
        p.diffStationID = 123
        p.mslHeight = 20.0
        p.satellitesInUse = 0
        p.sky.merge(Satellite(id: 5, constellation: .gps, elevation: 62, azimuth: 141))
        p.sky.merge(Satellite(id: 12, constellation: .galileo, elevation: 23, azimuth: 301, snr: 21))
        p.sky.merge(Satellite(id: 70, constellation: .glonass))
        return p
    }

    /// No fix but a time (13:28:19.600 on 2020-03-18, GPS-UTC = 18 s).
    static var noFixWithTime: Position {
        var p = noFix
        p.time = time(2020, 3, 18, 13, 28, 19, nanoseconds: 600_000_000)
        return p
    }

    /// A fix with only a latitude and longitude: every other value unknown.
    static var sparseFix: Position {
        var p = Position()
        p.quality = .autonomous
        p.latitude = 1.5
        p.longitude = -2.25
        return p
    }

    static func v2(_ position: Position, identity: ReceiverIdentity = identity) -> String {
        var encoder = LocationV2Encoder()
        encoder.encode(position, identity: identity)
        return String(decoding: encoder.bytes, as: UTF8.self)
    }

    static func v1(_ position: Position, identity: ReceiverIdentity = identity) -> String {
        var encoder = LocationV1Encoder()
        encoder.encode(position, identity: identity)
        return String(decoding: encoder.bytes, as: UTF8.self)
    }
}

/// The JSON type of a value as it appears on the wire.
enum Kind: String, CustomStringConvertible {
    /// A number with a decimal point (how every double is written).
    case double
    /// A number without a decimal point or exponent.
    case integer
    case string
    case bool
    case null
    case array
    case object

    var description: String { rawValue }

    init(raw: String) {
        switch raw.first {
        case "n": self = .null
        case "t", "f": self = .bool
        case "\"": self = .string
        case "[": self = .array
        case "{": self = .object
        default: self = raw.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? .double : .integer
        }
    }
}

/// A minimal scanner that splits JSON text into raw member and element texts, so tests can see
/// key order and number spelling (`1.0` vs `1`), which `JSONSerialization` hides. It assumes the
/// text is valid JSON (every test also parses it with `JSONSerialization`).
enum RawJSON {
    struct ScanError: Error, CustomStringConvertible {
        var description: String
    }

    /// The members of a JSON object, in order, as (key, raw value text).
    static func members(_ text: String) throws -> [(key: String, raw: String)] {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else {
            throw ScanError(description: "not an object: \(text)")
        }
        var result: [(String, String)] = []
        var i = 1
        while i < bytes.count - 1 {
            let keyEnd = endOfValue(bytes, from: i)
            let key =
                try JSONSerialization.jsonObject(
                    with: Data(bytes[i..<keyEnd]), options: .fragmentsAllowed) as? String
            guard let key, bytes[keyEnd] == UInt8(ascii: ":") else {
                throw ScanError(description: "bad key at \(i) in \(text)")
            }
            let valueEnd = endOfValue(bytes, from: keyEnd + 1)
            result.append((key, String(decoding: bytes[(keyEnd + 1)..<valueEnd], as: UTF8.self)))
            i = valueEnd + 1  // skip the comma (or land on the closing brace)
        }
        return result
    }

    /// The elements of a JSON array, in order, as raw texts.
    static func elements(_ text: String) throws -> [String] {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "["), bytes.last == UInt8(ascii: "]") else {
            throw ScanError(description: "not an array: \(text)")
        }
        var result: [String] = []
        var i = 1
        while i < bytes.count - 1 {
            let end = endOfValue(bytes, from: i)
            result.append(String(decoding: bytes[i..<end], as: UTF8.self))
            i = end + 1
        }
        return result
    }

    /// The raw value of member `key` of an object.
    static func member(_ key: String, in text: String) throws -> String {
        guard let raw = try members(text).first(where: { $0.key == key })?.raw else {
            throw ScanError(description: "no member \(key) in \(text)")
        }
        return raw
    }

    /// Index just past the value starting at `start` (a string, a nested container or a scalar).
    private static func endOfValue(_ bytes: [UInt8], from start: Int) -> Int {
        var i = start
        var depth = 0
        var inString = false
        while i < bytes.count {
            let byte = bytes[i]
            if inString {
                if byte == UInt8(ascii: "\\") {
                    i += 1
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return i + 1 }
                }
            } else {
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { return i }
                    depth -= 1
                    if depth == 0 { return i + 1 }
                case UInt8(ascii: ","), UInt8(ascii: ":"):
                    if depth == 0 { return i }
                default: break
                }
            }
            i += 1
        }
        return i
    }
}

/// Parses `text` with Foundation and checks every member against `table` (names, order and
/// kinds), cross-checking each raw kind against what `JSONSerialization` produced. Returns the
/// problems found (empty when all is well).
func typeProblems(_ text: String, expected table: [(key: String, kind: Kind)]) throws -> [String] {
    var problems: [String] = []
    let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8))
    guard let object = parsed as? [String: Any] else { return ["not an object"] }
    let members = try RawJSON.members(text)
    if members.map(\.key) != table.map(\.key) {
        problems.append("keys \(members.map(\.key)) != expected \(table.map(\.key))")
    }
    if object.count != members.count { problems.append("duplicate keys") }
    for (key, raw) in members {
        let kind = Kind(raw: raw)
        if let expected = table.first(where: { $0.key == key })?.kind, expected != kind {
            problems.append("\(key): \(kind) (\(raw)), expected \(expected)")
        }
        problems += foundationProblems(key: key, kind: kind, value: object[key])
    }
    return problems
}

/// Checks that Foundation's view of a value agrees with the raw kind.
func foundationProblems(key: String, kind: Kind, value: Any?) -> [String] {
    guard let value else { return ["\(key): missing in JSONSerialization output"] }
    let ok =
        switch kind {
        case .null: value is NSNull
        case .string: value is String
        case .array: value is [Any]
        case .object: value is [String: Any]
        case .double, .integer, .bool: value is NSNumber
        }
    return ok ? [] : ["\(key): JSONSerialization gave \(type(of: value)) for a \(kind)"]
}
