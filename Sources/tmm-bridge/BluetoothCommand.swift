import BridgeCore
import Discovery
import Input

/// `tmm-bridge bluetooth bind|unbind|list`: binds a paired SPP receiver to `/dev/rfcommN` through
/// the kernel's RFCOMM ioctls, as BlueZ's `rfcomm bind` / `release` / `show` do.
enum BluetoothCommand: Equatable {
    case bind(address: BluetoothAddress, channel: UInt8, device: Int16)
    case unbind(device: Int16)
    case list
    case help

    /// Synopsis lines for the program's usage text (each indented to follow "usage: ").
    static let synopsis = """
               tmm-bridge bluetooth bind ADDRESS [--channel N] [--device N]
               tmm-bridge bluetooth unbind [--device N]
               tmm-bridge bluetooth list
        """

    /// What the commands do, for the program's usage text.
    static let summary = """
        bluetooth bind     Bind the paired SPP receiver at ADDRESS (AA:BB:CC:DD:EE:FF) to /dev/rfcommN
                           (--device N, default 0) on RFCOMM channel --channel N (1 to 30, default 1),
                           as 'rfcomm bind' does. Needs root (CAP_NET_ADMIN). No radio traffic happens
                           until gpsd (or anyone) opens the tty; then the kernel connects.
        bluetooth unbind   Release /dev/rfcommN (--device N, default 0), as 'rfcomm release' does.
        bluetooth list     Show the bound rfcomm devices: address, channel, link state, name.
        """

    /// `tmm-bridge bluetooth --help`.
    static var usage: String { "usage: " + synopsis.drop { $0 == " " } + "\n\n" + summary }

    /// Parses the arguments after `bluetooth`.
    static func parse(_ arguments: ArraySlice<String>) throws(UsageError) -> BluetoothCommand {
        var rest = arguments
        guard let verb = rest.popFirst() else {
            throw UsageError(message: "bluetooth needs a command: bind, unbind or list")
        }
        guard ["bind", "unbind", "release", "list", "show", "help", "-h", "--help"].contains(verb) else {
            throw UsageError(message: "unknown bluetooth command '\(verb)' (use bind, unbind or list)")
        }
        var channel: UInt8?
        var device: Int16?
        var positionals: [String] = []
        while let argument = rest.popFirst() {
            let name: String
            var value: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            } else {
                name = argument
            }
            switch name {
            case "--channel", "--device":
                guard verb == "bind" || ((verb == "unbind" || verb == "release") && name == "--device") else {
                    throw UsageError(message: "bluetooth \(verb) takes no \(name)")
                }
                if value == nil { value = rest.popFirst() }
                guard let value else { throw UsageError(message: "\(name) needs a value") }
                if name == "--channel" {
                    guard channel == nil else { throw UsageError(message: "--channel given twice") }
                    channel = try parseChannel(value)
                } else {
                    guard device == nil else { throw UsageError(message: "--device given twice") }
                    device = try parseDevice(value)
                }
            case "-h", "--help":
                return .help
            default:
                if argument.hasPrefix("-") { throw UsageError(message: "unknown option '\(argument)'") }
                positionals.append(argument)
            }
        }
        switch verb {
        case "bind":
            guard let text = positionals.first else {
                throw UsageError(
                    message: "bluetooth bind needs the receiver's ADDRESS (AA:BB:CC:DD:EE:FF; "
                        + "see 'bluetoothctl devices Paired')")
            }
            guard positionals.count == 1 else {
                throw UsageError(message: "bluetooth bind takes one ADDRESS, got '\(positionals[1])' too")
            }
            let address: BluetoothAddress
            do {
                address = try BluetoothAddress(parsing: text)
            } catch {
                throw UsageError(message: error.description)
            }
            return .bind(address: address, channel: channel ?? 1, device: device ?? 0)
        case "unbind", "release":
            guard positionals.isEmpty else {
                throw UsageError(
                    message: "bluetooth unbind takes no ADDRESS, got '\(positionals[0])' "
                        + "(choose the tty with --device N)")
            }
            return .unbind(device: device ?? 0)
        case "list", "show":
            guard positionals.isEmpty else {
                throw UsageError(message: "bluetooth list takes no arguments, got '\(positionals[0])'")
            }
            return .list
        case "-h", "--help", "help":
            return .help
        default:
            throw UsageError(message: "unknown bluetooth command '\(verb)' (use bind, unbind or list)")
        }
    }

    /// 1 to 30.
    private static func parseChannel(_ text: String) throws(UsageError) -> UInt8 {
        guard let value = Int(text), value >= 1, value <= 30 else {
            throw UsageError(message: "--channel must be an RFCOMM channel from 1 to 30, not '\(text)'")
        }
        return UInt8(value)
    }

    /// N, rfcommN or /dev/rfcommN, N from 0 to 255.
    private static func parseDevice(_ text: String) throws(UsageError) -> Int16 {
        if let device = RFCOMMTTY.deviceNumber(fromName: text) { return device }
        guard let value = Int(text), value >= 0, value <= 255 else {
            throw UsageError(message: "--device must be a number from 0 to 255 (or rfcommN), not '\(text)'")
        }
        return Int16(value)
    }

    func run() -> Int32 {
        switch self {
        case .help:
            Output.standard(Self.usage + "\n")
            return ExitCode.ok
        case .bind(let address, let channel, let device):
            do throws(RFCOMMError) {
                let assigned = try RFCOMM.bind(device: device, address: address, channel: channel)
                var line = "bound /dev/rfcomm\(assigned) to \(address) channel \(channel)"
                if let name = BluetoothStore().name(of: address) { line += " (\(name))" }
                Output.standard(line + "\n")
                return ExitCode.ok
            } catch {
                return fail(error)
            }
        case .unbind(let device):
            do throws(RFCOMMError) {
                try RFCOMM.release(device: device)
                Output.standard("released /dev/rfcomm\(device)\n")
                return ExitCode.ok
            } catch {
                return fail(error)
            }
        case .list:
            do throws(RFCOMMError) {
                let devices = try RFCOMM.list()
                if devices.isEmpty {
                    Output.standard("no rfcomm devices are bound\n")
                    return ExitCode.ok
                }
                let store = BluetoothStore()
                var text = ""
                for info in devices { text += Self.describe(info, name: store.name(of: info.destination)) + "\n" }
                Output.standard(text)
                return ExitCode.ok
            } catch {
                return fail(error)
            }
        }
    }

    /// `rfcomm0: 00:07:80:AB:CD:EF channel 1 clean "Trimble R2"` (BlueZ `rfcomm` style, plus the name).
    static func describe(_ info: RFCOMMDeviceInfo, name: String?) -> String {
        var line = "rfcomm\(info.device): "
        if info.source != .any { line += "\(info.source) -> " }
        line += "\(info.destination) channel \(info.channel) \(info.state)"
        if info.ttyAttached { line += " (open)" }
        if let name { line += " \"\(name)\"" }
        return line
    }

    private func fail(_ error: RFCOMMError) -> Int32 {
        Output.error("tmm-bridge bluetooth: \(error)\n")
        return ExitCode.failure
    }
}
