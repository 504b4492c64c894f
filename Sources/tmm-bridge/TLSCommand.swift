// `tmm-bridge tls ca`: prints the local certificate authority's certificate, so a user can trust
// it on this box, in browsers and on phones (docs/tls.md). The daemon serves the secure ports
// with a certificate this CA issued unless `tls-certificate` names another.
import Bridge
import Posix
import TLS

struct TLSCommand: Equatable {
    var stateDirectory: String?

    static let synopsis = "       tmm-bridge tls ca [--state-dir DIR]"
    static let summary = """
        tls ca   Print the local certificate authority's certificate (PEM) that issued the secure
                 ports' certificate, to install as trusted (docs/tls.md). Made now if the daemon has
                 not made it yet, in DIR/tls/ (default: the state directory run uses).
        """

    static func parse(_ arguments: ArraySlice<String>) throws(UsageError) -> TLSCommand {
        var rest = arguments
        guard let verb = rest.popFirst() else { throw UsageError(message: "tls needs a subcommand: ca") }
        guard verb == "ca" else { throw UsageError(message: "tls: unknown subcommand '\(verb)' (only: ca)") }
        var command = TLSCommand()
        while let argument = rest.popFirst() {
            switch argument {
            case "--state-dir":
                guard let value = rest.popFirst(), !value.isEmpty else {
                    throw UsageError(message: "--state-dir needs a DIR")
                }
                command.stateDirectory = value
            default:
                throw UsageError(message: "tls ca: unknown argument '\(argument)'")
            }
        }
        return command
    }

    func run() -> Int32 {
        let state = stateDirectory ?? defaultStateDirectory()
        let pem: [UInt8]
        do {
            pem = try authorityPEM(stateDirectory: state)
        } catch {
            Output.error("tmm-bridge: tls ca: \(error)\n")
            return ExitCode.failure
        }
        Output.write(pem.span, to: 1)
        return ExitCode.ok
    }

    /// The CA's PEM, made first (with the server certificate, as the daemon would) if missing.
    /// Read from a state directory of this user's or another's (root printing the daemon's CA);
    /// made only in one of this user's: what root made in the daemon's directory, the daemon
    /// could not use.
    private func authorityPEM(stateDirectory state: String) throws -> [UInt8] {
        let owner = (try? PathStatus.of(state)).map(\.owner)
        if let pem = try LocalCertificateAuthority.authorityPEM(stateDirectory: state, alsoOwnedBy: owner) {
            return pem
        }
        if let owner, owner != CurrentProcess.effectiveUserID {
            let name = Credentials.userName(owner)
            throw NotMade(
                description: "no local CA in \(state) yet, and the directory belongs to uid \(owner)"
                    + (name.map { " (\($0))" } ?? "")
                    + ", not to this user (uid \(CurrentProcess.effectiveUserID)): run this as that user"
                    + (name.map { " (sudo -u \($0) tmm-bridge tls ca)" } ?? "")
                    + ", or start the daemon once (it makes the CA)")
        }
        let made = try LocalCertificateAuthority.load(stateDirectory: state)
        Output.error(
            "tmm-bridge: made a local CA and server certificate in "
                + "\(LocalCertificateAuthority.directory(inStateDirectory: state))\n"
        )
        return try made.authority.pem()
    }
}

/// Why `tls ca` made no CA.
private struct NotMade: Error, CustomStringConvertible {
    var description: String
}
