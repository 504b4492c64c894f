// SIGHUP reload and journald output, seen from outside: the real daemon, its configuration file,
// its standard error and the notification socket systemd would read (docs/service.md, "Logging"
// and "Reload").
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

@Suite(
    "SIGHUP reloads the configuration of the running daemon", .tags(.integration),
    .enabled(
        if: findExecutable("gpsd") != nil && findExecutable("curl") != nil,
        "needs gpsd for the demo receiver and curl (scripts/install-deps.sh)"))
struct ReloadTests {
    static let first = "12345678-1234-1234-1234-123456789abc"
    static let second = "87654321-4321-4321-4321-cba987654321"

    /// A configuration file with everything the daemon needs (ports in the file, not on the
    /// command line, which would win over it on a reload too).
    static func configuration(directory: String, ports: PortSet, apiPort: UInt16? = nil, _ extra: [String]) -> String {
        var lines = [
            "listen = 127.0.0.1", "registration = allowlist", "discovery = no", "demo = yes",
            "state-dir = \(directory)/state", "runtime-dir = \(directory)/runtime",
            "fallback-port-start = \(ports.fallbackStart)",
        ]
        for (key, option) in zip(PortSet.keys, PortSet.options) {
            lines.append("\(option) = \(key == "apiPort" ? apiPort ?? ports.base[key]! : ports.base[key]!)")
        }
        return (lines + extra).joined(separator: "\n") + "\n"
    }

    /// `tmm-bridge open` with a Windows-style registration URL for `id`: the reply URL.
    static func register(_ id: String, runtime: String) throws -> String {
        let url = "trimblemobilemanager://request/tmmRegister?applicationId=\(id)&callback=app://r"
        return try runTool(try bridgeBinary().path, ["open", url, "--print", "--runtime-dir", runtime]).output
    }

