// Access to the NMEA fixtures in Tests/Fixtures/nmea (gpsd regression captures; see
// Tests/Fixtures/README.md). Foundation is used for file-system access only.
import Foundation

/// An error reading a fixture: names the file and how to fix it.
public struct FixtureError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String

    public var description: String {
        "fixture \(path): \(reason) (fixtures live in Tests/Fixtures/nmea; see Tests/Fixtures/README.md)"
    }
}

/// The NMEA captures (`*.log`) and gpsd's expected output (`*.log.chk`) bundled with the tests.
///
/// Names are relative to `Tests/Fixtures/nmea`, so `"nmea-rtk.log"` and
/// `"gpsd-head/ericsson-gru04-02-70sec.log"` both work.
public enum Fixtures {
    /// Absolute path of `Tests/Fixtures/nmea`.
    public static var directory: String { cachedDirectory }

    /// Absolute path of the checkout (the folder holding Package.swift), for tests that read
    /// committed files other than fixtures (udev/, systemd/, docs/).
    public static var repositoryRoot: String { cachedRoot }

    private static let cachedDirectory = cachedRoot + "/Tests/Fixtures/nmea"

    private static let cachedRoot: String = {
        // Walk up from this source file until a folder containing Package.swift is found.
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url.path
            }
            url = url.deletingLastPathComponent()
        }
        fatalError("no Package.swift above \(#filePath): cannot locate the checkout's Tests/Fixtures")
    }()

    /// Absolute path of the fixture `name`.
    public static func path(_ name: String) -> String {
        directory + "/" + name
    }

    /// The whole file, byte for byte.
    public static func bytes(_ name: String) throws -> [UInt8] {
        let path = path(name)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FixtureError(path: path, reason: "cannot be read (missing or not a file)")
        }
        return [UInt8](data)
    }

    /// The file split on LF, with one trailing CR removed from each line. Empty lines are kept;
    /// a final LF does not produce an extra empty line.
    public static func lines(_ name: String) throws -> [[UInt8]] {
        splitLines(try bytes(name))
    }

    /// Splits bytes as `lines(_:)` does.
    public static func splitLines(_ data: [UInt8]) -> [[UInt8]] {
        let lf = UInt8(ascii: "\n")
        let cr = UInt8(ascii: "\r")
        var result: [[UInt8]] = []
        var start = data.startIndex
        while start < data.endIndex {
            let end = data[start...].firstIndex(of: lf) ?? data.endIndex
            var line = data[start..<end]
            if line.last == cr {
                line = line.dropLast()
            }
            result.append(Array(line))
            start = end == data.endIndex ? end : end + 1
        }
        return result
    }

    /// Names of the top-level captures (`*.log`, gpsd 3.22 set), sorted.
    public static var captureNames: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".log") }.sorted()
    }

    /// The JSON report lines (those starting with `{`) of a `.chk` file. `name` may be the capture
    /// (`"nmea-rtk.log"`) or the check file itself (`"nmea-rtk.log.chk"`).
    public static func chkJSONLines(_ name: String) throws -> [String] {
        let chk = name.hasSuffix(".chk") ? name : name + ".chk"
        return try lines(chk)
            .filter { $0.first == UInt8(ascii: "{") }
            .map { String(decoding: $0, as: UTF8.self) }
    }
}
