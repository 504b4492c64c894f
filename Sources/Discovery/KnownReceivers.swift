// The one table of devices we treat as GNSS receivers. It is the single source: the classifier
// walks it at run time, and the udev rules (daemon issue) are generated from the same rows through
// `KnownReceiver.udevMatches`. Do not keep a second list anywhere (gpsd warns that its duplicated
// hotplug formats cause "mysterious failures"; the same holds for duplicated ID lists).
//
// Sources cited in the rows:
// - [gpsd]   gpsd 3.22 `gpsd.rules.in`, as Debian 12 installs it (/lib/udev/rules.d/60-gpsd.rules,
//            package gpsd 3.22-4.1+deb12u1). Upstream later disabled FTDI 0403:6001 and Prolific
//            067b:2303 because they "match way too many generic serial converters".
// - [usb.ids] the USB ID database as shipped in systemd 252's hwdb
//            (/lib/udev/hwdb.d/20-usb-vendor-model.hwdb on Debian 12).
// - [devices.txt] Linux Documentation/admin-guide/devices.txt (majors 166 ACM, 188 USB serial,
//            216 Bluetooth RFCOMM TTY); gpsd's `gpsd_classify` relies on the same majors.

/// How sure the table is that a device is a GNSS receiver.
public enum ReceiverVerdict: String, Sendable, Hashable, CustomStringConvertible {
    /// A GNSS receiver (its ID, subsystem or name says so).
    case receiver
    /// A generic USB-serial bridge or an ambiguous vendor: may carry a receiver. gpsd's own rules
    /// hand several of these to gpsd; so do we unless configured otherwise.
    case possibleReceiver
    /// Not a receiver (or a port of a multi-port device that is not the NMEA one).
    case notReceiver

    public var description: String { rawValue }
}

/// Fields of a device that a name rule looks at.
public enum NameField: String, Sendable, Hashable {
    case product, manufacturer, interface
}

/// One row: all criteria that are set must match. Rows are tried in order; the first match wins.
public struct KnownReceiver: Sendable, Hashable {
    /// Stable identifier, used in logs and tests ("why was this device picked").
    public var id: String
    public var verdict: ReceiverVerdict
    /// Brand shown to clients (`u-blox`, `Trimble`, …) when the row knows it.
    public var brand: String?
    /// What the row covers, in words.
    public var summary: String
    /// Where the row comes from (see the list at the top of this file).
    public var source: String

    // Criteria (nil: any).
    /// Subsystem other than `tty` (only `gnss`).
    public var subsystem: String?
    /// Kernel name prefix, e.g. `rfcomm`.
    public var kernelNamePrefix: String?
    public var vendorID: String?
    public var productID: String?
    public var interfaceNumber: String?
    public var interfaceName: String?
    public var driver: String?
    /// Words that must occur (as whole words, case-insensitive) in one of `nameFields`.
    public var nameWords: [String]
    public var nameFields: [NameField]

    public init(
        id: String, verdict: ReceiverVerdict, brand: String? = nil, summary: String, source: String,
        subsystem: String? = nil, kernelNamePrefix: String? = nil, vendorID: String? = nil,
        productID: String? = nil, interfaceNumber: String? = nil, interfaceName: String? = nil,
        driver: String? = nil, nameWords: [String] = [], nameFields: [NameField] = []
    ) {
        self.id = id
        self.verdict = verdict
        self.brand = brand
        self.summary = summary
        self.source = source
        self.subsystem = subsystem
        self.kernelNamePrefix = kernelNamePrefix
        self.vendorID = vendorID
        self.productID = productID
        self.interfaceNumber = interfaceNumber
        self.interfaceName = interfaceName
        self.driver = driver
        self.nameWords = nameWords
        self.nameFields = nameFields
    }

    /// Whether `device` meets every criterion of this row.
    public func matches(_ device: DeviceProperties) -> Bool {
        if device.subsystem != (subsystem ?? "tty") { return false }
        if let kernelNamePrefix, !device.sysname.hasPrefix(kernelNamePrefix) { return false }
        if let vendorID, device.vendorID != vendorID { return false }
        if let productID, device.productID != productID { return false }
        if let interfaceNumber, device.interfaceNumber != interfaceNumber { return false }
        if let interfaceName, device.interfaceName != interfaceName { return false }
        if let driver, device.driver != driver { return false }
        if !nameWords.isEmpty {
            let texts = nameFields.compactMap { field -> String? in
                switch field {
                case .product: device.product
                case .manufacturer: device.manufacturer
                case .interface: device.interfaceName
                }
            }
            guard texts.contains(where: { text in nameWords.contains { containsWord($0, in: text) } }) else {
                return false
            }
        }
        return true
    }

