// systemd/tmm-bridge.service: what it must say to fit the daemon (unit suite: the file alone),
// and what systemd's own linters make of it (integration: `systemd-analyze verify` on a copy whose
// ExecStart is the built binary, and `systemd-analyze security --offline=yes`, whose exposure
// score docs/service.md records and this suite keeps from growing).
import Bridge
import BridgeCore
import Foundation
import Posix
import TestSupport
import Testing

/// The unit file as (section, key, value) lines, in order.
struct UnitFile {
    static let path = Fixtures.repositoryRoot + "/systemd/tmm-bridge.service"
    static let documentation = Fixtures.repositoryRoot + "/docs/service.md"

    var entries: [(section: String, key: String, value: String)] = []

    static func load(_ path: String = UnitFile.path) throws -> UnitFile {
        let data = try #require(FileManager.default.contents(atPath: path), "\(path) is missing")
        var unit = UnitFile()
        var section = ""
        for raw in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            unit.entries.append((section, String(line[..<equals]), String(line[line.index(after: equals)...])))
        }
        return unit
    }

    /// Every value of `key` in `section`, in order.
    func values(_ key: String, in section: String = "Service") -> [String] {
        entries.filter { $0.section == section && $0.key == key }.map(\.value)
    }

    /// The one value of `key` (the last, as systemd takes it for single-valued settings).
    func value(_ key: String, in section: String = "Service") -> String? { values(key, in: section).last }
}

@Suite("systemd unit file: what the daemon needs", .tags(.unit))
struct ServiceUnitFileTests {
    @Test("Type=notify with a watchdog: the daemon sends READY=1, WATCHDOG=1 and STOPPING=1")
    func notifyAndWatchdog() throws {
        let unit = try UnitFile.load()
        #expect(unit.value("Type") == "notify")
        #expect(unit.value("NotifyAccess") == "main")
        #expect(unit.value("WatchdogSec") != nil)
        #expect(unit.value("Restart") == "on-failure")
    }

    @Test("systemctl reload sends SIGHUP to the daemon, the signal it reloads on")
    func reloadIsSIGHUP() throws {
        let unit = try UnitFile.load()
        #expect(unit.value("ExecReload") == "/bin/kill -HUP $MAINPID")
        #expect(BridgeServer.reloadSignals == [SIGHUP] && !BridgeServer.stopSignals.contains(SIGHUP))
    }

