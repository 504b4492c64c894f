import BridgeCore
import Fleet
import Posix

/// Why the server could not start or stopped serving.
public enum BridgeServerError: ExitStatusError, Sendable {
    /// No epoll instance, timer or stop event (exit 1).
    case eventLoop(Errno)
    /// The registry file is not what the bridge writes (exit 78).
    case registry(ApplicationRegistry.Failure)
    /// The state directory cannot be made or trusted (exit 78).
    case stateDirectory(String, String)
    /// The TMM servers could not be bound (its own status).
    case ports(PortBindingError)
    /// Another bridge answers on the control socket (exit 1).
    case alreadyRunning(controlSocket: String)
    /// The runtime directory is another user's, a symlink or not a directory (exit 78).
    case runtimeDirectory(AtomicFile.Failure)
    /// The control socket cannot be opened (exit 1).
    case controlSocket(String, ListenerError)
    /// The access-code worker thread did not start (exit 1).
    case accessCodeWorker(Errno)
    /// The loop's descriptors could not be registered (exit 1).
    case eventLoopStart(Errno)
    /// Waiting for events failed (exit 1).
    case eventLoopWait(Errno)
    /// The TLS certificate or key, or the Access Code V2 key, cannot be loaded or made (exit 78
    /// for a configured certificate or a file of the state directory that is not the daemon's,
    /// 1 for other failures of the state directory's materials).
    case tls(SecureMaterialsError)
    /// The settings file is unreadable or not what the bridge writes (exit 78).
    case settings(String, String)
    /// Fleet publishing's spool cannot be used (exit 78: a directory or disk to fix).
    case fleetSpool(SpoolError)
    /// A TLS file of fleet publishing cannot be read by the daemon's user (exit 78).
    case fleetFile(option: String, path: String, Errno)

    public var exitStatus: ExitStatus {
        switch self {
        case .registry, .stateDirectory, .runtimeDirectory, .settings, .fleetSpool, .fleetFile: .badConfiguration
        case .tls(let error): error.isConfiguration ? .badConfiguration : .failure
        case .ports(let error): error.exitStatus
        case .eventLoop, .alreadyRunning, .controlSocket, .accessCodeWorker, .eventLoopStart, .eventLoopWait: .failure
        }
    }

    public var description: String {
        switch self {
        case .eventLoop(let error): "cannot create the event loop: \(error)"
        case .registry(let error): "\(error)"
        case .stateDirectory(let path, let reason): "state directory \(path): \(reason)"
        case .ports(let error): error.description
        case .alreadyRunning(let path):
            "another tmm-bridge is running: its control socket \(path) answers "
                + "(stop it, or give this one its own runtime-dir)"
        case .runtimeDirectory(let error): "runtime directory: \(error)"
        case .controlSocket(let path, let error): "cannot open the control socket \(path): \(error)"
        case .accessCodeWorker(let error): "cannot start the access-code worker: \(error)"
        case .eventLoopStart(let error): "cannot start the event loop: \(error)"
        case .eventLoopWait(let error): "epoll_wait failed: \(error)"
        case .tls(let error): error.description
        case .settings(let path, let reason): "settings \(path): \(reason)"
        case .fleetSpool(let error):
            "mqtt spool: \(error): the positions of an outage could not be kept; fix it (the directory must be "
                + "the daemon user's, on a writable disk) or leave out mqtt"
        case .fleetFile(let option, let path, let error):
            "\(option) \(path) cannot be read by the daemon's user (\(error)); the broker's TLS needs it at "
                + "every connection: make it readable (e.g. group tmm-bridge, mode 0640) or put it elsewhere"
        }
    }
}
