import TestSupport
import Testing
@testable import Discovery

@Suite("Receiver inventory", .tags(.unit))
struct InventoryTests {
    private func id(_ actions: [InventoryAction]) -> ReceiverID? {
        for action in actions { if case .connected(let id) = action { return id } }
        return nil
    }

    @Test func addThenRemove() throws {
        var inventory = ReceiverInventory()
        let added = inventory.apply(.uevent(Recorded.event(Recorded.ubloxM8, .add)))
        let receiver = try #require(id(added))
        #expect(added == [.addToGPSD(path: "/dev/ttyACM0"), .connected(receiver)])
        #expect(inventory.primary?.isConnected == true)
        #expect(inventory.primary?.brand == "u-blox")
        #expect(inventory.primary?.model == "u-blox GNSS receiver")

        // A kernel-source remove carries no USB properties (sysfs is gone): found by path.
        let remove = DeviceProperties(action: .remove, sysname: "ttyACM0", devnode: "/dev/ttyACM0")
        #expect(inventory.apply(.uevent(remove)) == [.removeFromGPSD(path: "/dev/ttyACM0"), .disconnected(receiver)])
        let snapshot = try #require(inventory.primary)
        #expect(!snapshot.isConnected && snapshot.id == receiver && snapshot.model == "u-blox GNSS receiver")
        // Removing again does nothing.
        #expect(inventory.apply(.uevent(remove)).isEmpty)
    }

    @Test func sameSerialUnderANewNameIsTheSameReceiver() throws {
        var inventory = ReceiverInventory()
        let first = try #require(id(inventory.apply(.uevent(Recorded.event(Recorded.ftdi, .add)))))
        _ = inventory.apply(.uevent(Recorded.event(Recorded.ftdi, .remove)))
        let again = inventory.apply(.uevent(Recorded.event(Recorded.ftdi, .add, sysname: "ttyUSB1")))
        #expect(again == [.addToGPSD(path: "/dev/ttyUSB1"), .connected(first)])
        #expect(inventory.receivers.count == 1)
        #expect(inventory.receiver(id: first)?.path == "/dev/ttyUSB1")
        #expect(inventory.primary?.serialNumber == "A50285BI")
        #expect(inventory.primary?.brand == nil, "a bridge's manufacturer is not the receiver's brand")
        #expect(inventory.primary?.usbID == "0403:6001" && inventory.primary?.connection == .usb)
    }

    @Test func aDifferentSerialIsANewReceiver() throws {
        var inventory = ReceiverInventory()
        let first = try #require(id(inventory.apply(.uevent(Recorded.event(Recorded.ftdi, .add)))))
        _ = inventory.apply(.uevent(Recorded.event(Recorded.ftdi, .remove)))
        var other = Recorded.event(Recorded.ftdi, .add)
        other.serialNumber = "FT9ZZ001"
        let second = try #require(id(inventory.apply(.uevent(other))))
        #expect(second != first)
        #expect(inventory.receivers.count == 2)
        #expect(inventory.receiver(id: first)?.isConnected == false)
    }

    @Test func twoDevicesSharingASerialAtOnceAreTwoReceivers() throws {
        // Cheap bridges ship with serial "0001".
        var inventory = ReceiverInventory()
        let a = try #require(id(inventory.apply(.uevent(Recorded.event(Recorded.cp210x, .add)))))
        let b = try #require(id(inventory.apply(.uevent(Recorded.event(Recorded.cp210x, .add, sysname: "ttyUSB1")))))
        #expect(a != b)
        // Each is told about the other (the daemon warns: one link name, one `prefer` entry).
        #expect(inventory.sharingSerialNumber(with: b).map(\.id) == [a])
        #expect(inventory.sharingSerialNumber(with: a).map(\.id) == [b])
        _ = inventory.apply(.uevent(Recorded.event(Recorded.cp210x, .remove)))
        #expect(inventory.sharingSerialNumber(with: b).isEmpty, "a disconnected one shares nothing")
        // Another vendor with the same serial string is not a twin.
        var other = Recorded.event(Recorded.ftdi, .add, sysname: "ttyUSB2")
        other.serialNumber = Recorded.event(Recorded.cp210x, .add).serialNumber
        let c = try #require(id(inventory.apply(.uevent(other))))
        #expect(inventory.sharingSerialNumber(with: c).isEmpty)
    }

