// The unit/integration split stays true: every test of this bundle is tagged exactly one of
// `.unit` and `.integration` (Tests/Support/TestSupport/Tags.swift), checked by
// tmmtools/scripts/test_tags.py, the same script that picks the unit suites for `make
// test-fast`. The check is also run on made-up listings, to show it fails when it should.
import Foundation
import Glibc
import TestSupport
import Testing

private let hasPython = FileManager.default.isExecutableFile(atPath: PythonTools.python)

/// Runs the script with `arguments`; returns its status and what it printed.
private func testTags(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    let script = PythonTools.command("scripts.test_tags", arguments)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: script.executable)
    process.arguments = script.arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    let errors = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
}

/// A stand-in for the test bundle: writes `records` (suite or function, id, tags) as its
/// `--list-tests` event stream.
private func fakeBundle(_ records: [(kind: String, id: String, tags: [String])]) throws -> String {
    let directory = NSTemporaryDirectory() + "tmm-test-tags-\(getpid())-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    var lines = ""
    for record in records {
        var payload: [String: Any] = [
            "id": record.id, "kind": record.kind, "name": record.id,
            "sourceLocation": ["fileID": "Fake/Fake.swift", "line": 1, "column": 1],
        ]
        if !record.tags.isEmpty { payload["_tags"] = record.tags.map { "." + $0 } }
        let data = try JSONSerialization.data(withJSONObject: ["kind": "test", "version": 0, "payload": payload])
        lines += String(decoding: data, as: UTF8.self) + "\n"
    }
    try lines.write(toFile: directory + "/listing.jsonl", atomically: true, encoding: .utf8)
    let bundle = directory + "/bundle"
    let shell = """
        #!/bin/sh
        while [ $# -gt 0 ]; do
            if [ "$1" = --experimental-event-stream-output ]; then cp '\(directory)/listing.jsonl' "$2"; fi
            shift
        done
        """
    try shell.write(toFile: bundle, atomically: true, encoding: .utf8)
    #expect(chmod(bundle, 0o755) == 0)
    return bundle
}

private func removeFakeBundle(_ bundle: String) {
    try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: bundle).deletingLastPathComponent().path)
}

@Suite(
    "Every test is tagged unit or integration", .tags(.integration),
    .enabled(if: hasPython, "needs /usr/bin/python3 for tmmtools/scripts/test_tags.py"))
struct SuiteTagTests {
    @Test func everyTestOfThisBundleHasExactlyOneKind() throws {
        let bundle = CommandLine.arguments[0]
        let run = try testTags(["--check", bundle])
        #expect(run.status == 0, "\(run.stderr)")
        // And the unit filter selects this bundle's unit suites, not this one.
        let filter = try testTags(["--filter", "unit", bundle])
        #expect(filter.status == 0, "\(filter.stderr)")
        #expect(filter.stdout.contains(#"ByteCodingTests\.ASCIITests"#))
        #expect(!filter.stdout.contains("SuiteTagTests"))
    }

    @Test func aSuiteWithoutATagOrWithBothFailsTheCheck() throws {
        let bundle = try fakeBundle([
            ("suite", "M.Tagged", ["unit"]), ("function", "M.Tagged/a()/F.swift:2:6", []),
            ("suite", "M.Untagged", []), ("function", "M.Untagged/b()/F.swift:5:6", []),
            ("suite", "M.Both", ["unit", "integration"]), ("function", "M.Both/c()/F.swift:8:6", []),
            // Inherited: an integration suite inside a unit suite makes its tests both.
            ("suite", "M.Outer", ["unit"]), ("suite", "M.Outer.Inner", ["integration"]),
            ("function", "M.Outer.Inner/d()/F.swift:11:6", []),
        ])
        defer { removeFakeBundle(bundle) }
        let run = try testTags(["--check", bundle])
        #expect(run.status == 1)
        #expect(run.stderr.contains("M.Untagged/b()/F.swift:5:6 has neither .unit nor .integration"), "\(run.stderr)")
        #expect(run.stderr.contains("M.Both/c()/F.swift:8:6 has both .unit and .integration"), "\(run.stderr)")
        #expect(run.stderr.contains("M.Outer.Inner/d()/F.swift:11:6 has both"), "\(run.stderr)")
        #expect(!run.stderr.contains("M.Tagged/"), "\(run.stderr)")
        // No filter from a broken split: `make test-fast` fails instead of skipping a suite.
        #expect(try testTags(["--filter", "unit", bundle]).status == 1)
    }

    @Test func theFilterNamesTheOutermostUnitSuitesAndLooseUnitTests() throws {
        let bundle = try fakeBundle([
            ("suite", "M.Pure", ["unit"]), ("function", "M.Pure/a()/F.swift:2:6", []),
            ("suite", "M.Pure.Nested", []), ("function", "M.Pure.Nested/b()/F.swift:4:6", []),
            ("suite", "M.Real", ["integration"]), ("function", "M.Real/c()/F.swift:8:6", []),
            ("suite", "M.Mixed", []), ("function", "M.Mixed/d()/F.swift:11:6", ["unit"]),
            ("function", "M.Mixed/e()/F.swift:12:6", ["integration"]),
        ])
        defer { removeFakeBundle(bundle) }
        let run = try testTags(["--filter", "unit", bundle])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == #"^(M\.Mixed/d\(\)|M\.Pure)$"# + "\n")
    }

    @Test func aListingWithoutAnyTagIsRefused() throws {
        // What a toolchain that renamed the tag field would produce: never an empty fast run.
        let bundle = try fakeBundle([("suite", "M.S", []), ("function", "M.S/a()/F.swift:2:6", [])])
        defer { removeFakeBundle(bundle) }
        let run = try testTags(["--filter", "unit", bundle])
        #expect(run.status == 1)
        #expect(run.stderr.contains("carries no tags at all"), "\(run.stderr)")
    }
}
