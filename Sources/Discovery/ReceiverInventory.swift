// The receivers the bridge knows, as a pure state machine: it applies discovery events and what
// the gpsd side reports, and returns actions for its owner (the io loop) to carry out. No I/O.

/// A receiver's identity within one run of the bridge: kept when the same receiver comes back
/// under a new device name.
public struct ReceiverID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static func < (lhs: ReceiverID, rhs: ReceiverID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "receiver-\(rawValue)" }
}

/// How a receiver is attached.
public enum ReceiverConnection: String, Sendable, Hashable {
    case usb
    case bluetooth
    /// Kernel gnss subsystem device.
    case gnss
    /// On-board serial port (included by configuration).
    case serial
    /// Given by path (configuration or `--device`), e.g. a pty; not known to udev.
    case configured
}

/// What the owner must do after an inventory change.
public enum InventoryAction: Sendable, Hashable {
    /// Send `+path` on gpsd's control socket.
    case addToGPSD(path: String)
    /// Send `-path` on gpsd's control socket.
    case removeFromGPSD(path: String)
    /// A receiver appeared (or came back: same id).
    case connected(ReceiverID)
    /// A receiver went away; it stays in the inventory, disconnected, so it keeps its id.
    case disconnected(ReceiverID)
    /// A device that is not used, and why (for a log line).
    case ignored(path: String, Classification)
}

/// One receiver the inventory knows.
public struct Receiver: Sendable, Hashable {
    public let id: ReceiverID
    public internal(set) var isConnected: Bool
    /// Current device node while connected, the last one after.
    public internal(set) var path: String
    public internal(set) var connection: ReceiverConnection
    public internal(set) var classification: Classification
    /// The latest properties udev reported (nil for configured devices udev never saw).
    public internal(set) var properties: DeviceProperties?
    public internal(set) var bluetoothName: String?
    /// gpsd's driver name for the device (`u-blox`, `NMEA0183`, `Trimble TSIP`, …).
    public internal(set) var gpsdDriver: String?
    /// gpsd's subtype (firmware/hardware string).
    public internal(set) var gpsdSubtype: String?
    /// Order of the latest connection, to pick the primary receiver.
    var connectionOrder: Int
    /// Order of the latest connection or disconnection.
    var activityOrder: Int

    public var serialNumber: String? { properties?.serialNumber }
    public var manufacturer: String? { properties?.manufacturer }
    public var model: String? { properties?.product }
    /// The table row's brand; else the USB manufacturer string when the device is a known
    /// receiver (a bridge's manufacturer, "FTDI" or "Silicon Labs", is not the receiver's brand).
    public var brand: String? {
        classification.brand ?? (classification.verdict == .receiver ? properties?.manufacturer : nil)
    }
    public var bluetoothAddress: String? { properties?.bluetoothAddress }

    /// The view REST `/api/v1/receiver` serves.
    public var snapshot: ReceiverSnapshot {
        ReceiverSnapshot(
            id: id, isConnected: isConnected, connection: connection, devicePath: path, brand: brand,
            model: model, manufacturer: manufacturer, serialNumber: serialNumber, bluetoothName: bluetoothName,
            bluetoothAddress: bluetoothAddress, usbID: properties?.usbID, gpsdDriver: gpsdDriver,
            gpsdSubtype: gpsdSubtype, classification: classification.rule)
    }
}

/// What clients are told about a receiver (REST `/api/v1/receiver`, `/events`).
public struct ReceiverSnapshot: Sendable, Hashable {
    public var id: ReceiverID
    public var isConnected: Bool
    public var connection: ReceiverConnection
    public var devicePath: String
    public var brand: String?
    public var model: String?
    public var manufacturer: String?
    public var serialNumber: String?
    public var bluetoothName: String?
    public var bluetoothAddress: String?
    /// `vvvv:pppp`.
    public var usbID: String?
    public var gpsdDriver: String?
    public var gpsdSubtype: String?
    /// The classifier rule that admitted the receiver.
    public var classification: String
}

