import CLinux
import Glibc

/// A child process started with posix_spawn (no fork in a threaded process), owned by the
/// thread that supervises it.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    public let executable: String

    /// How a child ended.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        public var description: String {
            switch self {
            case .exited(let code): "exited with status \(code)"
            case .signalled(let signal): "killed by signal \(signal)"
            }
        }
    }

    /// Starts `executable` with `arguments` (argv[1...]); standard input is /dev/null, standard
    /// output and error go to `logDescriptor` (or are inherited when nil). No other descriptor is
    /// inherited, whether or not it is close-on-exec (a library's, a test's): the child sees 0, 1
    /// and 2, and `passing[i]` as descriptor 3 + i (`childDescriptor(forPassed:)`). Signal mask and
    /// SIGPIPE are reset to the defaults, and the child leads a process group of its own.
    public init(
        executable: String, arguments: [String], logDescriptor: CInt? = nil, passing: [CInt] = []
    )
        throws(Errno)
    {
        self.executable = executable
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let logDescriptor {
            posix_spawn_file_actions_adddup2(&actions, logDescriptor, 1)
            posix_spawn_file_actions_adddup2(&actions, logDescriptor, 2)
        }
        // Passed descriptors go to 3, 4, ... by way of numbers above all of them, so that no
        // move overwrites a descriptor still to be moved.
        let staging = (passing.max() ?? 2) + 1
        for (index, fd) in passing.enumerated() {
            posix_spawn_file_actions_adddup2(&actions, fd, staging + CInt(index))
        }
        for index in passing.indices {
            posix_spawn_file_actions_adddup2(&actions, staging + CInt(index), Self.childDescriptor(forPassed: index))
        }
        _ = clinux_spawn_closefrom(&actions, Self.childDescriptor(forPassed: passing.count))
        // The child must not inherit our blocked signal mask (the daemon blocks SIGTERM & co).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        clinux_sigset_empty(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        // An ignored signal stays ignored across exec: the daemon ignores SIGPIPE, gpsd must not.
        var pipe = sigset_t()
        clinux_sigset_empty(&pipe)
        clinux_sigset_add(&pipe, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &pipe)
        // Its own process group: Ctrl-C in the terminal reaches the parent only, which then stops
        // its children in order (a private gpsd dying first would read as a lost input).
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = [executable] + arguments
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, &cArguments, environ)
        guard status == 0 else { throw Errno(rawValue: status) }
        self.pid = pid
    }

    /// What a supervised child gets beyond a plain one (posix_spawn can give none of it).
    public struct Supervision: Sendable {
        /// Sent to the child when the *thread* that starts it ends (PR_SET_PDEATHSIG): start it
        /// from a thread that lives as long as the child should. The child checks after setting
        /// it that its parent has not already ended (then it does not run at all).
        public var deathSignal: Int32
        /// Credentials taken in the child before exec (nil: ours). Changing credentials clears
        /// the death signal, so a daemon that drops root itself would lose it: dropping here,
        /// before the signal is set, keeps it.
        public var user: (uid: uid_t, gid: gid_t)?
        /// systemd socket activation: the passed descriptors are announced to the child with
        /// LISTEN_FDS and LISTEN_PID (its own pid, which only the child knows).
        public var socketActivation: Bool

        public init(deathSignal: Int32 = SIGKILL, user: (uid: uid_t, gid: gid_t)? = nil, socketActivation: Bool = false)
        {
            self.deathSignal = deathSignal
            self.user = user
            self.socketActivation = socketActivation
        }
    }

    /// Starts a supervised child: like the plain initializer (standard descriptors, `passing`
    /// as 3, 4, ..., default signals, own process group), plus what `supervision` asks. Forks in
    /// C (`clinux_spawn_supervised`), where the child calls only async-signal-safe functions.
    public init(
        executable: String, arguments: [String], logDescriptor: CInt? = nil, passing: [CInt] = [],
        supervision: Supervision
    ) throws(Errno) {
        self.executable = executable
        let argv = [executable] + arguments
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        // Our environment without any LISTEN_* of our own (a socket-activated daemon's).
        var environment: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if !text.hasPrefix("LISTEN_") { environment.append(text) }
            index += 1
        }
        var listenPIDSlot: Int?
        if supervision.socketActivation {
            environment.append("LISTEN_FDS=\(passing.count)")
            listenPIDSlot = environment.count
            // Room for any pid; the child writes its own over the padding.
            environment.append("LISTEN_PID=" + String(repeating: "0", count: 20))
        }
        var cEnvironment: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { for pointer in cEnvironment { free(pointer) } }
        var pid: pid_t = 0
        let status = passing.withUnsafeBufferPointer { fds in
            cArguments.withUnsafeMutableBufferPointer { argvBuffer in
                cEnvironment.withUnsafeMutableBufferPointer { envBuffer in
                    executable.withCString { path in
                        var spawn = clinux_supervised_spawn(
                            path: path, argv: argvBuffer.baseAddress, envp: envBuffer.baseAddress,
                            listen_pid_entry: listenPIDSlot.map { envBuffer[$0] } ?? nil,
                            passing: fds.baseAddress, passing_count: CInt(fds.count), log_fd: logDescriptor ?? -1,
                            uid: supervision.user.map { CInt(bitPattern: $0.uid) } ?? -1,
                            gid: supervision.user.map { CInt(bitPattern: $0.gid) } ?? -1,
                            death_signal: supervision.deathSignal, parent_pid: getpid())
                        return clinux_spawn_supervised(&spawn, &pid)
                    }
                }
            }
        }
        guard status == 0 else { throw Errno(rawValue: status) }
        self.pid = pid
    }

    /// Non-blocking check: the termination if the child has ended (and is reaped now).
    public func poll() -> Termination? {
        var status: CInt = 0
        guard (try? valueOrErrno({ waitpid(pid, &status, WNOHANG) })) == pid else { return nil }
        return Self.termination(status)
    }

    /// The descriptor number the child sees for `passing[index]`.
    public static func childDescriptor(forPassed index: Int) -> CInt { 3 + CInt(index) }

    /// Waits for the child to end and reaps it.
    public func wait() -> Termination {
        if let done = poll() { return done }
        var status: CInt = 0
        _ = try? valueOrErrno { waitpid(pid, &status, 0) }  // ECHILD: already reaped
        return Self.termination(status)
    }

    /// Sends `signal`, then waits up to `graceMilliseconds` for the child to end, then SIGKILLs
    /// and reaps it. Never leaves a zombie.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, graceMilliseconds: Int = 2000) -> Termination {
        if let done = poll() { return done }
        _ = try? valueOrErrno { kill(pid, signal) }
        let deadline = monotonicNanoseconds() + Int64(graceMilliseconds) * 1_000_000
        while monotonicNanoseconds() < deadline {
            if let done = poll() { return done }
            sleep(nanoseconds: 5_000_000)
        }
        _ = try? valueOrErrno { kill(pid, SIGKILL) }
        var status: CInt = 0
        _ = try? valueOrErrno { waitpid(pid, &status, 0) }  // ECHILD: already reaped
        return Self.termination(status)
    }

    private static func termination(_ status: CInt) -> Termination {
        clinux_wifsignaled(status) != 0 ? .signalled(clinux_wtermsig(status)) : .exited(clinux_wexitstatus(status))
    }
}

/// The first executable named `name` on `PATH` or in the usual sbin folders (gpsd lives in
/// /usr/sbin, which is not on every user's PATH).
public func findExecutable(_ name: String) -> String? {
    if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/local/sbin"] {
        let candidate = directory + "/" + name
        if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
}
