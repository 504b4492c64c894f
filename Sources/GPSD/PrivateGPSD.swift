import Glibc
import Posix
import Synchronization

/// A gpsd of our own, for machines where no trusted system gpsd answers (and always for the
/// demo, replays and tests): `gpsd -N -n -b -S PORT`, supervised: restarted when it dies, stopped
/// on shutdown.
///
/// - `-N`: stay in the foreground, so it is our child and we see it die.
/// - `-n`: poll devices without waiting for a client.
/// - `-b`: read-only; never write probe strings to a receiver. Left out when
///   `Configuration.readOnly` is false (`gpsd-read-only = no`): gpsd 3.22 locks USB and RS-232
///   receivers (TIOCEXCL), so only gpsd itself can write RTCM corrections to them for a bridge
///   that is not root (`&` on its control socket, CorrectionsWriter), and a read-only gpsd refuses.
///   Such a gpsd probes every device it opens with its drivers' strings, and answers a `+` for
///   one that says nothing only after ~3 s (GPSDControlSocket.addReplyTimeoutMilliseconds).
///
/// **Its sockets are ours.** The bridge binds the TCP listener (127.0.0.1:PORT) and the control
/// socket itself and hands them to gpsd by systemd socket activation (LISTEN_FDS, LISTEN_PID;
/// gpsd 3.22 takes fd 3 as the control socket and fd 4 as its listener). The bridge keeps its
/// copies for as long as this object lives, so between two gpsd runs the port stays bound, by
/// us: no other user can bind it and pose as gpsd (a different user cannot join it with
/// SO_REUSEPORT), and connections made meanwhile wait in the backlog for the next gpsd.
///
/// **It dies with us.** It is started on the supervisor thread (PR_SET_PDEATHSIG is tied to the
/// thread that forks) with SIGKILL as its parent-death signal. Started as root it is given the
/// `gpsd` user's credentials before exec: gpsd dropping root by itself would clear the signal.
/// Its pid and start time are recorded in `recordPath`; a start finds a gpsd a killed bridge
/// left behind and ends it, when it is provably that process (same start time, same executable).
///
/// gpsd exits by itself once it has no clients and no devices; the supervisor restarts it.
public final class PrivateGPSD: Sendable {
    public struct Configuration: Sendable {
        /// The gpsd binary (found on PATH or in /usr/sbin by default).
        public var executable: String
        /// TCP port on loopback for clients.
        public var port: UInt16
        /// The control socket path (bound by us and passed to gpsd).
        public var controlSocket: String
        /// Where gpsd's own output goes.
        public var logPath: String
        /// Where the running gpsd's pid and start time are recorded (nil: not recorded).
        public var recordPath: String?
        /// Devices to open at start (opened with gpsd's credentials, like later ones).
        public var devices: [String]
        /// Run gpsd with `-b` (never write to a device). False lets it write: its probes, and the
        /// corrections CorrectionsWriter hands it.
        public var readOnly = true
        /// Whom gpsd runs as when the bridge is root (nil: the `gpsd` user). A bridge that drops
        /// root after start-up gives gpsd its own target user, so that after the drop it can still
        /// signal gpsd (stop, restart) and restart it with the same credentials.
        public var user: (uid: uid_t, gid: gid_t)?
        /// Delay before restarting a gpsd that died; doubles up to `maximumRestartDelay`.
        public var restartDelay: Int64 = 200_000_000
        public var maximumRestartDelay: Int64 = 5_000_000_000
        /// The listener for `port`, when it is bound already (`inRuntimeDirectory`).
        let heldListener: HeldListener?

        /// The files gpsd and its supervisor create: what a bridge that drops root hands over.
        public var files: [String] { [controlSocket, logPath] + (recordPath.map { [$0] } ?? []) }

        public init(executable: String, port: UInt16, controlSocket: String, logPath: String, devices: [String] = []) {
            self.executable = executable
            self.port = port
            self.controlSocket = controlSocket
            self.logPath = logPath
            self.devices = devices
            heldListener = nil
        }

        private init(executable: String, listener: HeldListener, runtimeDirectory: String, devices: [String]) {
            self.executable = executable
            port = listener.port
            controlSocket = Self.controlSocket(inRuntimeDirectory: runtimeDirectory)
            logPath = runtimeDirectory + "/gpsd.log"
            recordPath = runtimeDirectory + "/gpsd.pid"
            self.devices = devices
            heldListener = listener
        }

