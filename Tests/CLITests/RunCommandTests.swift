// `tmm-bridge run` and `tmm-bridge open` as a user meets them: exit codes and messages for bad
// command lines and configuration files, the file/command-line precedence, and the desktop entry.
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

@Suite("tmm-bridge run and open", .tags(.integration), .serialized)
struct RunCommandTests {
    private func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "tmm-run-\(getpid())-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test(arguments: [
        (["run", "--bogus"], "run: unknown option '--bogus'"),
        (["run", "--api-port"], "--api-port needs a value"),
        (["run", "--api-port", "0"], "--api-port must be a port number"),
        (["run", "--api-port=70000"], "--api-port must be a port number"),
        (["run", "--registration", "maybe"], "--registration must be allowlist or open"),
        (["run", "--allow-app-id", "x"], "is not a GUID"),
        (
            ["run", "--allowed-origins", "https://app.example/"],
            "--allowed-origins: 'https://app.example/' is not an origin"
        ),
        (["run", "stray"], "run: unexpected argument 'stray'"),
        (["run", "--no-discovery=yes"], "--no-discovery takes no value"),
        (["open"], "open needs a URL"),
        (["open", "a://b", "c://d"], "open takes one URL"),
        (["open", "--frobnicate", "a://b"], "open: unknown option"),
    ])
    func usageErrorsExit64WithTheReason(_ arguments: [String], _ message: String) throws {
        let run = try runBridge(arguments)
        #expect(run.status == 64, "\(arguments)")
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(run.stderr.contains("usage: tmm-bridge"))
    }

    @Test(arguments: [
        ("api-port = 9635\n", "port plan: base port 9635 is configured for two servers"),
        ("# ok\nregistration open\n", ":2: expected 'name = value'"),
        ("frobnicate = 1\n", ":1: unknown option 'frobnicate'"),
        ("ws-queue-soft-limit = 1M\nws-queue-hard-limit = 1K\n", "must not be below ws-queue-soft-limit"),
        (
            "allowed-origins = https://app.example\nallowed-origins = app.example:8080\n",
            ":2: allowed-origins: 'app.example:8080' is not an origin: an origin is scheme://host[:port]"
        ),
        ("allowed-origins = *, https://app.example\n", ":1: allowed-origins: * (any origin) cannot be combined"),
        (
            "# two receivers\nbluetooth = 00:07:80:AB:CD:EF\nbluetooth = 00:07:80:AB:CD\n",
            ":3: bluetooth: '00:07:80:AB:CD' is not a Bluetooth address"
        ),
        (
            "bluetooth = 00:07:80:AB:CD:EF channel 31\n",
            ":1: bluetooth: channel must be an RFCOMM channel from 1 to 30, not '31'"
        ),
        (
            "bluetooth = 00:07:80:AB:CD:EF\nbluetooth = 00:07:80:ab:cd:ef rfcomm 3\n",
            "bluetooth: a receiver is given twice"
        ),
    ])
    func badConfigurationFilesExit78NamingTheLine(_ contents: String, _ message: String) throws {
        let directory = temporaryDirectory()
        let path = directory + "/tmm-bridge.conf"
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
        let run = try runBridge([
            "run", "--config", path, "--state-dir", directory + "/state", "--runtime-dir", directory + "/run",
        ])
        #expect(run.status == 78, "\(run.stderr)")
        #expect(run.stderr.contains(message), "\(run.stderr)")
    }

    /// Under systemd (`ConfigurationDirectory=tmm-bridge`) the default file is
    /// `$CONFIGURATION_DIRECTORY/tmm-bridge.conf`: a bad line there is reported with that path.
    @Test func theDefaultFileIsInSystemdsConfigurationDirectory() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = FileManager.default.createFile(
            atPath: directory + "/tmm-bridge.conf", contents: Data("frobnicate = 1\n".utf8))
        let run = try runBridge(
            ["run", "--state-dir", directory + "/state", "--runtime-dir", directory + "/run"],
            environment: ["CONFIGURATION_DIRECTORY": directory])
        #expect(run.status == 78, "\(run.stderr)")
        #expect(run.stderr.contains(directory + "/tmm-bridge.conf:1: unknown option 'frobnicate'"), "\(run.stderr)")
    }

    @Test func aMissingConfigurationFileExits78() throws {
        let run = try runBridge(["run", "--config", "/nonexistent/tmm-bridge.conf"])
        #expect(run.status == 78)
        #expect(run.stderr.contains("configuration file /nonexistent/tmm-bridge.conf does not exist"), "\(run.stderr)")
    }

    @Test(.enabled(if: findExecutable("gpsd") != nil, "needs gpsd (apt-get install gpsd)"))
    func theFileSetsDefaultsAndTheCommandLineOverridesThem() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var ports: [UInt16] = []
        while ports.count < 7 {
            if let port = freeLoopbackPort(), !ports.contains(port) { ports.append(port) }
        }
        let config = """
            # written by the test
            listen = 127.0.0.1
            location-port = \(ports[0])
            location-secure-port = \(ports[1])
            api-port = \(ports[2])
            api-secure-port = \(ports[3])
            location-v2-port = \(ports[4])
            location-v2-secure-port = \(ports[5])
            registration = open
            discovery = no
            state-dir = \(directory)/state
            runtime-dir = \(directory)/run
            """
        _ = FileManager.default.createFile(atPath: directory + "/tmm-bridge.conf", contents: Data(config.utf8))
        let process = Process()
        process.executableURL = try bridgeBinary()
        process.arguments = ["run", "--config", directory + "/tmm-bridge.conf", "--api-port", String(ports[6])]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var log = ""
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while !log.contains("tmm-bridge: ready") && monotonicNanoseconds() < deadline {
            log += String(decoding: err.fileHandleForReading.availableData, as: UTF8.self)
        }
        process.terminate()
        process.waitUntilExit()
        log += String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(log)")
        #expect(
            log.contains(
                "ports: locationPort=\(ports[0]) locationSecurePort=\(ports[1]) apiPort=\(ports[6]) "
                    + "apiSecurePort=\(ports[3]) locationV2Port=\(ports[4]) locationV2SecurePort=\(ports[5])"), "\(log)"
        )
        #expect(log.contains("registration: open"), "\(log)")
        #expect(log.contains("listening on 127.0.0.1\n"), "\(log)")
    }

    @Test func openWithoutADaemonSaysSoAndExits1() throws {
        let run = try runBridge([
            "open", "tmmsocketserverport://?eyJyZXR1cmwiOiJteWFwcDovL3AifQ==", "--print", "--runtime-dir",
            "/nonexistent",
        ])
        #expect(run.status == 1)
        #expect(
            run.stderr.contains(
                "cannot reach the daemon at /nonexistent/control.sock: no tmm-bridge daemon is running there"),
            "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test func theDesktopEntryIsValidAndRunsOpen() throws {
        let path = Fixtures.directory + "/../../../packaging/tmm-bridge-open.desktop"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(
            text.contains(
                "MimeType=x-scheme-handler/tmmregister;x-scheme-handler/tmmsocketserverport;"
                    + "x-scheme-handler/trimblemobilemanager;"
            ))
        let exec = try #require(text.split(separator: "\n").first { $0.hasPrefix("Exec=") })
        let words = exec.dropFirst("Exec=".count).split(separator: " ").map(String.init)
        #expect(words.first == "/usr/bin/tmm-bridge")
        #expect(Array(words.dropFirst()) == ["open", "%u"])
        // The command line it makes is one `open` accepts (it fails only for want of a daemon).
        let run = try runBridge([
            "open", "tmmsocketserverport://?eyJyZXR1cmwiOiJteWFwcDovL3AifQ==", "--runtime-dir", "/nonexistent",
        ])
        #expect(run.status == 1 && run.stderr.contains("no tmm-bridge daemon"), "\(run.stderr)")
        if let validator = findExecutable("desktop-file-validate") {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: validator)
            process.arguments = [path]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = out
            try process.run()
            process.waitUntilExit()
            let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationStatus == 0, "\(output)")
        }
    }
}
