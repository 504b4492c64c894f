import Glibc
import Input
import Posix

/// What BlueZ remembers about a remote device: its name for the receiver inventory.
public struct BluetoothDeviceRecord: Equatable, Sendable {
    /// Where the record was found.
    public enum Source: Equatable, Sendable {
        /// `<adapter>/<device>/info`: a paired (or at least connected) device.
        case info
        /// `<adapter>/cache/<device>`: a device seen in an inquiry, not necessarily paired.
        case cache
    }

    public var address: BluetoothAddress
    /// The local adapter whose directory holds the record.
    public var adapter: BluetoothAddress
    /// `[General] Name=`: the name the device reports (e.g. `Trimble R2`).
    public var name: String?
    /// `[General] Alias=`: a name the user gave it (bluetoothctl `set-alias`); info files only.
    public var alias: String?
    public var source: Source

    public init(address: BluetoothAddress, adapter: BluetoothAddress, name: String?, alias: String?, source: Source) {
        self.address = address
        self.adapter = adapter
        self.name = name
        self.alias = alias
        self.source = source
    }

    /// The name to show: the alias if the user set one, otherwise the device's own name.
    public var displayName: String? { alias ?? name }
}

/// Why BlueZ's storage could not be read.
public enum BluetoothStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not ENOENT: most often EACCES, since BlueZ keeps the directory mode 0700 root.
    case unreadable(path: String, Errno)

    public var description: String {
        switch self {
        case .unreadable(let path, let errno):
            if errno.rawValue == EACCES || errno.rawValue == EPERM {
                return "cannot read \(path): \(errno) (BlueZ's storage is readable by root only; run as root "
                    + "to show Bluetooth names)"
            }
            return "cannot read \(path): \(errno)"
        }
    }
}

/// BlueZ's settings storage (`/var/lib/bluetooth`, see BlueZ's doc/settings-storage.txt):
///
///     <root>/<adapter address>/<device address>/info     [General] Name=, Alias=
///     <root>/<adapter address>/cache/<device address>    [General] Name=
///
/// Directory names are upper-case addresses (`00:1A:7D:DA:71:13`); the files are GLib key files.
public struct BluetoothStore: Sendable {
    /// `/var/lib/bluetooth`, or a recorded tree in tests.
    public var root: String

    public init(root: String = "/var/lib/bluetooth") { self.root = root }

    /// The record for `address`: the paired `info` file under any adapter (or `adapter` only),
    /// else the inquiry cache. nil when BlueZ has never seen the device (or there is no storage).
    public func device(
        _ address: BluetoothAddress, adapter: BluetoothAddress? = nil
    ) throws(BluetoothStoreError)
        -> BluetoothDeviceRecord?
    {
        let adapters: [BluetoothAddress]
        if let adapter {
            adapters = [adapter]
        } else {
            do {
                adapters = try BluetoothFiles.entries(root).compactMap { try? BluetoothAddress(parsing: $0) }
            } catch {
                if Self.isAbsent(error) { return nil }
                throw .unreadable(path: root, error)
            }
        }
        for source in [BluetoothDeviceRecord.Source.info, .cache] {
            for adapter in adapters {
                let path =
                    source == .info
                    ? BluetoothFiles.join(root, adapter.description, address.description, "info")
                    : BluetoothFiles.join(root, adapter.description, "cache", address.description)
                let text: String
                do {
                    text = try BluetoothFiles.read(path)
                } catch {
                    if Self.isAbsent(error) { continue }
                    throw .unreadable(path: path, error)
                }
                let general = BluetoothKeyFile.group("General", in: text)
                return BluetoothDeviceRecord(
                    address: address, adapter: adapter, name: general["Name"],
                    alias: source == .info ? general["Alias"] : nil, source: source)
            }
        }
        return nil
    }

    /// The display name for `address`, or nil when unknown or unreadable (for log lines and the
    /// inventory, where a missing name is not an error).
    public func name(of address: BluetoothAddress) -> String? {
        (try? device(address))?.displayName
    }

    private static func isAbsent(_ error: Errno) -> Bool {
        error == .noSuchFileOrDirectory || error.rawValue == ENOTDIR
    }
}

/// The GLib key-file subset BlueZ writes: `[Group]` headers, `Key=Value` lines, `#` comments.
enum BluetoothKeyFile {
    /// The keys of `group` with values unescaped (`\s` space, `\n`, `\t`, `\r`, `\\`).
    /// Localized keys (`Name[de]=`) are ignored.
    static func group(_ name: String, in text: String) -> [String: String] {
        var values: [String: String] = [:]
        var inGroup = false
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = rawLine.drop { $0 == " " || $0 == "\t" }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                inGroup = line.hasSuffix("]") && line.dropFirst().dropLast() == name
                continue
            }
            guard inGroup, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingTrailingBlanks()
            guard !key.contains("[") else { continue }
            let value = line[line.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            if values[String(key)] == nil { values[String(key)] = unescape(value) }
        }
        return values
    }

    static func unescape(_ value: Substring) -> String {
        var result = ""
        var escaped = false
        for character in value {
            if escaped {
                switch character {
                case "s": result.append(" ")
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                case "\\": result.append("\\")
                default: result.append("\\"); result.append(character)
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        if escaped { result.append("\\") }
        return result
    }
}

extension Substring {
    fileprivate func trimmingTrailingBlanks() -> Substring {
        var end = endIndex
        while end > startIndex, let last = self[..<end].last, last == " " || last == "\t" { end = index(before: end) }
        return self[..<end]
    }
}
