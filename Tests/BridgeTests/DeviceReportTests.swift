// `tmm-bridge devices` without sysfs: recorded property sets in, the verdicts and the text out,
// with the daemon's rule that a configured device is explicit (the table does not decide it).
import Bridge
import Discovery
import InputLoop
import TestSupport
import Testing

@Suite("DeviceReport: what devices says about each tty", .tags(.unit))
struct DeviceReportTests {
    static let ublox = DeviceProperties(
        subsystem: "tty", sysname: "ttyACM0", devnode: "/dev/ttyACM0",
        devpath: "/devices/pci0000:00/usb1/1-1/1-1:1.0/tty/ttyACM0",
        vendorID: "1546", productID: "01a8", serialNumber: "M8N0042", manufacturer: "u-blox AG",
        product: "u-blox GNSS receiver",
        interfaceNumber: "00", driver: "cdc_acm")
    static let ftdi = DeviceProperties(
        subsystem: "tty", sysname: "ttyUSB0", devnode: "/dev/ttyUSB0",
        devpath: "/devices/pci0000:00/usb1/1-6/1-6:1.0/ttyUSB0/tty/ttyUSB0",
        vendorID: "0403", productID: "6001", serialNumber: "A50285BI", manufacturer: "FTDI", product: "FT232R USB UART",
        interfaceNumber: "00", driver: "ftdi_sio")
    static let onBoard = DeviceProperties(
        subsystem: "tty", sysname: "ttyS0", devnode: "/dev/ttyS0",
        devpath: "/devices/platform/serial8250/tty/ttyS0")

    @Test func verdictsAndReasons() {
        let report = DeviceReport(devices: [Self.onBoard, Self.ftdi, Self.ublox], configured: [])
        #expect(report.devices.map(\.path) == ["/dev/ttyACM0", "/dev/ttyS0", "/dev/ttyUSB0"])
        #expect(report.devices.map(\.verdict) == ["receiver", "notReceiver", "possibleReceiver"])
        #expect(report.devices.map(\.rule) == ["gpsd-ublox-8", "no-match", "bridge-ftdi-ft232"])
        #expect(report.devices.map(\.handedToGPSD) == [true, false, true])
        let lines = report.text.split(separator: "\n").map(String.init)
        #expect(lines.count == 6)
        #expect(
            lines[0]
                == """
                /dev/ttyACM0  RECEIVER  USB 1546:01a8, cdc_acm, interface 00, serial M8N0042, \
                "u-blox AG / u-blox GNSS receiver"
                """
        )
        #expect(
            lines[1].hasPrefix("              /dev/ttyACM0 (USB 1546:01a8): u-blox 8")
                && lines[1].hasSuffix(" [gpsd-ublox-8]"))
        #expect(lines[2] == "/dev/ttyS0    not a receiver")
        #expect(
            lines[4]
                == """
                /dev/ttyUSB0  possible receiver (gpsd probes it)  USB 0403:6001, ftdi_sio, interface 00, \
                serial A50285BI, "FTDI / FT232R USB UART"
                """
        )
    }

    @Test func configuredDevicesAreExplicitWhetherOrNotSysfsHasThem() {
        let report = DeviceReport(devices: [Self.onBoard], configured: ["/dev/ttyS0", "/nonexistent/pts/7"])
        #expect(report.devices.count == 2)
        #expect(
            report.devices[0].path == "/dev/ttyS0" && report.devices[0].verdict == "receiver"
                && report.devices[0].configured)
        #expect(report.devices[0].rule == "explicit")
        #expect(report.devices[1].path == "/nonexistent/pts/7" && report.devices[1].configured)
        #expect(report.devices[1].reason.hasSuffix("not in sysfs (a pty, or not plugged in now)"))
        #expect(report.text.hasPrefix("/dev/ttyS0          RECEIVER (configured)\n"))
    }

    @Test func nothingAtAll() {
        #expect(DeviceReport(devices: [], configured: []).text.hasPrefix("no tty or gnss devices"))
        #expect(DeviceReport(devices: [], configured: []).json() == #"{"devices":[],"format":"tmm-bridge devices"}"#)
    }
}
