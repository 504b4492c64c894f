// Access to gpsd 3.22's whole regression suite, fetched (not committed) by
// scripts/fetch-gpsd-suite.sh from Debian 12's gpsd source package: the NMEA 0183 text captures
// of test/daemon with their .log.chk golden outputs. See Tests/Fixtures/gpsd-suite.md.
import Foundation
import TestSupport

/// The fetched gpsd suite: `<package>/.build/gpsd-suite` unless `GPSD_SUITE_DIR` names another
/// directory (the fetch script's argument).
enum GPSDSuite {
    /// The fetch script's output directory.
    static var directory: String { cachedDirectory }

    /// Where the selected captures are: `directory/nmea`.
    static var captureDirectory: String { directory + "/nmea" }

    /// What a test should say when the suite is not there.
    static var missingMessage: String {
        "gpsd suite not fetched (no \(directory)/complete): run scripts/fetch-gpsd-suite.sh (make test does)"
    }

    /// True when the fetch script finished (its stamp file exists).
    static var isPresent: Bool {
        FileManager.default.fileExists(atPath: directory + "/complete")
    }

    /// The selected NMEA captures (`*.log`), sorted; empty when the suite is not fetched.
    static var captureNames: [String] {
        guard isPresent else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: captureDirectory)) ?? []
        return names.filter { $0.hasSuffix(".log") }.sorted()
    }

    /// The capture or check file `name` (relative to `captureDirectory`), byte for byte.
    static func bytes(_ name: String) throws -> [UInt8] {
        let path = captureDirectory + "/" + name
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GPSDSuiteError(description: "\(path) cannot be read; \(missingMessage)")
        }
        return [UInt8](data)
    }

    /// The file split into lines as `Fixtures.lines` splits them.
    static func lines(_ name: String) throws -> [[UInt8]] {
        Fixtures.splitLines(try bytes(name))
    }

    private static let cachedDirectory: String = {
        if let dir = ProcessInfo.processInfo.environment["GPSD_SUITE_DIR"], !dir.isEmpty { return dir }
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url.appendingPathComponent(".build/gpsd-suite").path
            }
            url = url.deletingLastPathComponent()
        }
        fatalError("no Package.swift above \(#filePath): cannot locate .build/gpsd-suite")
    }()
}

/// A suite file that cannot be read.
struct GPSDSuiteError: Error, CustomStringConvertible {
    var description: String
}
