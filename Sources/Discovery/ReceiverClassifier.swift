// Decides whether a discovered device is a GNSS receiver, and says why. Pure: no I/O, so tests
// feed it recorded property sets of real device kinds.

/// A configured include or exclude rule.
public enum DeviceMatch: Sendable, Hashable, CustomStringConvertible {
    /// A glob (`*`, `?`, `[…]`) over the device node and udev's symlinks, e.g. `/dev/ttyUSB*`,
    /// `/dev/serial/by-id/usb-u-blox*`.
    case path(String)
    /// USB vendor and product (four hex digits each); a nil product matches the whole vendor.
    case usb(vendorID: String, productID: String?)
    /// The USB serial number string, exactly.
    case serial(String)

    /// Parses the configuration and command-line form:
    /// `/dev/ttyUSB*` or `path:GLOB`, `usb:1546:01a8` or `1546:01a8`, `1546:*` or `usb:1546`,
    /// `serial:0123ABCD`.
    public init(parsing text: String) throws(DeviceMatchError) {
        if text.hasPrefix("/") { self = .path(text); return }
        if text.hasPrefix("path:") {
            let glob = String(text.dropFirst(5))
            guard !glob.isEmpty else { throw DeviceMatchError(text: text) }
            self = .path(glob)
            return
        }
        if text.hasPrefix("serial:") {
            let serial = String(text.dropFirst(7))
            guard !serial.isEmpty else { throw DeviceMatchError(text: text) }
            self = .serial(serial)
            return
        }
        let ids = text.hasPrefix("usb:") ? String(text.dropFirst(4)) : text
        let parts = ids.split(separator: ":", omittingEmptySubsequences: false).map { $0.lowercased() }
        guard (1...2).contains(parts.count), Self.isUSBID(parts[0]) else { throw DeviceMatchError(text: text) }
        if parts.count == 1 || parts[1] == "*" {
            self = .usb(vendorID: parts[0], productID: nil)
        } else {
            guard Self.isUSBID(parts[1]) else { throw DeviceMatchError(text: text) }
            self = .usb(vendorID: parts[0], productID: parts[1])
        }
    }

    private static func isUSBID(_ text: String) -> Bool {
        text.utf8.count == 4
            && text.utf8.allSatisfy {
                ("0"..."9").contains(Unicode.Scalar($0)) || ("a"..."f").contains(Unicode.Scalar($0))
            }
    }

    public func matches(_ device: DeviceProperties) -> Bool {
        switch self {
        case .path(let glob):
            return ([device.path] + device.devlinks).contains { globMatches(glob, $0) }
        case .usb(let vendorID, let productID):
            return device.vendorID == vendorID && (productID == nil || device.productID == productID)
        case .serial(let serial):
            return device.serialNumber == serial
        }
    }

    /// Explicit devices have only a path.
    public func matches(path: String) -> Bool {
        if case .path(let glob) = self { return globMatches(glob, path) }
        return false
    }

    public var description: String {
        switch self {
        case .path(let glob): "path:" + glob
        case .usb(let vendorID, let productID): "usb:" + vendorID + ":" + (productID ?? "*")
        case .serial(let serial): "serial:" + serial
        }
    }
}

/// A rule that does not parse: names it and the accepted forms.
public struct DeviceMatchError: Error, Sendable, Hashable, CustomStringConvertible {
    public var text: String
    public var description: String {
        "device rule \"\(text)\" is not understood; use a path glob (/dev/ttyUSB*), "
            + "usb:VVVV:PPPP or usb:VVVV:* (hex IDs), or serial:NUMBER"
    }
}

/// Matches `text` against a shell-style glob: `*` any run (including `/`), `?` one character,
/// `[abc]`, `[a-z]`, `[!a]`.
public func globMatches(_ pattern: String, _ text: String) -> Bool {
    let p = Array(pattern.unicodeScalars), t = Array(text.unicodeScalars)
    var pi = 0, ti = 0
    var starP = -1, starT = 0
    while ti < t.count {
        if pi < p.count {
            switch p[pi] {
            case "*":
                starP = pi; starT = ti; pi += 1
                continue
            case "?":
                pi += 1; ti += 1
                continue
            case "[":
                if let (matched, next) = matchClass(p, pi, t[ti]) {
                    if matched { pi = next; ti += 1; continue }
                } else if t[ti] == "[" {  // unterminated class: a literal '['
                    pi += 1; ti += 1
                    continue
                }
            default:
                if p[pi] == t[ti] { pi += 1; ti += 1; continue }
            }
        }
        guard starP >= 0 else { return false }
        pi = starP + 1
        starT += 1
        ti = starT
    }
    while pi < p.count && p[pi] == "*" { pi += 1 }
    return pi == p.count
}

/// Returns whether `c` is in the class starting at `p[start] == "["`, and the index after `]`;
/// nil when the class is not terminated.
private func matchClass(_ p: [Unicode.Scalar], _ start: Int, _ c: Unicode.Scalar) -> (Bool, Int)? {
    var i = start + 1
    var negated = false
    if i < p.count, p[i] == "!" || p[i] == "^" { negated = true; i += 1 }
    var matched = false
    var first = true
    while i < p.count, p[i] != "]" || first {
        first = false
        if i + 2 < p.count, p[i + 1] == "-", p[i + 2] != "]" {
            if p[i] <= c && c <= p[i + 2] { matched = true }
            i += 3
        } else {
            if p[i] == c { matched = true }
            i += 1
        }
    }
    guard i < p.count else { return nil }
    return (matched != negated, i + 1)
}

