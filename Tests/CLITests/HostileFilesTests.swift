// What another local user (or a careless path) can put where the daemon reads and writes files:
// a FIFO or an oversized file as the replay capture, a runtime or state directory created first
// by someone else, files planted in a state directory that was open to everyone. Each must be
// refused at start with a clear error and exit 78, never hang, or (the derived server
// certificate) replaced.
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

@Suite("Hostile files and directories at start", .tags(.integration), .serialized)
struct HostileFilesTests {
    private func scratch() throws -> String {
        let path = "/tmp/tmm-hostile-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func bridge() throws -> String { try bridgeBinary().path }

    @Test func aFIFOAsTheReplayCaptureIsRefusedAtOnce() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(mkfifo(dir + "/capture.log", 0o600) == 0)
        // Before the fix the start blocked in open() with the stop signals blocked: only SIGKILL
        // ended it (runTool gives up after 20 s and reports no status).
        let run = try runTool(
            try bridge(),
            [
                "run", "--replay", dir + "/capture.log", "--no-discovery",
                "--state-dir", dir + "/state", "--runtime-dir", dir + "/run",
            ])
        #expect(run.status == 78, "\(run.output)")
        #expect(run.output.contains("not a regular file (a FIFO)"), "\(run.output)")
    }

    @Test func aCaptureOverTheLimitSaysTheLimit() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/huge.log"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(truncate(path, 17 << 20) == 0)  // sparse: refused by its size, never read
        let run = try runTool(
            try bridge(),
            [
                "run", "--replay", path, "--no-discovery",
                "--state-dir", dir + "/state", "--runtime-dir", dir + "/run",
            ])
        #expect(run.status == 78, "\(run.output)")
        #expect(run.output.contains("larger than the 16 MiB limit"), "\(run.output)")
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to act as another user"), arguments: ["runtime", "state"])
    func aDirectoryAnotherUserCreatedFirstIsRefused(_ which: String) throws {
        let dir = try scratch()
        defer { _ = system("rm -rf \(dir)") }
        #expect(chmod(dir, 0o1777) == 0)  // a shared, sticky directory like /tmp
        let squatted = dir + "/squatted"
        // Another local user gets there first and leaves the directory open to everyone. (Not
        // nobody: a root daemon drops to nobody by default, and its own user is trusted.)
        #expect(system("setpriv --reuid=12345 --regid=12345 --clear-groups mkdir -m 0777 \(squatted)") == 0)
        var arguments = ["run", "--demo", "--no-discovery"]
        arguments +=
            which == "runtime"
            ? ["--state-dir", dir + "/state", "--runtime-dir", squatted]
            : ["--state-dir", squatted, "--runtime-dir", dir + "/run"]
        let run = try runTool(try bridge(), arguments)
        #expect(run.status == 78, "\(run.output)")
        #expect(run.output.contains("belongs to uid 12345"), "\(run.output)")
    }

    /// A daemon user (not root: its files are its own) whose state directory was left open to
    /// everyone (mode 0777, as an old umask or a hand-made directory would leave it): another
    /// user (nobody) plants files there before it starts. The directory is narrowed to 0700 at
    /// start; the planted files must not be used.
    private struct OpenStateDirectory {
        static let daemonUser: uid_t = 12345
        let directory: String
        var state: String { directory + "/state" }
        var runtime: String { directory + "/run" }

