// The operator interface against the real binary: `tmm-bridge status` asking a daemon that plays
// the demo capture (ports, a WebSocket client counted, the fix once positions flow, registered
// apps named without their ids), no daemon (exit 69), a user outside the socket's group (exit 77
// and the group to join, the daemon unharmed); the live status line on a pty; `tmm-bridge
// devices` on the recorded sysfs tree of the udevadm tests.
import BridgeCore
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

/// `tmm-bridge ARGUMENTS...` to the end.
private func bridge(_ arguments: [String]) throws -> (status: Int32?, output: String) {
    try runTool(try bridgeBinary().path, arguments)
}

/// The daemon's status over its control socket, parsed (nil when the command failed).
private func status(of daemon: BridgeDaemon) throws -> DaemonStatus? {
    let run = try bridge(["status", "--json", "--runtime-dir", daemon.setup.runtimeDirectory])
    guard run.status == 0 else { return nil }
    return try DaemonStatus.parse(json: run.output.trimmingCharacters(in: .newlines)).get()
}

/// A WebSocket client (Python's websockets, tmmtools/peers/ws_client.py) holding `url` open
/// until it is killed; prints `connected` once it is.
private func holdWebSocket(_ url: String) throws -> Spawned {
    let client = PythonTools.command("peers.ws_client", ["hold", url])
    return try Spawned(client.executable, client.arguments)
}

@Suite(
    "tmm-bridge status", .tags(.integration),
    .enabled(if: EndToEnd.isAvailable, "needs gpsd, curl and python3-websockets"))