/// The inventory. Identity rules (docs/discovery.md, "Inventory identity"):
/// - a USB receiver with a serial number is the same receiver when vendor, product, serial number
///   and interface number match, whatever its new device name (ttyACM0 → ttyACM1);
/// - an RFCOMM receiver is the same when its Bluetooth address matches;
/// - a device without either is the same only when it returns at the same path with the same USB IDs;
/// - only a *disconnected* receiver is matched: two devices that share a serial number (cheap
///   bridges ship with "0001") at the same time are two receivers.
public struct ReceiverInventory: Sendable {
    public var classifier: ReceiverClassifier
    public private(set) var receivers: [Receiver] = []
    /// Paths gpsd says it has (DEVICES/DEVICE reports).
    public private(set) var gpsdPaths: Set<String> = []
    /// Paths given explicitly (configuration, `--device`).
    public private(set) var explicitPaths: Set<String> = []
    private var bluetoothNames: [String: String] = [:]
    private var nextID = 1
    private var connectionCounter = 0

    public init(classifier: ReceiverClassifier = ReceiverClassifier()) {
        self.classifier = classifier
    }

    // MARK: Discovery events

    public mutating func apply(_ event: DiscoveryEvent) -> [InventoryAction] {
        switch event {
        case .enumerated(let devices, _):
            var actions: [InventoryAction] = []
            for device in devices { actions += deviceAppeared(device) }
            // The scan is the truth: anything udev reported before and not in it is gone (events
            // were lost, or discovery restarted).
            let present = Set(devices.map(\.path))
            for receiver in receivers
            where receiver.isConnected && receiver.connection != .configured
                && !present.contains(receiver.path)
            {
                actions += disconnect(path: receiver.path)
            }
            return actions
        case .uevent(let device):
            switch device.action {
            case .remove:
                return deviceRemoved(device)
            case .add, .none:
                return deviceAppeared(device)
            case .change, .bind, .move, .online:
                if let index = connectedIndex(path: device.path) {
                    receivers[index].properties = merged(receivers[index].properties, device)
                    return []
                }
                // udevd may fill in properties later (a `change` after initialisation): classify again.
                return deviceAppeared(device)
            case .unbind, .offline, .other:
                return []
            }
        case .monitorStarted, .problem, .stopped:
            return []
        }
    }

    /// A device is present (enumerated or added). Idempotent.
    public mutating func deviceAppeared(_ device: DeviceProperties) -> [InventoryAction] {
        let path = device.path
        let explicit = explicitPaths.contains(path)
        let classification = explicit ? classifier.classifyExplicit(path: path) : classifier.classify(device)
        if let index = connectedIndex(path: path) {
            receivers[index].properties = merged(receivers[index].properties, device)
            if !explicit { receivers[index].classification = classification }
            return []
        }
        guard classification.handToGPSD else { return [.ignored(path: path, classification)] }
        return connect(
            path: path, device: device, classification: classification,
            connection: explicit ? .configured : Self.connection(of: device))
    }

    /// A device went away (udev `remove`). The event may carry few properties (sysfs is gone):
    /// the receiver is found by its path.
    public mutating func deviceRemoved(_ device: DeviceProperties) -> [InventoryAction] {
        disconnect(path: device.path)
    }

    // MARK: Configured devices

    /// A device given by path. Pass the canonical path (`canonicalDevicePath`) so it compares
    /// equal to udev's device node.
    public mutating func addExplicitDevice(path: String) -> [InventoryAction] {
        explicitPaths.insert(path)
        let classification = classifier.classifyExplicit(path: path)
        if let index = connectedIndex(path: path) {
            receivers[index].classification = classification
            return []
        }
        guard classification.handToGPSD else { return [.ignored(path: path, classification)] }
        return connect(path: path, device: nil, classification: classification, connection: .configured)
    }

