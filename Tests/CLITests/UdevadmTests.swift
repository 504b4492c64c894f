// The committed udev rules run by Debian's own udevadm (`udevadm test`) against the recorded sysfs
// tree in Tests/Fixtures/udev/sys, with the system's rules (60-serial.rules gives the ID_*
// properties some rows match). Each run is in a private mount namespace: the fixture is bound
// over /sys, tmpfs over /run and /dev (udevadm test creates links and its database there) and
// over /etc/udev/rules.d (where only our file is put), so nothing reaches the machine.
// SYSTEMD_DEVICE_VERIFY_SYSFS=0 lets sd-device accept a /sys that is not sysfs (systemd's own
// udev tests do the same). docs/service.md explains the set-up; hwtests/udev.md has the real-bench steps.
import Discovery
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

/// What udevadm made of one device.
struct UdevadmRun {
    var output: String
    /// The properties of the final dump (`KEY=value` lines).
    var properties: [String: String] = [:]

    init(output: String) {
        self.output = output
        for line in output.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "="), line.first?.isUppercase == true,
                line[..<equals].allSatisfy({ $0.isUppercase || $0.isNumber || $0 == "_" })
            else { continue }
            properties[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
    }

    var tags: Set<String> { Set((properties["TAGS"] ?? "").split(separator: ":").map(String.init)) }
    var links: [String] { (properties["DEVLINKS"] ?? "").split(separator: " ").map(String.init) }
    var wants: [String] { (properties["SYSTEMD_WANTS"] ?? "").split(separator: " ").map(String.init) }
    /// Lines udev prints for a rule it cannot parse or a name it does not know.
    var problems: [String] {
        output.split(separator: "\n").map(String.init).filter { $0.contains("Invalid") || $0.contains("Unknown") }
    }
}

enum Udevadm {
    static let sysfs = Fixtures.repositoryRoot + "/Tests/Fixtures/udev/sys"
    static let rules = Fixtures.repositoryRoot + "/udev/" + UdevRules.fileName
    static let usb = "/sys/devices/pci0000:00/0000:00:14.0/usb1"

    static let isAvailable = geteuid() == 0 && findExecutable("udevadm") != nil && findExecutable("unshare") != nil

    /// The namespace's set-up, then `udevadm test`; $1 sysfs tree, $2 rules file, $3 device, and
    /// more rules files after it (copied beside ours).
    static let script = """
        set -e
        mount --bind "$1" /sys
        mount -t tmpfs tmpfs /run
        mount -t tmpfs tmpfs /dev
        mount -t tmpfs tmpfs /etc/udev/rules.d
        cp "$2" /etc/udev/rules.d/
        device=$3
        shift 3
        for extra in "$@"; do cp "$extra" /etc/udev/rules.d/; done
        exec udevadm test --action=add "$device"
        """

    /// `udevadm test` of `device` (a /sys/devices path of the fixture) with `rules`, plus `extraRules`
    /// files (read in the order of their names, with the system's and ours).
    static func test(_ device: String, rules: String = Udevadm.rules, extraRules: [String] = []) throws -> UdevadmRun {
        let result = try runTool(
            "/usr/bin/env",
            [
                "SYSTEMD_DEVICE_VERIFY_SYSFS=0", "unshare", "--mount", "--propagation", "private",
                "/bin/sh", "-c", script, "sh", sysfs, rules, device,
            ] + extraRules)
        #expect(result.status == 0, "udevadm test \(device) failed:\n\(result.output)")
        return UdevadmRun(output: result.output)
    }
}

@Suite(
    "udevadm test: the generated rules on recorded devices", .tags(.integration),
    .enabled(if: Udevadm.isAvailable, "needs root, unshare and udevadm (package udev; scripts/install-deps.sh)"))
struct UdevadmTests {
    struct Device: CustomTestStringConvertible, Sendable {
        var name: String
        var path: String
        /// The table row that must decide (nil: none matches).
        var row: String?
        /// The /dev link it must get (receivers only).
        var link: String?

