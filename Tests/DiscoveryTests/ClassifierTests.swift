import TestSupport
import Testing
@testable import Discovery

/// One row per real device kind: the recorded property set, the expected verdict and the rule
/// that must decide it (the rule is the "why").
struct ClassifierCase: Sendable, CustomTestStringConvertible {
    let name: String
    let device: DeviceProperties
    let verdict: ReceiverVerdict
    let rule: String
    let brand: String?
    var testDescription: String { name }
}

@Suite("Receiver classifier against recorded device kinds", .tags(.unit))
struct ClassifierTests {
    static let cases: [ClassifierCase] = [
        ClassifierCase(
            name: "u-blox 8 CDC-ACM 1546:01a8", device: Recorded.ubloxM8,
            verdict: .receiver, rule: "gpsd-ublox-8", brand: "u-blox"),
        ClassifierCase(
            name: "u-blox 7 CDC-ACM 1546:01a7", device: Recorded.ublox7,
            verdict: .receiver, rule: "gpsd-ublox-7", brand: "u-blox"),
        ClassifierCase(
            name: "u-blox F9P 1546:01a9", device: Recorded.ubloxF9P,
            verdict: .receiver, rule: "gpsd-ublox-9", brand: "u-blox"),
        ClassifierCase(
            name: "FTDI FT232R 0403:6001", device: Recorded.ftdi,
            verdict: .possibleReceiver, rule: "bridge-ftdi-ft232", brand: nil),
        ClassifierCase(
            name: "CP2102 10c4:ea60", device: Recorded.cp210x,
            verdict: .possibleReceiver, rule: "gpsd-cp210x", brand: nil),
        ClassifierCase(
            name: "Prolific PL2303 067b:2303", device: Recorded.prolific,
            verdict: .possibleReceiver, rule: "gpsd-prolific-2303", brand: nil),
        ClassifierCase(
            name: "Trimble receiver on USB (vendor 099e)", device: Recorded.trimbleUSB,
            verdict: .receiver, rule: "vendor-trimble", brand: "Trimble"),
        ClassifierCase(
            name: "Septentrio mosaic 152a:85c0", device: Recorded.septentrio,
            verdict: .receiver, rule: "septentrio", brand: "Septentrio"),
        ClassifierCase(
            name: "Telit HE910 GNSS port (interface 06)", device: Recorded.telitGNSS,
            verdict: .receiver, rule: "gpsd-telit", brand: "Telit"),
        ClassifierCase(
            name: "Quectel EC25 NMEA port (interface 01)", device: Recorded.quectelEC25(interface: "01"),
            verdict: .receiver, rule: "quectel-nmea-port", brand: "Quectel"),
        ClassifierCase(
            name: "Bluetooth rfcomm0 (major 216)", device: Recorded.rfcomm(),
            verdict: .receiver, rule: "bluetooth-rfcomm", brand: nil),
        ClassifierCase(
            name: "kernel gnss0", device: Recorded.gnss0,
            verdict: .receiver, rule: "gnss-subsystem", brand: nil),
        ClassifierCase(
            name: "unknown CDC-ACM board named GNSS", device: Recorded.namedGNSSBoard,
            verdict: .receiver, rule: "cdc-acm-named-gnss", brand: nil),
        // Must NOT be receivers.
        ClassifierCase(
            name: "Quectel EC25 AT port (interface 02)", device: Recorded.quectelEC25(interface: "02"),
            verdict: .notReceiver, rule: "quectel-other-port", brand: "Quectel"),
        ClassifierCase(
            name: "Huawei ME909u LTE/GPS modem AT port (option driver)", device: Recorded.huaweiModemATPort,
            verdict: .notReceiver, rule: "no-match", brand: nil),
        ClassifierCase(
            name: "Arduino Uno CDC-ACM 2341:0043", device: Recorded.arduino,
            verdict: .notReceiver, rule: "no-match", brand: nil),
        ClassifierCase(
            name: "on-board ttyS0", device: Recorded.ttyS0,
            verdict: .notReceiver, rule: "no-match", brand: nil),
    ]

