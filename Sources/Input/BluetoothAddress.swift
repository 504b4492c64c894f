import ByteCoding

/// A Bluetooth device address (BD_ADDR), written `AA:BB:CC:DD:EE:FF`.
///
/// Text form: exactly six groups of two hexadecimal digits separated by `:`; either case is
/// accepted (sysfs writes lower case, BlueZ's storage upper case), `description` is upper case.
/// The kernel's `bdaddr_t` stores the same six bytes in the reverse order (little-endian:
/// `b[0]` is `FF`, the last group); `littleEndianBytes` converts, and Discovery's
/// `init(kernel:)` and `kernelValue` (BluetoothAddress+Kernel.swift) take the C struct itself.
///
/// The one parser of the text form: the `bluetooth` option (BridgeCore's
/// `BluetoothReceiverSetting`) and the `bluetooth` command both read an address with it.
public struct BluetoothAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 48-bit address with the first text group in the most significant byte
    /// (`AA:BB:CC:DD:EE:FF` is `0xAABB_CCDD_EEFF`).
    public let rawValue: UInt64

    /// `00:00:00:00:00:00`, the kernel's BDADDR_ANY ("any local adapter" as a source address).
    public static let any = BluetoothAddress(uncheckedRawValue: 0)

    /// nil when `rawValue` has bits above the low 48.
    public init?(rawValue: UInt64) {
        guard rawValue >> 48 == 0 else { return nil }
        self.rawValue = rawValue
    }

    private init(uncheckedRawValue: UInt64) { self.rawValue = uncheckedRawValue }

    /// From the six bytes in text order (`[0xAA, 0xBB, ...]`).
    public init(bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)) {
        var value: UInt64 = 0
        for byte in [bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5] { value = value << 8 | UInt64(byte) }
        self.rawValue = value
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (either case). The error says what is wrong and shows the form.
    public init(parsing text: some StringProtocol) throws(BluetoothAddressError) {
        let text = String(text)
        guard !text.isEmpty else { throw .empty }
        if let blank = text.unicodeScalars.first(where: { $0.properties.isWhitespace }) {
            throw .whitespace(text, UInt8(truncatingIfNeeded: blank.value))
        }
        if !text.contains(":") {
            if let separator = text.first(where: { $0 == "-" || $0 == "." || $0 == "_" }) {
                throw .wrongSeparator(text, separator)
            }
            if text.utf8.count == 12 && text.utf8.allSatisfy(Hex.isDigit) {
                throw .missingSeparators(text)
            }
        } else if let separator = text.first(where: { $0 == "-" || $0 == "." || $0 == "_" }) {
            throw .wrongSeparator(text, separator)
        }
        let groups = text.split(separator: ":", omittingEmptySubsequences: false)
        guard groups.count == 6 else { throw .wrongGroupCount(text, groups.count) }
        var value: UInt64 = 0
        for (index, group) in groups.enumerated() {
            let utf8 = Array(group.utf8)
            guard utf8.count == 2 else { throw .groupLength(text, group: index + 1, String(group)) }
            guard let byte = Hex.byte(high: utf8[0], low: utf8[1]) else {
                throw .notHex(text, group: index + 1, String(group))
            }
            value = value << 8 | UInt64(byte)
        }
        self.rawValue = value
    }

    /// The six bytes in text order (`AA` first).
    public var bytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> (8 * (5 - UInt64($0)))) }
    }

    /// The six bytes in the kernel's `bdaddr_t` order (little-endian: `FF` first).
    public var littleEndianBytes: [UInt8] { bytes.reversed() }

    /// From bytes in the kernel's order (`bdaddr_t.b`, little-endian). nil unless exactly six.
    public init?(littleEndianBytes: some Collection<UInt8>) {
        guard littleEndianBytes.count == 6 else { return nil }
        var value: UInt64 = 0
        for byte in littleEndianBytes.reversed() { value = value << 8 | UInt64(byte) }
        self.rawValue = value
    }

    /// `AA:BB:CC:DD:EE:FF`, upper case.
    public var description: String { format(uppercase: true) }

    /// `aa:bb:cc:dd:ee:ff`, the form sysfs (`/sys/class/tty/rfcommN/address`) prints.
    public var lowercaseDescription: String { format(uppercase: false) }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool { lhs.rawValue < rhs.rawValue }

    private func format(uppercase: Bool) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(17)
        for (index, byte) in bytes.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ":")) }
            Hex.append(byte, uppercase: uppercase, to: &text)
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// Why a Bluetooth address did not parse. Each case keeps the offending text.
public enum BluetoothAddressError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing given.
    case empty
    /// A space, tab or newline somewhere (the byte is the first one found).
    case whitespace(String, UInt8)
    /// Groups separated by `-`, `.` or `_` instead of `:`.
    case wrongSeparator(String, Character)
    /// Twelve hex digits with no separators.
    case missingSeparators(String)
    /// Not six `:`-separated groups (the count found).
    case wrongGroupCount(String, Int)
    /// A group (1-based) that is not exactly two characters long (empty included).
    case groupLength(String, group: Int, String)
    /// A group (1-based) of two characters that are not both hex digits.
    case notHex(String, group: Int, String)

    static let form = "six pairs of hex digits separated by ':', e.g. 00:07:80:AB:CD:EF"

    public var description: String {
        switch self {
        case .empty:
            "no Bluetooth address given (expected \(Self.form))"
        case .whitespace(let text, _):
            "Bluetooth address '\(text)' contains whitespace (expected \(Self.form))"
        case .wrongSeparator(let text, let separator):
            "Bluetooth address '\(text)' uses '\(separator)' between groups; write it with ':' (\(Self.form))"
        case .missingSeparators(let text):
            "Bluetooth address '\(text)' has no ':' separators (expected \(Self.form))"
        case .wrongGroupCount(let text, let count):
            "Bluetooth address '\(text)' has \(count) group\(count == 1 ? "" : "s"), not 6 (expected \(Self.form))"
        case .groupLength(let text, let group, let value):
            value.isEmpty
                ? "Bluetooth address '\(text)': group \(group) is empty (expected \(Self.form))"
                : "Bluetooth address '\(text)': group \(group) '\(value)' is not two hex digits (expected \(Self.form))"
        case .notHex(let text, let group, let value):
            "Bluetooth address '\(text)': group \(group) '\(value)' is not hexadecimal (expected \(Self.form))"
        }
    }
}
