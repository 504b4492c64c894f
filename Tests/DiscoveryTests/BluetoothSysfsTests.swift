// Reading rfcomm ttys and Bluetooth names from recorded trees: temporary directories laid out like
// /sys and /var/lib/bluetooth, with the values the kernel and BlueZ write (documented per file).
import Discovery
import Foundation
import Input
import Posix
import TestSupport
import Testing

/// A temporary directory tree, removed on deinit.
final class BluetoothRecordedTree {
    let root: String

    init() throws {
        root = NSTemporaryDirectory() + "tmm-bridge-bt-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func write(_ relative: String, _ text: String) throws {
        let url = URL(fileURLWithPath: root + "/" + relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    func link(_ relative: String, to destination: String) throws {
        let url = URL(fileURLWithPath: root + "/" + relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: destination)
    }

    /// A bound rfcomm tty as net/bluetooth/rfcomm/tty.c and the tty core publish it:
    /// `address` is `%pMR\n` (lower case), `channel` `%d\n`, `dev` `216:N\n` (rfcomm's major),
    /// `uevent` MAJOR/MINOR/DEVNAME. Written under devices/virtual/tty (where an unconnected
    /// rfcomm tty lives) with class/tty/rfcommN a relative link to it, as on a real system.
    func rfcommTTY(_ device: Int, address: String, channel: String) throws {
        let directory = "devices/virtual/tty/rfcomm\(device)"
        try write("\(directory)/address", address + "\n")
        try write("\(directory)/channel", channel + "\n")
        try write("\(directory)/dev", "216:\(device)\n")
        try write("\(directory)/uevent", "MAJOR=216\nMINOR=\(device)\nDEVNAME=rfcomm\(device)\n")
        try link("class/tty/rfcomm\(device)", to: "../../\(directory)")
    }
}

@Suite("rfcomm ttys in sysfs", .tags(.unit))
struct RFCOMMSysfsTests {
    @Test func readsAddressAndChannelOfABoundTTY() throws {
        let tree = try BluetoothRecordedTree()
        try tree.rfcommTTY(0, address: "00:07:80:ab:cd:ef", channel: "1")
        let sysfs = RFCOMMSysfs(root: tree.root)
        let tty = try #require(try sysfs.tty(device: 0))
        #expect(tty.device == 0)
        #expect(tty.name == "rfcomm0")
        #expect(tty.devicePath == "/dev/rfcomm0")
        #expect(tty.address.description == "00:07:80:AB:CD:EF")
        #expect(tty.channel == 1)
        #expect(sysfs.isPresent(device: 0))
        #expect(RFCOMMBinding(device: 0, address: tty.address, channel: 1).matches(tty))
        #expect(!RFCOMMBinding(device: 0, address: tty.address, channel: 2).matches(tty))
    }

    @Test func listsOnlyRFCOMMTTYsByNumber() throws {
        let tree = try BluetoothRecordedTree()
        try tree.rfcommTTY(12, address: "00:a0:f9:11:22:33", channel: "3")
        try tree.rfcommTTY(0, address: "00:07:80:ab:cd:ef", channel: "1")
        try tree.rfcommTTY(2, address: "00:07:80:ab:cd:f0", channel: "30")
        // Other ttys in the class directory are not rfcomm and are skipped.
        try tree.write("devices/platform/serial8250/tty/ttyS0/dev", "4:64\n")
        try tree.link("class/tty/ttyS0", to: "../../devices/platform/serial8250/tty/ttyS0")
        try tree.write("class/tty/rfcommX/address", "00:00:00:00:00:01\n")  // not rfcommN
        let ttys = try RFCOMMSysfs(root: tree.root).ttys()
        #expect(ttys.map(\.device) == [0, 2, 12])
        #expect(ttys.map(\.channel) == [1, 30, 3])
        #expect(ttys[2].address.description == "00:A0:F9:11:22:33")
    }

    @Test func readsTheSyspathUdevReports() throws {
        let tree = try BluetoothRecordedTree()
        try tree.rfcommTTY(4, address: "00:07:80:ab:cd:ef", channel: "2")
        let tty = try #require(try RFCOMMSysfs.readTTY(directory: tree.root + "/devices/virtual/tty/rfcomm4"))
        #expect(tty.device == 4 && tty.channel == 2)
        #expect(throws: RFCOMMSysfsError.self) {
            try RFCOMMSysfs.readTTY(directory: tree.root + "/devices/virtual/tty/ttyS0")
        }
    }

    @Test func absentTTYsAreNilNotErrors() throws {
        let tree = try BluetoothRecordedTree()
        let sysfs = RFCOMMSysfs(root: tree.root)
        #expect(try sysfs.ttys() == [])  // no class/tty at all
        #expect(try sysfs.tty(device: 0) == nil)
        #expect(!sysfs.isPresent(device: 0))
        // A directory whose attributes are gone (tty released while we read) is absent too.
        try tree.write("class/tty/rfcomm1/dev", "216:1\n")
        #expect(try sysfs.tty(device: 1) == nil)
        #expect(try sysfs.ttys() == [])
    }

    @Test func malformedAttributesAreReportedWithThePath() throws {
        let tree = try BluetoothRecordedTree()
        try tree.rfcommTTY(0, address: "00-07-80-ab-cd-ef", channel: "1")
        try tree.rfcommTTY(1, address: "00:07:80:ab:cd:ef", channel: "31")
        let sysfs = RFCOMMSysfs(root: tree.root)
        do {
            _ = try sysfs.tty(device: 0)
            Issue.record("a malformed address must throw")
        } catch {
            guard case .malformed(let path, let value, _) = error else { Issue.record("\(error)"); return }
            #expect(path.hasSuffix("class/tty/rfcomm0/address"))
            #expect(value == "00-07-80-ab-cd-ef")
            #expect(error.description.contains("uses '-' between groups"))
        }
        #expect(throws: RFCOMMSysfsError.self) { try sysfs.tty(device: 1) }
    }

    @Test func deviceNumbersFromNames() {
        #expect(RFCOMMTTY.deviceNumber(fromName: "rfcomm0") == 0)
        #expect(RFCOMMTTY.deviceNumber(fromName: "/dev/rfcomm12") == 12)
        #expect(RFCOMMTTY.deviceNumber(fromName: "/sys/devices/virtual/tty/rfcomm255") == 255)
        for bad in ["rfcomm", "rfcomm256", "rfcomm01", "rfcomm-1", "ttyS0", "rfcommX", "rfcomm1a", ""] {
            #expect(RFCOMMTTY.deviceNumber(fromName: bad) == nil, "\(bad)")
        }
    }
}

@Suite("Bluetooth names from BlueZ's storage", .tags(.unit))
struct BluetoothStoreTests {
    static let adapter = "00:1A:7D:DA:71:13"

