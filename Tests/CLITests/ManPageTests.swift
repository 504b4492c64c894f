// tmm-bridge(8): generated from the option and command tables, committed as packaging/tmm-bridge.8.
// The committed page must be what the binary generates now (an option added without `make man`
// fails here), and must read cleanly through groff's man macros.
import Foundation
import TestSupport
import Testing

@Suite("Man page tmm-bridge(8)", .tags(.integration))
struct ManPageTests {
    static let path = Fixtures.repositoryRoot + "/packaging/tmm-bridge.8"

    @Test func theCommittedPageIsWhatTheTablesGenerate() throws {
        let run = try runBridge(["man"])
        #expect(run.status == 0)
        let committed = try String(contentsOfFile: Self.path, encoding: .utf8)
        #expect(
            run.stdout == committed, "packaging/tmm-bridge.8 drifted from the option or command tables: run make man")
        // Every option of `run --help` is in it.
        let help = try runBridge(["run", "--help"])
        for line in help.stdout.split(separator: "\n") where line.hasPrefix("           --") {
            let name = line.dropFirst(13).prefix { $0 != " " }
            #expect(committed.contains("\\-\\-" + name.replacingOccurrences(of: "-", with: "\\-")), "\(name)")
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/groff"), "needs groff (groff-base)"))
    func groffReadsItWithoutWarnings() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/groff")
        process.arguments = ["-man", "-ww", "-z", Self.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && text.isEmpty, "\(text)")
    }
}