    @Test(arguments: cases)
    func recordedDeviceIsClassified(_ example: ClassifierCase) {
        let result = ReceiverClassifier().classify(example.device)
        #expect(result.verdict == example.verdict, "\(result)")
        #expect(result.rule == example.rule, "\(result)")
        #expect(result.brand == example.brand)
        #expect(result.handToGPSD == (example.verdict != .notReceiver))
        #expect(result.reason.contains(example.device.path), "the reason names the device: \(result.reason)")
    }

    @Test func reasonSaysWhichFactsMatchedAndCitesTheSource() {
        let result = ReceiverClassifier().classify(Recorded.ubloxM8)
        #expect(result.reason.contains("USB 1546:01a8"))
        #expect(result.reason.contains("u-blox 8"))
        #expect(result.reason.contains("gpsd"))
        let modem = ReceiverClassifier().classify(Recorded.arduino)
        #expect(modem.reason.contains("usb:2341:0043"), "the no-match reason tells how to include it: \(modem.reason)")
    }

    @Test func uBloxCellularModuleIsNotAReceiverButOtherUBloxIDsMayBe() {
        var lisa = Recorded.ubloxM8
        lisa.productID = "1102"
        lisa.product = "LISA-U2"
        #expect(ReceiverClassifier().classify(lisa).verdict == .notReceiver)
        // An ID no list has yet: a GNSS product name makes it a receiver; otherwise it may be one
        // of u-blox's cellular modules, which carry the u-blox name too.
        var unknown = Recorded.ubloxM8
        unknown.productID = "0502"
        let named = ReceiverClassifier().classify(unknown)
        #expect(named.verdict == .receiver && named.rule == "cdc-acm-named-gnss", "\(named)")
        unknown.product = "SARA-R5"
        let other = ReceiverClassifier().classify(unknown)
        #expect(other.verdict == .possibleReceiver && other.rule == "vendor-ublox-other", "\(other)")
    }

    @Test func aTrimbleBehindAnFTDICableIsFoundByName() {
        var cable = Recorded.ftdi
        cable.manufacturer = "Trimble Navigation"
        let result = ReceiverClassifier().classify(cable)
        #expect(result.verdict == .receiver && result.rule == "name-trimble" && result.brand == "Trimble")
    }

    @Test func novatelWirelessModemIsNotNovAtel() {
        var modem = Recorded.huaweiModemATPort
        modem.vendorID = "1410"
        modem.manufacturer = "Novatel Wireless"
        modem.product = "MiFi"
        let result = ReceiverClassifier().classify(modem)
        #expect(result.verdict == .notReceiver && result.rule == "novatel-wireless", "\(result)")
        var novatel = Recorded.ftdi
        novatel.manufacturer = "NovAtel Inc."
        #expect(ReceiverClassifier().classify(novatel).rule == "name-novatel")
    }

    @Test func possibleReceiversStayOutOfGPSDWhenConfigured() {
        let classifier = ReceiverClassifier(configuration: ClassifierConfiguration(handPossibleReceiversToGPSD: false))
        let bridge = classifier.classify(Recorded.cp210x)
        #expect(bridge.verdict == .possibleReceiver && !bridge.handToGPSD)
        #expect(classifier.classify(Recorded.ubloxM8).handToGPSD)
    }