        var testDescription: String { name }
        var isReceiver: Bool { row.flatMap { KnownReceivers.row($0) }?.verdict == .receiver }
    }

    static let devices: [Device] = [
        Device(
            name: "u-blox 8 (cdc_acm)", path: Udevadm.usb + "/1-1/1-1:1.0/tty/ttyACM0", row: "gpsd-ublox-8",
            link: "/dev/gnss/u-blox-M8N0042-if00"),
        Device(
            name: "Trimble (vendor row)", path: Udevadm.usb + "/1-2/1-2:1.0/tty/ttyACM1", row: "vendor-trimble",
            link: "/dev/gnss/trimble-6129F00123-if00"),
        Device(
            name: "u-blox LISA-U2 modem (not a receiver, before u-blox's vendor row)",
            path: Udevadm.usb + "/1-3/1-3:1.0/tty/ttyACM2", row: "ublox-lisa-u2"),
        Device(
            name: "Telit HE910 GNSS port (interface attributes)", path: Udevadm.usb + "/1-4/1-4:1.6/tty/ttyACM3",
            row: "gpsd-telit", link: "/dev/gnss/telit-357164040000000-if06"),
        Device(
            name: "Quectel EC25 NMEA port (usb_id's ID_* properties, no serial: link by path)",
            path: Udevadm.usb + "/1-5/1-5:1.1/ttyUSB1/tty/ttyUSB1", row: "quectel-nmea-port",
            link: "/dev/gnss/quectel-pci-0000:00:14.0-usb-0:5:1.1"),
        Device(
            name: "Quectel EC25 AT port", path: Udevadm.usb + "/1-5/1-5:1.2/ttyUSB2/tty/ttyUSB2",
            row: "quectel-other-port"),
        Device(
            name: "FTDI FT232R bridge (possible receiver: not tagged)",
            path: Udevadm.usb + "/1-6/1-6:1.0/ttyUSB0/tty/ttyUSB0",
            row: "bridge-ftdi-ft232"),
        Device(name: "MCP2221 USB-serial bridge (no row: not tagged)", path: Udevadm.usb + "/1-7/1-7:1.0/tty/ttyACM4"),
        Device(
            name: "u-blox whose serial string carries U+202E (link by path, not by the serial)",
            path: Udevadm.usb + "/1-8/1-8:1.0/tty/ttyACM5", row: "gpsd-ublox-8",
            link: "/dev/gnss/u-blox-pci-0000:00:14.0-usb-0:8:1.0"),
        Device(
            name: "Bluetooth rfcomm0", path: "/sys/devices/virtual/tty/rfcomm0", row: "bluetooth-rfcomm",
            link: "/dev/gnss/bluetooth-00:07:80:ab:cd:ef"),
        Device(name: "on-board ttyS0", path: "/sys/devices/platform/serial8250/tty/ttyS0"),
    ]