struct StatusCommandTests {
    @Test("ports, a WebSocket client, the fix once positions flow, apps by name only")
    func againstTheDemo() throws {
        let directory = try EndToEnd.makeDirectory("status")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var setup = BridgeDaemon.Setup(name: "status", directory: directory, ports: try PortSet.pick())
        setup.registration = "open"
        setup.extraArguments = ["--demo"]
        let daemon = try BridgeDaemon(setup)
        defer { daemon.stopAndExpectCleanExit() }

        let first = try #require(try status(of: daemon), "status failed:\n\(daemon.log)")
        #expect(first.pid == daemon.pid)
        #expect(
            first.version
                == (try bridge(["--version"])).output.split(separator: " ").last?.trimmingCharacters(in: .newlines))
        #expect(first.ports == daemon.ports, "\(first.ports) vs the log's \(daemon.ports)")
        #expect(first.clients.total == 0)
        #expect(first.gpsd.kind == (EndToEnd.systemGPSDAnswers ? "system" : "private"))
        #expect(first.registration.policy == "open" && first.registration.registered == 0)
        #expect(
            first.servedReceiver == nil || first.servedReceiver?.hasPrefix("/dev/pts/") == true,
            "none yet, or the replayed capture's pty: \(String(describing: first.servedReceiver))")

        // Positions flow: the replayed capture's pty is the receiver, with a fix and a rate.
        var flowing: DaemonStatus?
        #expect(
            waitUntil(15) {
                flowing = try? status(of: daemon)
                return flowing?.fix.input == "live" && flowing?.fix.epochRate != nil && flowing?.fix.quality != nil
            }, "no live fix in the status: \(String(describing: flowing))\n\(daemon.log)")
        let live = try #require(flowing)
        #expect(live.fix.quality != "noFix", "\(live.fix)")
        #expect(live.fix.latitude != nil && live.fix.longitude != nil)
        #expect((live.fix.lastEpochAgeSeconds ?? 99) < 2)
        let receiver = try #require(live.receivers.first, "no receiver in \(live)")
        #expect(receiver.foundBy == "replay" && receiver.connected && receiver.openInGPSD, "\(receiver)")
        #expect(receiver.path.hasPrefix("/dev/pts/"))
        #expect(live.servedReceiver == receiver.path, "the one receiver is the served one")

        // A LocationV1 client is counted on its socket and its stream, and forgotten when it goes.
        let port = try #require(daemon.ports["locationPort"])
        let client = try holdWebSocket("ws://127.0.0.1:\(port)/")
        var counted: DaemonStatus?
        #expect(
            waitUntil(10) {
                counted = try? status(of: daemon)
                return counted?.clients.bySocket["locationPort"] == 1 && counted?.clients.locationV1 == 1
            }, "the client is not counted: \(String(describing: counted?.clients))\n\(client.output.text)")
        #expect(counted?.clients.total == 1)
        client.killNow()
        #expect(waitUntil(10) { (try? status(of: daemon))?.clients.total == 0 })

        // A registration: listed by its last four digits, never the id (a credential).
        let id = "12345678-1234-1234-1234-123456789abc"
        let url =
            "tmmregister://?" + Data(#"{"application_id":"\#(id)","returl":"app://r"}"#.utf8).base64EncodedString()
        let opened = try bridge(["open", url, "--print", "--runtime-dir", setup.runtimeDirectory])
        #expect(opened.status == 0, "\(opened.output)")
        let json = try bridge(["status", "--json", "--runtime-dir", setup.runtimeDirectory])
        #expect(!json.output.contains(id) && !json.output.contains("123456789abc"), "\(json.output)")
        let registered = try DaemonStatus.parse(json: json.output.trimmingCharacters(in: .newlines)).get()
        #expect(registered.registration.registered == 1)
        #expect(registered.registration.applications.map(\.name) == ["application …9abc"])
        #expect(registered.registration.locationV2Unlocked)

        // For people: the aligned report.
        let report = try bridge(["status", "--runtime-dir", setup.runtimeDirectory])
        #expect(report.status == 0)
        for expected in [
            "daemon     tmm-bridge ", "receivers  /dev/pts/", "the replayed capture, open in gpsd", "fix        ",
            "ports      V1 \(port), ", "apps       1 registered, policy open", "           application …9abc since ",
        ] {
            #expect(report.output.contains(expected), "no '\(expected)' in:\n\(report.output)")
        }
        // Standard output is a pipe here: no status line, no control sequences.
        #expect(!daemon.log.contains("\u{1B}["), "\(daemon.log)")
    }

    @Test("no daemon: exit 69 and what to do")
    func noDaemon() throws {
        let run = try bridge(["status", "--runtime-dir", "/nonexistent"])
        #expect(run.status == 69)
        #expect(
            run.output.hasPrefix("tmm-bridge: no tmm-bridge daemon answers on /nonexistent/control.sock: "),
            "\(run.output)")
        #expect(run.output.contains("start it: tmm-bridge run, or systemctl start tmm-bridge"))
        // A socket file nobody listens on (a crashed daemon's) is the same.
        let directory = try EndToEnd.makeDirectory("stale")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fd = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) {
            $0.copyBytes(from: Array((directory + "/control.sock").utf8) + [0])
        }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        close(fd)
        let stale = try bridge(["status", "--runtime-dir", directory])
        #expect(stale.status == 69, "\(stale.output)")
        #expect(stale.output.contains("Connection refused"), "\(stale.output)")
        let usage = try bridge(["status", "--frobnicate"])
        #expect(usage.status == 64 && usage.output.contains("status: unexpected argument '--frobnicate'"))
    }

    @Test(
        "a user outside the socket's group is told which group to join; the daemon is unharmed",
        .enabled(if: geteuid() == 0 && findExecutable("setpriv") != nil, "needs root and setpriv"))
    func userOutsideTheGroup() throws {
        let directory = try EndToEnd.makeDirectory("status-perm")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chmod(directory, 0o755)
        var setup = BridgeDaemon.Setup(name: "status-perm", directory: directory, ports: try PortSet.pick())
        setup.extraArguments = ["--demo"]
        let daemon = try BridgeDaemon(setup)
        defer { daemon.stopAndExpectCleanExit() }
        let socket = setup.runtimeDirectory + "/control.sock"
        let asNobody = [
            "--reuid", "nobody", "--regid", "nogroup", "--clear-groups", try bridgeBinary().path,
            "status", "--runtime-dir", setup.runtimeDirectory,
        ]

        // Started by root by hand: the socket keeps root's group.
        var denied = try runTool("/usr/bin/setpriv", asNobody)
        #expect(denied.status == 77, "\(denied.output)")
        #expect(
            denied.output == "tmm-bridge: permission denied on \(socket): it is root's (group root): run as root "
                + "(the service's socket is open to group tmm-bridge)\n", "\(denied.output)")

        // Under the unit it is group tmm-bridge; any group stands in for it here.
        let dialout = try #require(getgrnam("dialout")?.pointee.gr_gid, "no dialout group")
        #expect(chown(socket, 0, dialout) == 0)
        denied = try runTool("/usr/bin/setpriv", asNobody)
        #expect(denied.status == 77)
        #expect(
            denied.output.contains(
                "permission denied on \(socket): it is open to group dialout: join it "
                    + "(adduser $USER dialout, then log in again) or run as root"), "\(denied.output)")

        // A member of that group may ask.
        let member = try runTool(
            "/usr/bin/setpriv",
            ["--reuid", "nobody", "--regid", "nogroup", "--groups", "\(dialout)"]
                + Array(asNobody.dropFirst(5)))
        #expect(member.status == 0, "\(member.output)")
        // The refusals cost the daemon nothing.
        #expect(!daemon.hasExited)
        #expect(try status(of: daemon)?.pid == daemon.pid)
    }
}

