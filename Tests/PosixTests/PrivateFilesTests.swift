// The daemon's own directories and the files it reads, against another local user who got
// there first (issue 9, defect 5) and against files that are not files (defect 9).
import CLinux
import Glibc
import Posix
import TestSupport
import Testing

/// Runs a shell command as `nobody` (uid/gid 65534) with setpriv; true when it exited 0.
private func asNobody(_ command: String) -> Bool {
    system("setpriv --reuid=65534 --regid=65534 --clear-groups /bin/sh -c '\(command)' 2>/dev/null") == 0
}

private func isRoot() -> Bool { geteuid() == 0 }

@Suite("Private directories and file reads", .tags(.integration))
struct PrivateFilesTests {
    @Test(.enabled(if: isRoot(), "needs root to act as another user"))
    func aDirectoryAnotherUserCreatedFirstIsRefused() throws {
        let path = "/tmp/tmm-squat-\(getpid())"
        defer { _ = system("rm -rf \(path)") }
        // What a hostile local user does: create the victim's predictable runtime directory, open to all.
        #expect(asNobody("mkdir -m 0777 \(path)"))
        let error = #expect(throws: AtomicFile.Failure.self) { try makeDirectories(path, mode: 0o700) }
        #expect(error?.description.contains("belongs to uid 65534") == true, "\(String(describing: error))")
    }

    @Test(.enabled(if: isRoot(), "needs root to act as another user"))
    func aSymlinkInPlaceOfTheDirectoryIsRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let target = dir.path + "/victim"
        #expect(mkdir(target, 0o700) == 0)
        let path = "/tmp/tmm-symlink-\(getpid())"
        defer { unlink(path) }
        #expect(asNobody("ln -s \(target) \(path)"))
        let error = #expect(throws: AtomicFile.Failure.self) { try makeDirectories(path, mode: 0o700) }
        #expect(error?.description.contains("symbolic link") == true, "\(String(describing: error))")
    }

    @Test func ourOwnDirectoryIsNarrowedToTheMode() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/state"
        #expect(mkdir(path, 0o777) == 0)
        #expect(chmod(path, 0o777) == 0)
        try makeDirectories(path, mode: 0o700)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        try makeDirectories(path, mode: 0o700)  // again: already right, nothing to do
        rmdir(path)
    }

    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/capture.log"
        #expect(mkfifo(path, 0o600) == 0)
        // Before the fix this open() blocked until a writer came (forever, in `run --replay`).
        let error = #expect(throws: AtomicFile.Failure.self) { _ = try AtomicFile.read(path) }
        #expect(error?.description.contains("not a regular file (a FIFO)") == true, "\(String(describing: error))")
    }

    @Test func aFileOverTheLimitIsRefusedSayingTheLimit() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/big"
        try AtomicFile.write([UInt8](repeating: 0x24, count: (1 << 20) + 1), to: path, mode: 0o600)
        let error = #expect(throws: AtomicFile.Failure.self) { _ = try AtomicFile.read(path, limit: 1 << 20) }
        #expect(error?.description.contains("larger than the 1 MiB limit") == true, "\(String(describing: error))")
        #expect(try AtomicFile.read(path, limit: 2 << 20)?.count == (1 << 20) + 1)
        #expect(try AtomicFile.read(dir.path + "/missing") == nil)
    }

    /// A state directory open to everyone (narrowed at start, too late): what another user put
    /// there first is not the daemon's, whatever it holds.
    @Test(.enabled(if: isRoot(), "needs root to act as another user"))
    func aFileAnotherUserOwnsIsRefusedNamingTheOwner() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(chmod(dir.path, 0o777) == 0)
        let path = dir.path + "/registry.json"
        #expect(asNobody("echo planted > \(path)"))
        // A plain read (the configuration file, a capture) does not care who owns the file...
        #expect(try AtomicFile.read(path) == Array("planted\n".utf8))
        // ...a read of the daemon's own file does, on the very descriptor read.
        let error = #expect(throws: AtomicFile.Failure.self) {
            _ = try AtomicFile.read(path, trusting: .ours(mode: 0o600))
        }
        #expect(
            error?.description
                == """
                read \(path): it belongs to uid 65534 (nobody), not to this user (uid 0); \
                another user put it there: remove it, and look at what else is in \(dir.path)
                """,
            "\(String(describing: error))")
        #expect(error?.isUntrusted == true)
        // The user a root daemon drops to owns what it wrote after the drop.
        #expect(try AtomicFile.read(path, trusting: .ours(mode: 0o644, alsoOwnedBy: 65534)) == Array("planted\n".utf8))
    }

    @Test func aSymlinkOrAFileOthersMayWriteIsRefusedAndExtraReadBitsAreNarrowed() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/settings.json"
        try AtomicFile.write(Array("{}".utf8), to: path, mode: 0o600)
        #expect(symlink(path, dir.path + "/link") == 0)
        let linked = #expect(throws: AtomicFile.Failure.self) {
            _ = try AtomicFile.read(dir.path + "/link", trusting: .ours(mode: 0o600))
        }
        #expect(linked?.description.contains("it is a symbolic link") == true, "\(String(describing: linked))")

        #expect(chmod(path, 0o620) == 0)
        let writable = #expect(throws: AtomicFile.Failure.self) {
            _ = try AtomicFile.read(path, trusting: .ours(mode: 0o600))
        }
        #expect(
            writable?.description.contains("writable by its group or others (mode 0620)") == true,
            "\(String(describing: writable))")

        #expect(chmod(path, 0o644) == 0)
        #expect(try AtomicFile.read(path, trusting: .ours(mode: 0o600)) == Array("{}".utf8))
        var info = stat()
        #expect(
            stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600,
            "a secret readable by others is narrowed to its mode")
    }

    /// The temporary file of a replacement is the daemon's own: a leftover (a crash, or a root
    /// daemon's before its drop) or one another user planted is removed and made anew. Before,
    /// it was opened and truncated: as root, the new contents (a key, the registry) went into
    /// the planted file, which its owner could then read; as another user, every save failed.
    @Test(.enabled(if: isRoot(), "needs root to act as another user"))
    func aPlantedTemporaryFileIsNotWrittenInto() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(chmod(dir.path, 0o777) == 0)
        let path = dir.path + "/access-code-v2.key"
        #expect(asNobody("touch \(path).tmp && chmod 0666 \(path).tmp"))
        try AtomicFile.write(Array("secret".utf8), to: path, mode: 0o600)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_uid == 0 && info.st_mode & 0o777 == 0o600, "owner \(info.st_uid)")
        #expect(access(path + ".tmp", F_OK) != 0)
    }
}
