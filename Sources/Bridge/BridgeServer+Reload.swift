import BridgeCore
import HTTP1
import Logging
import Posix

// SIGHUP: read the configuration again and apply what a running daemon can (docs/configuration.md,
// "Reload"; BridgeConfiguration.reloadableOptions). The file is read and parsed on the worker
// thread, not the io thread: it is small and local, but the io thread never waits on a disk, and
// the worker already does the daemon's other file work; the result comes back through
// `workerResults`. Under systemd, RELOADING=1 goes out when the signal is read and READY=1 once the
// outcome is logged, applied or not (systemd.service(5), Type=notify-reload's protocol).

/// Where a reload is.
enum ReloadState {
    case idle
    /// Being read on the worker; `again`: another SIGHUP came meanwhile.
    case reading(again: Bool)
}

extension BridgeServer {
    /// A reload signal was read: start reading the configuration on the worker (or note that one
    /// more is wanted, when a read is under way).
    func startReload(signal: CInt) {
        guard let read = environment.reloadConfiguration else {
            log.warning(
                "signal \(signal): nothing to reload (the configuration was not read from a file or command line)")
            return
        }
        if case .reading = reload {
            reload = .reading(again: true)
            return
        }
        log.notice("signal \(signal): reloading the configuration")
        if environment.notifySystemd {
            _ = try? SDNotify.notify("RELOADING=1\nMONOTONIC_USEC=\(monotonicNanoseconds() / 1000)")
        }
        reload = .reading(again: false)
        let results = workerResults
        let submitted = worker.submit { results.post(.configurationRead(read())) }
        if !submitted {
            reload = .idle
            log.error("cannot reload: the daemon is stopping")
            notifyReady()
        }
    }

    /// The configuration was read again: applies what can change while running and names what
    /// needs a restart; a configuration that cannot be read or is invalid changes nothing.
    func applyReloaded(_ result: Result<BridgeConfiguration, ConfigurationError>) {
        let again: Bool
        if case .reading(let wanted) = reload { again = wanted } else { again = false }
        reload = .idle
        switch result {
        case .failure(let error):
            log.error("reload: configuration: \(error); keeping the running configuration")
        case .success(let read):
            let changed = configuration.changedOptions(to: read)
            for name in changed where !BridgeConfiguration.reloadableOptions.contains(name) {
                log.warning("\(name) changed: needs a restart")
            }
            let applied = changed.filter(BridgeConfiguration.reloadableOptions.contains)
            apply(configuration.reloaded(from: read))
            log.notice(
                "reloaded the configuration: "
                    + (applied.isEmpty
                        ? "no option that applies while running changed" : "applied " + applied.joined(separator: ", "))
            )
            if applied.contains("registration") || applied.contains("allow-app-id") { log(registrationSummary) }
            if applied.contains("allowed-origins") { log(allowedOriginsSummary) }
        }
        notifyReady()
        if again { startReload(signal: SignalNumber.hangUp) }
    }

    /// Switches to `next` (the running configuration with reloadable options replaced): each part
    /// takes what it uses.
    private func apply(_ next: BridgeConfiguration) {
        configuration = next
        log.level = next.logLevel
        // New connections take these; open ones keep what they were accepted with.
        clients.reconfigure(next)
        // Registrations, Access Code V1 and V2 judge by the new policy.
        registrations.reconfigure(next)
        hub.reconfigure(next)
    }

    /// "registration: allowlist (2 allowed ids)": the policy in force (start and reload say it).
    var registrationSummary: String {
        "registration: \(configuration.registration.rawValue)"
            + (configuration.registration == .allowlist
                ? " (\(configuration.allowedApplicationIDs.count) allowed ids)" : "")
    }

    /// The web origins allowed now, as start and reload say them.
    var allowedOriginsSummary: String {
        switch configuration.allowedOrigins {
        case .any: "allowed-origins: * (any web page)"
        case .only(let origins):
            "allowed-origins: \(origins.map(\.serialization).sorted().joined(separator: " "))"
                + " (other web origins get 403)"
        }
    }

    private func notifyReady() {
        if environment.notifySystemd { _ = try? SDNotify.notify("READY=1") }
    }
}