@Suite(
    "tmm-bridge devices on the recorded sysfs tree", .tags(.integration),
    .enabled(
        if: geteuid() == 0 && findExecutable("unshare") != nil, "needs root and unshare (a private mount namespace)"))
struct DevicesCommandTests {
    /// `tmm-bridge devices ARGUMENTS` with the fixture tree over /sys (and an empty /run: no udev
    /// database), as the udevadm tests set it up.
    private func devices(_ arguments: [String]) throws -> (status: Int32?, output: String) {
        // An empty configuration: whatever this machine has in /etc/tmm-bridge does not count.
        let configuration = NSTemporaryDirectory() + "tmm-devices-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).conf"
        _ = FileManager.default.createFile(atPath: configuration, contents: Data())
        defer { unlink(configuration) }
        let script = "mount --bind \"$1\" /sys && mount -t tmpfs tmpfs /run && shift && exec \"$@\""
        return try runTool(
            "/usr/bin/env",
            [
                "SYSTEMD_DEVICE_VERIFY_SYSFS=0", "unshare", "--mount", "--propagation", "private",
                "/bin/sh", "-c", script, "sh", Udevadm.sysfs, try bridgeBinary().path, "devices", "--config",
                configuration,
            ] + arguments)
    }

    private struct Report: Decodable {
        struct Entry: Decodable {
            var path: String
            var verdict: String
            var rule: String
            var reason: String
            var usbID: String?
            var serialNumber: String?
            var configured: Bool
        }
        var format: String
        var devices: [Entry]
    }

    @Test("every recorded device gets the table row udev's rules give it, and the reason")
    func verdicts() throws {
        let run = try devices(["--json"])
        #expect(run.status == 0, "\(run.output)")
        let report = try JSONDecoder().decode(Report.self, from: Data(run.output.utf8))
        #expect(report.format == "tmm-bridge devices")
        for device in UdevadmTests.devices {
            let path = "/dev/" + (device.path.split(separator: "/").last.map(String.init) ?? "")
            let entry = try #require(report.devices.first { $0.path == path }, "\(path) not listed:\n\(run.output)")
            #expect(entry.rule == (device.row ?? "no-match"), "\(device.name): \(entry)")
            #expect(entry.reason.hasPrefix(path), "\(entry.reason)")
            #expect(!entry.configured)
        }
        let ublox = try #require(report.devices.first { $0.path == "/dev/ttyACM0" })
        #expect(ublox.verdict == "receiver" && ublox.usbID == "1546:01a8" && ublox.serialNumber == "M8N0042")
    }

    @Test("for people: the verdict as run acts on it; a configured device is a receiver whatever the table says")
    func text() throws {
        let run = try devices(["--device", "/dev/ttyS0"])
        #expect(run.status == 0, "\(run.output)")
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(
            lines.contains {
                $0.hasPrefix("/dev/ttyUSB0  possible receiver (gpsd probes it)  USB 0403:6001, ftdi_sio, ")
            },
            "\(run.output)")
        #expect(lines.contains { $0.hasPrefix("/dev/ttyACM2  not a receiver  USB 1546:1102") }, "\(run.output)")
        #expect(
            lines.contains {
                $0.hasPrefix("/dev/ttyACM0  RECEIVER  USB 1546:01a8, cdc_acm, interface 00, serial M8N0042")
            })
        #expect(lines.contains("/dev/ttyS0    RECEIVER (configured)"), "\(run.output)")
        #expect(
            run.output.contains(
                "is not a known GNSS device; add an include rule (usb:04d8:00dd) or --device /dev/ttyACM4"))
    }
}