        /// The control socket of a private gpsd under `runtimeDirectory` (known before it starts).
        public static func controlSocket(inRuntimeDirectory runtimeDirectory: String) -> String {
            runtimeDirectory + "/gpsd.sock"
        }

        /// A configuration under `runtimeDirectory` on a loopback port bound now and held from
        /// here on (no window in which another process could take it).
        public static func inRuntimeDirectory(
            _ runtimeDirectory: String, devices: [String] = []
        ) throws(PrivateGPSDError)
            -> Configuration
        {
            guard let executable = findExecutable("gpsd") else { throw .gpsdNotInstalled }
            let listener = try HeldListener(port: 0)
            return Configuration(
                executable: executable, listener: listener, runtimeDirectory: runtimeDirectory,
                devices: devices)
        }
    }

    /// A TCP listener on 127.0.0.1 that gpsd serves and we hold (blocking, as systemd passes them).
    final class HeldListener: Sendable {
        let port: UInt16
        /// Its descriptor number, to pass to gpsd (owned by `listener`).
        let descriptor: CInt
        private let listener: Mutex<TCPListener?>

        init(port: UInt16) throws(PrivateGPSDError) {
            let listener: TCPListener
            do throws(ListenerError) {
                listener = try TCPListener.bind(address: "127.0.0.1", port: port)
            } catch {
                throw .cannotBind(error)
            }
            do throws(Errno) { try listener.descriptor.setNonBlocking(false) } catch {
                throw .cannotBind(ListenerError(operation: "fcntl", endpoint: "127.0.0.1:\(port)", errno: error))
            }
            self.port = listener.localPort
            descriptor = listener.descriptor.rawValue
            self.listener = Mutex(listener)
        }
    }

    /// The control socket we bind and gpsd serves; the path is removed when it goes.
    final class HeldControlSocket: Sendable {
        let descriptor: CInt
        private let listener: Mutex<UnixListener?>

        init(path: String) throws(PrivateGPSDError) {
            let listener: UnixListener
            do throws(ListenerError) {
                listener = try UnixListener.bind(path: path, mode: 0o600)
            } catch {
                throw .cannotBind(error)
            }
            do throws(Errno) { try listener.descriptor.setNonBlocking(false) } catch {
                throw .cannotBind(ListenerError(operation: "fcntl", endpoint: path, errno: error))
            }
            descriptor = listener.descriptor.rawValue
            self.listener = Mutex(listener)
        }
    }

    public let configuration: Configuration
    private let state = Mutex(State())
    private let log: Logger

    private struct State {
        var child: ChildProcess?
        var restarts = 0
        var stopping = false
        var supervisor: OSThread?
        /// The first launch's outcome, for `start()` (set by the supervisor thread).
        var firstLaunch: Result<Void, PrivateGPSDError>?
        /// Our sockets, held from `start()` to `stop()` and passed to every gpsd we start.
        var sockets: (listener: HeldListener, control: HeldControlSocket)?
    }

    public init(_ configuration: Configuration, log: Logger) {
        self.configuration = configuration
        self.log = log
    }

    /// Times gpsd was restarted after dying.
    public var restarts: Int { state.withLock { $0.restarts } }
    /// The running gpsd's pid, if any.
    public var pid: pid_t? { state.withLock { $0.child?.pid } }

    /// Ends a gpsd a previous run recorded, binds the sockets, starts gpsd on the supervisor
    /// thread, waits until it answers, and keeps supervising it.
    public func start() throws(PrivateGPSDError) {
        endRecordedGPSD()
        let listener: HeldListener
        if let held = configuration.heldListener {
            listener = held
        } else {
            listener = try HeldListener(port: configuration.port)
        }
        let control = try HeldControlSocket(path: configuration.controlSocket)
        state.withLock { $0.sockets = (listener, control) }
        let supervisor: OSThread
        do {
            supervisor = try OSThread(name: "gpsd-supervisor") { [self] in supervise() }
        } catch {
            throw .spawnFailed(error)
        }
        state.withLock { $0.supervisor = supervisor }
        while true {
            if let outcome = state.withLock({ $0.firstLaunch }) {
                if case .failure(let error) = outcome {
                    supervisor.join()
                    state.withLock { state in
                        state.supervisor = nil
                        state.sockets = nil
                    }
                    throw error
                }
                return
            }
            sleep(nanoseconds: 2_000_000)
        }
    }

