import CLinux
import Glibc

/// Whole-file replacement that a crash at any moment cannot tear: the new contents go to a
/// temporary file in the same directory, which is fsynced, renamed over the old file (rename is
/// atomic within a file system), and the directory is fsynced so the rename itself survives a
/// power cut. A reader sees the old contents or the new, never a mix or an empty file.
public enum AtomicFile {
    /// A failed step, naming the file and the errno.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let operation: String
        public let path: String
        public let errno: Errno
        /// Why, when errno alone would not say it ("not a regular file", "owned by uid 1000").
        public let reason: String?
        /// The file is not the daemon's to trust (`FileTrust`: another owner, a symbolic link,
        /// writable by others): a state to fix by hand, not a failing system call.
        public let isUntrusted: Bool

        public init(operation: String, path: String, errno: Errno, reason: String? = nil, untrusted: Bool = false) {
            self.operation = operation
            self.path = path
            self.errno = errno
            self.reason = reason
            isUntrusted = untrusted
        }

        public var description: String { "\(operation) \(path): \(reason ?? errno.description)" }
    }

    /// The temporary file `write` uses for `path` (left behind only by a crash mid-write; the next
    /// write truncates it).
    public static func temporaryPath(for path: String) -> String { path + ".tmp" }

    /// Replaces the file at `path` with `bytes`, readable and writable by the owner only when
    /// `mode` is 0o600. Returns once the new contents and the rename are on disk.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws(Failure) {
        let temporary = temporaryPath(for: path)
        do {
            try writeAndSync(bytes, to: temporary, mode: mode)
        } catch {
            unlink(temporary)
            throw error
        }
        do {
            _ = try valueOrErrno { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw Failure(operation: "rename", path: path, errno: error)
        }
        let directory = directoryName(path)
        do {
            let dir = try FileDescriptor.open(directory, O_RDONLY | O_DIRECTORY)
            _ = try valueOrErrno { fsync(dir.rawValue) }
        } catch {
            throw Failure(operation: "fsync directory", path: directory, errno: error)
        }
    }

    private static func writeAndSync(_ bytes: [UInt8], to temporary: String, mode: mode_t) throws(Failure) {
        var step = "create"
        do throws(Errno) {
            // A temporary file already there is a crash's leftover (perhaps root's, from before a
            // privilege drop: it could not be opened now) or another user's plant (opened, the
            // new contents would be theirs to read): it is removed, and the file made anew, ours.
            unlink(temporary)
            let fd = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: mode)
            // O_CREAT applies the mode only to a new file, and the umask may have narrowed it.
            step = "chmod"
            _ = try valueOrErrno { fchmod(fd.rawValue, mode) }
            step = "write"
            try fd.writeAll(bytes)
            step = "fsync"
            _ = try valueOrErrno { fsync(fd.rawValue) }
        } catch {
            throw Failure(operation: step, path: temporary, errno: error)
        }
    }

    /// The whole file, or nil when it does not exist. Only a regular file is read: a FIFO, a
    /// device or a socket is refused before a read could block (it is opened non-blocking, so
    /// not even the open waits for a writer), and a file over `limit` bytes is refused by its
    /// size, saying the limit.
    ///
    /// `trusting`: the file is one of the daemon's own (in its state or runtime directory), and
    /// is read only if it passes `FileTrust`'s checks, made on the descriptor read.
    public static func read(
        _ path: String, limit: Int = 16 << 20, trusting trust: FileTrust? = nil
    ) throws(Failure) -> [UInt8]? {
        // (A raw descriptor first: deferred initialisation of a noncopyable value across do/catch
        // trips the compiler.)
        let raw: CInt
        do throws(Errno) {
            let noFollow = trust == nil ? 0 : O_NOFOLLOW
            raw = try valueOrErrno { Glibc.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | noFollow) }
        } catch {
            if error == .noSuchFileOrDirectory { return nil }
            if trust != nil, error == Errno(rawValue: ELOOP) {
                throw Failure(
                    operation: "read", path: path, errno: error,
                    reason: "it is a symbolic link; refusing to follow it (remove it)", untrusted: true)
            }
            throw Failure(operation: "read", path: path, errno: error)
        }
        let fd = FileDescriptor(adopting: raw)
        var info = stat()
        do throws(Errno) {
            _ = try valueOrErrno { fstat(fd.rawValue, &info) }
        } catch {
            throw Failure(operation: "stat", path: path, errno: error)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw Failure(
                operation: "read", path: path, errno: Errno(rawValue: EINVAL),
                reason: "not a regular file (\(fileTypeName(info.st_mode)))")
        }
        if let trust { try trust.check(fd, info, path: path) }
        guard info.st_size <= limit else { throw tooLarge(path, limit) }
        var contents: [UInt8] = []
        contents.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let result: Result<Int, Errno> = chunk.withUnsafeMutableBytes { raw in
                do throws(Errno) { return .success(try fd.read(into: raw)) } catch { return .failure(error) }
            }
            let count: Int
            do { count = try result.get() } catch { throw Failure(operation: "read", path: path, errno: error) }
            if count == 0 { return contents }
            contents += chunk[0..<count]
            if contents.count > limit { throw tooLarge(path, limit) }  // it grew while being read
        }
    }

    private static func tooLarge(_ path: String, _ limit: Int) -> Failure {
        let size = limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes"
        return Failure(
            operation: "read", path: path, errno: Errno(rawValue: EFBIG), reason: "larger than the \(size) limit")
    }

    /// The directory part of `path` ("." when it has none).
    static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