    @Test func rowIDsAreUniqueAndEveryRowRendersAUdevMatch() {
        let ids = KnownReceivers.table.map(\.id)
        #expect(Set(ids).count == ids.count)
        for row in KnownReceivers.table {
            #expect(!row.udevMatches.isEmpty, "\(row.id)")
            #expect(!row.source.isEmpty && !row.summary.isEmpty, "\(row.id)")
            for line in row.udevMatches { #expect(line.hasPrefix("SUBSYSTEM==\""), "\(row.id): \(line)") }
        }
        #expect(
            KnownReceivers.row("gpsd-ublox-8")?.udevMatches
                == [#"SUBSYSTEM=="tty", ATTRS{idVendor}=="1546", ATTRS{idProduct}=="01a8""#])
        // Vendor (USB device) + interface number (USB interface) cannot share one ATTRS rule in udev.
        #expect(
            KnownReceivers.row("quectel-nmea-port")?.udevMatches
                == [#"SUBSYSTEM=="tty", ENV{ID_VENDOR_ID}=="2c7c", ENV{ID_USB_INTERFACE_NUM}=="01""#])
        #expect(
            KnownReceivers.row("gpsd-telit")?.udevMatches
                == [#"SUBSYSTEM=="tty", ATTRS{interface}=="Telit Wireless Module Port", ATTRS{bInterfaceNumber}=="06""#]
        )
        #expect(KnownReceivers.row("bluetooth-rfcomm")?.udevMatches == [#"SUBSYSTEM=="tty", KERNEL=="rfcomm[0-9]*""#])
        #expect(KnownReceivers.row("cdc-acm-named-gnss")?.udevMatches.count == 2)
    }

    @Test func everyGPSDRuleIDIsInTheTable() {
        // The IDs of gpsd 3.22's 60-gpsd.rules (Debian 12), so a table edit cannot drop one silently.
        let gpsd = [
            "0557:2008", "067b:aaa0", "1163:0100", "1163:0200", "091e:0003", "10c4:ea60", "10c4:ea71",
            "1546:01a5", "1546:01a6", "1546:01a7", "1546:01a8", "1546:01a9", "0e8d:3329", "067b:2303",
        ]
        for id in gpsd {
            let parts = id.split(separator: ":").map(String.init)
            let rows = KnownReceivers.table.filter { $0.vendorID == parts[0] && $0.productID == parts[1] }
            #expect(rows.count == 1 && rows[0].source.contains("gpsd"), "\(id)")
        }
    }

    @Test(arguments: [
        ("u-blox 7 - GPS/GNSS Receiver", "gnss", true),
        ("u-blox 7 - GPS/GNSS Receiver", "gps", true),
        ("GNSS-Receiver", "gnss", true),
        ("Smartkey", "rtk", false),
        ("GPSoft", "gps", false),
        ("u-blox AG - www.u-blox.com", "u-blox", true),
        ("", "gps", false),
    ])
    func wordMatching(_ text: String, _ word: String, _ expected: Bool) {
        #expect(containsWord(word, in: text) == expected)
    }
}

@Suite("Include and exclude rules", .tags(.unit))
struct IncludeExcludeTests {
    @Test func parsingAcceptsTheDocumentedForms() throws {
        #expect(try DeviceMatch(parsing: "/dev/ttyUSB*") == .path("/dev/ttyUSB*"))
        #expect(try DeviceMatch(parsing: "path:/dev/serial/by-id/*u-blox*") == .path("/dev/serial/by-id/*u-blox*"))
        #expect(try DeviceMatch(parsing: "usb:1546:01A8") == .usb(vendorID: "1546", productID: "01a8"))
        #expect(try DeviceMatch(parsing: "0403:6001") == .usb(vendorID: "0403", productID: "6001"))
        #expect(try DeviceMatch(parsing: "10c4:*") == .usb(vendorID: "10c4", productID: nil))
        #expect(try DeviceMatch(parsing: "usb:099e") == .usb(vendorID: "099e", productID: nil))
        #expect(try DeviceMatch(parsing: "serial:A50285BI") == .serial("A50285BI"))
        for bad in ["", "usb:", "12345:0001", "zzzz:0001", "1546:01a8:00", "serial:", "path:", "ttyUSB0"] {
            #expect(throws: DeviceMatchError.self, "\(bad)") { try DeviceMatch(parsing: bad) }
        }
        let error = DeviceMatchError(text: "ttyUSB0")
        #expect(error.description.contains("ttyUSB0") && error.description.contains("usb:VVVV:PPPP"))
    }

    @Test func excludeBySerialBeatsTheTable() throws {
        let classifier = ReceiverClassifier(
            configuration: ClassifierConfiguration(
                exclude: [try DeviceMatch(parsing: "serial:A50285BI")]))
        let result = classifier.classify(Recorded.ftdi)
        #expect(result.verdict == .notReceiver && result.rule == "exclude:serial:A50285BI" && !result.handToGPSD)
        #expect(classifier.classify(Recorded.cp210x).verdict == .possibleReceiver)
    }

    @Test func excludeByPathGlobAndByVendor() throws {
        let classifier = ReceiverClassifier(
            configuration: ClassifierConfiguration(
                exclude: [try DeviceMatch(parsing: "/dev/ttyUSB*"), try DeviceMatch(parsing: "usb:1546:*")]))
        #expect(classifier.classify(Recorded.cp210x).rule == "exclude:path:/dev/ttyUSB*")
        #expect(classifier.classify(Recorded.ubloxM8).rule == "exclude:usb:1546:*")
        #expect(classifier.classify(Recorded.rfcomm()).verdict == .receiver)
    }

    @Test func includeMakesAnUnknownDeviceAReceiverAndExcludeStillWins() throws {
        let include = try DeviceMatch(parsing: "usb:2341:0043")
        var classifier = ReceiverClassifier(configuration: ClassifierConfiguration(include: [include]))
        let arduino = classifier.classify(Recorded.arduino)
        #expect(arduino.verdict == .receiver && arduino.rule == "include:usb:2341:0043" && arduino.handToGPSD)
        classifier.configuration.exclude = [try DeviceMatch(parsing: "/dev/ttyACM0")]
        #expect(classifier.classify(Recorded.arduino).verdict == .notReceiver)
    }

    @Test func includeByPathCoversAnOnBoardSerialPort() throws {
        let classifier = ReceiverClassifier(
            configuration: ClassifierConfiguration(
                include: [try DeviceMatch(parsing: "/dev/ttyS[0-3]")]))
        #expect(classifier.classify(Recorded.ttyS0).verdict == .receiver)
    }

    @Test func pathRulesAlsoMatchUdevSymlinks() throws {
        var device = Recorded.ubloxM8
        device.devlinks = ["/dev/serial/by-id/usb-u-blox_AG_-_www.u-blox.com_u-blox_GNSS_receiver-if00", "/dev/gps0"]
        let classifier = ReceiverClassifier(
            configuration: ClassifierConfiguration(
                exclude: [try DeviceMatch(parsing: "/dev/serial/by-id/*u-blox*")]))
        #expect(classifier.classify(device).verdict == .notReceiver)
    }

    @Test func explicitDevicesBypassTheTableButNotAnExcludePath() throws {
        #expect(ReceiverClassifier().classifyExplicit(path: "/dev/pts/3").rule == "explicit")
        let classifier = ReceiverClassifier(
            configuration: ClassifierConfiguration(
                exclude: [try DeviceMatch(parsing: "/dev/pts/*"), try DeviceMatch(parsing: "serial:X")]))
        let vetoed = classifier.classifyExplicit(path: "/dev/pts/3")
        #expect(vetoed.verdict == .notReceiver && vetoed.reason.contains("remove one of the two"))
    }

    @Test(arguments: [
        ("/dev/ttyUSB*", "/dev/ttyUSB0", true),
        ("/dev/ttyUSB*", "/dev/ttyACM0", false),
        ("/dev/tty?SB0", "/dev/ttyUSB0", true),
        ("/dev/ttyS[0-3]", "/dev/ttyS2", true),
        ("/dev/ttyS[0-3]", "/dev/ttyS4", false),
        ("/dev/ttyS[!0]", "/dev/ttyS0", false),
        ("/dev/ttyS[!0]", "/dev/ttyS1", true),
        ("*u-blox*", "/dev/serial/by-id/usb-u-blox_AG-if00", true),
        ("/dev/pts/*", "/dev/pts/12", true),
        ("/dev/[", "/dev/[", true),
        ("", "", true),
        ("*", "", true),
        ("a*b*c", "aXbYbZc", true),
        ("a*b*c", "aXbYbZ", false),
    ])
    func glob(_ pattern: String, _ text: String, _ expected: Bool) {
        #expect(globMatches(pattern, text) == expected)
    }
}
