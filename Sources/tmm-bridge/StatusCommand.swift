// `tmm-bridge status`: what the running daemon is doing, asked over its control socket
// (ControlProtocol's STATUS request; the daemon assembles a DaemonStatus). A compact report for
// people, or the JSON document itself with --json. docs/operations.md.
import Bridge
import BridgeCore
import Glibc

struct StatusCommand: Equatable {
    var json = false
    var daemon = ControlSocketChoice()

    static let synopsis = "       tmm-bridge status [--json] [--runtime-dir DIR | --control PATH]"
    static let summary = """
        status   Ask the running daemon what it is doing: receivers (and how each was found), fix
                 quality, epoch rate and the last epoch's age, clients per socket, ports,
                 registered applications, gpsd, uptime. --json prints the daemon's JSON document.
                 The daemon is found at DIR/control.sock (default: the runtime directory run
                 uses). Exit 69 when no daemon answers, 77 when the socket is closed to this user.
        """

    static func parse(_ arguments: ArraySlice<String>) throws(UsageError) -> StatusCommand {
        var command = StatusCommand()
        var rest = arguments
        while let argument = rest.popFirst() {
            if try command.daemon.parse(argument, &rest) { continue }
            guard argument == "--json" else { throw UsageError(message: "status: unexpected argument '\(argument)'") }
            command.json = true
        }
        return command
    }

    func run() -> Int32 {
        // A daemon that dies mid-reply must give EPIPE (reported), not a silent SIGPIPE death.
        signal(SIGPIPE, SIG_IGN)
        do {
            let answer = try ControlProtocol.status(socketPath: daemon.path)
            Output.standard(json ? answer.json + "\n" : answer.status.report)
            return ExitCode.ok
        } catch {
            log(error.message)
            switch error.kind {
            case .unreachable: return ExitCode.unavailable
            case .permissionDenied: return ExitCode.noPermission
            case .other: return ExitCode.failure
            }
        }
    }
}
