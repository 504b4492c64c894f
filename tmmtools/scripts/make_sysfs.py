"""Writes Tests/Fixtures/udev/sys: a small sysfs tree of USB, Bluetooth and on-board serial
devices for the udevadm tests (Tests/CLITests/UdevRulesTests.swift, docs/service.md).

No hardware was recorded here (no USB bus on the build machines): each device is written from
documented values, the way the kernel lays them out (what `udevadm info --attribute-walk` shows on
a real box), with the attributes udev's rules and the usb_id builtin read: `uevent`, `dev`,
`subsystem` and `driver` links, idVendor/idProduct/manufacturer/product/serial on the USB device,
bInterfaceNumber/bInterfaceClass/interface on the interface, `address`/`channel` on rfcomm ttys.
Where a value is illustrative the comment says so (Tests/DiscoveryTests/RecordedDevices.swift has
the same devices with their sources). hwtests/udev.md records real trees on a bench.

Run it again after changing it (it replaces the tree), from the repository root:

    /usr/bin/python3 -m tmmtools.scripts.make_sysfs
"""
import os
import shutil

from tmmtools import checkout

ROOT = checkout.path("Tests", "Fixtures", "udev", "sys")
PCI = "devices/pci0000:00/0000:00:14.0"


def write(path, text):
    full = os.path.join(ROOT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


def link(path, target):
    """A symlink at `path` to `target` (both relative to /sys), written relative as the kernel does."""
    full = os.path.join(ROOT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    os.symlink(os.path.relpath(os.path.join(ROOT, target), os.path.dirname(full)), full)


def device(path, subsystem, uevent="", attributes=None, driver=None):
    write(path + "/uevent", uevent)
    link(path + "/subsystem", subsystem)
    if driver:
        link(path + "/driver", subsystem + "/drivers/" + driver)
    for name, value in (attributes or {}).items():
        write(path + "/" + name, value + "\n")


def usb_device(port, vendor, product, manufacturer=None, name=None, serial=None, bus=1):
    path = f"{PCI}/usb{bus}/{port}"
    attributes = {"idVendor": vendor, "idProduct": product, "bcdDevice": "0100", "bDeviceClass": "00",
                  "busnum": str(bus), "devnum": "2"}
    if manufacturer:
        attributes["manufacturer"] = manufacturer
    if name:
        attributes["product"] = name
    if serial:
        attributes["serial"] = serial
    device(path, "bus/usb", f"DEVTYPE=usb_device\nPRODUCT={int(vendor, 16):x}/{int(product, 16):x}/100\n",
           attributes, driver="usb")
    return path


def usb_interface(usb, number, interface_class, driver, name=None):
    path = f"{usb}/{usb.rsplit('/', 1)[1]}:1.{int(number)}"
    attributes = {"bInterfaceNumber": f"{number:02x}", "bInterfaceClass": interface_class,
                  "bInterfaceSubClass": "00", "bInterfaceProtocol": "00", "bAlternateSetting": " 0"}
    if name:
        attributes["interface"] = name
    device(path, "bus/usb", f"DEVTYPE=usb_interface\nDRIVER={driver}\n", attributes, driver=driver)
    return path


def tty(parent, name, major, minor, attributes=None):
    path = f"{parent}/tty/{name}" if parent != "devices/virtual" else f"devices/virtual/tty/{name}"
    device(path, "class/tty", f"MAJOR={major}\nMINOR={minor}\nDEVNAME={name}\n", attributes)
    write(path + "/dev", f"{major}:{minor}\n")
    link(f"class/tty/{name}", path)
    return path


def acm(usb, number, name, minor, interface_name=None):
    return tty(usb_interface(usb, number, "02", "cdc_acm", interface_name), name, 166, minor)


def usb_serial(usb, number, driver, name, minor, interface_class="ff"):
    interface = usb_interface(usb, number, interface_class, driver)
    port = f"{interface}/{name}"
    device(port, "bus/usb-serial", f"DRIVER={driver}\n", {"port_number": "0"}, driver=driver)
    return tty(port, name, 188, minor)


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    write("devices/pci0000:00/uevent", "")
    device(PCI, "bus/pci", "DRIVER=xhci_hcd\nPCI_CLASS=C0330\nPCI_ID=8086:A36D\n",
           {"vendor": "0x8086", "device": "0xa36d"}, driver="xhci_hcd")
    device(f"{PCI}/usb1", "bus/usb", "DEVTYPE=usb_device\nPRODUCT=1d6b/2/601\n",
           {"idVendor": "1d6b", "idProduct": "0002", "manufacturer": "Linux 6.1.0 xhci-hcd",
            "product": "xHCI Host Controller", "serial": "0000:00:14.0", "bDeviceClass": "09"}, driver="usb")

    # u-blox 8 (EVK-M8N): 1546:01a8, cdc_acm; the M8 firmware's strings. Serial illustrative.
    ublox = usb_device("1-1", "1546", "01a8", "u-blox AG - www.u-blox.com", "u-blox GNSS receiver", "M8N0042")
    acm(ublox, 0, "ttyACM0", 0)
    # A Trimble receiver: vendor 099e ("Trimble Navigation, Ltd"); product id, strings and serial
    # illustrative (Trimble does not publish them; the vendor-wide row decides).
    trimble = usb_device("1-2", "099e", "0000", "Trimble", "Trimble GNSS Receiver", "6129F00123")
    acm(trimble, 0, "ttyACM1", 1)
    # u-blox LISA-U2 cellular module: 1546:1102, its ports speak AT. The "notReceiver" row comes
    # before u-blox's vendor-wide row, so it must win. Strings illustrative.
    lisa = usb_device("1-3", "1546", "1102", "u-blox AG", "LISA-U2", "LISA0001")
    acm(lisa, 0, "ttyACM2", 2)
    # Telit HE910: gpsd's rule, interface 06 named "Telit Wireless Module Port". Serial illustrative.
    telit = usb_device("1-4", "1bc7", "0021", "Telit", "HE910", "357164040000000")
    acm(telit, 6, "ttyACM3", 3, interface_name="Telit Wireless Module Port")
    # Quectel EC25: 2c7c:0125, option driver; ttyUSB on interface 01 is NMEA, 02 is AT. Its
    # strings are "Android"; no serial string.
    quectel = usb_device("1-5", "2c7c", "0125", "Android", "Android")
    usb_serial(quectel, 1, "option", "ttyUSB1", 1)
    usb_serial(quectel, 2, "option", "ttyUSB2", 2)
    # FTDI FT232R cable: 0403:6001, ftdi_sio. A generic bridge: a possible receiver, not tagged.
    ftdi = usb_device("1-6", "0403", "6001", "FTDI", "FT232R USB UART", "A50285BI")
    usb_serial(ftdi, 0, "ftdi_sio", "ttyUSB0", 0)
    # Microchip MCP2221 USB-I2C/UART bridge: 04d8:00dd, cdc_acm. In no row at all: not a receiver.
    mcp = usb_device("1-7", "04d8", "00dd", "Microchip Technology Inc.", "MCP2221 USB-I2C/UART Combo", "0001234567")
    acm(mcp, 0, "ttyACM4", 4)
    # A u-blox whose serial string carries U+202E (RIGHT-TO-LEFT OVERRIDE): udev keeps valid UTF-8
    # in ID_SERIAL_SHORT, so a link named from it would read as another; the rules fall back to
    # the port's path.
    spoof = usb_device("1-8", "1546", "01a8", "u-blox AG - www.u-blox.com", "u-blox GNSS receiver", "M8N\u202e2400")
    acm(spoof, 0, "ttyACM5", 5)
    # A Bluetooth SPP receiver bound to rfcomm0 (address and channel illustrative).
    tty("devices/virtual", "rfcomm0", 216, 0, {"address": "00:07:80:ab:cd:ef", "channel": "1"})
    # The on-board 16550 UART: no row, not tagged.
    device("devices/platform/serial8250", "bus/platform", "DRIVER=serial8250\n", driver="serial8250")
    tty("devices/platform/serial8250", "ttyS0", 4, 64)


if __name__ == "__main__":
    main()
