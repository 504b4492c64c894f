import CLinux
import Glibc

// What the assembly tier asks of its own process: identity, environment, limits and the signal
// numbers, so that Bridge reaches the system only through Posix.

/// A user id (`uid_t`), for callers that do not import Glibc.
public typealias UserID = uid_t
/// A group id (`gid_t`), for callers that do not import Glibc.
public typealias GroupID = gid_t
/// File permission bits (`mode_t`), for callers that do not import Glibc.
public typealias FileMode = mode_t

/// The calling process.
public enum CurrentProcess {
    /// The real user id (getuid(2)).
    public static var userID: UserID { getuid() }

    /// The effective user id (geteuid(2)): whose files this process makes.
    public static var effectiveUserID: UserID { geteuid() }

    /// The process id (getpid(2)).
    public static var processID: Int32 { getpid() }

    /// The value of the environment variable `name`, or nil when it is unset or empty.
    public static func environment(_ name: String) -> String? {
        guard let raw = getenv(name), raw.pointee != 0 else { return nil }
        return String(cString: raw)
    }

    /// The soft limit on open descriptors (RLIMIT_NOFILE), or nil when it cannot be read.
    public static func openFileLimit() -> Int? {
        var limit = rlimit()
        guard (try? valueOrErrno { getrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit) }) != nil else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// The host's name (gethostname(2)); empty when it cannot be read.
    public static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Resident memory now, in bytes (/proc/self/statm's second field, in pages); nil when it
    /// cannot be read.
    public static func residentBytes() -> Int? {
        guard let bytes = try? AtomicFile.read("/proc/self/statm", limit: 4096) else { return nil }
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(CInt(_SC_PAGESIZE)))
    }

    /// Gives the pages malloc holds free back to the kernel (glibc's malloc_trim). glibc keeps
    /// freed memory for reuse, and after thousands of connections' buffers were freed in no
    /// particular order little of it is at the top of the heap, where free() alone returns it.
    /// It locks each arena while it walks it: call it off the io thread.
    public static func returnFreedMemory() {
        _ = clinux_malloc_trim()
    }

    /// Whether this process may write `path` (access(2) with W_OK: real ids, as the kernel would
    /// check a connect to a socket there).
    public static func canWrite(_ path: String) -> Bool {
        (try? valueOrErrno { access(path, W_OK) }) != nil
    }

    /// Throws unless this process (its real ids: after a privilege drop, the new user) may create
    /// and replace files in `directory`: write and search permission on it, search on every
    /// parent, and a file system mounted read-write (access(2) with W_OK | X_OK).
    public static func checkCanCreateFiles(in directory: String) throws(Errno) {
        _ = try valueOrErrno { access(directory, W_OK | X_OK) }
    }

    /// Whether this process's user may write `path` (a socket to connect to), every parent
    /// directory searched as the kernel will search it (access(2), with the real ids, which are
    /// the effective ones after a drop).
    public static func checkCanWrite(_ path: String) throws(Errno) {
        _ = try valueOrErrno { access(path, W_OK) }
    }

    /// Throws unless this process's user may read `path` (a certificate or key a library opens
    /// later, at each connection: access(2) with R_OK, as the kernel will check the open).
    public static func checkCanRead(_ path: String) throws(Errno) {
        _ = try valueOrErrno { access(path, R_OK) }
    }

    /// Makes the process not dumpable (prctl PR_SET_DUMPABLE 0): no core file, whatever
    /// RLIMIT_CORE or core_pattern say, and no ptrace attach or /proc/PID/mem, environ or fd by
    /// its own user, so its keys, registered ids and passwords stay in it. The kernel resets the
    /// flag to `fs.suid_dumpable` when the process changes its uid: `dropPrivileges` sets it
    /// again.
    public static func forbidCoreDumps() throws(Errno) {
        let error = clinux_set_dumpable(0)
        guard error == 0 else { throw Errno(rawValue: error) }
    }

    /// Whether the process is dumpable (prctl PR_GET_DUMPABLE): false after `forbidCoreDumps`.
    public static var isDumpable: Bool { clinux_dumpable() != 0 }
}

/// Signal numbers by name.
public enum SignalNumber {
    public static let interrupt: CInt = SIGINT
    public static let terminate: CInt = SIGTERM
    public static let hangUp: CInt = SIGHUP
}

/// A descriptor kept in reserve (on /dev/null) for the moment the process runs out of them: given
/// up to accept (and close at once) one pending connection, so a full table cannot make a
/// listener spin, then taken again (NIO and libuv do the same).
public final class SpareDescriptor {
    private var descriptor: CInt = -1

    /// Holds no spare until `reserve()`.
    public init() {}

    deinit { release() }

    /// Takes the spare if it is not held (a no-op when it is).
    public func reserve() {
        guard descriptor < 0 else { return }
        descriptor = (try? valueOrErrno { Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC) }) ?? -1
    }

    /// Gives the spare up for good.
    public func release() {
        guard descriptor >= 0 else { return }
        _ = try? valueOrErrno(retryOnInterrupt: false) { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Whether a spare is held.
    public var isHeld: Bool { descriptor >= 0 }

    /// Uses the spare to accept one pending connection on `listener` and close it at once, then
    /// takes the spare again. True when a connection was refused and the spare is held again.
    public func refuseOne(on listener: CInt) -> Bool {
        guard descriptor >= 0 else { return false }
        release()
        let accepted = try? valueOrErrno { clinux_accept4(listener, nil, nil, CInt(SOCK_CLOEXEC.rawValue)) }
        if let accepted { FileDescriptor(adopting: accepted).close() }
        reserve()
        return accepted != nil && isHeld
    }
}