    @Test("no restart after a usage or configuration error (the daemon's exit statuses)")
    func restartPreventExitStatus() throws {
        let unit = try UnitFile.load()
        #expect(
            unit.value("RestartPreventExitStatus")
                == "\(ExitStatus.usage.rawValue) \(ExitStatus.badConfiguration.rawValue)")
    }

    @Test("the daemon's user, group and directories")
    func accountAndDirectories() throws {
        let unit = try UnitFile.load()
        // RunCommand.credentials defaults to the same user when started as root.
        #expect(unit.value("User") == "tmm-bridge")
        // The control socket (0660) takes the primary group: registering apps is for members of
        // tmm-bridge, not for everyone who may open a serial port.
        #expect(unit.value("Group") == "tmm-bridge")
        #expect(unit.value("SupplementaryGroups") == "dialout")
        #expect(unit.value("StateDirectory") == "tmm-bridge")
        #expect(unit.value("RuntimeDirectory") == "tmm-bridge")
        #expect(unit.value("ConfigurationDirectory") == "tmm-bridge")
        // The daemon refuses a state directory others can read into; systemd makes it so.
        #expect(unit.value("StateDirectoryMode") == "0700")
        #expect(unit.value("ExecStart")?.hasSuffix("/tmm-bridge run") == true)
    }

    /// The daemon also makes itself undumpable (prctl); the limit covers what runs before that
    /// and any child.
    @Test("no core dumps: the daemon's memory holds private keys and registered ids")
    func noCoreDumps() throws {
        #expect(try UnitFile.load().value("LimitCORE") == "0")
    }

    @Test("no capabilities, the address families the daemon uses, and the receivers' devices")
    func sandbox() throws {
        let unit = try UnitFile.load()
        #expect(unit.value("CapabilityBoundingSet") == "")
        #expect(unit.value("AmbientCapabilities") == "")
        #expect(unit.value("NoNewPrivileges") == "yes")
        #expect(unit.value("ProtectSystem") == "strict")
        #expect(
            Set(unit.value("RestrictAddressFamilies")?.split(separator: " ").map(String.init) ?? [])
                == ["AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK", "AF_BLUETOOTH"])
        #expect(unit.value("DevicePolicy") == "closed")
        #expect(unit.values("DeviceAllow").contains("char-gnss rw"), "kernel GNSS devices are receivers too")
        #expect(unit.value("SystemCallFilter") != nil)
    }

    /// systemd resolves `DeviceAllow=char-NAME` against /proc/devices once, at start: a group
    /// whose module loads later would stay refused. So the receivers' fixed majors are given by
    /// number, and a group by name is either built into the kernel or loaded at boot by
    /// systemd/tmm-bridge-modules.conf.
    @Test("receivers' devices allowed by fixed major, or by a group that exists when the service starts")
    func deviceGroupsExistAtStart() throws {
        let unit = try UnitFile.load()
        let path = Fixtures.repositoryRoot + "/systemd/tmm-bridge-modules.conf"
        let data = try #require(FileManager.default.contents(atPath: path), "\(path) is missing")
        let modules = Set(
            String(decoding: data, as: UTF8.self).split(separator: "\n")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") })
        let specifiers = unit.values("DeviceAllow").map { String($0.split(separator: " ").first ?? "") }
        // devices.txt: 188 USB serial (ttyUSB), 166 USB ACM (ttyACM), 216 Bluetooth RFCOMM TTY.
        for major in ["188", "166", "216"] {
            #expect(specifiers.contains("char-" + major), "DeviceAllow=char-\(major) rw missing")
        }
        let builtIn: Set = ["ttyS"]
        let moduleOfGroup = ["gnss": "gnss"]
        for specifier in specifiers where specifier.hasPrefix("char-") {
            let group = String(specifier.dropFirst("char-".count))
            if UInt32(group) != nil || builtIn.contains(group) { continue }
            let module = try #require(
                moduleOfGroup[group],
                "DeviceAllow=\(specifier): give a fixed major by number, or load its module at boot")
            #expect(modules.contains(module), "\(path) does not load \(module) (for DeviceAllow=\(specifier))")
        }
    }

    /// The daemon decides at run time which gpsd it reads: the unit only orders itself after the
    /// system gpsd and never pulls it in.
    @Test("ordered after the system gpsd, which it does not pull in")
    func gpsdOrdering() throws {
        let unit = try UnitFile.load()
        let after = unit.values("After", in: "Unit").flatMap { $0.split(separator: " ").map(String.init) }
        #expect(after.contains("gpsd.socket") && after.contains("gpsd.service"))
        for key in ["Wants", "Requires", "BindsTo", "Requisite"] {
            #expect(!unit.values(key, in: "Unit").contains { $0.contains("gpsd") }, "\(key)= names gpsd")
        }
    }

    /// docs/service.md says why each option is there: every key of the unit appears in it.
    @Test("docs/service.md explains every key of the unit")
    func everyKeyIsDocumented() throws {
        let unit = try UnitFile.load()
        let data = try #require(
            FileManager.default.contents(atPath: UnitFile.documentation), "docs/service.md is missing")
        let documentation = String(decoding: data, as: UTF8.self)
        for key in Set(unit.entries.map(\.key)) {
            #expect(documentation.contains("`\(key)="), "docs/service.md does not explain \(key)=")
        }
    }
}

@Suite(
    "systemd-analyze on the unit", .tags(.integration),
    .enabled(
        if: findExecutable("systemd-analyze") != nil, "needs systemd-analyze (package systemd; scripts/install-deps.sh)"
    ))
struct ServiceUnitAnalyzeTests {
    /// `systemd-analyze security --offline=yes` reached this with the unit as committed (docs/service.md
    /// records it). Lower it here when the unit gets tighter; never raise it without a reason there.
    static let recordedExposure = 1.8

    static var analyze: String { findExecutable("systemd-analyze") ?? "/usr/bin/systemd-analyze" }

