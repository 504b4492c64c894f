// End-to-end tests of the `tmm-bridge` executable: the built binary is run as a user would run
// it, on real captures and on bad input, and its stdout, stderr and exit status are checked.
import Foundation
import TestSupport
import Testing

/// What one run of the binary produced.
struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// Runs the binary with `arguments`, feeding `stdin` if given.
func runBridge(_ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String] = [:]) throws -> Run {
    let process = Process()
    process.executableURL = try bridgeBinary()
    process.arguments = arguments
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    let out = Pipe(), err = Pipe(), input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = stdin == nil ? FileHandle.nullDevice : input
    try process.run()
    if let stdin {
        input.fileHandleForWriting.write(Data(stdin))
        try input.fileHandleForWriting.close()
    }
    // Read both pipes to the end before waiting, so a full pipe cannot deadlock the child.
    let output = out.fileHandleForReading.readDataToEndOfFile()
    let errors = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Run(
        status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self),
        stderr: String(decoding: errors, as: UTF8.self))
}

func jsonObject(_ line: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
}

func temporaryFile(_ bytes: [UInt8]) throws -> String {
    let path = NSTemporaryDirectory() + "tmm-bridge-test-\(UUID().uuidString).log"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
}

@Suite("tmm-bridge decode and demo", .tags(.integration))
struct DecodeCommandTests {
    @Test func decodesTheTrimbleCaptureToOneLocationV2LinePerEpoch() throws {
        let run = try runBridge(["decode", Fixtures.path("nmea-rtk.log")])
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        // 122 GGA+RMC pairs, one epoch each.
        #expect(run.lines.count == 122)
        let first = try jsonObject(run.lines[0])
        #expect(first["utcTimeStamp"] as? String == "2020-03-18T13:28:19.600Z")
        #expect(first["diffStatus"] as? Int == 2)
        #expect(first["diffID"] as? String == "0133")
        #expect(abs((first["latitude"] as? Double ?? 0) - 41.5749659098) < 1e-9)
        #expect(first["mockProvider"] as? String == "Trimble Mobile Manager")
        let rtk = try run.lines.map(jsonObject).filter { $0["diffStatus"] as? Int == 4 }
        #expect(rtk.count == 18, "the capture's 18 RTK-fixed epochs (GGA quality 4)")
    }

    @Test func demoPrintsTheSameAsDecodingTheBundledCapture() throws {
        let demo = try runBridge(["demo"])
        let decode = try runBridge(["decode", Fixtures.path("nmea-rtk.log")])
        #expect(demo.status == 0)
        #expect(demo.stdout == decode.stdout)
    }

    @Test func locationV1Format() throws {
        let run = try runBridge(["decode", "--format", "locationV1", Fixtures.path("ublox-zed-f9p-nmea.log")])
        #expect(run.status == 0)
        #expect(run.lines.count == 29)
        let first = try jsonObject(run.lines[0])
        #expect(first["accuracy"] is Double)
        #expect(first["solutionType"] == nil, "V1 has no solutionType")
        #expect((first["satelliteView"] as? [Any])?.isEmpty == false)
    }

    @Test func readsStandardInput() throws {
        let run = try runBridge(["decode", "-"], stdin: try Fixtures.bytes("nmea-rtk.log"))
        #expect(run.status == 0)
        #expect(run.lines.count == 122)
    }

    @Test func everyCaptureDecodesAndEveryLineIsJSON() throws {
        for capture in Fixtures.captureNames {
            let run = try runBridge(["decode", Fixtures.path(capture)])
            #expect(run.status == 0, "\(capture): \(run.stderr)")
            #expect(!run.lines.isEmpty, "\(capture)")
            for line in run.lines { _ = try jsonObject(line) }
        }
    }

    @Test func droppedLinesAreSummarisedOnStderrButTheRunSucceeds() throws {
        // firefly-II.log: all 23 GGAs have bad checksums; RMC and ZDA still give epochs.
        let run = try runBridge(["decode", Fixtures.path("firefly-II.log")])
        #expect(run.status == 0)
        #expect(run.stderr.contains("23 invalid"), "\(run.stderr)")
        #expect(run.stderr.contains("bad checksum"), "\(run.stderr)")
        #expect(!run.lines.isEmpty)
    }

    @Test func inputWithoutPositionsFailsWithAClearMessage() throws {
        let path = try temporaryFile(Array("hello\nnot nmea at all\n$GPGGA,broken*00\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try runBridge(["decode", path])
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("no NMEA positions found"), "\(run.stderr)")
    }

    @Test func missingFileFailsWithTheReason() throws {
        let run = try runBridge(["decode", "/nonexistent/capture.log"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("cannot open /nonexistent/capture.log: No such file or directory"))
    }

    @Test(arguments: [
        [], ["frobnicate"], ["decode"], ["decode", "a", "b"], ["decode", "--format"],
        ["decode", "x", "--format", "V3"],
        ["decode", "x", "--verbose"], ["demo", "extra"],
    ])
    func usageErrorsExit64(_ arguments: [String]) throws {
        let run = try runBridge(arguments)
        #expect(run.status == 64)
        #expect(run.stderr.contains("usage: tmm-bridge"))
        #expect(run.stdout.isEmpty)
    }

    /// `tmm-bridge COMMAND --help` prints that command's usage and exits 0 (it used to be an
    /// unknown option, exit 64), wherever `--help` stands among its arguments.
    @Test(arguments: [
        (["run", "--help"], "usage: tmm-bridge run ", "--tls-certificate FILE"),
        (["run", "--device", "/dev/null", "-h"], "usage: tmm-bridge run ", "--allowed-origins ORIGINS"),
        (["open", "--help"], "usage: tmm-bridge open URL", "reply URL"),
        (["decode", "--help"], "usage: tmm-bridge decode FILE|-", "one JSON"),
        (["demo", "--help"], "usage: tmm-bridge demo", "bundled"),
        (["watch", "--help"], "usage: tmm-bridge watch", "Stops on SIGINT"),
        (["tls", "--help"], "usage: tmm-bridge tls ca", "certificate authority"),
        (["bluetooth", "--help"], "usage: tmm-bridge bluetooth bind", "rfcomm"),
    ])
    func everyCommandHasItsOwnHelp(_ arguments: [String], _ start: String, _ inside: String) throws {
        let run = try runBridge(arguments)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix(start), "\(run.stdout.prefix(200))")
        #expect(run.stdout.contains(inside))
        #expect(run.stderr.isEmpty)
    }

    @Test func helpAndVersion() throws {
        let help = try runBridge(["--help"])
        #expect(
            help.status == 0 && help.stdout.contains("usage: tmm-bridge run")
                && help.stdout.contains("tmm-bridge decode FILE|-") && help.stdout.contains("--location-v2-port PORT"))
        let version = try runBridge(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("tmm-bridge "))
    }
}
