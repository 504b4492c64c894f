// `tmm-bridge devices`: what discovery sees and why each tty is or is not a receiver, without a
// daemon: a libudev scan of sysfs (works without udevd) classified by the daemon's own
// classifier, with the configuration's `device =` paths as explicit devices (DeviceReport).
import BridgeCore
import Discovery
import Glibc
import InputLoop

struct DevicesCommand: Equatable {
    var json = false
    /// Virtual ttys (consoles, ptmx) too.
    var all = false
    /// --config FILE (nil: the default file, if it exists and can be read).
    var configFile: String?
    /// --device PATH: as `run --device`.
    var devices: [String] = []

    static let synopsis = "       tmm-bridge devices [--json] [--all] [--config FILE] [--device PATH]..."
    static let summary = """
        devices  List the ttys and gnss devices discovery sees (libudev's scan of sysfs; no daemon
                 needed) with USB IDs, driver and serial number, and the receiver table's verdict
                 on each: receiver, possible receiver (handed to gpsd, which probes it) or not, and
                 why (the table row and its source, or how to include the device). Devices given
                 with --device or device = in the configuration are receivers whatever the table
                 says, as for run. --all adds virtual ttys; --json prints one JSON document.
        """

    static func parse(_ arguments: ArraySlice<String>) throws(UsageError) -> DevicesCommand {
        var command = DevicesCommand()
        var rest = arguments
        while let argument = rest.popFirst() {
            switch argument {
            case "--json": command.json = true
            case "--all": command.all = true
            case "--config":
                guard let value = rest.popFirst() else { throw UsageError(message: "--config needs a FILE") }
                command.configFile = value
            case "--device":
                guard let value = rest.popFirst() else { throw UsageError(message: "--device needs a PATH") }
                command.devices.append(value)
            default:
                throw UsageError(message: "devices: unexpected argument '\(argument)'")
            }
        }
        return command
    }

    func run() -> Int32 {
        var configured = devices
        if devices.isEmpty {
            // The configuration's devices, as run reads them. An explicit --config must be good;
            // the default file may be closed to this user (root:tmm-bridge 0640): then say so.
            do {
                configured = try RunCommand(configFile: configFile).configuration().devices
            } catch {
                if configFile != nil {
                    log("configuration: \(error)")
                    return ExitCode.config
                }
                log("note: the configuration's devices are not listed: \(error)")
            }
        }
        let found: [DeviceProperties]
        do {
            found = try scanDevices(options: UdevDiscovery.Options(includeVirtualTTYs: all))
        } catch {
            log("cannot scan devices: \(error)")
            return ExitCode.failure
        }
        let report = DeviceReport(devices: found, configured: configured)
        Output.standard(json ? report.json() + "\n" : report.text)
        return ExitCode.ok
    }
}
