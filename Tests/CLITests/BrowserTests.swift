// A real browser as a TMM web client: tmmtools/browser/browser_test.py (Debian's chromium,
// headless, driven by Selenium) runs Trimble's web-sample flow against the real `tmm-bridge run --demo`: the
// page, from its own origin, makes an Access Code V2 with WebCrypto, registers through REST (the
// CORS preflight included) and reads LocationV2 over ws:// and wss://; the script checks the
// DevTools network events, the positions against the capture, the console and the screenshot
// (tmmtools/browser/README.md). Here it runs under `make test` when the browser packages are
// installed (scripts/install-deps.sh --browser, about 390 MiB, so not by default).
import Foundation
import TestSupport
import Testing

enum Browser {
    /// tmmtools/browser/browser_test.py with `arguments`, to its end (at most `seconds`).
    static func script(_ arguments: [String], seconds: Double = 20) throws -> (status: Int32?, output: String) {
        let browserTest = PythonTools.command("browser.browser_test", arguments)
        return try runTool(browserTest.executable, browserTest.arguments, seconds: seconds)
    }

    /// gpsd and python3 with websockets (the demo and the script's helpers), and the browser
    /// packages, as the script itself checks them (one list: its `--check-tools`).
    static let isAvailable: Bool =
        EndToEnd.isAvailable
        && (try? script(["--check-tools"]))?.status == 0

    /// Runs the script against the built tmm-bridge; its exit status, output and report.json.
    static func run(
        _ name: String, bridgeArguments: [String] = []
    ) throws -> (status: Int32?, output: String, report: [String: Any]) {
        let directory = try EndToEnd.makeDirectory(name)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The script waits for its own conditions (60 s at most for the page); chromium's start
        // is the slow part on a loaded machine.
        let result = try script(
            ["--bridge", try bridgeBinary().path, "--report", directory]
                + bridgeArguments.map { "--bridge-arg=" + $0 }, seconds: 180)
        let data = FileManager.default.contents(atPath: directory + "/report.json") ?? Data()
        let report = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return (result.status, result.output, report)
    }

    static func failedChecks(_ report: [String: Any]) -> [String] {
        ((report["checks"] as? [[String: Any]]) ?? []).filter { $0["passed"] as? Bool != true }.compactMap {
            $0["name"] as? String
        }
    }
}

@Suite(
    "A real browser (headless chromium) as a TMM web client", .tags(.integration), .serialized,
    .enabled(
        if: Browser.isAvailable,
        """
        needs chromium, chromium-driver, python3-selenium, libnss3-tools, python3-pil \
        (scripts/install-deps.sh --browser)
        """
    ))
struct BrowserTests {
    @Test func webSampleFlowOverWSAndWSS() throws {
        let run = try Browser.run("browser")
        #expect(run.status == 0, "\(run.output)")
        #expect(run.report["passed"] as? Bool == true && Browser.failedChecks(run.report).isEmpty, "\(run.output)")
        // Every check ran (a shortened run that passed vacuously would have fewer).
        #expect(((run.report["checks"] as? [Any]) ?? []).count >= 24, "\(run.output)")
        #expect(
            run.output.split(separator: "\n").last.map(String.init)?.hasPrefix("/") == true,
            "the report directory is printed last")
    }

    /// The same page against a bridge that allows another web origin only: the browser gets no
    /// REST answer it may read, so nothing registers and no position arrives, and the test says so.
    @Test func aRefusedOriginFailsTheRun() throws {
        let run = try Browser.run("browser-refused", bridgeArguments: ["--allowed-origins=https://other.example"])
        #expect(run.status == 1, "\(run.output)")
        let failed = Browser.failedChecks(run.report)
        #expect(failed.contains { $0.hasPrefix("CORS preflight") }, "\(failed)")
        #expect(failed.contains("no console errors"), "\(failed)")
        #expect(failed.contains { $0.hasPrefix("wss: ") }, "\(failed)")
    }
}