    /// A configured device is gone (a pty closed) or no longer configured.
    public mutating func removeExplicitDevice(path: String) -> [InventoryAction] {
        explicitPaths.remove(path)
        return disconnect(path: path)
    }

    // MARK: What the gpsd side reports

    /// gpsd has `path` (a DEVICE report), with its driver and subtype when known.
    public mutating func gpsdReported(path: String, driver: String?, subtype: String?) {
        gpsdPaths.insert(path)
        if let index = connectedIndex(path: path) {
            if let driver, !driver.isEmpty { receivers[index].gpsdDriver = driver }
            if let subtype, !subtype.isEmpty { receivers[index].gpsdSubtype = subtype }
        }
    }

    /// gpsd no longer has `path` (DEVICE with `activated` 0, or `-path` answered).
    public mutating func gpsdRemoved(path: String) {
        gpsdPaths.remove(path)
    }

    /// A gpsd session (re)started and listed its devices (DEVICES). A restarted gpsd knows none of
    /// ours: every connected receiver it lacks is handed to it again.
    public mutating func gpsdSessionStarted(devices: [String]) -> [InventoryAction] {
        gpsdPaths = Set(devices)
        return receivers.filter { $0.isConnected && !gpsdPaths.contains($0.path) }.map { .addToGPSD(path: $0.path) }
    }

    public func gpsdHas(path: String) -> Bool { gpsdPaths.contains(path) }

    /// The Bluetooth side learned a device's name (BlueZ, or the bind command).
    public mutating func bluetoothNameReported(address: String, name: String) {
        let key = address.uppercased()
        bluetoothNames[key] = name
        for index in receivers.indices where receivers[index].bluetoothAddress?.uppercased() == key {
            receivers[index].bluetoothName = name
        }
    }

    // MARK: Queries

    public func receiver(id: ReceiverID) -> Receiver? { receivers.first { $0.id == id } }

    /// The connected receiver at `path`, if any.
    public func receiver(path: String) -> Receiver? { connectedIndex(path: path).map { receivers[$0] } }

    public var snapshots: [ReceiverSnapshot] { receivers.map(\.snapshot) }

    /// The other connected receivers that claim the same USB vendor and serial number as `id`:
    /// a serial number is what the device says, so two of them (cheap bridges all saying "0001",
    /// or a device copying another's) are told apart only by their ports. Their `/dev/gnss`
    /// link by serial is one name for both (udev gives it to one of them), and `prefer = SERIAL`
    /// matches both.
    public func sharingSerialNumber(with id: ReceiverID) -> [Receiver] {
        guard let receiver = receiver(id: id), let serial = receiver.serialNumber,
            let vendor = receiver.properties?.vendorID
        else { return [] }
        return receivers.filter {
            $0.id != id && $0.isConnected && $0.serialNumber == serial && $0.properties?.vendorID == vendor
        }
    }

    /// The receiver REST reports: the most recently connected one that is still connected; with
    /// none connected, the one that went away last (shown with `isConnected: false`); nil before any.
    public var primary: ReceiverSnapshot? {
        let connected = receivers.filter(\.isConnected).max { $0.connectionOrder < $1.connectionOrder }
        return (connected ?? receivers.max { $0.activityOrder < $1.activityOrder })?.snapshot
    }

    // MARK: Internals

    private func connectedIndex(path: String) -> Int? {
        receivers.firstIndex { $0.isConnected && $0.path == path }
    }

