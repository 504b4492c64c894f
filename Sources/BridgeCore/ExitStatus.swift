// Exit statuses (docs/configuration.md) and the errors that carry them: each start-up concern has
// its own typed error enum (PortBindingError, ReceiverInputError, BridgeServerError; RunError in
// the CLI), and each case says which status it causes. `ExitStatus` is the one map from a kind of
// failure to the number the process exits with.

/// How the process ends (sysexits.h numbers where one fits).
public enum ExitStatus: Int32, Sendable, Hashable {
    /// Served until told to stop.
    case ok = 0
    /// Anything else: the system refused a resource, a thread could not start.
    case failure = 1
    /// The command line is wrong (EX_USAGE).
    case usage = 64
    /// The daemon a client command asks is not running (EX_UNAVAILABLE): `tmm-bridge status`.
    case unavailable = 69
    /// The control socket is there but this user may not open it (EX_NOPERM).
    case noPermission = 77
    /// The privilege drop the system should have allowed failed (EX_OSERR).
    case privilegeDropFailed = 71
    /// After the privilege drop, a directory the daemon must write is not writable by its user
    /// (EX_CANTCREAT).
    case cannotCreate = 73
    /// The configuration, or state it points at, is wrong (EX_CONFIG): systemd does not restart.
    case badConfiguration = 78
}

/// An error that ends the process, with the status it ends it with and a message that names the
/// thing and the fix.
public protocol ExitStatusError: Error, CustomStringConvertible {
    var exitStatus: ExitStatus { get }
}
