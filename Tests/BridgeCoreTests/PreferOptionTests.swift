// The `prefer` option: which receivers ReceiverSelection (Input) serves first, as the
// configuration reads them.
import Input
import TestSupport
import Testing

@testable import BridgeCore

@Suite("prefer option", .tags(.unit))
struct PreferOptionTests {
    @Test(arguments: [
        ("/dev/ttyUSB0", [ReceiverPreference.path("/dev/ttyUSB0")]),
        ("5432A12345", [.serialNumber("5432A12345")]),
        ("/dev/gnss/trimble-5432A-if00, 6110B", [.path("/dev/gnss/trimble-5432A-if00"), .serialNumber("6110B")]),
        ("a b\tc", [.serialNumber("a"), .serialNumber("b"), .serialNumber("c")]),
    ])
    func preferParsesPathsAndSerialNumbers(_ value: String, _ expected: [ReceiverPreference]) throws {
        var c = BridgeConfiguration()
        try c.apply("prefer", value)
        #expect(c.preferredReceivers == expected)
    }

    @Test func preferLinesAddUpInOrderAndTheCommandLineReplacesThem() throws {
        var c = BridgeConfiguration()
        try ConfigurationFile.apply(
            try ConfigurationFile.parse("prefer = /dev/ttyACM0\nprefer = 5432A", path: "t.conf"),
            path: "t.conf", to: &c)
        #expect(c.preferredReceivers == [.path("/dev/ttyACM0"), .serialNumber("5432A")])
        c.clear("prefer")
        #expect(c.preferredReceivers.isEmpty)
    }
}
