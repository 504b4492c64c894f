import Bridge
import BridgeCore
import Discovery
import Glibc

/// What the user asked for, parsed from the arguments before anything runs.
enum Command: Equatable {
    case decode(path: String, format: LocationFormat)
    case demo(format: LocationFormat)
    case bluetooth(BluetoothCommand)
    case watch(WatchCommand)
    case run(RunCommand)
    case open(OpenCommand)
    case tls(TLSCommand)
    /// Hidden (not in the usage): prints the udev rules generated from the receiver table;
    /// `make udev-rules` writes them to udev/60-tmm-bridge.rules.
    case udevRules
    case help
    case version

    static let usage = """
        usage: tmm-bridge run [--config FILE] [--device PATH]... [--demo | --replay FILE] [OPTION]...
        \(OpenCommand.synopsis)
               tmm-bridge decode FILE|- [--format locationV1|locationV2]
               tmm-bridge demo [--format locationV1|locationV2]
        \(WatchCommand.synopsis)
        \(BluetoothCommand.synopsis)
        \(TLSCommand.synopsis)
               tmm-bridge --help | --version

        \(RunCommand.summary)

        \(OpenCommand.summary)

        decode   Decode a capture in gpsd's log format (NMEA 0183; lines starting with # are
                 comments) from FILE, or from standard input when FILE is -, and print one JSON
                 object per receiver epoch, one per line (LocationV2 unless --format says V1).
        demo     Decode the bundled Trimble RTK capture (gpsd regression suite) the same way.
        \(WatchCommand.summary)

        \(BluetoothCommand.summary)

        \(TLSCommand.summary)
        """

    /// Parses the arguments after the program name.
    static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        guard let verb = arguments.first else { throw UsageError(message: "no command given") }
        var rest = arguments.dropFirst()
        switch verb {
        case "-h", "--help", "help":
            return .help
        case "-V", "--version", "version":
            return .version
        case "decode":
            var path: String?
            let format = try parseFormat(&rest) { argument throws(UsageError) in
                guard path == nil else { throw UsageError(message: "decode takes one FILE, got '\(argument)' too") }
                path = argument
            }
            guard let path else { throw UsageError(message: "decode needs a FILE (or - for standard input)") }
            return .decode(path: path, format: format)
        case "bluetooth":
            return .bluetooth(try BluetoothCommand.parse(rest))
        case "watch":
            return .watch(try WatchCommand.parse(rest))
        case "run":
            return .run(try RunCommand.parse(rest))
        case "open":
            return .open(try OpenCommand.parse(rest))
        case "tls":
            return .tls(try TLSCommand.parse(rest))
        case "udev-rules":
            guard rest.isEmpty else { throw UsageError(message: "udev-rules takes no arguments") }
            return .udevRules
        case "demo":
            let format = try parseFormat(&rest) { argument throws(UsageError) in
                throw UsageError(message: "demo takes no file, got '\(argument)'")
            }
            return .demo(format: format)
        default:
            throw UsageError(message: "unknown command '\(verb)'")
        }
    }

    /// Consumes `--format X` / `--format=X`; hands every other argument to `positional`.
    private static func parseFormat(
        _ arguments: inout ArraySlice<String>, positional: (String) throws(UsageError) -> Void
    ) throws(UsageError) -> LocationFormat {
        var format = LocationFormat.locationV2
        while let argument = arguments.popFirst() {
            var value: String?
            if argument == "--format" {
                guard let next = arguments.popFirst() else { throw UsageError(message: "--format needs a value") }
                value = next
            } else if argument.hasPrefix("--format=") {
                value = String(argument.dropFirst("--format=".count))
            } else if argument.hasPrefix("-") && argument != "-" {
                throw UsageError(message: "unknown option '\(argument)'")
            } else {
                try positional(argument)
                continue
            }
            guard let value, let parsed = LocationFormat(rawValue: value) else {
                throw UsageError(message: "--format must be locationV1 or locationV2, not '\(value ?? "")'")
            }
            format = parsed
        }
        return format
    }

    func run() -> Int32 {
        switch self {
        case .help:
            Output.standard(Command.usage + "\n")
            return ExitCode.ok
        case .version:
            Output.standard("tmm-bridge \(BridgeVersion.current)\n")
            return ExitCode.ok
        case .decode(let path, let format):
            return DecodeCommand(path: path, format: format).run()
        case .demo(let format):
            return DecodeCommand.runDemo(format: format)
        case .bluetooth(let command):
            return command.run()
        case .watch(let command):
            return command.run()
        case .run(let command):
            return command.run()
        case .open(let command):
            return command.run()
        case .tls(let command):
            return command.run()
        case .udevRules:
            var text = UdevRules.text()
            let written = text.withUTF8 { Output.write($0.span, to: STDOUT_FILENO) }
            return written ? ExitCode.ok : ExitCode.failure
        }
    }
}

/// Which TMM JSON message `decode` prints.
enum LocationFormat: String, Equatable {
    case locationV1
    case locationV2
}

/// A command-line mistake: printed with the usage text, exit 64.
struct UsageError: Error, Equatable {
    var message: String
}

/// The process exit codes (sysexits.h where one fits).
/// The exit statuses as numbers, for the commands that return them directly (Bridge's
/// `ExitStatus` is the one definition).
enum ExitCode {
    static let ok = ExitStatus.ok.rawValue
    static let failure = ExitStatus.failure.rawValue
    static let usage = ExitStatus.usage.rawValue
    static let config = ExitStatus.badConfiguration.rawValue
    /// EX_OSERR: the system refused a privilege drop it should have allowed.
    static let osError = ExitStatus.privilegeDropFailed.rawValue
}

/// The bridge's own version, reported as TMM's `appVersion`.
enum BridgeVersion {
    static let current = "0.1.0"
}
