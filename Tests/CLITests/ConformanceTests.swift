// The WebSocket conformance suite (tmmtools/conformance/autobahn.py: Autobahn|Testsuite's cases
// 1-7 and 9 at reduced sizes, re-created in Python 3) against tmm-wsecho, the daemon's own server with
// data messages echoed (Tests/Support/tmm-wsecho). `make conformance` runs the same suite and keeps
// its report; here it gates `make test`.
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

@Suite("WebSocket conformance: Autobahn's cases against tmm-wsecho", .tags(.integration))
struct ConformanceTests {
    /// tmmtools/conformance/autobahn.py with `arguments`, to its end (at most `seconds`).
    static func suite(_ arguments: [String], seconds: Double) throws -> (status: Int32?, output: String) {
        let autobahn = PythonTools.command("conformance.autobahn", arguments)
        return try runTool(autobahn.executable, autobahn.arguments, seconds: seconds)
    }

    /// A fresh report directory under the temporary directory.
    private func reportDirectory() -> String {
        NSTemporaryDirectory() + "tmm-conformance-\(getpid())-\(UUID().uuidString.prefix(8))"
    }

    /// The report's summary and the ids of the cases with `verdict`.
    private func read(_ report: String, verdict: String = "FAILED") throws -> (summary: [String: Int], cases: [String])
    {
        let data = try Data(contentsOf: URL(fileURLWithPath: report + "/index.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let summary = try #require(json["summary"] as? [String: Int])
        let cases = try #require(json["cases"] as? [[String: Any]])
        return (summary, cases.filter { $0["verdict"] as? String == verdict }.compactMap { $0["case"] as? String })
    }

    @Test func everyCaseIsOKNonStrictOrInformational() throws {
        let echo = try builtBinary("tmm-wsecho").path
        let report = reportDirectory()
        defer { try? FileManager.default.removeItem(atPath: report) }
        let (status, output) = try Self.suite(["--quiet", "--echo", echo, "--report", report], seconds: 180)
        let (summary, failed) = try read(report)
        #expect(failed == [], "FAILED cases (details in \(report)/index.md):\n\(output)")
        #expect(status == 0, "autobahn.py exit status:\n\(output)")
        // Every category ran: 1 (16), 2 (11), 3 (7), 4 (10), 5 (20), 6 (145), 7 (37), 9 (54).
        #expect(summary["cases"] == 300, "\(summary)")
        #expect(summary["failed"] == 0)
    }

    @Test func theCasesPassOverTheSecurePortToo() throws {
        // The same server through the daemon's TLS transport (OpenSSL on memory buffers): records
        // split frames anywhere, and a Close must still be the last thing out before the TLS
        // shutdown. Framing, chops, close handling and large messages; the rest is plain-only.
        let echo = try builtBinary("tmm-wsecho").path
        let report = reportDirectory()
        defer { try? FileManager.default.removeItem(atPath: report) }
        let (status, output) = try Self.suite(
            [
                "--quiet", "--tls", "--echo", echo, "--report", report,
                "--cases", "1,2,3,5.1,5.6,5.15,6.2,7,9.1,9.5",
            ], seconds: 120)
        let (summary, failed) = try read(report)
        #expect(failed == [], "FAILED cases over TLS (details in \(report)/index.md):\n\(output)")
        #expect(status == 0, "autobahn.py exit status:\n\(output)")
        #expect(summary["cases"] == 90, "\(summary)")
    }

    @Test func theEchoAppliesTheDaemonsLimitAndStopsOnSIGTERM() throws {
        let echo = try Spawned(try builtBinary("tmm-wsecho").path, ["--ws-max-message", "64K"])
        // Standard error comes through the same pipe, with a log line "tmm-wsecho: listening on
        // 127.0.0.1" before the port is printed: the line that starts with "listening " is the one.
        func portLine() -> Substring? { echo.output.text.split(separator: "\n").first { $0.hasPrefix("listening ") } }
        #expect(waitUntil(30) { portLine() != nil }, "no 'listening PORT':\n\(echo.output.text)")
        let port = try #require(portLine().flatMap { Int($0.split(separator: " ")[1]) })
        let report = reportDirectory()
        defer { try? FileManager.default.removeItem(atPath: report) }

        // At the daemon's 64 KiB: 65 536 bytes echo (1.1.7, 1.2.8 in 997-byte chops), a 256 KiB
        // message (9.1.4 at reduced size) is refused with 1009, so that case FAILs: the suite can
        // fail, and the limit is the daemon's option.
        let (status, output) = try Self.suite(
            [
                "--quiet", "--port", String(port), "--report", report,
                "--cases", "1.1.7,1.2.8,2.10,5.19,6.4.1,7.1.1,9.1.4",
            ], seconds: 60)
        #expect(status == 1, "autobahn.py should fail on 9.1.4:\n\(output)")
        let (summary, failed) = try read(report)
        #expect(failed == ["9.1.4"], "\(summary)")
        #expect(summary["ok"] == 6)
        let detail = try String(contentsOfFile: report + "/index.md", encoding: .utf8)
        #expect(detail.contains("server close code 1009"))

        kill(echo.pid, SIGTERM)
        guard case .exited(let code) = echo.wait(seconds: 10) else {
            Issue.record("tmm-wsecho did not stop on SIGTERM:\n\(echo.output.text)")
            return
        }
        #expect(code == 0)
        #expect(echo.output.text.contains("signal 15: stopping"))
    }
}