    @Test(arguments: devices)
    func device(_ device: Device) throws {
        let run = try Udevadm.test(device.path)
        #expect(run.output.contains("Reading rules file: /etc/udev/rules.d/\(UdevRules.fileName)"), "\(run.output)")
        #expect(run.problems.isEmpty, "udev reported:\n\(run.problems.joined(separator: "\n"))")
        #expect(run.properties["TMM_BRIDGE_ROW"] == device.row, "\(run.output)")
        if let row = device.row.flatMap({ KnownReceivers.row($0) }) {
            #expect(run.properties["TMM_BRIDGE_VERDICT"] == row.verdict.description)
        }
        let gnssLinks = run.links.filter { $0.hasPrefix("/dev/\(UdevRules.linkFolder)/") }
        if device.isReceiver {
            #expect(run.tags.contains(UdevRules.tag), "\(run.output)")
            #expect(run.tags.contains("systemd"))
            #expect(run.wants.contains("tmm-bridge.service"), "\(run.output)")
            let dialout = try #require(getgrnam("dialout"), "no dialout group").pointee.gr_gid
            #expect(
                run.output.split(separator: "\n").contains {
                    $0.contains(UdevRules.fileName) && $0.hasSuffix("GROUP \(dialout)")
                },
                "our rules should set group dialout:\n\(run.output)")
            #expect(gnssLinks == [device.link].compactMap { $0 }, "\(run.links)")
        } else {
            #expect(!run.tags.contains(UdevRules.tag), "\(run.output)")
            #expect(!run.wants.contains("tmm-bridge.service"), "\(run.output)")
            #expect(gnssLinks.isEmpty, "\(run.links)")
            #expect(
                !run.output.split(separator: "\n").contains {
                    $0.contains(UdevRules.fileName) && $0.contains(" GROUP ")
                })
        }
    }

    /// The check of the runs above can fail: a rules file with a bad key and a bad operator is
    /// reported (udevadm test still exits 0, which is why the output is read).
    /// udev 252 (Debian 12) drops a serial string that is not ASCII, but udev versions whose
    /// usb_id keeps valid UTF-8 in ID_SERIAL_SHORT exist; a rules file between 60-serial.rules and
    /// ours plays one, with a RIGHT-TO-LEFT OVERRIDE in the serial: the link must not carry it.
    @Test("A serial number with a bidirectional override never names a link")
    func aSerialWithABidiOverrideNamesNoLink() throws {
        let directory = try EndToEnd.makeDirectory("udev-bidi")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let spoof = directory + "/60-spoof.rules"
        #expect(
            FileManager.default.createFile(
                atPath: spoof,
                contents: Data(
                    "KERNEL==\"ttyACM0\", ENV{ID_SERIAL_SHORT}=\"M8N\u{202E}2400\"\n".utf8)))
        let run = try Udevadm.test(Udevadm.usb + "/1-1/1-1:1.0/tty/ttyACM0", extraRules: [spoof])
        #expect(
            run.properties["ID_SERIAL_SHORT"] == "M8N\u{202E}2400", "the played udev did not keep it:\n\(run.output)")
        let gnssLinks = run.links.filter { $0.hasPrefix("/dev/\(UdevRules.linkFolder)/") }
        #expect(gnssLinks == ["/dev/gnss/u-blox-pci-0000:00:14.0-usb-0:1:1.0"], "\(run.links)")
        #expect(run.problems.isEmpty, "udev reported:\n\(run.problems.joined(separator: "\n"))")
    }

    @Test func aBrokenRuleIsReported() throws {
        let directory = NSTemporaryDirectory() + "tmm-udev-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broken = directory + "/" + UdevRules.fileName
        let rules = String(decoding: FileManager.default.contents(atPath: Udevadm.rules) ?? Data(), as: UTF8.self)
        _ = FileManager.default.createFile(
            atPath: broken,
            contents: Data(
                (rules
                    + "SUBSYSTEM==\"tty\", BOGUS=\"1\"\nSUBSYSTEM==\"tty\", ATTRS{idVendor}=\"1546\", TAG+=\"x\"\n")
                    .utf8))
        let run = try Udevadm.test(Udevadm.usb + "/1-1/1-1:1.0/tty/ttyACM0", rules: broken)
        #expect(run.problems.count >= 2, "\(run.output)")
    }
}

@Suite("tmm-bridge udev-rules", .tags(.integration))
struct UdevRulesCommandTests {
    @Test("tmm-bridge udev-rules prints the committed file")
    func subcommandPrintsTheCommittedFile() throws {
        let run = try runBridge(["udev-rules"])
        #expect(run.status == 0, "\(run.stderr)")
        let committed = String(decoding: FileManager.default.contents(atPath: Udevadm.rules) ?? Data(), as: UTF8.self)
        #expect(run.stdout == committed, "run make udev-rules")
    }
}
