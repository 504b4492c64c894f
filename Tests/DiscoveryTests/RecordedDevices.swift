// Property sets of real device kinds, as discovery would read them from sysfs, written from
// documented values (no hardware here: spike.md Q2(a)). Where a value is not documented the
// comment says so; hwtests/discovery.md has the steps to record real ones.
@testable import Discovery

enum Recorded {
    /// u-blox 8 (EVK-M8N, NEO-M8 with native USB): 1546:01a8, cdc_acm. Strings as the M8 firmware
    /// reports them ("u-blox AG - www.u-blox.com", "u-blox GNSS receiver").
    static let ubloxM8 = DeviceProperties(
        sysname: "ttyACM0", devnode: "/dev/ttyACM0", major: 166, minor: 0,
        devpath: "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/tty/ttyACM0",
        vendorID: "1546", productID: "01a8", manufacturer: "u-blox AG - www.u-blox.com",
        product: "u-blox GNSS receiver", interfaceNumber: "00", driver: "cdc_acm")

    /// u-blox 7: dmesg quoted in payne/SDR-TDOA-DF notes.markdown: "idVendor=1546, idProduct=01a7",
    /// "Product: u-blox 7 - GPS/GNSS Receiver", "Manufacturer: u-blox AG - www.u-blox.com",
    /// "SerialNumber=0" (no serial string), "cdc_acm 1-4:1.0: ttyACM0".
    static let ublox7 = DeviceProperties(
        sysname: "ttyACM0", devnode: "/dev/ttyACM0", major: 166, minor: 0,
        devpath: "/devices/pci0000:00/0000:00:14.0/usb1/1-4/1-4:1.0/tty/ttyACM0",
        vendorID: "1546", productID: "01a7", manufacturer: "u-blox AG - www.u-blox.com",
        product: "u-blox 7 - GPS/GNSS Receiver", interfaceNumber: "00", driver: "cdc_acm")

    /// u-blox F9P (C099-F9P, simpleRTK2B): 1546:01a9, cdc_acm.
    static let ubloxF9P = DeviceProperties(
        sysname: "ttyACM0", devnode: "/dev/ttyACM0", major: 166, minor: 0,
        devpath: "/devices/platform/soc/3f980000.usb/usb1/1-1/1-1.3/1-1.3:1.0/tty/ttyACM0",
        vendorID: "1546", productID: "01a9", manufacturer: "u-blox AG - www.u-blox.com",
        product: "u-blox GNSS receiver", interfaceNumber: "00", driver: "cdc_acm")

    /// FTDI FT232R cable: 0403:6001, ftdi_sio, ttyUSB (major 188). FTDI's default strings ("FTDI",
    /// "FT232R USB UART") and an 8-character factory serial number.
    static let ftdi = DeviceProperties(
        sysname: "ttyUSB0", devnode: "/dev/ttyUSB0", major: 188, minor: 0,
        devpath: "/devices/pci0000:00/0000:00:14.0/usb1/1-3/1-3:1.0/ttyUSB0/tty/ttyUSB0",
        vendorID: "0403", productID: "6001", serialNumber: "A50285BI", manufacturer: "FTDI",
        product: "FT232R USB UART", interfaceNumber: "00", driver: "ftdi_sio")

    /// Silicon Labs CP2102: 10c4:ea60, cp210x. Default strings and serial "0001" (the factory
    /// default many boards never change).
    static let cp210x = DeviceProperties(
        sysname: "ttyUSB0", devnode: "/dev/ttyUSB0", major: 188, minor: 0,
        devpath: "/devices/pci0000:00/0000:00:14.0/usb1/1-3/1-3:1.0/ttyUSB0/tty/ttyUSB0",
        vendorID: "10c4", productID: "ea60", serialNumber: "0001", manufacturer: "Silicon Labs",
        product: "CP2102 USB to UART Bridge Controller", interfaceNumber: "00", driver: "cp210x")

    /// Prolific PL2303 (also inside u-blox 8 GNSS mice per gpsd's rules): 067b:2303, pl2303,
    /// no serial string.
    static let prolific = DeviceProperties(
        sysname: "ttyUSB0", devnode: "/dev/ttyUSB0", major: 188, minor: 0,
        devpath: "/devices/pci0000:00/0000:00:14.0/usb1/1-3/1-3:1.0/ttyUSB0/tty/ttyUSB0",
        vendorID: "067b", productID: "2303", manufacturer: "Prolific Technology Inc.",
        product: "USB-Serial Controller", interfaceNumber: "00", driver: "pl2303")

    /// A Trimble receiver on USB. Vendor 099e is "Trimble Navigation, Ltd" in usb.ids; Trimble does
    /// not publish its receivers' product IDs, so "0000" stands for "any": the vendor-wide row
    /// decides. The strings and serial are illustrative (hwtests/discovery.md records real ones).
    static let trimbleUSB = DeviceProperties(
        sysname: "ttyACM0", devnode: "/dev/ttyACM0", major: 166, minor: 0,
        devpath: "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/tty/ttyACM0",
        vendorID: "099e", productID: "0000", serialNumber: "6129F00123", manufacturer: "Trimble",
        product: "Trimble GNSS Receiver", interfaceNumber: "00", driver: "cdc_acm")

