// `tmm-bridge run` started as root gives root up once it has started (docs/security.md,
// "Privileges"): the real binary, with a pty receiver through its private gpsd, checked from
// /proc/PID/status, from a V2 client and from the registry on disk.
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

private let appID = "5f0c1a2b-3c4d-4e5f-8a9b-00000000d20b"

@Suite(
    "Privilege drop: tmm-bridge run as root", .tags(.integration), .serialized,
    .enabled(if: geteuid() == 0, "needs root"),
    .enabled(
        if: EndToEnd.isAvailable, "needs gpsd, curl and /usr/bin/python3 with websockets (scripts/install-deps.sh)"))
struct PrivilegeDropTests {
    /// The `Name:\tv1\tv2...` line of /proc/PID/status, split.
    private func status(_ pid: pid_t, _ name: String) throws -> [String] {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(
            text.split(separator: "\n").first { $0.hasPrefix(name + ":") }, "\(name) in /proc/\(pid)/status")
        return line.dropFirst(name.count + 1).split(whereSeparator: { $0 == "\t" || $0 == " " }).map(String.init)
    }

    private func configFile(in directory: String, _ text: String) -> String {
        let path = directory + "/tmm-bridge.conf"
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }

    @Test func rootDropsToTheConfiguredUserAndKeepsServing() throws {
        let directory = try EndToEnd.makeDirectory("privileges")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let dialout = try #require(getgrnam("dialout")).pointee.gr_gid
        let receiver = try PtyReceiver()
        var setup = BridgeDaemon.Setup(name: "privileges", directory: directory, ports: try PortSet.pick())
        setup.allowedIDs = [appID]
        setup.devicePath = receiver.devicePath
        setup.extraArguments = ["--config", configFile(in: directory, "user = nobody\n")]
        let daemon = try BridgeDaemon(setup)
        #expect(
            daemon.log.contains(
                "dropped privileges to user nobody (uid 65534) group dialout (gid \(dialout)), no capabilities kept"),
            "\(daemon.log)")

