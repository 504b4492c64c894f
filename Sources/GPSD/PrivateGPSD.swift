import Glibc
import Posix
import Synchronization

/// A gpsd of our own, for machines where no system gpsd answers (and for the demo and tests):
/// `gpsd -N -n -b -S PORT -F SOCKET`, supervised: restarted when it dies, stopped on shutdown.
///
/// - `-N`: stay in the foreground, so it is our child and we see it die.
/// - `-n`: poll devices without waiting for a client.
/// - `-b`: read-only; never write probe strings to a receiver.
/// gpsd drops root after start-up (to user gpsd, group dialout): devices given at start are
/// opened as root; devices added later must be readable by gpsd (see GPSDControlSocket).
/// gpsd also exits by itself once it has no clients and no devices; the supervisor restarts it.
public final class PrivateGPSD: Sendable {
    public struct Configuration: Sendable {
        /// The gpsd binary (found on PATH or in /usr/sbin by default).
        public var executable: String
        /// TCP port on loopback for clients.
        public var port: UInt16
        /// The control socket path (`-F`).
        public var controlSocket: String
        /// Where gpsd's own output goes.
        public var logPath: String
        /// Devices to open at start (as root).
        public var devices: [String]
        /// Delay before restarting a gpsd that died; doubles up to `maximumRestartDelay`.
        public var restartDelay: Int64 = 200_000_000
        public var maximumRestartDelay: Int64 = 5_000_000_000

        public init(executable: String, port: UInt16, controlSocket: String, logPath: String, devices: [String] = []) {
            self.executable = executable
            self.port = port
            self.controlSocket = controlSocket
            self.logPath = logPath
            self.devices = devices
        }

        /// A configuration under `runtimeDirectory` with a free loopback port.
        public static func inRuntimeDirectory(_ runtimeDirectory: String, devices: [String] = []) throws(PrivateGPSDError)
            -> Configuration
        {
            guard let executable = findExecutable("gpsd") else { throw .gpsdNotInstalled }
            guard let port = freeLoopbackPort() else { throw .noFreePort }
            return Configuration(executable: executable, port: port, controlSocket: runtimeDirectory + "/gpsd.sock",
                                 logPath: runtimeDirectory + "/gpsd.log", devices: devices)
        }
    }

    public let configuration: Configuration
    private let state = Mutex(State())
    private let log: @Sendable (String) -> Void

    private struct State {
        var child: ChildProcess?
        var restarts = 0
        var stopping = false
        var supervisor: OSThread?
    }

    public init(_ configuration: Configuration, log: @escaping @Sendable (String) -> Void) {
        self.configuration = configuration
        self.log = log
    }

    /// Times gpsd was restarted after dying.
    public var restarts: Int { state.withLock { $0.restarts } }
    /// The running gpsd's pid, if any.
    public var pid: pid_t? { state.withLock { $0.child?.pid } }

    /// Starts gpsd, waits until it accepts connections, and starts supervising it.
    public func start() throws(PrivateGPSDError) {
        try launch()
        let supervisor: OSThread
        do {
            supervisor = try OSThread(name: "gpsd-supervisor") { [self] in supervise() }
        } catch {
            throw .spawnFailed(error)
        }
        state.withLock { $0.supervisor = supervisor }
    }

    /// Stops supervising and terminates gpsd (SIGTERM, then SIGKILL after 2 s).
    public func stop() {
        let (child, supervisor) = state.withLock { state in
            state.stopping = true
            return (state.child, state.supervisor)
        }
        supervisor?.join()
        child?.stop()
        state.withLock { $0.child = nil }
    }

    private func launch() throws(PrivateGPSDError) {
        unlink(configuration.controlSocket)
        let logFD = Glibc.open(configuration.logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        defer { if logFD >= 0 { Glibc.close(logFD) } }
        let arguments = ["-N", "-n", "-b", "-S", String(configuration.port), "-F", configuration.controlSocket]
            + configuration.devices
        let child: ChildProcess
        do {
            child = try ChildProcess(executable: configuration.executable, arguments: arguments,
                                     logDescriptor: logFD >= 0 ? logFD : nil)
        } catch {
            throw .spawnFailed(error)
        }
        // gpsd accepts connections 6-9 ms after exec here; allow 3 s on a loaded machine.
        let deadline = monotonicNanoseconds() + 3_000_000_000
        while !loopbackPortAnswers(configuration.port) {
            if let ended = child.poll() { throw .exitedAtStart(ended, log: configuration.logPath) }
            guard monotonicNanoseconds() < deadline else {
                child.stop()
                throw .notListening(port: configuration.port, log: configuration.logPath)
            }
            sleep(nanoseconds: 5_000_000)
        }
        state.withLock { $0.child = child }
        log("private gpsd started: pid \(child.pid), port \(configuration.port), control \(configuration.controlSocket)")
    }

    private func supervise() {
        var delay = configuration.restartDelay
        while true {
            sleep(nanoseconds: 50_000_000)
            let (stopping, child) = state.withLock { ($0.stopping, $0.child) }
            if stopping { return }
            if let child, let ended = child.poll() {
                log("private gpsd (pid \(child.pid)) \(ended); restarting in \(delay / 1_000_000) ms")
                state.withLock { $0.child = nil }
                sleep(nanoseconds: delay)
                if state.withLock({ $0.stopping }) { return }
                do {
                    try launch()
                    state.withLock { $0.restarts += 1 }
                    delay = configuration.restartDelay
                } catch {
                    log("private gpsd restart failed: \(error)")
                    delay = min(delay * 2, configuration.maximumRestartDelay)
                }
            } else if child == nil {
                do {
                    try launch()
                    state.withLock { $0.restarts += 1 }
                    delay = configuration.restartDelay
                } catch {
                    log("private gpsd restart failed: \(error)")
                    sleep(nanoseconds: delay)
                    delay = min(delay * 2, configuration.maximumRestartDelay)
                }
            }
        }
    }
}

public enum PrivateGPSDError: Error, Sendable, CustomStringConvertible {
    case gpsdNotInstalled
    case noFreePort
    case spawnFailed(Errno)
    case exitedAtStart(ChildProcess.Termination, log: String)
    case notListening(port: UInt16, log: String)

    public var description: String {
        switch self {
        case .gpsdNotInstalled: "gpsd is not installed (apt-get install gpsd); it is needed when no gpsd runs"
        case .noFreePort: "no free TCP port on loopback for a private gpsd"
        case .spawnFailed(let errno): "cannot start gpsd: \(errno)"
        case .exitedAtStart(let how, let log): "gpsd \(how) right after start; see \(log)"
        case .notListening(let port, let log): "gpsd did not listen on port \(port) within 3 s; see \(log)"
        }
    }
}
