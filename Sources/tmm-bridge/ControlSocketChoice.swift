import Bridge

/// Which daemon a client command (`open`, `status`) talks to: `--runtime-dir DIR` (its
/// `control.sock`) or `--control PATH`, else the runtime directory `run` uses by default.
struct ControlSocketChoice: Equatable {
    var runtimeDirectory: String?
    var controlSocket: String?

    /// Takes `argument` (and its value from `rest`) when it is one of the two options; false
    /// when it is not.
    mutating func parse(_ argument: String, _ rest: inout ArraySlice<String>) throws(UsageError) -> Bool {
        switch argument {
        case "--runtime-dir":
            guard let value = rest.popFirst() else { throw UsageError(message: "--runtime-dir needs a DIR") }
            runtimeDirectory = value
        case "--control":
            guard let value = rest.popFirst() else { throw UsageError(message: "--control needs a PATH") }
            controlSocket = value
        default:
            return false
        }
        return true
    }

    /// The socket's path.
    var path: String {
        controlSocket ?? BridgeServer.controlSocketPath(runtimeDirectory: runtimeDirectory ?? defaultRuntimeDirectory())
    }
}