/// What the classifier decided, and why.
public struct Classification: Sendable, Hashable, CustomStringConvertible {
    public var verdict: ReceiverVerdict
    /// The rule that decided: a table row id, `exclude:…`, `include:…`, `explicit`, or `no-match`.
    public var rule: String
    /// One sentence for logs.
    public var reason: String
    /// Brand when the rule knows it (`u-blox`, `Trimble`, …).
    public var brand: String?
    /// Whether the device goes to gpsd.
    public var handToGPSD: Bool

    public init(verdict: ReceiverVerdict, rule: String, reason: String, brand: String? = nil, handToGPSD: Bool) {
        self.verdict = verdict
        self.rule = rule
        self.reason = reason
        self.brand = brand
        self.handToGPSD = handToGPSD
    }

    public var description: String { "\(verdict) [\(rule)]: \(reason)" }
}

/// Include/exclude rules and the policy for possible receivers.
public struct ClassifierConfiguration: Sendable, Hashable {
    /// Devices always treated as receivers (unless also excluded).
    public var include: [DeviceMatch]
    /// Devices never treated as receivers. Exclude wins over include and over the table.
    public var exclude: [DeviceMatch]
    /// Hand `possibleReceiver` devices (generic USB-serial bridges) to gpsd, as gpsd's own rules
    /// do for several of them. gpsd then probes the port and stays quiet if no GNSS data comes.
    public var handPossibleReceiversToGPSD: Bool

    public init(include: [DeviceMatch] = [], exclude: [DeviceMatch] = [], handPossibleReceiversToGPSD: Bool = true) {
        self.include = include
        self.exclude = exclude
        self.handPossibleReceiversToGPSD = handPossibleReceiversToGPSD
    }
}

/// Classifies devices: configured excludes, then configured includes, then the table
/// (`KnownReceivers.table`, first matching row), else not a receiver.
public struct ReceiverClassifier: Sendable, Hashable {
    public var configuration: ClassifierConfiguration
    public var table: [KnownReceiver]

    public init(
        configuration: ClassifierConfiguration = ClassifierConfiguration(),
        table: [KnownReceiver] = KnownReceivers.table
    ) {
        self.configuration = configuration
        self.table = table
    }

    public func classify(_ device: DeviceProperties) -> Classification {
        if let rule = configuration.exclude.first(where: { $0.matches(device) }) {
            return Classification(
                verdict: .notReceiver, rule: "exclude:\(rule)",
                reason: "\(device.path) is excluded by the configured rule \(rule)", handToGPSD: false)
        }
        let row = table.first { $0.matches(device) }
        if let rule = configuration.include.first(where: { $0.matches(device) }) {
            return Classification(
                verdict: .receiver, rule: "include:\(rule)",
                reason: "\(device.path) is included by the configured rule \(rule)", brand: row?.brand,
                handToGPSD: true)
        }
        if let row {
            return Classification(
                verdict: row.verdict, rule: row.id, reason: reason(device, row), brand: row.brand,
                handToGPSD: handToGPSD(row.verdict))
        }
        return Classification(verdict: .notReceiver, rule: "no-match", reason: noMatchReason(device), handToGPSD: false)
    }

    /// A device given by path in the configuration or with `--device PATH` (ptys included: they
    /// are not in sysfs, so udev never reports them). Explicit devices bypass the table; only an
    /// exclude path rule can veto one (a configuration that contradicts itself is reported).
    public func classifyExplicit(path: String) -> Classification {
        if let rule = configuration.exclude.first(where: { $0.matches(path: path) }) {
            return Classification(
                verdict: .notReceiver, rule: "exclude:\(rule)",
                reason:
                    "\(path) was given as a device but the configured rule \(rule) excludes it; remove one of the two",
                handToGPSD: false)
        }
        return Classification(
            verdict: .receiver, rule: "explicit",
            reason: "\(path) was given as a device (configuration or --device)", handToGPSD: true)
    }

    private func handToGPSD(_ verdict: ReceiverVerdict) -> Bool {
        switch verdict {
        case .receiver: true
        case .possibleReceiver: configuration.handPossibleReceiversToGPSD
        case .notReceiver: false
        }
    }

    private func reason(_ device: DeviceProperties, _ row: KnownReceiver) -> String {
        var facts: [String] = []
        if row.subsystem != nil { facts.append("subsystem \(device.subsystem)") }
        if row.kernelNamePrefix != nil { facts.append("kernel name \(device.sysname)") }
        if row.vendorID != nil, let usbID = device.usbID { facts.append("USB \(usbID)") }
        if row.interfaceNumber != nil, let number = device.interfaceNumber { facts.append("interface \(number)") }
        if row.interfaceName != nil || row.nameFields.contains(.interface), let name = device.interfaceName {
            facts.append("interface \"\(name)\"")
        }
        if row.driver != nil, let driver = device.driver { facts.append("driver \(driver)") }
        if row.nameFields.contains(.product), let product = device.product { facts.append("product \"\(product)\"") }
        if row.nameFields.contains(.manufacturer), let manufacturer = device.manufacturer {
            facts.append("manufacturer \"\(manufacturer)\"")
        }
        let what = facts.isEmpty ? device.path : device.path + " (" + facts.joined(separator: ", ") + ")"
        return "\(what): \(row.summary) [source: \(row.source)]"
    }

    private func noMatchReason(_ device: DeviceProperties) -> String {
        if let usbID = device.usbID {
            let driver = device.driver.map { ", driver " + $0 } ?? ""
            return "\(device.path): USB \(usbID)\(driver) is not a known GNSS device; "
                + "add an include rule (usb:\(usbID)) or --device \(device.path) to use it"
        }
        if device.devpath.hasPrefix("/devices/virtual/") {
            return "\(device.path): virtual tty, not a receiver"
        }
        return "\(device.path): on-board or unidentified serial port; not probed unless configured "
            + "(include rule path:\(device.path) or --device \(device.path))"
    }
}
