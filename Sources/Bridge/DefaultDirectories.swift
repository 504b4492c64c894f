import Posix

// Where the daemon keeps its files when the configuration does not say (docs/configuration.md).

/// `$RUNTIME_DIRECTORY` (systemd), else `$XDG_RUNTIME_DIR/tmm-bridge`, else `/run/tmm-bridge`
/// for root, else `/tmp/tmm-bridge-UID`.
public func defaultRuntimeDirectory() -> String {
    if let systemd = CurrentProcess.environment("RUNTIME_DIRECTORY") {
        return systemd.split(separator: ":").first.map(String.init) ?? "/run/tmm-bridge"
    }
    if let xdg = CurrentProcess.environment("XDG_RUNTIME_DIR") { return xdg + "/tmm-bridge" }
    return CurrentProcess.userID == 0 ? "/run/tmm-bridge" : "/tmp/tmm-bridge-\(CurrentProcess.userID)"
}

/// `$STATE_DIRECTORY` (systemd), else `/var/lib/tmm-bridge` for root, else
/// `$XDG_STATE_HOME/tmm-bridge`, else `~/.local/state/tmm-bridge`.
public func defaultStateDirectory() -> String {
    if let systemd = CurrentProcess.environment("STATE_DIRECTORY") {
        return systemd.split(separator: ":").first.map(String.init) ?? "/var/lib/tmm-bridge"
    }
    if CurrentProcess.userID == 0 { return "/var/lib/tmm-bridge" }
    if let xdg = CurrentProcess.environment("XDG_STATE_HOME") { return xdg + "/tmm-bridge" }
    if let home = CurrentProcess.environment("HOME") { return home + "/.local/state/tmm-bridge" }
    return "/tmp/tmm-bridge-state-\(CurrentProcess.userID)"
}
