// What discovery learns about one device node: plain values, so they cross from the udev thread
// to the io thread (ARCHITECTURE.md "Threads") and can be written down in tests as recorded
// property sets of real devices.

/// The kernel's uevent action (`ACTION=`), as libudev reports it.
public enum DeviceAction: Sendable, Hashable, CustomStringConvertible {
    case add, remove, change, bind, unbind, move, online, offline
    /// An action this code does not know (kept so a log line can name it).
    case other(String)

    public init(_ text: String) {
        switch text {
        case "add": self = .add
        case "remove": self = .remove
        case "change": self = .change
        case "bind": self = .bind
        case "unbind": self = .unbind
        case "move": self = .move
        case "online": self = .online
        case "offline": self = .offline
        default: self = .other(text)
        }
    }

    public var description: String {
        switch self {
        case .add: "add"
        case .remove: "remove"
        case .change: "change"
        case .bind: "bind"
        case .unbind: "unbind"
        case .move: "move"
        case .online: "online"
        case .offline: "offline"
        case .other(let text): text
        }
    }
}

/// One device as discovery saw it: from the start-up enumeration (`action == nil`) or from a
/// uevent. USB fields come from sysfs (walking the parents to the USB interface and device) and,
/// when sysfs is already gone (a `remove`), from udevd's `ID_*` properties if udevd ran.
public struct DeviceProperties: Sendable, Hashable, CustomStringConvertible {
    /// nil for a device found by enumeration (it was simply there).
    public var action: DeviceAction?
    /// `tty` or `gnss`.
    public var subsystem: String
    /// Kernel name, e.g. `ttyACM0`, `rfcomm0`, `ttyS0`.
    public var sysname: String
    /// Device node, e.g. `/dev/ttyACM0` (nil when the kernel reported none).
    public var devnode: String?
    public var major: UInt32?
    public var minor: UInt32?
    /// sysfs path below /sys, e.g. `/devices/pci0000:00/…/1-1:1.0/tty/ttyACM0`.
    public var devpath: String
    /// The uevent sequence number (monitor events only).
    public var sequenceNumber: UInt64?

    // USB (nil when the device is not on USB or sysfs no longer has it).
    /// `idVendor`, four lowercase hex digits, e.g. `1546`.
    public var vendorID: String?
    /// `idProduct`, four lowercase hex digits, e.g. `01a8`.
    public var productID: String?
    /// The USB device's `serial` string descriptor.
    public var serialNumber: String?
    /// The USB device's `manufacturer` string descriptor.
    public var manufacturer: String?
    /// The USB device's `product` string descriptor.
    public var product: String?
    /// `bInterfaceNumber` of the USB interface behind this tty, two hex digits, e.g. `00`.
    public var interfaceNumber: String?
    /// The USB interface's `interface` string descriptor (e.g. gpsd matches Telit's
    /// "Telit Wireless Module Port").
    public var interfaceName: String?
    /// Driver bound to the USB interface: `cdc_acm`, `ftdi_sio`, `cp210x`, `pl2303`, `option`, …
    public var driver: String?

    // Bluetooth RFCOMM ttys (`/sys/class/tty/rfcommN/address` and `channel`).
    /// Remote device address as the kernel prints it, `AA:BB:CC:DD:EE:FF`.
    public var bluetoothAddress: String?
    public var rfcommChannel: Int?

    /// `ID_*` properties from the udev database (empty when udevd is not running).
    public var udevProperties: [String: String]
    /// Symlinks udevd made (`/dev/serial/by-id/…`, `/dev/gps0`); empty without udevd.
    public var devlinks: [String]
    /// Whether udevd has processed the device (`udev_device_get_is_initialized`).
    public var isInitialized: Bool

    public init(
        action: DeviceAction? = nil, subsystem: String = "tty", sysname: String, devnode: String? = nil,
        major: UInt32? = nil, minor: UInt32? = nil, devpath: String = "", sequenceNumber: UInt64? = nil,
        vendorID: String? = nil, productID: String? = nil, serialNumber: String? = nil,
        manufacturer: String? = nil, product: String? = nil, interfaceNumber: String? = nil,
        interfaceName: String? = nil, driver: String? = nil, bluetoothAddress: String? = nil,
        rfcommChannel: Int? = nil, udevProperties: [String: String] = [:], devlinks: [String] = [],
        isInitialized: Bool = false
    ) {
        self.action = action
        self.subsystem = subsystem
        self.sysname = sysname
        self.devnode = devnode
        self.major = major
        self.minor = minor
        self.devpath = devpath
        self.sequenceNumber = sequenceNumber
        self.vendorID = vendorID
        self.productID = productID
        self.serialNumber = serialNumber
        self.manufacturer = manufacturer
        self.product = product
        self.interfaceNumber = interfaceNumber
        self.interfaceName = interfaceName
        self.driver = driver
        self.bluetoothAddress = bluetoothAddress
        self.rfcommChannel = rfcommChannel
        self.udevProperties = udevProperties
        self.devlinks = devlinks
        self.isInitialized = isInitialized
    }

    /// The path gpsd is given: the device node, or `/dev/<sysname>` when the uevent had none.
    public var path: String { devnode ?? "/dev/" + sysname }

    /// `vvvv:pppp` when both USB IDs are known.
    public var usbID: String? {
        guard let vendorID, let productID else { return nil }
        return vendorID + ":" + productID
    }

    /// True for a Bluetooth RFCOMM tty (kernel name `rfcommN`, major 216: Linux
    /// Documentation/admin-guide/devices.txt, "216 char Bluetooth RFCOMM TTY devices").
    public var isRFCOMM: Bool {
        subsystem == "tty" && (sysname.hasPrefix("rfcomm") || major == Self.rfcommMajor)
    }

    /// Linux major numbers gpsd's `gpsd_classify` also relies on (devices.txt).
    public static let rfcommMajor: UInt32 = 216
    public static let acmMajor: UInt32 = 166
    public static let usbSerialMajor: UInt32 = 188

    /// One line for logs: `ttyACM0 (/dev/ttyACM0) usb 1546:01a8 "u-blox GNSS receiver" serial 12345 cdc_acm if 00`.
    public var description: String {
        var text = sysname + " (" + path + ")"
        if let action { text = action.description + " " + text }
        if let usbID { text += " usb " + usbID }
        if let product { text += " \"" + product + "\"" }
        if let serialNumber { text += " serial " + serialNumber }
        if let driver { text += " " + driver }
        if let interfaceNumber { text += " if " + interfaceNumber }
        if let bluetoothAddress { text += " bt " + bluetoothAddress }
        return text
    }
}