    private mutating func connect(
        path: String, device: DeviceProperties?, classification: Classification, connection: ReceiverConnection
    ) -> [InventoryAction] {
        connectionCounter += 1
        let index: Int
        if let returning = returningIndex(path: path, device: device) {
            index = returning
            receivers[index].isConnected = true
            receivers[index].path = path
            receivers[index].properties = merged(receivers[index].properties, device)
            receivers[index].classification = classification
            receivers[index].connection = connection
            receivers[index].connectionOrder = connectionCounter
            receivers[index].activityOrder = connectionCounter
            // gpsd's driver is learned again from this connection.
            receivers[index].gpsdDriver = nil
            receivers[index].gpsdSubtype = nil
        } else {
            let receiver = Receiver(
                id: ReceiverID(rawValue: nextID), isConnected: true, path: path, connection: connection,
                classification: classification, properties: device, connectionOrder: connectionCounter,
                activityOrder: connectionCounter)
            nextID += 1
            receivers.append(receiver)
            index = receivers.count - 1
        }
        if let address = receivers[index].bluetoothAddress?.uppercased(), let name = bluetoothNames[address] {
            receivers[index].bluetoothName = name
        }
        var actions: [InventoryAction] = []
        if !gpsdPaths.contains(path) { actions.append(.addToGPSD(path: path)) }
        actions.append(.connected(receivers[index].id))
        return actions
    }

    private mutating func disconnect(path: String) -> [InventoryAction] {
        guard let index = connectedIndex(path: path) else { return [] }
        receivers[index].isConnected = false
        connectionCounter += 1
        receivers[index].activityOrder = connectionCounter
        gpsdPaths.remove(path)
        return [.removeFromGPSD(path: path), .disconnected(receivers[index].id)]
    }

    /// The disconnected receiver `device` is, by the identity rules above (latest first).
    private func returningIndex(path: String, device: DeviceProperties?) -> Int? {
        let candidates = receivers.indices.filter { !receivers[$0].isConnected }
            .sorted { receivers[$0].connectionOrder > receivers[$1].connectionOrder }
        guard let device else {
            return candidates.first { receivers[$0].path == path && receivers[$0].connection == .configured }
        }
        if let address = device.bluetoothAddress?.uppercased() {
            return candidates.first { receivers[$0].bluetoothAddress?.uppercased() == address }
        }
        if let serial = device.serialNumber, device.vendorID != nil {
            return candidates.first {
                let known = receivers[$0].properties
                return known?.serialNumber == serial && known?.vendorID == device.vendorID
                    && known?.productID == device.productID && known?.interfaceNumber == device.interfaceNumber
            }
        }
        return candidates.first {
            let known = receivers[$0].properties
            return receivers[$0].path == path && known?.serialNumber == nil && known?.bluetoothAddress == nil
                && known?.usbID == device.usbID
        }
    }

    /// Newer values win; values the new report lacks (a `remove` or kernel-source event) are kept.
    private func merged(_ old: DeviceProperties?, _ new: DeviceProperties?) -> DeviceProperties? {
        guard var result = new else { return old }
        guard let old else { return result }
        result.devnode = result.devnode ?? old.devnode
        result.major = result.major ?? old.major
        result.minor = result.minor ?? old.minor
        result.vendorID = result.vendorID ?? old.vendorID
        result.productID = result.productID ?? old.productID
        result.serialNumber = result.serialNumber ?? old.serialNumber
        result.manufacturer = result.manufacturer ?? old.manufacturer
        result.product = result.product ?? old.product
        result.interfaceNumber = result.interfaceNumber ?? old.interfaceNumber
        result.interfaceName = result.interfaceName ?? old.interfaceName
        result.driver = result.driver ?? old.driver
        result.bluetoothAddress = result.bluetoothAddress ?? old.bluetoothAddress
        result.rfcommChannel = result.rfcommChannel ?? old.rfcommChannel
        if result.udevProperties.isEmpty { result.udevProperties = old.udevProperties }
        if result.devlinks.isEmpty { result.devlinks = old.devlinks }
        return result
    }

    private static func connection(of device: DeviceProperties) -> ReceiverConnection {
        if device.isRFCOMM { return .bluetooth }
        if device.subsystem == "gnss" { return .gnss }
        if device.vendorID != nil { return .usb }
        return .serial
    }
}