    /// /var/lib/bluetooth as BlueZ 5 writes it (doc/settings-storage.txt): one directory per
    /// adapter with `settings`, `cache/<device>` and `<device>/info`; upper-case address names.
    func bluezTree() throws -> BluetoothRecordedTree {
        let tree = try BluetoothRecordedTree()
        try tree.write("\(Self.adapter)/settings", "[General]\nDiscoverable=false\n")
        try tree.write(
            "\(Self.adapter)/00:07:80:AB:CD:EF/info",
            """
            [General]
            Name=Trimble R2
            Class=0x001f00
            SupportedTechnologies=BR/EDR;
            Trusted=true
            Blocked=false
            Services=00001101-0000-1000-8000-00805f9b34fb;

            [LinkKey]
            Key=9A1F0C2D3E4B5A69788796A5B4C3D2E1
            Type=4
            PINLength=0

            """)
        try tree.write(
            "\(Self.adapter)/00:A0:F9:11:22:33/info",
            """
            [General]
            Name=Emlid Reach RS2
            Alias=\\sRover 1
            Trusted=true

            """)
        try tree.write(
            "\(Self.adapter)/cache/00:A0:F9:44:55:66",
            """
            [General]
            Name=u-blox ZED-F9P

            [ServiceRecords]
            0x00010000=35...

            """)
        return tree
    }

    @Test func readsTheNameOfAPairedDevice() throws {
        let tree = try bluezTree()
        let store = BluetoothStore(root: tree.root)
        let address = try BluetoothAddress(parsing: "00:07:80:ab:cd:ef")
        let record = try #require(try store.device(address))
        #expect(record.name == "Trimble R2")
        #expect(record.alias == nil)
        #expect(record.displayName == "Trimble R2")
        #expect(record.source == .info)
        #expect(record.adapter.description == Self.adapter)
        #expect(store.name(of: address) == "Trimble R2")
        withExtendedLifetime(tree) {}
    }

    @Test func aliasWinsAndEscapesAreDecoded() throws {
        let tree = try bluezTree()
        let store = BluetoothStore(root: tree.root)
        let record = try #require(try store.device(try BluetoothAddress(parsing: "00:A0:F9:11:22:33")))
        #expect(record.name == "Emlid Reach RS2")
        #expect(record.alias == " Rover 1")
        #expect(record.displayName == " Rover 1")
        withExtendedLifetime(tree) {}
    }

    @Test func fallsBackToTheInquiryCache() throws {
        let tree = try bluezTree()
        let store = BluetoothStore(root: tree.root)
        let record = try #require(try store.device(try BluetoothAddress(parsing: "00:A0:F9:44:55:66")))
        #expect(record.name == "u-blox ZED-F9P")
        #expect(record.source == .cache)
        withExtendedLifetime(tree) {}
    }

    @Test func unknownDevicesAndMissingStorageAreNil() throws {
        let tree = try bluezTree()
        let unknown = try BluetoothAddress(parsing: "11:22:33:44:55:66")
        #expect(try BluetoothStore(root: tree.root).device(unknown) == nil)
        #expect(try BluetoothStore(root: tree.root + "/missing").device(unknown) == nil)
        let otherAdapter = try BluetoothAddress(parsing: "11:11:11:11:11:11")
        let paired = try BluetoothAddress(parsing: "00:07:80:AB:CD:EF")
        #expect(try BluetoothStore(root: tree.root).device(paired, adapter: otherAdapter) == nil)
    }
}