/// Which of the daemon's own files it may read: the checks `AtomicFile.read(_:trusting:)` makes
/// on the descriptor it reads (so a name swapped in between cannot pass them), as
/// `makeDirectories` makes them on the directory.
///
/// A file in the state or runtime directory is trusted as much as the directory, and the
/// directory's check comes too late for files put there while it was open to others (it is
/// narrowed at start; another user may have planted a key, a registry or settings first). So:
/// the file must belong to this user (or to the user a root daemon drops to, who writes it
/// after the drop), must not be writable by its group or others (others may have changed it),
/// and must not be a symbolic link. Read permissions beyond `mode` (a key readable by others)
/// are narrowed to `mode` on the descriptor.
public struct FileTrust: Sendable, Equatable {
    /// The owners accepted.
    public var owners: [uid_t]
    /// The permission bits the file may have at most (0o600 for a secret, 0o644 otherwise).
    public var mode: mode_t

    public init(owners: [uid_t], mode: mode_t) {
        self.owners = owners
        self.mode = mode
    }

    /// A file of this process's user (its effective uid), or of `dropUser`.
    public static func ours(mode: mode_t, alsoOwnedBy dropUser: uid_t? = nil) -> FileTrust {
        FileTrust(owners: [geteuid()] + (dropUser.map { [$0] } ?? []), mode: mode)
    }

    func check(_ fd: borrowing FileDescriptor, _ info: stat, path: String) throws(AtomicFile.Failure) {
        guard owners.contains(info.st_uid) else {
            let accepted = owners.dropFirst().map { " or to uid \($0)" }.joined()
            throw AtomicFile.Failure(
                operation: "read", path: path, errno: Errno(rawValue: EPERM),
                reason:
                    "it belongs to \(describeUser(info.st_uid)), "
                    + "not to this user (uid \(owners.first ?? geteuid()))\(accepted); "
                    + "another user put it there: remove it, "
                    + "and look at what else is in \(AtomicFile.directoryName(path))",
                untrusted: true)
        }
        let permissions = info.st_mode & 0o777
        guard permissions & mode_t(S_IWGRP | S_IWOTH) == 0 else {
            throw AtomicFile.Failure(
                operation: "read", path: path, errno: Errno(rawValue: EPERM),
                reason:
                    "it is writable by its group or others (mode 0\(String(permissions, radix: 8))): another user may "
                    + "have changed it; check it, then chmod go-w it (or remove it)",
                untrusted: true)
        }
        if permissions & ~mode != 0 {
            do {
                _ = try valueOrErrno { fchmod(fd.rawValue, permissions & mode) }
            } catch {
                throw AtomicFile.Failure(operation: "chmod", path: path, errno: error)
            }
        }
    }
}

