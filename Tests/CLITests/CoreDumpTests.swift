// The daemon holds secrets in memory (the TLS and Access Code V2 private keys, registered ids,
// an NTRIP password): it must never be dumpable, so no core file and no ptrace by its own user
// can copy them. The kernel shows it from outside: the /proc/PID files of a process that is not
// dumpable belong to root, whoever runs it.
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

@Suite(
    "No core dumps: the running daemon is not dumpable", .tags(.integration),
    .enabled(
        if: geteuid() == 0 && findExecutable("setpriv") != nil && findExecutable("gpsd") != nil,
        "needs root, setpriv (util-linux) and gpsd"))
struct CoreDumpTests {
    /// The owner of /proc/`pid`/status: root when the process is not dumpable.
    private func procOwner(_ pid: pid_t) -> uid_t? {
        var info = stat()
        return stat("/proc/\(pid)/status", &info) == 0 ? info.st_uid : nil
    }

    private func uid(_ pid: pid_t) throws -> String? {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        return text.split(separator: "\n").first { $0.hasPrefix("Uid:") }?.split(separator: "\t").dropFirst().first.map(
            String.init)
    }

    /// Started as an unprivileged user (as the unit starts it): before, the process stayed
    /// dumpable (/proc/PID/status belonged to that user, a core dump or `gdb -p` by that user
    /// would show its keys).
    @Test func startedAsItsOwnUser() throws {
        let directory = try EndToEnd.makeDirectory("core-user")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state", runtime = directory + "/run"
        for path in [state, runtime] {
            try #require(mkdir(path, 0o700) == 0 && chown(path, 65534, 65534) == 0)
        }
        let daemon = try Spawned(
            try #require(findExecutable("setpriv")),
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", try bridgeBinary().path, "run", "--demo",
                "--no-discovery",
                "--listen", "127.0.0.1", "--state-dir", state, "--runtime-dir", runtime,
            ] + (try PortSet.pick()).arguments)
        defer { daemon.killNow() }
        #expect(
            waitUntil(20) { daemon.output.text.contains("tmm-bridge: ready\n") || !daemon.isRunning },
            "\(daemon.output.text)")
        #expect(try uid(daemon.pid) == "65534")
        #expect(
            procOwner(daemon.pid) == 0,
            """
            /proc/\(daemon.pid) belongs to uid \(procOwner(daemon.pid).map(String.init) ?? "?"): \
            the daemon is dumpable
            """
        )
    }

    /// Started as root and dropped to its user: changing uid resets the flag to the system's
    /// `fs.suid_dumpable`, so the daemon sets it again after the drop.
    @Test func startedAsRootAndDropped() throws {
        let directory = try EndToEnd.makeDirectory("core-root")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = directory + "/tmm-bridge.conf"
        #expect(FileManager.default.createFile(atPath: configuration, contents: Data("user = nobody\n".utf8)))
        var setup = BridgeDaemon.Setup(name: "core-root", directory: directory, ports: try PortSet.pick())
        setup.extraArguments = ["--demo", "--config", configuration]
        let daemon = try BridgeDaemon(setup)
        #expect(try uid(daemon.pid) == "65534", "\(daemon.log)")
        #expect(procOwner(daemon.pid) == 0, "the daemon is dumpable after the drop")
        daemon.stopAndExpectCleanExit()
    }
}