    @Test func serialLessDeviceIsTheSameOnlyAtTheSamePath() throws {
        var inventory = ReceiverInventory()
        let first = try #require(id(inventory.apply(.uevent(Recorded.event(Recorded.prolific, .add)))))
        _ = inventory.apply(.uevent(Recorded.event(Recorded.prolific, .remove)))
        #expect(id(inventory.apply(.uevent(Recorded.event(Recorded.prolific, .add)))) == first)
        _ = inventory.apply(.uevent(Recorded.event(Recorded.prolific, .remove)))
        let moved = try #require(
            id(inventory.apply(.uevent(Recorded.event(Recorded.prolific, .add, sysname: "ttyUSB3")))))
        #expect(moved != first)
    }

    @Test func gpsdAlreadyHasTheDevice() throws {
        var inventory = ReceiverInventory()
        inventory.gpsdReported(path: "/dev/ttyACM0", driver: nil, subtype: nil)
        #expect(inventory.gpsdHas(path: "/dev/ttyACM0"))
        let actions = inventory.apply(.enumerated([Recorded.ubloxM8], .startup))
        let receiver = try #require(id(actions))
        #expect(actions == [.connected(receiver)], "no +path for a device gpsd already has")
    }

    @Test func gpsdDriverAndSubtypeReachTheSnapshot() throws {
        var inventory = ReceiverInventory()
        _ = inventory.apply(.uevent(Recorded.event(Recorded.ubloxM8, .add)))
        inventory.gpsdReported(path: "/dev/ttyACM0", driver: "u-blox", subtype: "SW EXT CORE 1.00 (3fda8e),HW 00190000")
        #expect(inventory.primary?.gpsdDriver == "u-blox")
        #expect(inventory.primary?.gpsdSubtype == "SW EXT CORE 1.00 (3fda8e),HW 00190000")
    }

    @Test func aRestartedGPSDGetsEveryConnectedReceiverAgain() throws {
        var inventory = ReceiverInventory()
        _ = inventory.apply(.enumerated([Recorded.ubloxM8, Recorded.rfcomm(), Recorded.ttyS0], .startup))
        inventory.gpsdReported(path: "/dev/ttyACM0", driver: "u-blox", subtype: nil)
        inventory.gpsdReported(path: "/dev/rfcomm0", driver: "NMEA0183", subtype: nil)
        let readd = inventory.gpsdSessionStarted(devices: ["/dev/rfcomm0"])
        #expect(readd == [.addToGPSD(path: "/dev/ttyACM0")])
        #expect(!inventory.gpsdHas(path: "/dev/ttyACM0") && inventory.gpsdHas(path: "/dev/rfcomm0"))
    }

    @Test func nonReceiversAreIgnoredWithTheirReason() {
        var inventory = ReceiverInventory()
        let actions = inventory.apply(.enumerated([Recorded.ttyS0], .startup))
        guard case .ignored(let path, let classification) = actions.first, actions.count == 1 else {
            Issue.record("expected one .ignored, got \(actions)")
            return
        }
        #expect(path == "/dev/ttyS0" && classification.rule == "no-match")
        #expect(inventory.receivers.isEmpty && inventory.primary == nil)
    }

    @Test func duplicateAddsAndChangesAreIdempotent() throws {
        var inventory = ReceiverInventory()
        let first = try #require(id(inventory.apply(.enumerated([Recorded.ubloxM8], .startup))))
        // The monitor listens before the scan, so the same device may also arrive as an add.
        #expect(inventory.apply(.uevent(Recorded.event(Recorded.ubloxM8, .add))).isEmpty)
        var changed = Recorded.event(Recorded.ubloxM8, .change)
        changed.udevProperties = ["ID_SERIAL": "u-blox_AG_-_www.u-blox.com_u-blox_GNSS_receiver"]
        #expect(inventory.apply(.uevent(changed)).isEmpty)
        #expect(inventory.receiver(id: first)?.properties?.udevProperties["ID_SERIAL"] != nil)
        #expect(inventory.receivers.count == 1)
    }

    @Test func aChangeCanTurnAnUnknownDeviceIntoAReceiver() throws {
        // With udevd, the first event may precede the properties; the later `change` completes them.
        var inventory = ReceiverInventory()
        var bare = Recorded.event(Recorded.ubloxM8, .add)
        bare.vendorID = nil
        bare.productID = nil
        bare.product = nil
        bare.manufacturer = nil
        bare.driver = nil
        #expect(inventory.apply(.uevent(bare)).count == 1)  // ignored
        let actions = inventory.apply(.uevent(Recorded.event(Recorded.ubloxM8, .change)))
        #expect(actions.first == .addToGPSD(path: "/dev/ttyACM0"))
    }

    @Test func explicitPtyDevice() throws {
        var inventory = ReceiverInventory()
        let actions = inventory.addExplicitDevice(path: "/dev/pts/3")
        let receiver = try #require(id(actions))
        #expect(actions == [.addToGPSD(path: "/dev/pts/3"), .connected(receiver)])
        let snapshot = try #require(inventory.primary)
        #expect(snapshot.connection == .configured && snapshot.classification == "explicit" && snapshot.isConnected)
        #expect(inventory.addExplicitDevice(path: "/dev/pts/3").isEmpty)
        #expect(
            inventory.removeExplicitDevice(path: "/dev/pts/3") == [
                .removeFromGPSD(path: "/dev/pts/3"), .disconnected(receiver),
            ])
        // Configured again (the pty reopened at the same path): same receiver.
        #expect(id(inventory.addExplicitDevice(path: "/dev/pts/3")) == receiver)
    }

    @Test func anExplicitPathUdevAlsoSeesIsOneReceiver() throws {
        var inventory = ReceiverInventory()
        let receiver = try #require(id(inventory.addExplicitDevice(path: "/dev/ttyS0")))
        // ttyS0 is not a receiver by the table, but it was configured.
        #expect(inventory.apply(.enumerated([Recorded.ttyS0], .startup)).isEmpty)
        #expect(inventory.receivers.count == 1 && inventory.receiver(id: receiver)?.properties?.major == 4)
        let remove = Recorded.event(Recorded.ttyS0, .remove)
        #expect(inventory.apply(.uevent(remove)) == [.removeFromGPSD(path: "/dev/ttyS0"), .disconnected(receiver)])
        let back = inventory.apply(.uevent(Recorded.event(Recorded.ttyS0, .add)))
        #expect(back == [.addToGPSD(path: "/dev/ttyS0"), .connected(receiver)])
    }

    @Test func rfcommReceiverKeepsItsIdentityByAddressAndGetsItsName() throws {
        var inventory = ReceiverInventory()
        inventory.bluetoothNameReported(address: "00:1a:7d:da:71:13", name: "R12i, 6129F00123")
        let receiver = try #require(id(inventory.apply(.uevent(Recorded.event(Recorded.rfcomm(0), .add)))))
        var snapshot = try #require(inventory.primary)
        #expect(snapshot.connection == .bluetooth)
        #expect(snapshot.bluetoothAddress == "00:1A:7D:DA:71:13" && snapshot.bluetoothName == "R12i, 6129F00123")
        _ = inventory.apply(.uevent(Recorded.event(Recorded.rfcomm(0), .remove)))
        #expect(id(inventory.apply(.uevent(Recorded.event(Recorded.rfcomm(1), .add)))) == receiver)
        snapshot = try #require(inventory.primary)
        #expect(snapshot.devicePath == "/dev/rfcomm1" && snapshot.isConnected)
        // Another address is another receiver.
        let other = try #require(
            id(inventory.apply(.uevent(Recorded.event(Recorded.rfcomm(2, address: "00:1A:7D:00:00:01"), .add)))))
        #expect(other != receiver)
    }

    @Test func resynchronizationDisconnectsWhatIsGone() throws {
        var inventory = ReceiverInventory()
        _ = inventory.apply(.enumerated([Recorded.ubloxM8, Recorded.ftdi], .startup))
        _ = inventory.addExplicitDevice(path: "/dev/pts/7")
        let ftdi = try #require(inventory.receiver(path: "/dev/ttyUSB0")).id
        let actions = inventory.apply(.enumerated([Recorded.ubloxM8], .resynchronization))
        #expect(actions == [.removeFromGPSD(path: "/dev/ttyUSB0"), .disconnected(ftdi)])
        #expect(inventory.receiver(path: "/dev/pts/7") != nil, "configured devices are not udev's to remove")
    }

    @Test func primaryIsTheLatestConnectedReceiver() throws {
        var inventory = ReceiverInventory()
        let ublox = try #require(id(inventory.apply(.uevent(Recorded.event(Recorded.ubloxM8, .add)))))
        let trimble = try #require(
            id(inventory.apply(.uevent(Recorded.event(Recorded.trimbleUSB, .add, sysname: "ttyACM1")))))
        #expect(inventory.primary?.id == trimble && inventory.primary?.brand == "Trimble")
        _ = inventory.apply(.uevent(Recorded.event(Recorded.trimbleUSB, .remove, sysname: "ttyACM1")))
        #expect(inventory.primary?.id == ublox)
        _ = inventory.apply(.uevent(Recorded.event(Recorded.ubloxM8, .remove)))
        #expect(inventory.primary?.id == ublox && inventory.primary?.isConnected == false)
    }

    @Test func otherEventsChangeNothing() {
        var inventory = ReceiverInventory()
        #expect(inventory.apply(.monitorStarted(.kernel)).isEmpty)
        #expect(inventory.apply(.problem(DiscoveryError(operation: "x"))).isEmpty)
        #expect(inventory.apply(.stopped).isEmpty)
        #expect(inventory.apply(.uevent(Recorded.event(Recorded.ubloxM8, .unbind))).isEmpty)
    }
}