/// "uid 65534 (nobody)", or "uid 12345" for a uid without a name.
func describeUser(_ uid: uid_t) -> String {
    Credentials.userName(uid).map { "uid \(uid) (\($0))" } ?? "uid \(uid)"
}

/// Creates `path` and its missing parents; the last component gets `mode` (e.g. 0o700 for a state
/// directory), parents 0o755. Returns an error naming the component that could not be made.
///
/// The last component is the daemon's own: files in it (the control socket, gpsd's log, the
/// registry) are trusted. So when it already exists it must be a real directory (not a symlink)
/// owned by this user, and writable by nobody else: another local user who created
/// `/tmp/tmm-bridge-UID` first, or swapped in a symlink, could otherwise replace `control.sock`
/// or point a log at the victim's files. A directory of ours with wider permissions (an older
/// version, a umask) is narrowed to `mode`; anything else is refused, with the owner named.
///
/// `alsoOwnedBy`: a second owner accepted for the directory, the user a daemon started as root
/// gives it to before dropping privileges (so the next start, as root, finds it still its own).
public func makeDirectories(_ path: String, mode: mode_t, alsoOwnedBy dropUser: uid_t? = nil) throws(AtomicFile.Failure)
{
    var prefix = path.hasPrefix("/") ? "" : "."
    let components = path.split(separator: "/")
    for (index, component) in components.enumerated() {
        prefix += "/" + component
        let isLast = index == components.count - 1
        do { _ = try valueOrErrno { mkdir(prefix, isLast ? mode : 0o755) } } catch {
            guard error == .fileExists else {
                throw AtomicFile.Failure(operation: "create directory", path: prefix, errno: error)
            }
        }
    }
    // O_NOFOLLOW | O_DIRECTORY: a symlink in the last component fails here (ELOOP/ENOTDIR), and
    // the checks below apply to the very directory opened, not to a name that could be swapped.
    let raw: CInt
    do throws(Errno) {
        raw = try valueOrErrno { open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
    } catch {
        if (try? PathStatus.of(path))?.isSymbolicLink == true {
            throw AtomicFile.Failure(
                operation: "create directory", path: path, errno: error,
                reason: "it is a symbolic link; refusing to use it")
        }
        throw AtomicFile.Failure(operation: "create directory", path: path, errno: error)
    }
    let directory = FileDescriptor(adopting: raw)
    var info = stat()
    do {
        _ = try valueOrErrno { fstat(directory.rawValue, &info) }
    } catch {
        throw AtomicFile.Failure(operation: "stat", path: path, errno: error)
    }
    guard info.st_uid == geteuid() || info.st_uid == dropUser else {
        throw AtomicFile.Failure(
            operation: "create directory", path: path, errno: Errno(rawValue: EPERM),
            reason: "it exists and belongs to uid \(info.st_uid), not to this user (uid \(geteuid())); "
                + "remove it or choose another directory")
    }
    let foreignWrite = mode_t(S_IWGRP | S_IWOTH)
    if info.st_mode & foreignWrite != 0 || info.st_mode & ~mode & 0o777 != 0 {
        do {
            _ = try valueOrErrno { fchmod(directory.rawValue, mode) }
        } catch {
            throw AtomicFile.Failure(operation: "chmod", path: path, errno: error)
        }
    }
}

/// "FIFO", "directory", ... for an error message.
func fileTypeName(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFIFO: "a FIFO"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    case S_IFDIR: "a directory"
    case S_IFSOCK: "a socket"
    case S_IFLNK: "a symbolic link"
    default: "not a regular file"
    }
}