    @Test(
        """
        allow-list applied, a changed port named as needing a restart, an invalid file kept out, \
        RELOADING=1 then READY=1
        """
    )
    func reload() throws {
        let directory = try EndToEnd.makeDirectory("reload")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ports = try PortSet.pick()
        let file = directory + "/tmm-bridge.conf"
        let runtime = directory + "/runtime"
        #expect(
            FileManager.default.createFile(
                atPath: file,
                contents: Data(
                    Self.configuration(
                        directory: directory, ports: ports, ["allow-app-id = \(Self.first)"]
                    ).utf8)))
        let notify = try NotifySocket(path: directory + "/notify.sock")
        let daemon = try Spawned(
            "/usr/bin/env", ["NOTIFY_SOCKET=" + notify.path, try bridgeBinary().path, "run", "--config", file])
        defer { daemon.killNow() }
        #expect(
            waitUntil(20) { daemon.output.text.contains("tmm-bridge: ready\n") || !daemon.isRunning },
            "\(daemon.output.text)")

        let refused = try Self.register(Self.second, runtime: runtime)
        #expect(refused.contains("registrationResult=Unauthorized"), "\(refused)\n\(daemon.output.text)")
        let apiURL = "http://127.0.0.1:\(ports.base["apiPort"]!)/api/v1/publicKey"
        func status(origin: String) throws -> String {
            try runTool(
                "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Origin: " + origin, apiURL]
            ).output
        }
        #expect(try status(origin: "https://other.example") == "200", "any origin before the reload")
        // Access Code V1 of a registered, allowed application (tmmtools/client/tmmclient.py computes it).
        let pingURL = "http://127.0.0.1:\(ports.base["apiPort"]!)/api/v1/test/ping"
        func accessCodeStatus(_ id: String) throws -> String {
            let coder = PythonTools.command("peers.access_codes", ["v1", id])
            let code = try runTool(coder.executable, coder.arguments).output.trimmingCharacters(
                in: .whitespacesAndNewlines)
            return try runTool(
                "/usr/bin/curl",
                [
                    "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Basic " + code,
                    pingURL,
                ]
            ).output
        }
        #expect(try Self.register(Self.first, runtime: runtime).contains("registrationResult=OK"))
        #expect(try accessCodeStatus(Self.first) == "200")

        // The second id allowed, and the API port changed (which cannot apply while running).
        let otherPort = ports.fallbackStart + 5
        try Data(
            Self.configuration(
                directory: directory, ports: ports, apiPort: otherPort,
                ["allow-app-id = \(Self.second)", "allowed-origins = https://app.example"]
            ).utf8
        )
        .write(to: URL(fileURLWithPath: file))
        kill(daemon.pid, SIGHUP)
        #expect(
            waitUntil(10) {
                daemon.output.text.contains("tmm-bridge: reloaded the configuration") || !daemon.isRunning
            },
            "\(daemon.output.text)")
        let log = daemon.output.text
        #expect(log.contains("tmm-bridge: api-port changed: needs a restart\n"), "\(log)")
        #expect(log.contains("reloaded the configuration: applied allow-app-id, allowed-origins\n"), "\(log)")
        #expect(log.contains("tmm-bridge: registration: allowlist (1 allowed ids)\n"), "\(log)")
        #expect(try accessCodeStatus(Self.first) == "401", "the registered application no longer allowed is refused")
        #expect(
            log.contains("tmm-bridge: allowed-origins: https://app.example (other web origins get 403)\n"), "\(log)")
        #expect(try status(origin: "https://other.example") == "403" && status(origin: "https://app.example") == "200")
        let accepted = try Self.register(Self.second, runtime: runtime)
        #expect(accepted.contains("registrationResult=OK"), "\(accepted)\n\(daemon.output.text)")
        #expect(
            connects(to: ports.base["apiPort"]!) && !connects(to: otherPort),
            "the API stays on its port until a restart")

        // An invalid file: logged with its line, the running configuration kept.
        try Data(
            Self.configuration(
                directory: directory, ports: ports, ["allow-app-id = \(Self.first)", "allow-app-id = nonsense"]
            ).utf8
        )
        .write(to: URL(fileURLWithPath: file))
        kill(daemon.pid, SIGHUP)
        #expect(
            waitUntil(10) { daemon.output.text.contains("keeping the running configuration") || !daemon.isRunning },
            "\(daemon.output.text)")
        let lineNumber = 7 + PortSet.keys.count + 2
        #expect(
            daemon.output.text.contains(
                "tmm-bridge: reload: configuration: \(file):\(lineNumber): allow-app-id: 'nonsense' is not a GUID"),
            "\(daemon.output.text)")
        #expect(try Self.register(Self.first, runtime: runtime).contains("registrationResult=Unauthorized"))
        // The second id is still allowed: a fresh registration of it (it is in the registry) is OK.
        #expect(try Self.register(Self.second, runtime: runtime).contains("registrationResult=OK"))
        #expect(daemon.isRunning, "a bad file on reload does not stop the daemon")

        #expect(
            waitUntil(5) {
                notify.drain()
                return notify.messages.filter { $0.text == "READY=1" }.count >= 2
            }, "\(notify.messages.map(\.text))")
        kill(daemon.pid, SIGTERM)
        #expect(daemon.wait(seconds: 15) == .exited(0), "\(daemon.output.text)")
        notify.drain()
        let texts = notify.messages.map(\.text)
        // READY (start), then a RELOADING=1/READY=1 pair per reload, then STOPPING.
        // (STATUS= lines come and go with the receiver: docs/operations.md; not the lifecycle.)
        let states = texts.filter { !$0.hasPrefix("WATCHDOG") && !$0.hasPrefix("STATUS=") }.map {
            $0.split(separator: "\n")[0]
        }
        #expect(states == ["READY=1", "RELOADING=1", "READY=1", "RELOADING=1", "READY=1", "STOPPING=1"], "\(texts)")
        #expect(texts.first { $0.hasPrefix("RELOADING=1") }?.contains("\nMONOTONIC_USEC=") == true, "\(texts)")
    }
}

@Suite(
    "journald priority prefixes when standard error is the journal stream", .tags(.integration),
    .enabled(if: findExecutable("gpsd") != nil, "needs gpsd for the demo receiver (scripts/install-deps.sh)"))
