// The executables the tests run for real, found next to the test bundle that SwiftPM built with
// them (`.build/<triple>/debug/` or its parent for some layouts).
import Foundation

/// An executable of the package that was not built.
public struct BinaryMissing: Error, CustomStringConvertible {
    public var name: String
    public var directory: String
    public var description: String { "no \(name) binary in \(directory); build it with swift build" }
}

/// The package's executable `name` built next to this test bundle.
public func builtBinary(_ name: String) throws -> URL {
    let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for candidate in [directory, directory.deletingLastPathComponent()] {
        let url = candidate.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    throw BinaryMissing(name: name, directory: directory.path)
}

/// The `tmm-bridge` binary built next to this test bundle.
public func bridgeBinary() throws -> URL { try builtBinary("tmm-bridge") }
