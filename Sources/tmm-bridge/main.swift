// tmm-bridge: the executable. Parses the command line (a pure function), runs the command and
// exits with the code the command chose: 0 ok, 64 usage, 78 bad config, 1 other failure.
import BridgeCore
import Glibc
import Posix

// First, for every command: the daemon's memory holds private keys, registered ids and an NTRIP
// password, and `tls ca` makes keys. A failure (no prctl) is reported by `run`, which checks.
try? CurrentProcess.forbidCoreDumps()

let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
do {
    let command = try Command.parse(arguments)
    status = command.run()
} catch {
    Output.error("tmm-bridge: \(error.message)\n\n\(Command.usage)")
    status = ExitCode.usage
}
exit(status)
