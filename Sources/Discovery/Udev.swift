// Typed ownership of libudev objects. Everything here runs on the udev thread only: libudev(3)
// says "only a single specific thread may operate on a given object during its entire lifetime
// … even if locking is used". So none of these types is Sendable, and only `DeviceProperties`
// (plain values) leaves this file.
import ByteCoding
import CUdev
import Glibc
import Posix

/// The one chokepoint for libudev's error convention: functions returning `int` report failure as
/// a negative errno value; functions returning a pointer return NULL and set `errno`.
@inline(__always)
func udevCheck(_ result: CInt, _ operation: @autoclosure () -> String) throws(DiscoveryError) {
    if result < 0 { throw DiscoveryError(operation: operation(), errno: Errno(rawValue: -result)) }
}

/// A libudev context (`struct udev`), unreferenced exactly once.
struct UdevContext: ~Copyable {
    let pointer: OpaquePointer

    init() throws(DiscoveryError) {
        guard let pointer = udev_new() else {
            throw DiscoveryError(operation: "udev_new()", errno: Errno.current, hint: "is libudev1 installed?")
        }
        self.pointer = pointer
    }

    deinit { udev_unref(pointer) }
}

/// A netlink monitor socket, filtered to our subsystems.
struct UdevMonitor: ~Copyable {
    let pointer: OpaquePointer

    init(context: borrowing UdevContext, source: MonitorSource) throws(DiscoveryError) {
        guard let pointer = udev_monitor_new_from_netlink(context.pointer, source.rawValue) else {
            throw DiscoveryError(
                operation: "udev_monitor_new_from_netlink(\"\(source)\")", errno: Errno.current,
                hint: "netlink uevent sockets may be blocked in this sandbox or container")
        }
        self.pointer = pointer
    }

    deinit { udev_monitor_unref(pointer) }

    func addMatch(subsystem: String) throws(DiscoveryError) {
        try udevCheck(
            udev_monitor_filter_add_match_subsystem_devtype(pointer, subsystem, nil),
            "udev_monitor_filter_add_match_subsystem_devtype(\"\(subsystem)\")")
    }

    /// Asks for a larger socket buffer so a burst (a hub with several receivers) does not
    /// overflow it. Needs CAP_NET_ADMIN to exceed rmem_max; failure is harmless.
    func setReceiveBufferSize(_ bytes: Int) throws(DiscoveryError) {
        try udevCheck(
            udev_monitor_set_receive_buffer_size(pointer, CInt(clamping: bytes)),
            "udev_monitor_set_receive_buffer_size(\(bytes))")
    }

    func enableReceiving() throws(DiscoveryError) {
        try udevCheck(udev_monitor_enable_receiving(pointer), "udev_monitor_enable_receiving()")
    }

    /// The non-blocking socket to poll (owned by the monitor: never closed here).
    var descriptor: CInt { udev_monitor_get_fd(pointer) }

    enum Received: ~Copyable {
        case device(UdevDevice)
        /// Nothing (more) to read right now.
        case drained
        case failed(Errno)
    }

    /// Reads one device from the socket. libudev skips messages that fail the filter or the
    /// sender check and returns NULL with EAGAIN once the socket is empty.
    func receive() -> Received {
        if let device = udev_monitor_receive_device(pointer) { return .device(UdevDevice(adopting: device)) }
        let error = Errno.current
        if error == .wouldBlock || error == .interrupted || error.rawValue == 0 { return .drained }
        return .failed(error)
    }
}

/// A referenced `struct udev_device`.
struct UdevDevice: ~Copyable {
    let pointer: OpaquePointer

    init(adopting pointer: OpaquePointer) { self.pointer = pointer }

    init?(context: borrowing UdevContext, syspath: String) {
        guard let pointer = udev_device_new_from_syspath(context.pointer, syspath) else { return nil }
        self.pointer = pointer
    }

    deinit { udev_device_unref(pointer) }

    /// Reads everything we keep, while sysfs still has it.
    var properties: DeviceProperties { readProperties(pointer) }
}

/// Scans sysfs for devices of `subsystems` and returns their properties.
func enumerateDevices(
    context: borrowing UdevContext, subsystems: [String], keep: (DeviceProperties) -> Bool
) throws(DiscoveryError) -> [DeviceProperties] {
    guard let enumerate = udev_enumerate_new(context.pointer) else {
        throw DiscoveryError(operation: "udev_enumerate_new()", errno: Errno.current)
    }
    defer { udev_enumerate_unref(enumerate) }
    for subsystem in subsystems {
        try udevCheck(
            udev_enumerate_add_match_subsystem(enumerate, subsystem),
            "udev_enumerate_add_match_subsystem(\"\(subsystem)\")")
    }
    try udevCheck(udev_enumerate_scan_devices(enumerate), "udev_enumerate_scan_devices()")
    var found: [DeviceProperties] = []
    var entry = udev_enumerate_get_list_entry(enumerate)
    while let current = entry {
        // A device may vanish between the scan and this lookup: skip it (its remove event follows).
        if let syspath = string(udev_list_entry_get_name(current)),
            let device = UdevDevice(context: context, syspath: syspath)
        {
            let properties = device.properties
            if keep(properties) { found.append(properties) }
        }
        entry = udev_list_entry_get_next(current)
    }
    return found
}

// MARK: - Property extraction

