import ByteCoding
import Glibc
import Input
import Posix

/// A bound rfcomm tty as sysfs describes it.
///
/// For every bound device the kernel's rfcomm tty driver registers `/sys/class/tty/rfcommN`
/// (a link to `/sys/devices/virtual/tty/rfcommN` while unconnected; moved under the HCI
/// connection's device while connected) with two attributes of its own next to `dev` and
/// `uevent`:
///
/// | file | content (recorded from net/bluetooth/rfcomm/tty.c) |
/// |---|---|
/// | `address` | the remote address, `%pMR` + newline: lower case, e.g. `00:07:80:ab:cd:ef\n` |
/// | `channel` | the RFCOMM channel, `%d` + newline, e.g. `1\n` |
/// | `dev` | `216:N\n` (rfcomm's tty major is 216, the minor is N) |
/// | `uevent` | `MAJOR=216`, `MINOR=N`, `DEVNAME=rfcommN`, one per line |
public struct RFCOMMTTY: Equatable, Sendable {
    /// N of `rfcommN`.
    public var device: Int16
    /// The receiver (from `address`).
    public var address: BluetoothAddress
    /// From `channel`.
    public var channel: UInt8

    public init(device: Int16, address: BluetoothAddress, channel: UInt8) {
        self.device = device
        self.address = address
        self.channel = channel
    }

    /// `rfcommN`.
    public var name: String { "rfcomm\(device)" }
    /// `/dev/rfcommN`.
    public var devicePath: String { "/dev/rfcomm\(device)" }

    /// N from `rfcommN`, `/dev/rfcommN` or a sysfs path ending in `rfcommN`; nil for anything else.
    public static func deviceNumber(fromName name: some StringProtocol) -> Int16? {
        let text = String(name)
        let last = text.split(separator: "/").last.map(String.init) ?? ""
        guard last.hasPrefix("rfcomm") else { return nil }
        let digits = last.dropFirst("rfcomm".count)
        guard !digits.isEmpty, digits.count <= 3, digits.utf8.allSatisfy(ASCII.isDigit),
            digits == "0" || !digits.hasPrefix("0"),
            let value = Int16(digits), RFCOMM.devices.contains(value)
        else { return nil }
        return value
    }
}

/// Why an rfcomm tty's sysfs attributes could not be used.
public enum RFCOMMSysfsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The attribute exists but reading it failed (not ENOENT: a vanished tty is not an error).
    case unreadable(path: String, Errno)
    /// The attribute's content is not what the kernel writes.
    case malformed(path: String, value: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let errno):
            "cannot read \(path): \(errno)"
        case .malformed(let path, let value, let reason):
            "\(path) holds '\(value)', \(reason) (is this an rfcomm tty bound with 'tmm-bridge bluetooth bind'?)"
        }
    }
}

/// Reads rfcomm ttys from a sysfs tree: the real `/sys`, or a recorded copy in tests.
public struct RFCOMMSysfs: Sendable {
    /// The sysfs mount point (`/sys`), or the top of a recorded tree holding `class/tty/...`.
    public var root: String

    public init(root: String = "/sys") { self.root = root }

    /// `<root>/class/tty`.
    public var ttyClassDirectory: String { BluetoothFiles.join(root, "class", "tty") }

    /// `rfcomm<device>` if it exists; nil when it does not (or vanished while being read).
    public func tty(device: Int16) throws(RFCOMMSysfsError) -> RFCOMMTTY? {
        try Self.readTTY(directory: BluetoothFiles.join(ttyClassDirectory, "rfcomm\(device)"))
    }

    /// True when `rfcomm<device>` exists in the tree (bound), whatever its attributes say.
    public func isPresent(device: Int16) -> Bool {
        access(BluetoothFiles.join(ttyClassDirectory, "rfcomm\(device)"), F_OK) == 0
    }

    /// Every rfcomm tty in the tree, by device number. Ttys that vanish while being read are
    /// left out; one with unreadable or malformed attributes makes the whole call throw.
    public func ttys() throws(RFCOMMSysfsError) -> [RFCOMMTTY] {
        let names: [String]
        do {
            names = try BluetoothFiles.entries(ttyClassDirectory)
        } catch {
            if error == .noSuchFileOrDirectory { return [] }
            throw .unreadable(path: ttyClassDirectory, error)
        }
        var result: [RFCOMMTTY] = []
        for name in names {
            guard let device = RFCOMMTTY.deviceNumber(fromName: name) else { continue }
            if let tty = try tty(device: device) { result.append(tty) }
        }
        return result.sorted { $0.device < $1.device }
    }

    /// Reads the tty whose sysfs directory is `directory` (e.g. the syspath udev reports,
    /// `/sys/devices/virtual/tty/rfcomm0`). nil when the directory or its `address` is gone;
    /// throws when the name is not `rfcommN` or an attribute is malformed.
    public static func readTTY(directory: String) throws(RFCOMMSysfsError) -> RFCOMMTTY? {
        guard let device = RFCOMMTTY.deviceNumber(fromName: directory) else {
            throw .malformed(
                path: directory, value: directory.split(separator: "/").last.map(String.init) ?? "",
                reason: "which is not an rfcomm tty name (rfcomm0 ... rfcomm255)")
        }
        let addressPath = BluetoothFiles.join(directory, "address")
        let channelPath = BluetoothFiles.join(directory, "channel")
        guard let addressText = try attribute(addressPath), let channelText = try attribute(channelPath) else {
            return nil
        }
        let address: BluetoothAddress
        do {
            address = try BluetoothAddress(parsing: addressText)
        } catch {
            throw .malformed(path: addressPath, value: addressText, reason: "not a Bluetooth address: \(error)")
        }
        guard let channel = UInt8(channelText), RFCOMM.channels.contains(channel) else {
            throw .malformed(path: channelPath, value: channelText, reason: "not an RFCOMM channel (1 to 30)")
        }
        return RFCOMMTTY(device: device, address: address, channel: channel)
    }

    /// An attribute's text without the trailing newline; nil when the file does not exist.
    private static func attribute(_ path: String) throws(RFCOMMSysfsError) -> String? {
        do {
            var text = try BluetoothFiles.read(path, limit: 4096)
            while let last = text.last, last == "\n" || last == " " || last == "\0" { text.removeLast() }
            return text
        } catch {
            if error == .noSuchFileOrDirectory || error.rawValue == ENOTDIR || error.rawValue == ENODEV { return nil }
            throw .unreadable(path: path, error)
        }
    }
}