    /// Stops supervising and terminates gpsd (SIGTERM, then SIGKILL after 2 s).
    public func stop() {
        let supervisor = state.withLock { state in
            state.stopping = true
            return state.supervisor
        }
        // The supervisor stops its gpsd on the way out (see supervise()).
        supervisor?.join()
        state.withLock { $0.sockets = nil }
    }

    /// Starts gpsd with our sockets and waits until it answers. Runs on the supervisor thread.
    private func launch() throws(PrivateGPSDError) {
        // O_NOFOLLOW: the log lives in the bridge's own directory (checked by makeDirectories), but
        // a symlink planted as gpsd.log must never redirect gpsd's output into someone's files.
        let logFD = Glibc.open(configuration.logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        defer { if logFD >= 0 { Glibc.close(logFD) } }
        // Only a gpsd that never has to drop root keeps its parent-death signal.
        var supervision = ChildProcess.Supervision(deathSignal: SIGKILL, socketActivation: true)
        if geteuid() == 0 {
            if let user = configuration.user {
                supervision.user = user
            } else if let user = Credentials.user(named: "gpsd") {
                supervision.user = user
            } else {
                log.warning(
                    "no 'gpsd' user: the private gpsd runs as root "
                        + "and drops to its own choice, which clears its parent-death signal"
                )
            }
        }
        // fd 3: the control socket, fd 4: the TCP listener (gpsd's order for systemd's sockets).
        guard let sockets = state.withLock({ $0.sockets }) else { throw .spawnFailed(.badFileDescriptor) }
        let passed = [sockets.control.descriptor, sockets.listener.descriptor]
        let arguments =
            ["-N", "-n"] + (configuration.readOnly ? ["-b"] : []) + ["-S", String(configuration.port)]
            + configuration.devices
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable: configuration.executable, arguments: arguments,
                logDescriptor: logFD >= 0 ? logFD : nil, passing: passed, supervision: supervision)
        } catch {
            throw .spawnFailed(error)
        }
        do {
            try waitUntilAnswering(child)
        } catch {
            child.stop()
            throw error
        }
        state.withLock { $0.child = child }
        record(child)
        log(
            "private gpsd started: pid \(child.pid), port \(configuration.port), control \(configuration.controlSocket)"
                + (configuration.readOnly ? "" : ", writable (no -b: it probes receivers, and writes corrections)")
        )
    }

    /// gpsd says VERSION first to every client. A bare connect proves nothing here: our own
    /// listener queues connections whether or not a gpsd serves it.
    private func waitUntilAnswering(_ child: ChildProcess) throws(PrivateGPSDError) {
        // gpsd accepts connections 6-9 ms after exec here; allow 3 s on a loaded machine.
        let deadline = monotonicNanoseconds() + 3_000_000_000
        let probe: StreamSocket
        do { probe = try StreamSocket.connect(loopbackPort: configuration.port) } catch {
            throw .notListening(port: configuration.port, log: configuration.logPath)
        }
        var line: [UInt8] = []
        while monotonicNanoseconds() < deadline {
            if let ended = child.poll() { throw .exitedAtStart(ended, log: configuration.logPath) }
            do {
                line += try probe.readUntil(10, limit: 4096, milliseconds: 50)
            } catch {
                if error == .timedOut { continue }
                break
            }
            if line.last == 10 || line.count >= 4096 { break }
        }
        guard String(decoding: line, as: UTF8.self).contains("\"class\":\"VERSION\"") else {
            if let ended = child.poll() { throw .exitedAtStart(ended, log: configuration.logPath) }
            throw .notListening(port: configuration.port, log: configuration.logPath)
        }
    }

    private func supervise() {
        do {
            try launch()
            state.withLock { $0.firstLaunch = .success(()) }
        } catch {
            state.withLock { $0.firstLaunch = .failure(error) }
            return
        }
        var delay = configuration.restartDelay
        while true {
            sleep(nanoseconds: 50_000_000)
            let (stopping, child) = state.withLock { ($0.stopping, $0.child) }
            if stopping {
                child?.stop()
                state.withLock { $0.child = nil }
                removeRecord()
                return
            }
            if let child, let ended = child.poll() {
                log.warning("private gpsd (pid \(child.pid)) \(ended); restarting in \(delay / 1_000_000) ms")
                state.withLock { $0.child = nil }
                sleep(nanoseconds: delay)
                if state.withLock({ $0.stopping }) { continue }
                relaunch(&delay)
            } else if child == nil {
                relaunch(&delay)
            }
        }
    }

    private func relaunch(_ delay: inout Int64) {
        do {
            try launch()
            state.withLock { $0.restarts += 1 }
            delay = configuration.restartDelay
        } catch {
            log.error("private gpsd restart failed: \(error)")
            sleep(nanoseconds: delay)
            delay = min(delay * 2, configuration.maximumRestartDelay)
        }
    }

    // MARK: the record of the running gpsd

    /// "PID STARTTIME EXECUTABLE": enough to know a pid is still that process after pid reuse.
    private func record(_ child: ChildProcess) {
        guard let path = configuration.recordPath, let stat = ProcessStat.of(child.pid),
            let executable = processExecutable(child.pid)
        else { return }
        do {
            try AtomicFile.write(Array("\(child.pid) \(stat.startTime) \(executable)\n".utf8), to: path, mode: 0o644)
        } catch {
            log.warning("cannot record the private gpsd's pid: \(error)")
        }
    }

    private func removeRecord() {
        if let path = configuration.recordPath { unlink(path) }
    }

    /// A recorded gpsd still running means a bridge was killed without stopping it. It is ended
    /// only when it provably is that process; a pid now used by something else is left alone.
    private func endRecordedGPSD() {
        guard let path = configuration.recordPath else { return }
        // Only a record we wrote (checked on the descriptor read): one planted by someone else
        // could name any gpsd on the machine (the system's has the same executable, and its
        // start time is public).
        let read: [UInt8]?
        do {
            read = try AtomicFile.read(path, limit: 4096, trusting: .ours(mode: 0o644))
        } catch {
            unlink(path)
            if error.isUntrusted {
                log.warning(
                    "ignoring the private gpsd record at \(path): it is not a file only this user can write (\(error))")
            }
            return
        }
        guard let bytes = read else { return }
        defer { unlink(path) }
        let fields =
            String(decoding: bytes, as: UTF8.self).split(separator: "\n").first?
            .split(separator: " ", maxSplits: 2) ?? []
        guard fields.count == 3, let pid = pid_t(fields[0]), pid > 1, let startTime = UInt64(fields[1]) else {
            log.warning("ignoring a malformed private gpsd record at \(path)")
            return
        }
        let executable = String(fields[2])
        guard let stat = ProcessStat.of(pid), stat.state != "Z" else { return }  // gone already
        guard stat.startTime == startTime, processExecutable(pid) == executable else {
            log("recorded private gpsd pid \(pid) is now another process: left alone")
            return
        }
        log("ending the private gpsd (pid \(pid)) a previous run left behind")
        func ended() -> Bool {
            guard let now = ProcessStat.of(pid) else { return true }
            return now.state == "Z" || now.startTime != startTime
        }
        kill(pid, SIGTERM)
        let deadline = monotonicNanoseconds() + 2_000_000_000
        while !ended() && monotonicNanoseconds() < deadline { sleep(nanoseconds: 10_000_000) }
        if !ended() {
            kill(pid, SIGKILL)
            let last = monotonicNanoseconds() + 1_000_000_000
            while !ended() && monotonicNanoseconds() < last { sleep(nanoseconds: 10_000_000) }
        }
    }
}

public enum PrivateGPSDError: Error, Sendable, CustomStringConvertible {
    case gpsdNotInstalled
    case spawnFailed(Errno)
    case exitedAtStart(ChildProcess.Termination, log: String)
    case notListening(port: UInt16, log: String)
    case cannotBind(ListenerError)

    public var description: String {
        switch self {
        case .gpsdNotInstalled: "gpsd is not installed (apt-get install gpsd); it is needed when no gpsd runs"
        case .spawnFailed(let errno): "cannot start gpsd: \(errno)"
        case .exitedAtStart(let how, let log): "gpsd \(how) right after start; see \(log)"
        case .notListening(let port, let log): "gpsd did not answer on port \(port) within 3 s; see \(log)"
        case .cannotBind(let error): "cannot bind the private gpsd's socket: \(error)"
        }
    }
}