    /// A copy of the unit whose ExecStart is the built binary (verify checks the executable exists;
    /// the shipped path, /usr/bin/tmm-bridge, exists only once the package is installed).
    private func verifiableCopy() throws -> (directory: String, unit: String) {
        let data = try #require(FileManager.default.contents(atPath: UnitFile.path))
        let binary = try bridgeBinary().path
        var lines: [String] = []
        var replaced = 0
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("ExecStart=") {
                let arguments = line.split(separator: " ").dropFirst()
                lines.append((["ExecStart=" + binary] + arguments.map(String.init)).joined(separator: " "))
                replaced += 1
            } else {
                lines.append(String(line))
            }
        }
        #expect(replaced == 1, "the unit should have one ExecStart=")
        let directory = NSTemporaryDirectory() + "tmm-unit-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let unit = directory + "/tmm-bridge.service"
        _ = FileManager.default.createFile(atPath: unit, contents: Data(lines.joined(separator: "\n").utf8))
        // Documentation=man:tmm-bridge(8): verify runs `man` on it, so the page must resolve, as
        // it does once installed (make install, the .deb): the committed page, on a MANPATH.
        try FileManager.default.createDirectory(atPath: directory + "/man/man8", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.repositoryRoot + "/packaging/tmm-bridge.8",
            toPath: directory + "/man/man8/tmm-bridge.8")
        return (directory, unit)
    }

    /// systemd-analyze with MANPATH set to the copy's man folder.
    private func analyzeVerify(_ copy: (directory: String, unit: String)) throws -> (status: Int32?, output: String) {
        try runTool("/usr/bin/env", ["MANPATH=\(copy.directory)/man", Self.analyze, "verify", copy.unit])
    }

    @Test("systemd-analyze verify: no complaint about the unit")
    func verify() throws {
        let copy = try verifiableCopy()
        defer { try? FileManager.default.removeItem(atPath: copy.directory) }
        let result = try analyzeVerify(copy)
        #expect(result.status == 0, "systemd-analyze verify failed:\n\(result.output)")
        // Any line about our unit is a warning (unknown key, bad value, missing executable...);
        // lines about other units on this machine are not ours to fix.
        let ours = result.output.split(separator: "\n").filter { $0.contains("tmm-bridge") }
        #expect(ours.isEmpty, "systemd-analyze verify complained about the unit:\n\(ours.joined(separator: "\n"))")
    }

    /// The check above catches a bad line: the same copy with an unknown key fails it.
    @Test("systemd-analyze verify does report a bad line (the check can fail)")
    func verifyReportsABadLine() throws {
        let copy = try verifiableCopy()
        defer { try? FileManager.default.removeItem(atPath: copy.directory) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: copy.unit))
        try handle.seekToEnd()
        handle.write(Data("\n[Service]\nProtectSystm=strict\n".utf8))
        try handle.close()
        let result = try analyzeVerify(copy)
        #expect(
            result.output.split(separator: "\n").contains { $0.contains("tmm-bridge") && $0.contains("ProtectSystm") },
            "\(result.output)")
    }

    @Test("systemd-analyze security: exposure at or below the recorded score, and docs/service.md says it")
    func exposure() throws {
        let result = try runTool(Self.analyze, ["security", "--offline=yes", "--no-pager", UnitFile.path])
        let marker = "Overall exposure level for tmm-bridge.service: "
        let line = try #require(
            result.output.split(separator: "\n").first { $0.contains(marker) },
            "no exposure line in:\n\(result.output)")
        let score = line.components(separatedBy: marker).last?.split(separator: " ").first.flatMap { Double($0) }
        let exposure = try #require(score, "cannot read the score in '\(line)'")
        #expect(
            exposure <= Self.recordedExposure,
            "exposure \(exposure) is above the recorded \(Self.recordedExposure):\n\(result.output)")
        let documentation = String(
            decoding: FileManager.default.contents(atPath: UnitFile.documentation) ?? Data(), as: UTF8.self)
        #expect(
            documentation.contains("exposure level \(Self.recordedExposure)"),
            "docs/service.md should record the exposure level \(Self.recordedExposure)")
    }
}