        init(_ directory: String) throws {
            self.directory = directory
            for (path, mode) in [(state, 0o777), (state + "/tls", 0o777), (runtime, 0o755)] {
                try #require(
                    mkdir(path, 0o700) == 0 && chmod(path, mode_t(mode)) == 0
                        && chown(path, Self.daemonUser, gid_t(Self.daemonUser)) == 0)
            }
            // What nobody plants: files of its own making, valid (so that only their owner can
            // give them away), readable by the daemon.
            let planted = directory + "/planted"
            try #require(mkdir(planted, 0o755) == 0)
            let openssl = try #require(findExecutable("openssl"))
            let key = try runTool(
                openssl,
                [
                    "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                    "-out", planted + "/access-code-v2.key",
                ])
            try #require(key.status == 0, "\(key.output)")
            for name in ["ca", "server"] {
                let pair = try runTool(
                    openssl,
                    [
                        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", planted + "/\(name).key", "-out", planted + "/\(name).pem",
                        "-subj", "/CN=planted by nobody", "-days", "30",
                    ])
                try #require(pair.status == 0, "\(pair.output)")
            }
            try Data(
                #"""
                {"format":"tmm-bridge registry","version":1,"applications":[\#
                {"applicationId":"00000000-0000-4000-8000-00000000b0d1","registeredAt":"2026-01-01T00:00:00Z"}]}
                """#.utf8
            )
            .write(to: URL(fileURLWithPath: planted + "/registry.json"))
            try Data(#"{"antenna":{"measuredHeight":42,"isAntennaHeightApplied":true}}"#.utf8)
                .write(to: URL(fileURLWithPath: planted + "/settings.json"))
            _ = system("chmod 0644 \(planted)/*")
        }

        /// nobody copies its file to `name` (relative to the state directory).
        func plant(_ name: String) {
            let source = directory + "/planted/" + (name as NSString).lastPathComponent
            #expect(system("setpriv --reuid=65534 --regid=65534 --clear-groups cp \(source) \(state)/\(name)") == 0)
        }

        /// `tmm-bridge run` as the daemon user.
        func arguments(ports: PortSet) -> [String] {
            [
                "--reuid=\(Self.daemonUser)", "--regid=\(Self.daemonUser)", "--clear-groups",
                (try? bridgeBinary().path) ?? "tmm-bridge",
                "run", "--demo", "--no-discovery", "--listen", "127.0.0.1", "--state-dir", state, "--runtime-dir",
                runtime,
            ]
                + ports.arguments
        }
    }

    /// Before: the directory was narrowed, then nobody's files were read and used: its key
    /// decrypted Access Code V2 codes (and it can decrypt them too), its CA issued the served
    /// certificate, its registry registered its ids, its settings were served.
    @Test(
        .enabled(
            if: geteuid() == 0 && findExecutable("openssl") != nil && findExecutable("setpriv") != nil
                && findExecutable("gpsd") != nil, "needs root, openssl, setpriv and gpsd"),
        arguments: [["access-code-v2.key"], ["registry.json"], ["settings.json"], ["tls/ca.pem", "tls/ca.key"]])
    func aFileAnotherUserPlantedInTheStateDirectoryIsRefused(_ files: [String]) throws {
        let dir = try scratch()
        defer { _ = system("rm -rf \(dir)") }
        let open = try OpenStateDirectory(dir)
        for file in files { open.plant(file) }
        let run = try runTool(
            try #require(findExecutable("setpriv")), open.arguments(ports: try PortSet.pick()), seconds: 15)
        #expect(run.status == 78, "\(run.output)")
        #expect(
            run.output.contains(
                "\(open.state)/\(files[0]): it belongs to uid 65534 (nobody), not to this user (uid 12345)"),
            "\(run.output)")
        var info = stat()
        #expect(stat(open.state, &info) == 0 && info.st_mode & 0o777 == 0o700, "the directory is narrowed all the same")
    }

    /// The server certificate and key are derived from the CA: planted ones are replaced by a
    /// pair the CA issues (nothing a client trusts changes), and the start goes on.
    @Test(
        .enabled(
            if: geteuid() == 0 && findExecutable("openssl") != nil && findExecutable("setpriv") != nil
                && findExecutable("gpsd") != nil, "needs root, openssl, setpriv and gpsd"))
    func aPlantedServerCertificateIsReplaced() throws {
        let dir = try scratch()
        defer { _ = system("rm -rf \(dir)") }
        let open = try OpenStateDirectory(dir)
        // A CA of the daemon's own first, so that the server pair is read rather than made anew.
        let first = try Spawned(try #require(findExecutable("setpriv")), open.arguments(ports: try PortSet.pick()))
        #expect(
            waitUntil(20) { first.output.text.contains("tmm-bridge: ready\n") || !first.isRunning },
            "\(first.output.text)")
        kill(first.pid, SIGTERM)
        #expect(first.wait(seconds: 15) == .exited(0), "\(first.output.text)")
        #expect(chmod(open.state, 0o777) == 0 && chmod(open.state + "/tls", 0o777) == 0)
        for file in ["tls/server.pem", "tls/server.key"] {
            #expect(unlink(open.state + "/" + file) == 0)
            open.plant(file)
        }
        let daemon = try Spawned(try #require(findExecutable("setpriv")), open.arguments(ports: try PortSet.pick()))
        defer { daemon.killNow() }
        #expect(
            waitUntil(20) { daemon.output.text.contains("tmm-bridge: ready\n") || !daemon.isRunning },
            "\(daemon.output.text)")
        #expect(
            daemon.output.text.contains("issued a new server certificate from the local CA"), "\(daemon.output.text)")
        #expect(daemon.output.text.contains("belongs to uid 65534 (nobody)"), "\(daemon.output.text)")
        for file in ["tls/server.pem", "tls/server.key"] {
            var info = stat()
            #expect(
                stat(open.state + "/" + file, &info) == 0 && info.st_uid == OpenStateDirectory.daemonUser, "\(file)")
        }
    }

    /// `tmm-bridge tls ca` makes the CA when the daemon has not: run by a user whose state
    /// directory does not exist yet, it made that directory 0755 (only `tls/` was 0700), so the
    /// directory that then holds the Access Code V2 key and the registry was open to everyone.
    @Test(
        .enabled(
            if: geteuid() == 0 && findExecutable("setpriv") != nil, "needs root and setpriv to act as another user"))
    func tlsCAMakesAPrivateStateDirectory() throws {
        let dir = try scratch()
        defer { _ = system("rm -rf \(dir)") }
        #expect(chmod(dir, 0o1777) == 0)
        let state = dir + "/home/.local/state/tmm-bridge"
        let run = try runTool(
            try #require(findExecutable("setpriv")),
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", try bridge(), "tls", "ca", "--state-dir", state,
            ])
        #expect(run.status == 0 && run.output.contains("-----BEGIN CERTIFICATE-----"), "\(run.output)")
        for (path, mode) in [(state, 0o700), (state + "/tls", 0o700), (dir + "/home", 0o755)] {
            var info = stat()
            #expect(
                stat(path, &info) == 0 && info.st_mode & 0o777 == mode_t(mode) && info.st_uid == 65534,
                "\(path): mode \(String(info.st_mode & 0o777, radix: 8)), owner \(info.st_uid)")
        }
    }

    /// Run as root on a state directory that is another user's (the daemon's, under systemd)
    /// with no CA yet, it made root's `tls/` there, which the daemon could not use: it now
    /// refuses, naming the owner, and makes nothing.
    @Test(.enabled(if: geteuid() == 0, "needs root"))
    func tlsCAMakesNothingInAnotherUsersStateDirectory() throws {
        let dir = try scratch()
        defer { _ = system("rm -rf \(dir)") }
        let state = dir + "/state"
        #expect(mkdir(state, 0o700) == 0 && chown(state, 12345, 12345) == 0)
        let run = try runTool(try bridge(), ["tls", "ca", "--state-dir", state])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("belongs to uid 12345"), "\(run.output)")
        #expect(access(state + "/tls", F_OK) != 0, "nothing made")
    }
}
