import BridgeCore
import Discovery

// `tmm-bridge devices`: every tty (and gnss device) discovery sees, what the classifier makes of
// it and why, without a daemon. The same classifier and the same rules as the daemon
// (ReceiverInventory: configured devices are explicit and skip the table), so what this prints is
// what `run` would do with each device now.

/// The devices and their verdicts.
public struct DeviceReport: Codable, Sendable, Equatable {
    public static let formatName = "tmm-bridge devices"

    public var format: String
    public var devices: [Entry]

    /// One device.
    public struct Entry: Codable, Sendable, Equatable {
        /// The device node (`/dev/ttyACM0`).
        public var path: String
        /// `tty` or `gnss`.
        public var subsystem: String
        /// `vvvv:pppp`, for a USB device.
        public var usbID: String?
        /// The USB interface's driver (`cdc_acm`, `ftdi_sio`, …).
        public var driver: String?
        public var manufacturer: String?
        public var product: String?
        public var serialNumber: String?
        public var interfaceNumber: String?
        public var bluetoothAddress: String?
        /// `receiver`, `possibleReceiver` or `notReceiver`.
        public var verdict: String
        /// The classifier's rule: a table row id (KnownReceivers), `explicit`, `no-match`, …
        public var rule: String
        /// The classifier's sentence: the facts that matched and the row's source, or how to
        /// include a device no row knows.
        public var reason: String
        /// The receiver's brand, when the row knows it.
        public var brand: String?
        /// Whether `run` hands it to gpsd (receivers; possible receivers, which gpsd then probes).
        public var handedToGPSD: Bool
        /// Given in the configuration (`device =`) rather than found by its identity.
        public var configured: Bool
    }

    /// Classifies `devices` (a scan) and the `configured` paths (`device =`, `--device`) as the
    /// daemon does: a configured path is explicit whether or not the scan has it; a configured
    /// path the scan lacks (a pty, a device not plugged in) is listed too.
    public init(
        devices: [DeviceProperties], configured: [String], classifier: ReceiverClassifier = ReceiverClassifier()
    ) {
        format = Self.formatName
        let explicit = Set(configured.map(canonicalDevicePath))
        var entries: [Entry] = []
        var seen: Set<String> = []
        for device in devices.sorted(by: { $0.path < $1.path }) {
            let isConfigured = explicit.contains(device.path)
            let classification =
                isConfigured ? classifier.classifyExplicit(path: device.path) : classifier.classify(device)
            entries.append(Entry(device: device, classification: classification, configured: isConfigured))
            seen.insert(device.path)
        }
        for path in configured.map(canonicalDevicePath) where !seen.contains(path) {
            seen.insert(path)
            entries.append(
                Entry(
                    path: path, subsystem: "tty", verdict: ReceiverVerdict.receiver.rawValue, rule: "explicit",
                    reason: classifier.classifyExplicit(path: path).reason
                        + "; not in sysfs (a pty, or not plugged in now)",
                    handedToGPSD: classifier.classifyExplicit(path: path).handToGPSD, configured: true))
        }
        self.devices = entries
    }

    /// One line of JSON (strings and booleans only: it always encodes).
    public func json() -> String { oneLineJSON(self) }

    /// For people: each device on one line (path, verdict, identity), its reason indented below.
    public var text: String {
        guard !devices.isEmpty else {
            return "no tty or gnss devices (nothing plugged in; ptys are not in sysfs: give them with --device)\n"
        }
        let width = devices.map(\.path.count).max() ?? 0
        var out = ""
        for device in devices {
            var facts: [String] = []
            if let usbID = device.usbID { facts.append("USB \(usbID)") }
            if let driver = device.driver { facts.append(driver) }
            if let number = device.interfaceNumber { facts.append("interface \(number)") }
            if let serial = device.serialNumber { facts.append("serial \(serial)") }
            if let address = device.bluetoothAddress { facts.append("Bluetooth \(address)") }
            let names = [device.manufacturer, device.product].compactMap { $0 }
            if !names.isEmpty { facts.append("\"" + names.joined(separator: " / ") + "\"") }
            out += device.path + String(repeating: " ", count: width - device.path.count + 2) + Self.verdictText(device)
            out += facts.isEmpty ? "\n" : "  " + facts.joined(separator: ", ") + "\n"
            out += String(repeating: " ", count: width + 2) + device.reason + " [\(device.rule)]\n"
        }
        return out
    }

    /// The verdict as the daemon acts on it.
    static func verdictText(_ device: Entry) -> String {
        switch device.verdict {
        case ReceiverVerdict.receiver.rawValue: device.configured ? "RECEIVER (configured)" : "RECEIVER"
        case ReceiverVerdict.possibleReceiver.rawValue:
            device.handedToGPSD ? "possible receiver (gpsd probes it)" : "possible receiver (not used)"
        default: "not a receiver"
        }
    }
}

extension DeviceReport.Entry {
    init(device: DeviceProperties, classification: Classification, configured: Bool) {
        self.init(
            path: device.path, subsystem: device.subsystem, usbID: device.usbID, driver: device.driver,
            manufacturer: device.manufacturer, product: device.product, serialNumber: device.serialNumber,
            interfaceNumber: device.interfaceNumber, bluetoothAddress: device.bluetoothAddress,
            verdict: classification.verdict.rawValue, rule: classification.rule, reason: classification.reason,
            brand: classification.brand, handedToGPSD: classification.handToGPSD, configured: configured)
    }
}
