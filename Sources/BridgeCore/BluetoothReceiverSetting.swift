import Input

/// One `bluetooth` option: a paired SPP receiver the daemon keeps bound to an rfcomm tty.
///
/// `ADDRESS [channel N] [rfcomm N]`: `AA:BB:CC:DD:EE:FF`, the RFCOMM channel (1 to 30, default 1:
/// nearly every GNSS receiver's SPP channel) and the tty number (`/dev/rfcommN`, 0 to 255; default
/// the lowest number no other `bluetooth` line names, in the order of the lines).
public struct BluetoothReceiverSetting: Sendable, Equatable {
    public var address: BluetoothAddress
    public var channel: UInt8
    /// N of `/dev/rfcommN`, when given.
    public var rfcomm: Int16?

    public init(address: BluetoothAddress, channel: UInt8 = 1, rfcomm: Int16? = nil) {
        self.address = address
        self.channel = channel
        self.rfcomm = rfcomm
    }

    public init(parsing text: String) throws(ConfigurationError) {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard let first = words.first else {
            throw ConfigurationError(
                message: "bluetooth needs the receiver's address, e.g. bluetooth = 00:07:80:AB:CD:EF")
        }
        guard let address = try? BluetoothAddress(parsing: first) else {
            throw ConfigurationError(
                message:
                    "bluetooth: '\(first)' is not a Bluetooth address: "
                    + "six pairs of hexadecimal digits separated by ':' "
                    + "(00:07:80:AB:CD:EF), as bluetoothctl shows it"
            )
        }
        self.init(address: address)
        var rest = words.dropFirst()
        while let word = rest.popFirst() {
            guard word == "channel" || word == "rfcomm" else {
                throw ConfigurationError(
                    message: "bluetooth: unexpected '\(word)' after the address (expected 'channel N' or 'rfcomm N')")
            }
            guard let value = rest.popFirst() else {
                throw ConfigurationError(message: "bluetooth: '\(word)' needs a number")
            }
            if word == "channel" {
                guard let number = UInt8(value), (1...30).contains(number) else {
                    throw ConfigurationError(
                        message: "bluetooth: channel must be an RFCOMM channel from 1 to 30, not '\(value)'")
                }
                channel = number
            } else {
                guard let number = Int16(value), (0...255).contains(number) else {
                    throw ConfigurationError(
                        message: "bluetooth: rfcomm must be a tty number from 0 to 255 (/dev/rfcommN), not '\(value)'")
                }
                rfcomm = number
            }
        }
    }
}

extension [BluetoothReceiverSetting] {
    /// Each setting with its tty number: the given one, else the lowest number no line names.
    public var withTTYNumbers: [(setting: BluetoothReceiverSetting, rfcomm: Int16)] {
        var taken = Set(compactMap(\.rfcomm))
        var next: Int16 = 0
        return map { setting in
            if let number = setting.rfcomm { return (setting, number) }
            while taken.contains(next) { next += 1 }
            taken.insert(next)
            return (setting, next)
        }
    }
}