private func string(_ pointer: UnsafePointer<CChar>?) -> String? {
    guard let pointer else { return nil }
    let text = String(cString: pointer)
    return text.isEmpty ? nil : text
}

private func sysattr(_ device: OpaquePointer, _ name: String) -> String? {
    string(udev_device_get_sysattr_value(device, name)).map(trimmed)
}

private func property(_ device: OpaquePointer, _ name: String) -> String? {
    string(udev_device_get_property_value(device, name))
}

private func trimmed(_ text: String) -> String {
    var slice = Substring(text)
    while let last = slice.last, last.isWhitespace { slice.removeLast() }
    while let first = slice.first, first.isWhitespace { slice.removeFirst() }
    return String(slice)
}

/// Reads a device's identity from sysfs (parents) with the udev database as the fallback.
/// Parents returned by `udev_device_get_parent_with_subsystem_devtype` are owned by the child:
/// they are not unreferenced here.
private func readProperties(_ device: OpaquePointer) -> DeviceProperties {
    var properties = DeviceProperties(
        action: string(udev_device_get_action(device)).map(DeviceAction.init),
        subsystem: string(udev_device_get_subsystem(device)) ?? "",
        sysname: string(udev_device_get_sysname(device)) ?? "",
        devnode: string(udev_device_get_devnode(device)),
        major: property(device, "MAJOR").flatMap { UInt32($0) },
        minor: property(device, "MINOR").flatMap { UInt32($0) },
        devpath: string(udev_device_get_devpath(device)) ?? "",
        sequenceNumber: udev_device_get_seqnum(device) == 0 ? nil : UInt64(udev_device_get_seqnum(device)),
        isInitialized: udev_device_get_is_initialized(device) > 0)

    var entry = udev_device_get_properties_list_entry(device)
    while let current = entry {
        if let name = string(udev_list_entry_get_name(current)), name.hasPrefix("ID_") {
            properties.udevProperties[name] = string(udev_list_entry_get_value(current)) ?? ""
        }
        entry = udev_list_entry_get_next(current)
    }
    entry = udev_device_get_devlinks_list_entry(device)
    while let current = entry {
        if let link = string(udev_list_entry_get_name(current)) { properties.devlinks.append(link) }
        entry = udev_list_entry_get_next(current)
    }

    // sysfs first: it is there with or without udevd (spike Q2(a)).
    if let usbDevice = udev_device_get_parent_with_subsystem_devtype(device, "usb", "usb_device") {
        properties.vendorID = sysattr(usbDevice, "idVendor")?.lowercased()
        properties.productID = sysattr(usbDevice, "idProduct")?.lowercased()
        properties.serialNumber = sysattr(usbDevice, "serial")
        properties.manufacturer = sysattr(usbDevice, "manufacturer")
        properties.product = sysattr(usbDevice, "product")
    }
    if let usbInterface = udev_device_get_parent_with_subsystem_devtype(device, "usb", "usb_interface") {
        properties.interfaceNumber = sysattr(usbInterface, "bInterfaceNumber")
        properties.interfaceName = sysattr(usbInterface, "interface")
        properties.driver = string(udev_device_get_driver(usbInterface))
    }
    if properties.isRFCOMM {
        // net/bluetooth/rfcomm/tty.c: device attributes `address` (remote bdaddr) and `channel`.
        properties.bluetoothAddress = sysattr(device, "address")?.uppercased()
        properties.rfcommChannel = sysattr(device, "channel").flatMap { Int($0) }
    }
    properties.fillFromUdevDatabase()
    return properties
}

extension DeviceProperties {
    /// Fills what sysfs could not give (a `remove` event: the sysfs nodes are already gone) from
    /// the `ID_*` properties udevd's `usb_id` builtin stored (systemd 252 sets both the `ID_USB_*`
    /// and the older `ID_*` names).
    mutating func fillFromUdevDatabase() {
        func first(_ names: String...) -> String? {
            for name in names { if let value = udevProperties[name], !value.isEmpty { return value } }
            return nil
        }
        vendorID = vendorID ?? first("ID_USB_VENDOR_ID", "ID_VENDOR_ID")?.lowercased()
        productID = productID ?? first("ID_USB_MODEL_ID", "ID_MODEL_ID")?.lowercased()
        serialNumber = serialNumber ?? first("ID_USB_SERIAL_SHORT", "ID_SERIAL_SHORT")
        manufacturer =
            manufacturer
            ?? first("ID_USB_VENDOR_ENC", "ID_VENDOR_ENC").map(Self.decodeUdevEncoded).map(trimmed)
        product =
            product
            ?? first("ID_USB_MODEL_ENC", "ID_MODEL_ENC").map(Self.decodeUdevEncoded).map(trimmed)
        interfaceNumber = interfaceNumber ?? first("ID_USB_INTERFACE_NUM")
        driver = driver ?? first("ID_USB_DRIVER")
    }

    /// Decodes udev's `\xNN` escapes (`ID_MODEL_ENC=u-blox\x20GNSS\x20receiver`).
    static func decodeUdevEncoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        let source = Array(text.utf8)
        var index = 0
        while index < source.count {
            if source[index] == UInt8(ascii: "\\"), index + 3 < source.count, source[index + 1] == UInt8(ascii: "x"),
                let byte = Hex.byte(high: source[index + 2], low: source[index + 3])
            {
                bytes.append(byte)
                index += 4
            } else {
                bytes.append(source[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
