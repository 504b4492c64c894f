// Live checks with a real receiver, off unless the environment asks for them
// (hwtests/discovery.md has the bench steps). Without hardware they are skipped with the reason.
import Glibc
import Posix
import TestSupport
import Testing
@testable import Discovery

private func environment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    let text = String(cString: value)
    return text.isEmpty ? nil : text
}

/// `TMM_HW_RECEIVER=vvvv:pppp`: the USB ID of the receiver on the bench.
private let benchUSBID = environment("TMM_HW_RECEIVER")?.lowercased()
/// `TMM_HW_SERIAL`: its USB serial number, when it has one.
private let benchSerial = environment("TMM_HW_SERIAL")
/// `TMM_HW_REPLUG=1`: run the unplug/replug check (needs a person at the bench).
private let benchReplug = environment("TMM_HW_REPLUG") != nil
/// `TMM_HW_RFCOMM=rfcommN`: a bound RFCOMM tty to check.
private let benchRFCOMM = environment("TMM_HW_RFCOMM")
private let benchTimeoutSeconds = Int64(environment("TMM_HW_TIMEOUT") ?? "") ?? 60
/// `TMM_HW_SOURCE=kernel|udev`: force a netlink source (default: automatic).
private let benchOptions = UdevDiscovery.Options(
    source: environment("TMM_HW_SOURCE").flatMap(MonitorSource.init(rawValue:)).map { .fixed($0) } ?? .automatic)

private func scan(options: UdevDiscovery.Options = benchOptions) throws -> [DeviceProperties] {
    let inbox = try Inbox<DiscoveryEvent>(capacity: 256)
    let discovery = UdevDiscovery(inbox: inbox, options: options)
    try discovery.start()
    defer { discovery.stop() }
    let deadline = monotonicNanoseconds() + 5_000_000_000
    while monotonicNanoseconds() < deadline {
        for event in inbox.wait(milliseconds: 500) {
            if case .enumerated(let devices, _) = event { return devices }
            if case .problem(let error) = event { print("hw: \(error)") }
        }
    }
    Issue.record("no enumeration within 5 s")
    return []
}

@Suite("Hardware: discovery with a real receiver", .tags(.integration), .serialized)
struct HardwareDiscoveryTests {
    @Test(
        "the receiver on the bench is enumerated with its USB properties and classified",
        .enabled(if: benchUSBID != nil, "set TMM_HW_RECEIVER=vvvv:pppp (hwtests/discovery.md)"))
    func benchReceiverIsFound() throws {
        let devices = try scan().filter { $0.usbID == benchUSBID }
        try #require(!devices.isEmpty, "no tty with USB ID \(benchUSBID ?? "") (is it plugged in? `lsusb`)")
        let classifier = ReceiverClassifier()
        for device in devices {
            let classification = classifier.classify(device)
            print("hw: \(device)")
            print(
                "hw:   manufacturer=\(device.manufacturer ?? "-") product=\(device.product ?? "-") "
                    + "interface=\(device.interfaceName ?? "-") initialized=\(device.isInitialized) "
                    + "ID_*=\(device.udevProperties.count) links=\(device.devlinks)")
            print("hw:   \(classification)")
            #expect(device.devnode.map { access($0, F_OK) == 0 } == true)
            #expect(device.driver != nil, "the interface driver link was read")
            #expect(device.interfaceNumber != nil)
            if let benchSerial { #expect(device.serialNumber == benchSerial) }
        }
        #expect(devices.contains { classifier.classify($0).handToGPSD }, "at least one port goes to gpsd")
    }

    @Test(
        "unplug and replug: remove, then add under any name, and the inventory keeps the id",
        .enabled(if: benchReplug && benchUSBID != nil, "set TMM_HW_REPLUG=1 and TMM_HW_RECEIVER (hwtests/discovery.md)")
    )
    func replugKeepsIdentity() throws {
        let inbox = try Inbox<DiscoveryEvent>(capacity: 1024)
        let discovery = UdevDiscovery(inbox: inbox, options: benchOptions)
        try discovery.start()
        defer { discovery.stop() }
        var inventory = ReceiverInventory()
        var idsBefore: Set<ReceiverID> = []
        var removed = false
        var idsAfter: Set<ReceiverID> = []
        print("hw: unplug the receiver, wait two seconds, plug it back (\(benchTimeoutSeconds) s)")
        let deadline = monotonicNanoseconds() + benchTimeoutSeconds * 1_000_000_000
        while monotonicNanoseconds() < deadline && idsAfter.isEmpty {
            for event in inbox.wait(milliseconds: 500) {
                let actions = inventory.apply(event)
                for action in actions { print("hw: \(action)") }
                if case .uevent(let device) = event { print("hw: event \(device)") }
                for action in actions {
                    switch action {
                    case .connected(let id) where !removed: idsBefore.insert(id)
                    case .disconnected(let id) where idsBefore.contains(id): removed = true
                    case .connected(let id) where removed: idsAfter.insert(id)
                    default: break
                    }
                }
            }
        }
        try #require(!idsBefore.isEmpty, "the receiver was not present at start")
        try #require(removed, "no remove seen")
        try #require(!idsAfter.isEmpty, "no add seen after the remove")
        if benchSerial != nil {
            #expect(idsAfter.isSubset(of: idsBefore), "same serial number: same receiver id")
        }
        print("hw: before \(idsBefore.sorted()), after \(idsAfter.sorted()); \(inventory.snapshots)")
    }

    @Test(
        "a bound RFCOMM tty shows its Bluetooth address and is a receiver",
        .enabled(if: benchRFCOMM != nil, "set TMM_HW_RFCOMM=rfcommN (hwtests/discovery.md)"))
    func rfcommIsFound() throws {
        let device = try #require(try scan().first { $0.sysname == benchRFCOMM }, "no \(benchRFCOMM ?? "")")
        print("hw: \(device) channel=\(device.rfcommChannel.map(String.init) ?? "-")")
        #expect(device.major == DeviceProperties.rfcommMajor)
        #expect(device.bluetoothAddress != nil && device.rfcommChannel != nil)
        #expect(ReceiverClassifier().classify(device).rule == "bluetooth-rfcomm")
    }
}