        // Every id of the process, and no capability left (no Bluetooth receiver is configured).
        #expect(try status(daemon.pid, "Uid") == ["65534", "65534", "65534", "65534"])
        #expect(try status(daemon.pid, "Gid") == Array(repeating: "\(dialout)", count: 4))
        #expect(try status(daemon.pid, "Groups") == ["\(dialout)"])
        #expect(try status(daemon.pid, "CapEff") == ["0000000000000000"])
        #expect(try status(daemon.pid, "CapPrm") == ["0000000000000000"])
        // Its threads too (gpsd session, access codes, replay...): the drop is process-wide.
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/task")
        #expect(tasks.count > 1)
        for task in tasks {
            let text = try String(contentsOfFile: "/proc/\(daemon.pid)/task/\(task)/status", encoding: .utf8)
            #expect(
                text.contains("Uid:\t65534\t65534\t65534\t65534") && text.contains("CapPrm:\t0000000000000000"),
                "thread \(task)")
        }
        // Its private gpsd runs as that user from the start, so the daemon can still stop it.
        let gpsd = try #require(daemon.gpsdPID)
        #expect(try status(gpsd, "Uid") == ["65534", "65534", "65534", "65534"])

        // Registration persists (the state directory was handed over before the drop)...
        let url =
            "tmmregister://?" + Data(#"{"application_id":"\#(appID)","returl":"app://r"}"#.utf8).base64EncodedString()
        let registered = try runTool(
            try bridgeBinary().path, ["open", url, "--print", "--runtime-dir", setup.runtimeDirectory])
        #expect(registered.status == 0, "\(registered.output)\n\(daemon.log)")
        #expect(try RegistryFile.read(setup.registryPath)?.ids == [appID])
        var info = stat()
        #expect(stat(setup.registryPath, &info) == 0 && info.st_uid == 65534, "the registry is the dropped user's")

        // ...and positions flow to a V2 client (now unlocked) through the gpsd started as nobody.
        let client = PythonTools.command(
            "peers.ws_client", ["frames", "ws://127.0.0.1:\(daemon.ports["locationV2Port"] ?? 0)/locationV2", "5"])
        let frames = try runTool(client.executable, client.arguments)
        #expect(
            frames.status == 0 && frames.output.split(separator: "\n").count == 5, "\(frames.output)\n\(daemon.log)")
        daemon.stopAndExpectCleanExit()

        // The next start, as root again, finds its directories (now nobody's) its own, and the
        // registration still there.
        let again = try BridgeDaemon(setup)
        #expect(again.log.contains("1 registered"), "\(again.log)")
        again.stopAndExpectCleanExit()
    }

    /// A Bluetooth receiver configured (an rfcomm tty, here one that is not bound): the io
    /// thread keeps CAP_NET_ADMIN, which binding rfcomm again needs, and nothing else; every
    /// other thread has no capability at all.
    @Test func aBluetoothReceiverKeepsCAPNETADMINOnTheIOThreadOnly() throws {
        let directory = try EndToEnd.makeDirectory("privileges-bluetooth")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var setup = BridgeDaemon.Setup(name: "privileges-bluetooth", directory: directory, ports: try PortSet.pick())
        setup.extraArguments = ["--config", configFile(in: directory, "user = nobody\ndevice = /dev/rfcomm7\n")]
        let daemon = try BridgeDaemon(setup)
        #expect(daemon.log.contains("dropped privileges to user nobody (uid 65534) group dialout"), "\(daemon.log)")
        #expect(daemon.log.contains("kept CAP_NET_ADMIN for Bluetooth (rfcomm)"), "\(daemon.log)")
        let netAdmin = "0000000000001000"  // bit 12
        #expect(try status(daemon.pid, "Uid") == ["65534", "65534", "65534", "65534"])
        #expect(try status(daemon.pid, "CapEff") == [netAdmin])
        #expect(try status(daemon.pid, "CapPrm") == [netAdmin])
        #expect(try status(daemon.pid, "CapInh") == ["0000000000000000"])
        for task in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/task")
        where task != "\(daemon.pid)" {
            let text = try String(contentsOfFile: "/proc/\(daemon.pid)/task/\(task)/status", encoding: .utf8)
            #expect(
                text.contains("CapPrm:\t0000000000000000") && text.contains("CapEff:\t0000000000000000"),
                "thread \(task)")
        }
        daemon.stopAndExpectCleanExit()
    }

    @Test(arguments: [
        ("user = no-such-user-tmm\n", "user 'no-such-user-tmm' does not exist"),
        ("user = nobody\ngroup = no-such-group-tmm\n", "group 'no-such-group-tmm' does not exist"),
        ("user = no:colons\n", "user must be a user or group name"),
    ])
    func anUnknownAccountExits78BeforeAnythingStarts(_ contents: String, _ message: String) throws {
        let directory = try EndToEnd.makeDirectory("privileges-unknown")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try runTool(
            try bridgeBinary().path,
            [
                "run", "--config", configFile(in: directory, contents), "--demo", "--no-discovery",
                "--state-dir", directory + "/state", "--runtime-dir", directory + "/run",
            ])
        #expect(run.status == 78, "\(run.output)")
        #expect(run.output.contains(message), "\(run.output)")
        #expect(!run.output.contains("private gpsd started"), "nothing starts with an account that cannot be used")
    }

    /// Started as root with a directory its user cannot reach after the drop (here: inside a
    /// directory only root may enter). Before, it started, dropped, and then failed every
    /// registration ("cannot save the registration: ... registry.json.tmp") while clients were
    /// told it was serving; now it checks at start, after the drop, and stops with exit 73
    /// (EX_CANTCREAT) naming the directory and the user.
    @Test(arguments: ["state", "runtime"])
    func aDirectoryItsUserCannotWriteStopsTheStartWith73(_ which: String) throws {
        let directory = try EndToEnd.makeDirectory("privileges-unwritable")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rootOnly = directory + "/root-only"
        #expect(mkdir(rootOnly, 0o700) == 0)
        let blocked = rootOnly + "/" + which
        let ports = try PortSet.pick()
        let run = try runTool(
            try bridgeBinary().path,
            [
                "run", "--config", configFile(in: directory, "user = nobody\n"), "--demo", "--no-discovery", "--listen",
                "127.0.0.1",
                "--state-dir", which == "state" ? blocked : directory + "/state",
                "--runtime-dir", which == "runtime" ? blocked : directory + "/runtime",
            ] + ports.arguments, seconds: 15)
        #expect(run.status == 73, "\(run.output)")
        #expect(
            run.output.contains(
                "\(which) directory \(blocked) is not writable by user nobody (uid 65534) after the privilege drop"),
            "\(run.output)")
        #expect(!run.output.contains("tmm-bridge: ready"), "\(run.output)")
    }

    /// A system gpsd whose control socket its user may not write (root's, 0600, in a root-only
    /// directory). Before, the first hand-off raced the drop on the input's thread: it worked
    /// when it came first, and every later one (a receiver plugged in, gpsd restarted) failed
    /// while the daemon looked healthy. Now the start stops with 77 naming the socket and user.
    @Test(.enabled(if: findExecutable("gpsd") != nil, "needs gpsd"))
    func aGPSDControlSocketItsUserCannotWriteStopsTheStartWith77() throws {
        let directory = try EndToEnd.makeDirectory("privileges-gpsd-control")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rootOnly = directory + "/root-only"
        #expect(mkdir(rootOnly, 0o700) == 0)
        let control = rootOnly + "/gpsd.sock"
        let gpsdPort = try #require(freeLoopbackPort())
        let gpsd = try Spawned(
            try #require(findExecutable("gpsd")), ["-N", "-n", "-b", "-S", String(gpsdPort), "-F", control])
        defer { gpsd.killNow() }
        #expect(
            waitUntil(10) { (try? PathStatus.of(control))?.isSocket == true },
            "gpsd made no control socket: \(gpsd.output.text)")
        let ports = try PortSet.pick()
        let run = try runTool(
            try bridgeBinary().path,
            [
                "run", "--config", configFile(in: directory, "user = nobody\n"), "--no-discovery", "--listen",
                "127.0.0.1",
                "--gpsd", "127.0.0.1:\(gpsdPort)", "--gpsd-control", control,
                "--state-dir", directory + "/state", "--runtime-dir", directory + "/runtime",
            ] + ports.arguments, seconds: 15)
        #expect(run.status == 77, "\(run.output)")
        #expect(
            run.output.contains("gpsd's control socket \(control) cannot be written by user nobody (uid 65534)"),
            "\(run.output)")
        #expect(!run.output.contains("tmm-bridge: ready"), "\(run.output)")
    }

    /// A temporary file a crash left behind while the daemon ran as root (root's, 0600) is
    /// replaced by the dropped user: before, it could not be opened and every registration
    /// failed.
    @Test func aTemporaryFileRootLeftBehindDoesNotBlockRegistrations() throws {
        let directory = try EndToEnd.makeDirectory("privileges-leftover")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var setup = BridgeDaemon.Setup(name: "privileges-leftover", directory: directory, ports: try PortSet.pick())
        setup.allowedIDs = [appID]
        setup.extraArguments = ["--demo", "--config", configFile(in: directory, "user = nobody\n")]
        #expect(mkdir(setup.stateDirectory, 0o700) == 0)
        #expect(
            FileManager.default.createFile(
                atPath: setup.registryPath + ".tmp", contents: Data("{".utf8),
                attributes: [.posixPermissions: 0o600]))
        let daemon = try BridgeDaemon(setup)
        let url =
            "tmmregister://?" + Data(#"{"application_id":"\#(appID)","returl":"app://r"}"#.utf8).base64EncodedString()
        let registered = try runTool(
            try bridgeBinary().path, ["open", url, "--print", "--runtime-dir", setup.runtimeDirectory])
        #expect(registered.status == 0, "\(registered.output)\n\(daemon.log)")
        #expect(try RegistryFile.read(setup.registryPath)?.ids == [appID], "\(daemon.log)")
        daemon.stopAndExpectCleanExit()
    }

    /// systemd's notification socket where only root may connect (a service manager's own
    /// directory): the daemon connects to it before the drop and keeps the connection, so
    /// READY=1 (sent once serving, after the drop) and STOPPING=1 still arrive. Before, every
    /// notification after the drop failed: the service never became ready.
    @Test func theNotifySocketIsReachedAfterTheDrop() throws {
        let directory = try EndToEnd.makeDirectory("privileges-notify")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rootOnly = directory + "/root-only"
        #expect(mkdir(rootOnly, 0o700) == 0)
        let notify = try NotifySocket(path: rootOnly + "/notify")
        var setup = BridgeDaemon.Setup(name: "privileges-notify", directory: directory, ports: try PortSet.pick())
        setup.extraArguments = ["--demo", "--config", configFile(in: directory, "user = nobody\n")]
        setup.environment = ["NOTIFY_SOCKET": notify.path]
        let daemon = try BridgeDaemon(setup)
        #expect(daemon.log.contains("dropped privileges to user nobody"), "\(daemon.log)")
        #expect(
            waitUntil(5) {
                notify.drain()
                return notify.messages.contains { $0.text.hasPrefix("READY=1") }
            }, "no READY=1: \(notify.messages.map(\.text))\n\(daemon.log)")
        daemon.stopAndExpectCleanExit()
        notify.drain()
        #expect(notify.messages.last?.text == "STOPPING=1", "\(notify.messages.map(\.text))")
        #expect(Set(notify.messages.map(\.pid)) == [daemon.pid])
    }
}