struct JournalOutputTests {
    /// Runs the daemon with standard error appended to `logFile` and `JOURNAL_STREAM` set to
    /// `journalStream`, until `until` appears in the file; then stops it.
    static func run(
        directory: String, logFile: String, journalStream: String, source: [String] = ["--demo"],
        until marker: String
    ) throws -> String {
        let ports = try PortSet.pick()
        // A busy API port makes a warning (the fallback) at start.
        let held = try HeldPort(ports.base["apiPort"]!)
        defer { _ = held }
        let daemon = try Spawned(
            "/bin/sh",
            [
                "-c", #"log=$1; shift; exec "$@" 2>>"$log""#, "sh", logFile,
                "/usr/bin/env", "JOURNAL_STREAM=" + journalStream, try bridgeBinary().path,
                "run", "--no-discovery",
            ] + source + [
                "--registration", "open",
                "--state-dir", directory + "/state", "--runtime-dir", directory + "/runtime",
                "--listen", "127.0.0.1",
            ] + ports.arguments)
        defer { daemon.killNow() }
        func text() -> String {
            String(decoding: FileManager.default.contents(atPath: logFile) ?? Data(), as: UTF8.self)
        }
        #expect(waitUntil(20) { text().contains(marker) || !daemon.isRunning }, "\(text())\n\(daemon.output.text)")
        kill(daemon.pid, SIGTERM)
        #expect(daemon.wait(seconds: 15) == .exited(0), "\(text())")
        return text()
    }

    /// Runs the daemon with standard error a fresh file and `JOURNAL_STREAM` naming that file's
    /// `st_dev:st_ino`, its inode moved by `inodeOffset` (0: the same stream); returns what it wrote.
    static func run(
        _ name: String, inodeOffset: UInt64, source: [String] = ["--demo"], until marker: String
    ) throws -> String {
        let directory = try EndToEnd.makeDirectory(name)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logFile = directory + "/stderr"
        #expect(FileManager.default.createFile(atPath: logFile, contents: nil))
        var status = stat()
        guard stat(logFile, &status) == 0 else {
            throw HarnessError("stat \(logFile): \(String(cString: strerror(errno)))")
        }
        return try run(
            directory: directory, logFile: logFile,
            journalStream: "\(status.st_dev):\(UInt64(status.st_ino) + inodeOffset)",
            source: source, until: marker)
    }

    @Test("JOURNAL_STREAM naming stderr: every line <N>-prefixed with its level, no program prefix")
    func journalLines() throws {
        let text = try Self.run("journal", inodeOffset: 0, until: "<5>ready\n")
        let lines = text.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(
                line.count > 3 && line.hasPrefix("<") && line.dropFirst(2).hasPrefix(">")
                    && "34567".contains(line.dropFirst().first!),
                "not a journald line: \(line)")
            #expect(!line.contains("tmm-bridge: "), "journald records the program itself: \(line)")
        }
        #expect(text.contains("\n<6>ports: "), "start-up facts are info:\n\(text)")
        #expect(text.contains("<4>apiPort: port "), "the busy port is a warning:\n\(text)")
        #expect(text.contains("\n<5>ready\n"), "\(text)")
        #expect(text.contains("\n<5>signal 15: stopping\n") && text.contains("\n<5>stopped: "), "\(text)")
    }

    /// A device name is another party's string (a udev link, a USB product or serial string reach
    /// the same lines): its `\r\n<0>` once made journald read an emergency entry, broadcast to
    /// every terminal.
    @Test("A logged value cannot forge a journald entry or its priority")
    func loggedValuesCannotForgeEntries() throws {
        let text = try Self.run(
            "journal-forged", inodeOffset: 0, source: ["--device", "/dev/null-gps\r\n<0>forged\n<1>again"],
            until: "<5>ready\n")
        #expect(text.contains("/dev/null-gps\\x0D\\x0A<0>forged\\x0A<1>again"), "\(text)")
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            #expect(
                line.hasPrefix("<3>") || line.hasPrefix("<4>") || line.hasPrefix("<5>") || line.hasPrefix("<6>"),
                "a line at a priority the daemon never writes: \(line)")
            #expect(!line.utf8.contains(13), "a carriage return reached the journal: \(line)")
        }
    }

    @Test("JOURNAL_STREAM naming another stream (a redirected child's): plain lines")
    func otherStreamPlainLines() throws {
        let text = try Self.run("journal-other", inodeOffset: 1, until: "tmm-bridge: ready\n")
        #expect(text.contains("tmm-bridge: ports: ") && text.contains("tmm-bridge: stopped: "), "\(text)")
        #expect(!text.contains("<5>") && !text.contains("<6>"), "\(text)")
    }
}