    /// udev match keys for this row, one rule line per alternative (several when a name may be in
    /// one of several fields), for the generated rules file. udev requires all `ATTRS` of one
    /// rule to match on the same parent device, so a row that mixes USB-device attributes with
    /// interface attributes or the driver uses the `usb_id` builtin's `ENV{ID_*}` properties
    /// (set by 60-serial.rules: the generated file must sort after it, e.g. `70-tmm-bridge.rules`).
    /// Name words become case-insensitive globs, a little looser than `containsWord` (no word
    /// boundaries in udev globs).
    public var udevMatches: [String] {
        var keys = ["SUBSYSTEM==\"\(subsystem ?? "tty")\""]
        if let kernelNamePrefix { keys.append("KERNEL==\"\(kernelNamePrefix)[0-9]*\"") }
        let mixesParents = (vendorID != nil || productID != nil) && (interfaceNumber != nil || driver != nil)
        if mixesParents {
            if let vendorID { keys.append("ENV{ID_VENDOR_ID}==\"\(vendorID)\"") }
            if let productID { keys.append("ENV{ID_MODEL_ID}==\"\(productID)\"") }
            if let interfaceNumber { keys.append("ENV{ID_USB_INTERFACE_NUM}==\"\(interfaceNumber)\"") }
            if let driver { keys.append("ENV{ID_USB_DRIVER}==\"\(driver)\"") }
        } else {
            if let vendorID { keys.append("ATTRS{idVendor}==\"\(vendorID)\"") }
            if let productID { keys.append("ATTRS{idProduct}==\"\(productID)\"") }
            if let interfaceName { keys.append("ATTRS{interface}==\"\(interfaceName)\"") }
            if let interfaceNumber { keys.append("ATTRS{bInterfaceNumber}==\"\(interfaceNumber)\"") }
            if let driver { keys.append("ENV{ID_USB_DRIVER}==\"\(driver)\"") }
        }
        guard !nameWords.isEmpty else { return [keys.joined(separator: ", ")] }
        let pattern = nameWords.map { "*" + Self.caseInsensitiveGlob($0) + "*" }.joined(separator: "|")
        return nameFields.map { field in
            (keys + ["ATTRS{\(field.rawValue)}==\"\(pattern)\""]).joined(separator: ", ")
        }
    }

    private static func caseInsensitiveGlob(_ word: String) -> String {
        word.map { character -> String in
            let lower = character.lowercased(), upper = character.uppercased()
            return lower == upper ? String(character) : "[" + upper + lower + "]"
        }.joined()
    }
}

/// True when `word` occurs in `text` with no letter or digit right before or after it
/// (case-insensitive): "GPS/GNSS Receiver" contains "gnss"; "Smartkey" does not contain "rtk".
public func containsWord(_ word: String, in text: String) -> Bool {
    let haystack = Array(text.lowercased().unicodeScalars)
    let needle = Array(word.lowercased().unicodeScalars)
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
    }
    for start in 0...(haystack.count - needle.count)
    where haystack[start..<(start + needle.count)].elementsEqual(needle) {
        let before = start == 0 || !isWordCharacter(haystack[start - 1])
        let end = start + needle.count
        let after = end == haystack.count || !isWordCharacter(haystack[end])
        if before && after { return true }
    }
    return false
}

/// The table.
public enum KnownReceivers {
    static let gpsd = "gpsd 3.22 gpsd.rules.in (Debian 12 /lib/udev/rules.d/60-gpsd.rules)"
    static let gpsdDisabledUpstream =
        "gpsd.rules.in; upstream disabled it: \"matches way too many generic serial converters\""
    static let usbIDs = "usb.ids (systemd 252 hwdb 20-usb-vendor-model.hwdb)"

    /// GNSS words for name rules. Deliberately not "RTK" or "NMEA" in product names (too short or
    /// generic); "NMEA" is accepted in interface names, where modems name their GPS port.
    static let gnssWords = ["gnss", "gps", "glonass"]

