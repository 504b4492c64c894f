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
    case status(StatusCommand)
    case devices(DevicesCommand)
    case tls(TLSCommand)
    /// `tmm-bridge COMMAND --help`: that command's synopsis and description.
    case commandHelp(String)
    /// Hidden (not in the usage): prints the udev rules generated from the receiver table;
    /// `make udev-rules` writes them to udev/60-tmm-bridge.rules.
    case udevRules
    /// Hidden: prints tmm-bridge(8), generated from the same tables as `--help`; `make man`
    /// writes it to packaging/tmm-bridge.8.
    case manPage
    case help
    case version

    static let usage = """
        usage: \(RunCommand.synopsis.drop { $0 == " " })
        \(OpenCommand.synopsis)
        \(StatusCommand.synopsis)
        \(DevicesCommand.synopsis)
        \(decodeSynopsis)
        \(demoSynopsis)
        \(WatchCommand.synopsis)
        \(BluetoothCommand.synopsis)
        \(TLSCommand.synopsis)
               tmm-bridge --help | --version

        \(RunCommand.summary)

        \(OpenCommand.summary)

        \(StatusCommand.summary)

        \(DevicesCommand.summary)

        \(decodeSummary)
        \(demoSummary)
        \(WatchCommand.summary)

        \(BluetoothCommand.summary)

        \(TLSCommand.summary)
        """

    /// Parses the arguments after the program name.
    static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        guard let verb = arguments.first else { throw UsageError(message: "no command given") }
        var rest = arguments.dropFirst()
        // `COMMAND --help` (or -h) anywhere among its arguments: its own help, never an error.
        // `bluetooth` prints its own (it has subcommands with their own lines).
        if verb != "bluetooth", Self.commandHelp(verb) != nil, rest.contains(where: { $0 == "-h" || $0 == "--help" }) {
            return .commandHelp(verb)
        }
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
        case "status":
            return .status(try StatusCommand.parse(rest))
        case "devices":
            return .devices(try DevicesCommand.parse(rest))
        case "tls":
            return .tls(try TLSCommand.parse(rest))
        case "man":
            guard rest.isEmpty else { throw UsageError(message: "man takes no arguments") }
            return .manPage
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

    /// A command's usage line(s) and description, for `COMMAND --help`; nil for an unknown command.
    static func commandHelp(_ verb: String) -> String? {
        func text(_ synopsis: String, _ summary: String) -> String {
            "usage: " + synopsis.drop { $0 == " " } + "\n\n" + summary
        }
        switch verb {
        case "run": return text(RunCommand.synopsis, RunCommand.summary)
        case "open": return text(OpenCommand.synopsis, OpenCommand.summary)
        case "status": return text(StatusCommand.synopsis, StatusCommand.summary)
        case "devices": return text(DevicesCommand.synopsis, DevicesCommand.summary)
        case "watch": return text(WatchCommand.synopsis, WatchCommand.summary)
        case "tls": return text(TLSCommand.synopsis, TLSCommand.summary)
        case "bluetooth": return BluetoothCommand.usage
        case "decode": return text(decodeSynopsis, decodeSummary)
        case "demo": return text(demoSynopsis, demoSummary)
        default: return nil
        }
    }

    static let decodeSynopsis = "       tmm-bridge decode FILE|- [--format locationV1|locationV2]"
    static let decodeSummary = """
        decode   Decode a capture in gpsd's log format (NMEA 0183; lines starting with # are
                 comments) from FILE, or from standard input when FILE is -, and print one JSON
                 object per receiver epoch, one per line (LocationV2 unless --format says V1).
        """
    static let demoSynopsis = "       tmm-bridge demo [--format locationV1|locationV2]"
    static let demoSummary = "demo     Decode the bundled Trimble RTK capture (gpsd regression suite) the same way."

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
        case .status(let command):
            return command.run()
        case .devices(let command):
            return command.run()
        case .tls(let command):
            return command.run()
        case .commandHelp(let verb):
            Output.standard((Self.commandHelp(verb) ?? Command.usage) + "\n")
            return ExitCode.ok
        case .manPage:
            Output.standard(ManPage.text())
            return ExitCode.ok
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
    /// EX_UNAVAILABLE: no daemon answers (`status`).
    static let unavailable = ExitStatus.unavailable.rawValue
    /// EX_NOPERM: the control socket is closed to this user (`status`).
    static let noPermission = ExitStatus.noPermission.rawValue
}

/// The bridge's own version, reported as TMM's `appVersion`.
enum BridgeVersion {
    static let current = "0.1.0"
}
