// BluetoothAddress: the text form (table of valid and invalid inputs with the error each gets) and
// the byte orders. The kernel's bdaddr_t and the RFCOMM ABI are DiscoveryTests/BluetoothKernelTests.
import Input
import TestSupport
import Testing

@Suite("Bluetooth addresses", .tags(.unit))
struct BluetoothAddressTests {
    /// Valid inputs and their canonical (upper-case) form.
    static let valid: [(String, String, UInt64)] = [
        ("00:07:80:AB:CD:EF", "00:07:80:AB:CD:EF", 0x0007_80AB_CDEF),
        ("00:07:80:ab:cd:ef", "00:07:80:AB:CD:EF", 0x0007_80AB_CDEF),  // sysfs writes lower case
        ("aA:Bb:cC:dD:eE:fF", "AA:BB:CC:DD:EE:FF", 0xAABB_CCDD_EEFF),
        ("00:00:00:00:00:00", "00:00:00:00:00:00", 0),
        ("FF:FF:FF:FF:FF:FF", "FF:FF:FF:FF:FF:FF", 0xFFFF_FFFF_FFFF),
        ("01:23:45:67:89:0a", "01:23:45:67:89:0A", 0x0123_4567_890A),
    ]

    @Test(arguments: valid)
    func parsesValidAddresses(_ text: String, _ canonical: String, _ raw: UInt64) throws {
        let address = try BluetoothAddress(parsing: text)
        #expect(address.description == canonical)
        #expect(address.lowercaseDescription == canonical.lowercased())
        #expect(address.rawValue == raw)
        #expect(try BluetoothAddress(parsing: address.description) == address)
    }

    /// Invalid inputs and the exact error each must get.
    static let invalid: [(String, BluetoothAddressError)] = [
        ("", .empty),
        ("00:07:80:AB:CD", .wrongGroupCount("00:07:80:AB:CD", 5)),
        ("00:07:80:AB:CD:EF:01", .wrongGroupCount("00:07:80:AB:CD:EF:01", 7)),
        ("00:07:80:AB:CD:EF:", .wrongGroupCount("00:07:80:AB:CD:EF:", 7)),
        ("00-07-80-AB-CD-EF", .wrongSeparator("00-07-80-AB-CD-EF", "-")),
        ("00.07.80.AB.CD.EF", .wrongSeparator("00.07.80.AB.CD.EF", ".")),
        ("00:07:80-AB:CD:EF", .wrongSeparator("00:07:80-AB:CD:EF", "-")),
        ("000780ABCDEF", .missingSeparators("000780ABCDEF")),
        ("0:07:80:AB:CD:EF", .groupLength("0:07:80:AB:CD:EF", group: 1, "0")),
        ("00:07:80:ABC:CD:EF", .groupLength("00:07:80:ABC:CD:EF", group: 4, "ABC")),
        ("00::07:80:AB:CD", .groupLength("00::07:80:AB:CD", group: 2, "")),
        ("00:07:80:AB:CD:EG", .notHex("00:07:80:AB:CD:EG", group: 6, "EG")),
        ("0x:07:80:AB:CD:EF", .notHex("0x:07:80:AB:CD:EF", group: 1, "0x")),
        (" 00:07:80:AB:CD:EF", .whitespace(" 00:07:80:AB:CD:EF", 0x20)),
        ("00:07:80:AB:CD:EF\n", .whitespace("00:07:80:AB:CD:EF\n", 0x0A)),
        ("hello", .wrongGroupCount("hello", 1)),
    ]

    @Test(arguments: invalid)
    func rejectsMalformedAddressesWithTheirOwnError(_ text: String, _ expected: BluetoothAddressError) {
        #expect(throws: expected) { try BluetoothAddress(parsing: text) }
    }

    @Test func errorMessagesNameTheProblemAndShowTheForm() {
        let form = "six pairs of hex digits separated by ':', e.g. 00:07:80:AB:CD:EF"
        let cases: [(BluetoothAddressError, String)] = [
            (.empty, "no Bluetooth address given"),
            (.wrongSeparator("00-07-80-AB-CD-EF", "-"), "uses '-' between groups; write it with ':'"),
            (.missingSeparators("000780ABCDEF"), "has no ':' separators"),
            (.wrongGroupCount("00:07:80:AB:CD", 5), "has 5 groups, not 6"),
            (.groupLength("00::07:80:AB:CD", group: 2, ""), "group 2 is empty"),
            (.groupLength("00:07:80:ABC:CD:EF", group: 4, "ABC"), "group 4 'ABC' is not two hex digits"),
            (.notHex("00:07:80:AB:CD:EG", group: 6, "EG"), "group 6 'EG' is not hexadecimal"),
            (.whitespace(" x", 0x20), "contains whitespace"),
        ]
        for (error, phrase) in cases {
            #expect(error.description.contains(phrase), "\(error.description)")
            #expect(error.description.contains(form), "\(error.description)")
        }
    }

    @Test func kernelByteOrderIsReversed() throws {
        // BlueZ's str2ba puts the first text group in b[5]: bdaddr_t is little-endian.
        let address = try BluetoothAddress(parsing: "00:11:22:33:44:55")
        #expect(address.bytes == [0x00, 0x11, 0x22, 0x33, 0x44, 0x55])
        #expect(address.littleEndianBytes == [0x55, 0x44, 0x33, 0x22, 0x11, 0x00])
        #expect(BluetoothAddress(littleEndianBytes: [0x55, 0x44, 0x33, 0x22, 0x11, 0x00]) == address)
        #expect(BluetoothAddress(littleEndianBytes: [0x55, 0x44]) == nil)
        #expect(BluetoothAddress(bytes: (0x00, 0x11, 0x22, 0x33, 0x44, 0x55)) == address)
    }

    @Test func rawValueIsLimitedToFortyEightBits() {
        #expect(BluetoothAddress(rawValue: 0xFFFF_FFFF_FFFF) != nil)
        #expect(BluetoothAddress(rawValue: 0x1_0000_0000_0000) == nil)
        #expect(BluetoothAddress.any.description == "00:00:00:00:00:00")
    }

    @Test func addressesAreHashableAndOrdered() throws {
        let a = try BluetoothAddress(parsing: "00:07:80:ab:cd:ef")
        let b = try BluetoothAddress(parsing: "00:07:80:AB:CD:EF")
        let c = try BluetoothAddress(parsing: "00:07:80:AB:CD:F0")
        #expect(Set([a, b, c]).count == 2)
        #expect(a < c)
    }
}