    /// Septentrio mosaic-X5: 152a:85c0 "Septentrio USB Device", cdc_acm (first of its USB ports).
    static let septentrio = DeviceProperties(
        sysname: "ttyACM0", devnode: "/dev/ttyACM0", major: 166, minor: 0,
        devpath: "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.2/tty/ttyACM0",
        vendorID: "152a", productID: "85c0", serialNumber: "3628001", manufacturer: "Septentrio",
        product: "Septentrio USB Device", interfaceNumber: "02", driver: "cdc_acm")

    /// Telit HE910 GNSS port: gpsd's rule matches interface "Telit Wireless Module Port" number 06.
    /// Vendor 1bc7 is "Telit Wireless Solutions" and 1bc7:0021 "HE910" in usb.ids; the string
    /// descriptors are not documented, so only the manufacturer is set (illustrative).
    static let telitGNSS = DeviceProperties(
        sysname: "ttyACM3", devnode: "/dev/ttyACM3", major: 166, minor: 3,
        devpath: "/devices/pci0000:00/0000:00:14.0/usb1/1-5/1-5:1.6/tty/ttyACM3",
        vendorID: "1bc7", productID: "0021", manufacturer: "Telit",
        interfaceNumber: "06", interfaceName: "Telit Wireless Module Port", driver: "cdc_acm")

    /// Quectel EC25: 2c7c:0125; its strings are "Android"/"Android" and it has no serial string
    /// (dmesg in elixirforum "Connecting EC25 using VintageNetMobile"); option driver, four ttyUSB.
    static func quectelEC25(interface: String) -> DeviceProperties {
        let index = Int(interface)!
        return DeviceProperties(
            sysname: "ttyUSB\(index)", devnode: "/dev/ttyUSB\(index)", major: 188, minor: UInt32(index),
            devpath:
                "/devices/platform/soc/3f980000.usb/usb1/1-1/1-1.3/1-1.3:1.\(index)/ttyUSB\(index)/tty/ttyUSB\(index)",
            vendorID: "2c7c", productID: "0125", manufacturer: "Android", product: "Android",
            interfaceNumber: interface, driver: "option")
    }

    /// Huawei ME909u-521 LTE/GPS card: 12d1:1573 (usb.ids "ME909u-521 mPCIe LTE/GPS card"), option
    /// driver. Its product names GPS, but its AT port is not a receiver.
    static let huaweiModemATPort = DeviceProperties(
        sysname: "ttyUSB2", devnode: "/dev/ttyUSB2", major: 188, minor: 2,
        devpath: "/devices/pci0000:00/0000:00:14.0/usb1/1-6/1-6:1.2/ttyUSB2/tty/ttyUSB2",
        vendorID: "12d1", productID: "1573", manufacturer: "Huawei Technologies Co., Ltd.",
        product: "ME909u-521 mPCIe LTE/GPS card", interfaceNumber: "02", driver: "option")

    /// Arduino Uno R3: 2341:0043 (usb.ids "Uno R3 (CDC ACM)"), cdc_acm.
    static let arduino = DeviceProperties(
        sysname: "ttyACM0", devnode: "/dev/ttyACM0", major: 166, minor: 0,
        devpath: "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/tty/ttyACM0",
        vendorID: "2341", productID: "0043", serialNumber: "85734323730351217190",
        manufacturer: "Arduino (www.arduino.cc)", interfaceNumber: "00", driver: "cdc_acm")

    /// The on-board UART here: /sys/devices/pnp0/00:00/00:00:0/00:00:0.0/tty/ttyS0, 4:64.
    static let ttyS0 = DeviceProperties(
        sysname: "ttyS0", devnode: "/dev/ttyS0", major: 4, minor: 64,
        devpath: "/devices/pnp0/00:00/00:00:0/00:00:0.0/tty/ttyS0")

    /// A Bluetooth SPP receiver bound to rfcomm0 (major 216); the kernel's `address` attribute.
    static func rfcomm(_ index: Int = 0, address: String = "00:1A:7D:DA:71:13") -> DeviceProperties {
        DeviceProperties(
            sysname: "rfcomm\(index)", devnode: "/dev/rfcomm\(index)", major: 216, minor: UInt32(index),
            devpath: "/devices/virtual/tty/rfcomm\(index)", bluetoothAddress: address, rfcommChannel: 1)
    }

    /// A kernel gnss-subsystem device (e.g. a u-blox on I2C/serdev described in device tree).
    static let gnss0 = DeviceProperties(
        subsystem: "gnss", sysname: "gnss0", devnode: "/dev/gnss0", major: 245, minor: 0,
        devpath: "/devices/platform/serial0/serial0-0/gnss/gnss0")

    /// An unknown-vendor CDC-ACM board whose product string names GNSS.
    static let namedGNSSBoard = DeviceProperties(
        sysname: "ttyACM0", devnode: "/dev/ttyACM0", major: 166, minor: 0,
        devpath: "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/tty/ttyACM0",
        vendorID: "1209", productID: "0001", serialNumber: "X1", manufacturer: "Example Labs",
        product: "Multi-band GNSS Board", interfaceNumber: "00", driver: "cdc_acm")

    /// Sets the action on a recorded device (and a new name when asked).
    static func event(_ device: DeviceProperties, _ action: DeviceAction, sysname: String? = nil) -> DeviceProperties {
        var copy = device
        copy.action = action
        if let sysname {
            copy.sysname = sysname
            copy.devnode = "/dev/" + sysname
        }
        return copy
    }
}
