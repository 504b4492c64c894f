// The `bluetooth` option: address, channel and tty number, and the errors a bad line gets.
import Input
import TestSupport
import Testing

@testable import BridgeCore

@Suite("bluetooth option", .tags(.unit))
struct BluetoothSettingTests {
    @Test(arguments: [
        ("00:07:80:AB:CD:EF", BluetoothReceiverSetting(address: BluetoothAddress(rawValue: 0x0007_80AB_CDEF)!)),
        (
            "00:07:80:ab:cd:ef channel 3",
            BluetoothReceiverSetting(address: BluetoothAddress(rawValue: 0x0007_80AB_CDEF)!, channel: 3)
        ),
        (
            "8C:AA:B5:01:02:03 rfcomm 4 channel 30",
            BluetoothReceiverSetting(address: BluetoothAddress(rawValue: 0x8CAA_B501_0203)!, channel: 30, rfcomm: 4)
        ),
    ])
    func linesParse(_ text: String, _ expected: BluetoothReceiverSetting) throws {
        var c = BridgeConfiguration()
        try c.apply("bluetooth", text)
        #expect(c.bluetoothReceivers == [expected])
        #expect(throws: Never.self) { try c.validate() }
    }

    @Test(arguments: [
        ("00:07:80:AB:CD", "bluetooth: '00:07:80:AB:CD' is not a Bluetooth address"),
        ("00-07-80-AB-CD-EF", "bluetooth: '00-07-80-AB-CD-EF' is not a Bluetooth address"),
        ("00:07:80:AB:CD:EG", "bluetooth: '00:07:80:AB:CD:EG' is not a Bluetooth address"),
        ("00:07:80:AB:CD:EF chanel 1", "bluetooth: unexpected 'chanel' after the address"),
        ("00:07:80:AB:CD:EF channel", "bluetooth: 'channel' needs a number"),
        ("00:07:80:AB:CD:EF channel 0", "bluetooth: channel must be an RFCOMM channel from 1 to 30, not '0'"),
        (
            "00:07:80:AB:CD:EF rfcomm 256",
            "bluetooth: rfcomm must be a tty number from 0 to 255 (/dev/rfcommN), not '256'"
        ),
    ])
    func badLinesSayWhatIsWrong(_ text: String, _ message: String) {
        var c = BridgeConfiguration()
        #expect {
            try c.apply("bluetooth", text)
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    @Test func ttyNumbersAreGivenOrTheLowestFreeInLineOrder() throws {
        var c = BridgeConfiguration()
        try c.apply("bluetooth", "00:00:00:00:00:01")
        try c.apply("bluetooth", "00:00:00:00:00:02 rfcomm 0")
        try c.apply("bluetooth", "00:00:00:00:00:03")
        #expect(c.bluetoothReceivers.withTTYNumbers.map(\.rfcomm) == [1, 0, 2])
        try c.validate()

        try c.apply("bluetooth", "00:00:00:00:00:04 rfcomm 0")
        #expect(throws: ConfigurationError(message: "bluetooth: rfcomm 0 is given to two receivers")) {
            try c.validate()
        }
        c.clear("bluetooth")
        #expect(c.bluetoothReceivers.isEmpty)
    }
}