    public static let table: [KnownReceiver] = [
        // Kernel classes that are receivers by construction.
        KnownReceiver(
            id: "gnss-subsystem", verdict: .receiver,
            summary: "kernel GNSS subsystem device (/dev/gnssN)",
            source: gpsd + ": SUBSYSTEM==\"gnss\" rule", subsystem: "gnss"),
        KnownReceiver(
            id: "bluetooth-rfcomm", verdict: .receiver,
            summary: "Bluetooth RFCOMM tty (major 216): an SPP receiver bound by the bridge or rfcomm(1)",
            source: "devices.txt (216 Bluetooth RFCOMM TTY); gpsd_classify", kernelNamePrefix: "rfcomm"),

        // gpsd's known GNSS USB IDs, in its order (sorted by idVendor, idProduct).
        KnownReceiver(
            id: "gpsd-aten-uc232a", verdict: .possibleReceiver,
            summary: "ATEN UC-232A USB-serial adapter (pl2303), handed to gpsd by gpsd's rules",
            source: gpsd, vendorID: "0557", productID: "2008"),
        KnownReceiver(
            id: "gpsd-prolific-2303", verdict: .possibleReceiver,
            summary: "Prolific PL2303 USB-serial bridge (also inside u-blox 8 GNSS mice such as the GR-801)",
            source: gpsd + "; " + gpsdDisabledUpstream, vendorID: "067b", productID: "2303"),
        KnownReceiver(
            id: "gpsd-prolific-ps360", verdict: .receiver,
            summary: "PS-360 OEM GPS (sold with MS Streets and Trips 2005), pl2303",
            source: gpsd, vendorID: "067b", productID: "aaa0"),
        KnownReceiver(
            id: "gpsd-garmin", verdict: .receiver, brand: "Garmin",
            summary: "Garmin GPS, various models (garmin_gps driver; tested by gpsd with a GPS 18 USB)",
            source: gpsd + "; " + usbIDs + " 091e:0003 \"GPS (various models)\"",
            vendorID: "091e", productID: "0003"),
        KnownReceiver(
            id: "gpsd-mediatek", verdict: .receiver, brand: "MediaTek",
            summary: "MediaTek GPS (cdc_acm; gpsd tested a HOLUX M-1200E)",
            source: gpsd, vendorID: "0e8d", productID: "3329"),
        KnownReceiver(
            id: "gpsd-cp210x", verdict: .possibleReceiver,
            summary: "Silicon Labs CP210x USB-serial bridge (used by Holux m241, Wintec WBT-201 and many GNSS boards)",
            source: gpsd + "; " + usbIDs + " 10c4:ea60 \"CP210x UART Bridge\"",
            vendorID: "10c4", productID: "ea60"),
        KnownReceiver(
            id: "gpsd-cp2108", verdict: .possibleReceiver,
            summary: "Silicon Labs CP2108 quad USB-serial bridge",
            source: gpsd + "; " + usbIDs + " 10c4:ea71 \"CP2108 Quad UART Bridge\"",
            vendorID: "10c4", productID: "ea71"),
        KnownReceiver(
            id: "gpsd-delorme-earthmate", verdict: .receiver, brand: "DeLorme",
            summary: "DeLorme Earthmate GPS (cypress_m8)", source: gpsd, vendorID: "1163", productID: "0100"),
        KnownReceiver(
            id: "gpsd-delorme-lt40", verdict: .receiver, brand: "DeLorme",
            summary: "DeLorme Earthmate LT-20/LT-40 (cypress_m8)", source: gpsd, vendorID: "1163", productID: "0200"),
        KnownReceiver(
            id: "gpsd-ublox-5", verdict: .receiver, brand: "u-blox",
            summary: "u-blox 5 (cdc_acm; gpsd tested a Navilock NL-402U)", source: gpsd,
            vendorID: "1546", productID: "01a5"),
        KnownReceiver(
            id: "gpsd-ublox-6", verdict: .receiver, brand: "u-blox",
            summary: "u-blox 6 (cdc_acm)", source: gpsd, vendorID: "1546", productID: "01a6"),
        KnownReceiver(
            id: "gpsd-ublox-7", verdict: .receiver, brand: "u-blox",
            summary: "u-blox 7 (cdc_acm)", source: gpsd, vendorID: "1546", productID: "01a7"),
        KnownReceiver(
            id: "gpsd-ublox-8", verdict: .receiver, brand: "u-blox",
            summary: "u-blox 8 / M8 (cdc_acm; gpsd tested an EVK-M8N)", source: gpsd,
            vendorID: "1546", productID: "01a8"),
        KnownReceiver(
            id: "gpsd-ublox-9", verdict: .receiver, brand: "u-blox",
            summary: "u-blox 9 / F9 (cdc_acm; gpsd tested a C099-F9P)", source: gpsd,
            vendorID: "1546", productID: "01a9"),
        KnownReceiver(
            id: "gpsd-telit", verdict: .receiver, brand: "Telit",
            summary: "Telit wireless module GNSS port (interface 06; gpsd tested an HE910G)", source: gpsd,
            interfaceNumber: "06", interfaceName: "Telit Wireless Module Port"),

        // More specific USB IDs from the USB ID database.
        KnownReceiver(
            id: "ublox-antaris4", verdict: .receiver, brand: "u-blox",
            summary: "u-blox Antaris 4", source: usbIDs + " 1546:01a4 \"Antaris 4\"",
            vendorID: "1546", productID: "01a4"),
        KnownReceiver(
            id: "ublox-lisa-u2", verdict: .notReceiver, brand: "u-blox",
            summary: "u-blox LISA-U2 cellular module (its ports speak AT, not NMEA)",
            source: usbIDs + " 1546:1102 \"LISA-U2\"", vendorID: "1546", productID: "1102"),
        KnownReceiver(
            id: "septentrio", verdict: .receiver, brand: "Septentrio",
            summary: "Septentrio receiver (mosaic, AsteRx) USB serial port",
            source: "lsusb on Septentrio receivers: 152a:85c0 \"Septentrio USB Device\" (152a is Thesycon's "
                + "vendor ID, whose USB stack Septentrio uses, so there is no vendor-wide row)",
            vendorID: "152a", productID: "85c0"),
        KnownReceiver(
            id: "zubax-gnss", verdict: .receiver, brand: "Zubax",
            summary: "Zubax GNSS positioning module",
            source: usbIDs + " 1d50:60c7", vendorID: "1d50", productID: "60c7"),

        // Multi-port cellular modules: only the NMEA port is a receiver.
        KnownReceiver(
            id: "quectel-nmea-port", verdict: .receiver, brand: "Quectel",
            summary: "Quectel LTE module NMEA port (USB interface 01; NMEA flows after AT+QGPS=1)",
            source: "Quectel LTE&5G Linux USB Driver User Guide (ttyUSB1 = NMEA); ModemManager list 2017-09 "
                + "(EC21: NMEA on interface 1); " + usbIDs + " 2c7c \"Quectel Wireless Solutions\"",
            vendorID: "2c7c", interfaceNumber: "01"),
        KnownReceiver(
            id: "quectel-other-port", verdict: .notReceiver, brand: "Quectel",
            summary: "Quectel LTE module DM/AT/PPP port (not NMEA)",
            source: "Quectel LTE&5G Linux USB Driver User Guide (ttyUSB0 DM, ttyUSB2 AT, ttyUSB3 PPP)",
            vendorID: "2c7c"),

        KnownReceiver(
            id: "novatel-wireless", verdict: .notReceiver,
            summary: "Novatel Wireless modem (a modem maker, not NovAtel the GNSS maker)",
            source: usbIDs + " 1410 \"Novatel Wireless\"", vendorID: "1410"),

        // Vendors that make only GNSS equipment with a USB tty.
        KnownReceiver(
            id: "vendor-trimble", verdict: .receiver, brand: "Trimble",
            summary: "Trimble Navigation USB device with a serial port (receivers; Trimble's Android data "
                + "collectors such as the T70 are not ttys)",
            source: usbIDs + " 099e \"Trimble Navigation, Ltd\"", vendorID: "099e"),
        KnownReceiver(
            id: "vendor-novatel", verdict: .receiver, brand: "NovAtel",
            summary: "NovAtel receiver (not Novatel Wireless, 1410, a modem maker)",
            source: usbIDs + " 09d7 \"Hexagon NovAtel Inc.\", 09d7:0100 \"GPS/GNSS/SPAN sensor\"",
            vendorID: "09d7"),
        KnownReceiver(
            id: "vendor-swift-navigation", verdict: .receiver, brand: "Swift Navigation",
            summary: "Swift Navigation receiver (Piksi)", source: usbIDs + " 2e69, 2e69:1001 \"Piksi Multi\"",
            vendorID: "2e69"),
        KnownReceiver(
            id: "vendor-sirf", verdict: .receiver, brand: "SiRF",
            summary: "SiRF Technology device", source: usbIDs + " 0541 \"Sirf Technology, Inc.\"",
            vendorID: "0541"),

        // Names: for devices behind bridges or with IDs not in any list. No row for the name
        // "u-blox": its cellular modules carry it too (they fall to vendor-ublox-other below).
        KnownReceiver(
            id: "interface-named-gnss", verdict: .receiver,
            summary: "USB interface named for GNSS/GPS/NMEA (how modems label their GPS port)",
            source: "USB interface string; cf. the gpsd rule ATTRS{interface}==\"GPS\" seen in distro rules",
            nameWords: gnssWords + ["nmea"], nameFields: [.interface]),
        KnownReceiver(
            id: "name-septentrio", verdict: .receiver, brand: "Septentrio",
            summary: "manufacturer or product names Septentrio", source: "USB string descriptors",
            nameWords: ["septentrio"], nameFields: [.manufacturer, .product]),
        KnownReceiver(
            id: "name-trimble", verdict: .receiver, brand: "Trimble",
            summary: "manufacturer or product names Trimble", source: "USB string descriptors",
            nameWords: ["trimble"], nameFields: [.manufacturer, .product]),
        KnownReceiver(
            id: "name-novatel", verdict: .receiver, brand: "NovAtel",
            summary: "manufacturer or product names NovAtel", source: "USB string descriptors",
            nameWords: ["novatel"], nameFields: [.manufacturer, .product]),
        KnownReceiver(
            id: "name-emlid", verdict: .receiver, brand: "Emlid",
            summary: "manufacturer or product names Emlid (Reach); Emlid has no vendor ID in usb.ids",
            source: "USB string descriptors; " + usbIDs + " (no Emlid entry)",
            nameWords: ["emlid"], nameFields: [.manufacturer, .product]),
        KnownReceiver(
            id: "cdc-acm-named-gnss", verdict: .receiver,
            summary: "CDC-ACM device whose product or manufacturer names GNSS/GPS/GLONASS",
            source: "USB string descriptors (u-blox: \"u-blox GNSS receiver\", \"u-blox 7 - GPS/GNSS Receiver\")",
            driver: "cdc_acm", nameWords: gnssWords, nameFields: [.product, .manufacturer]),

        // Ambiguous vendor: u-blox also makes cellular modules.
        KnownReceiver(
            id: "vendor-ublox-other", verdict: .possibleReceiver, brand: "u-blox",
            summary: "other u-blox AG USB device (u-blox also makes cellular modules)",
            source: usbIDs + " 1546 \"U-Blox AG\"", vendorID: "1546"),

        // Generic USB-serial bridges: many GNSS boards and cables use them, and so does everything else.
        KnownReceiver(
            id: "bridge-ftdi-ft232", verdict: .possibleReceiver,
            summary: "FTDI FT232 USB-serial bridge (ftdi_sio)",
            source: gpsdDisabledUpstream + "; " + usbIDs + " 0403:6001", vendorID: "0403", productID: "6001"),
        KnownReceiver(
            id: "bridge-ftdi-ft2232", verdict: .possibleReceiver,
            summary: "FTDI FT2232 dual USB-serial bridge (ftdi_sio)",
            source: usbIDs + " 0403:6010", vendorID: "0403", productID: "6010"),
        KnownReceiver(
            id: "bridge-ftdi-ft4232", verdict: .possibleReceiver,
            summary: "FTDI FT4232H quad USB-serial bridge (ftdi_sio)",
            source: usbIDs + " 0403:6011", vendorID: "0403", productID: "6011"),
        KnownReceiver(
            id: "bridge-ftdi-ft232h", verdict: .possibleReceiver,
            summary: "FTDI FT232H USB-serial bridge (ftdi_sio)",
            source: usbIDs + " 0403:6014", vendorID: "0403", productID: "6014"),
        KnownReceiver(
            id: "bridge-ftdi-ftx", verdict: .possibleReceiver,
            summary: "FTDI FT-X series USB-serial bridge (ftdi_sio)",
            source: usbIDs + " 0403:6015", vendorID: "0403", productID: "6015"),
        KnownReceiver(
            id: "bridge-cp2105", verdict: .possibleReceiver,
            summary: "Silicon Labs CP2105 dual USB-serial bridge (cp210x)",
            source: usbIDs + " 10c4:ea70", vendorID: "10c4", productID: "ea70"),
        KnownReceiver(
            id: "bridge-prolific-23a3", verdict: .possibleReceiver,
            summary: "Prolific PL2303 (newer revision) USB-serial bridge (pl2303)",
            source: usbIDs + " 067b:23a3", vendorID: "067b", productID: "23a3"),
        KnownReceiver(
            id: "bridge-ch340", verdict: .possibleReceiver,
            summary: "QinHeng CH340 USB-serial bridge (ch341)",
            source: usbIDs + " 1a86:7523 \"CH340 serial converter\"", vendorID: "1a86", productID: "7523"),
    ]

    /// Looks a row up by its identifier.
    public static func row(_ id: String) -> KnownReceiver? { table.first { $0.id == id } }
}
