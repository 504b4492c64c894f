// What another local user (or a careless path) can put where the daemon reads and writes files:
// a FIFO or an oversized file as the replay capture, a runtime or state directory created first
// by someone else. Each must be refused at start with a clear error and exit 78, never hang.
import Foundation
import Glibc
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
        let run = try runTool(try bridge(), ["run", "--replay", dir + "/capture.log", "--no-discovery",
                                             "--state-dir", dir + "/state", "--runtime-dir", dir + "/run"])
        #expect(run.status == 78, "\(run.output)")
        #expect(run.output.contains("not a regular file (a FIFO)"), "\(run.output)")
    }

    @Test func aCaptureOverTheLimitSaysTheLimit() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/huge.log"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(truncate(path, 17 << 20) == 0)  // sparse: refused by its size, never read
        let run = try runTool(try bridge(), ["run", "--replay", path, "--no-discovery",
                                             "--state-dir", dir + "/state", "--runtime-dir", dir + "/run"])
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
        arguments += which == "runtime"
            ? ["--state-dir", dir + "/state", "--runtime-dir", squatted]
            : ["--state-dir", squatted, "--runtime-dir", dir + "/run"]
        let run = try runTool(try bridge(), arguments)
        #expect(run.status == 78, "\(run.output)")
        #expect(run.output.contains("belongs to uid 12345"), "\(run.output)")
    }
}
