// What `Type=notify`, `NotifyAccess=main` and `WatchdogSec=` in systemd/tmm-bridge.service rely
// on, seen from systemd's side: the real daemon started with NOTIFY_SOCKET pointing at a datagram
// socket of the test (as systemd does) and WATCHDOG_USEC set. It must send READY=1 once it
// serves, a STATUS= line with the receiver and its fix once positions flow (then only on change,
// at most once a second), WATCHDOG=1 at least every half period while it runs, STOPPING=1 when
// SIGTERM stops it, in that order, every message from the daemon's own pid (NotifyAccess=main would drop and log
// anything from its private gpsd), and exit 0. docs/service.md.
import Foundation
import Glibc
import Posix
import Synchronization
import TestSupport
import Testing

/// A datagram socket standing in for systemd's notification socket; records each message with
/// the sender's pid (SO_PASSCRED), as systemd reads them.
final class NotifySocket {
    let path: String
    private let fd: CInt
    private(set) var messages: [(pid: pid_t, text: String, at: Int64)] = []

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
        var on: CInt = 1
        setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, socklen_t(MemoryLayout<CInt>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            close(fd)
            throw HarnessError("bind \(path): \(String(cString: strerror(errno)))")
        }
        // Writable by all, as systemd's /run/systemd/notify: a daemon started as root (this test
        // runs as root) sends READY=1 after it dropped to its own user.
        chmod(path, 0o666)
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Reads every datagram waiting.
    func drain() {
        while true {
            var buffer = [UInt8](repeating: 0, count: 4096)
            var control = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { data in
                control.withUnsafeMutableBytes { controlBytes in
                    var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                    return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                        var header = msghdr()
                        header.msg_iov = vectorPointer
                        header.msg_iovlen = 1
                        header.msg_control = controlBytes.baseAddress
                        header.msg_controllen = controlBytes.count
                        return recvmsg(fd, &header, 0)
                    }
                }
            }
            guard count >= 0 else { return }
            // One control message: cmsghdr (size_t len, int level, int type), then struct ucred
            // (pid, uid, gid), 8-byte aligned on 64-bit Linux.
            let pid = control.withUnsafeBytes { raw -> pid_t in
                let level = raw.load(fromByteOffset: MemoryLayout<Int>.size, as: CInt.self)
                let type = raw.load(fromByteOffset: MemoryLayout<Int>.size + 4, as: CInt.self)
                guard level == SOL_SOCKET, type == 2 /* SCM_CREDENTIALS, GNU-only in Glibc */ else { return -1 }
                return raw.load(fromByteOffset: MemoryLayout<Int>.size + 8, as: pid_t.self)
            }
            messages.append((pid, String(decoding: buffer[..<count], as: UTF8.self), monotonicNanoseconds()))
        }
    }
}

@Suite(
    "sd_notify as systemd sees it", .tags(.integration),
    .enabled(if: findExecutable("gpsd") != nil, "needs gpsd for the demo receiver (scripts/install-deps.sh)"))
struct SystemdNotifyTests {
    @Test(
        """
        READY=1 once serving, STATUS= with the fix, WATCHDOG=1 well within each period, STOPPING=1 on SIGTERM, \
        all from the daemon
        """
    )
    func readyWatchdogStopping() throws {
        let directory = try EndToEnd.makeDirectory("notify")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notify = try NotifySocket(path: directory + "/notify.sock")
        let watchdogMicroseconds: Int64 = 2_000_000
        var setup = BridgeDaemon.Setup(name: "notify", directory: directory, ports: try PortSet.pick())
        setup.registration = "open"
        setup.extraArguments = ["--demo"]
        setup.environment = ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": String(watchdogMicroseconds)]
        let daemon = try BridgeDaemon(setup)

        // BridgeDaemon waited for the "ready" log line, which follows READY=1.
        notify.drain()
        let ready = try #require(
            notify.messages.first, "no notification before the daemon logged ready:\n\(daemon.log)")
        #expect(
            ready.text.hasPrefix("READY=1\n") && ready.text.contains("STATUS=serving on locationPort="), "\(ready.text)"
        )

        // Two watchdog periods of pings (one every second or so).
        let watching = monotonicNanoseconds()
        #expect(
            waitUntil(10) {
                notify.drain()
                return monotonicNanoseconds() - watching > 2 * watchdogMicroseconds * 1000
            })
        // The demo capture flows: systemd hears which receiver, its fix, its rate, the clients.
        #expect(
            waitUntil(15) {
                notify.drain()
                return notify.messages.contains {
                    $0.text.hasPrefix("STATUS=receiver /dev/pts/") && $0.text.contains(" Hz, 0 clients")
                }
            }, "no STATUS= with a fix: \(notify.messages.map(\.text))\n\(daemon.log)")
        let statuses = notify.messages.filter { $0.text.hasPrefix("STATUS=") }
        // Messages are stamped when the test drains its socket (waitUntil polls every 20 ms), not
        // when they arrived: a message that waited for a drain looks up to a poll later.
        for (earlier, later) in zip([ready] + statuses, statuses) {
            // The daemon paces by its own clock; the receive times here add scheduling jitter
            // (this test drains every 20 ms, and a loaded machine delays a read by tens of ms).
            #expect(
                later.at - earlier.at >= 900_000_000,
                "STATUS= \((later.at - earlier.at) / 1_000_000) ms after the previous one")
            #expect(later.text != earlier.text, "an unchanged STATUS= was sent again: \(later.text)")
        }
        let pings = notify.messages.dropFirst().filter { $0.text == "WATCHDOG=1" }
        #expect(pings.count >= 3, "\(notify.messages.map(\.text))")
        // systemd kills a service that is silent for a whole period; the daemon aims at half.
        var previous = ready.at
        for ping in pings {
            #expect(
                ping.at - previous < watchdogMicroseconds * 1000,
                "a gap of \((ping.at - previous) / 1_000_000) ms between pings")
            previous = ping.at
        }

        daemon.stopAndExpectCleanExit()
        notify.drain()
        #expect(notify.messages.last?.text == "STOPPING=1", "\(notify.messages.map(\.text))")
        #expect(notify.messages.filter { $0.text.contains("READY=1") }.count == 1)
        let senders = Set(notify.messages.map(\.pid))
        #expect(
            senders == [daemon.pid],
            "notifications from \(senders), the daemon is \(daemon.pid): NotifyAccess=main would drop the others")
        let known = ["READY=1", "STATUS=", "WATCHDOG=1", "STOPPING=1"]
        #expect(
            notify.messages.allSatisfy { message in known.contains { message.text.hasPrefix($0) } },
            "\(notify.messages.map(\.text))")
    }
}

/// The unit's privilege model without systemd: what `User=`, `SupplementaryGroups=dialout`,
/// `CapabilityBoundingSet=`, `NoNewPrivileges=yes`, `StateDirectory=`, `RuntimeDirectory=` and
/// `ConfigurationDirectory=` give the daemon, made by hand: directories owned by the user, the
/// three variables, and `setpriv` to start `tmm-bridge run` (no option at all: everything from the
/// default configuration file) as an unprivileged user with no capability. It must serve, start
/// its private gpsd as that user, never try a privilege drop, and stop cleanly.
@Suite(
    "the unit's privilege model, emulated with setpriv", .tags(.integration),
    .enabled(
        if: geteuid() == 0 && findExecutable("setpriv") != nil && findExecutable("gpsd") != nil,
        "needs root, setpriv (util-linux) and gpsd"))
struct UnitPrivilegeModelTests {
    @Test("as an unprivileged user with no capabilities, from systemd's directories and variables")
    func servesAsItsOwnUser() throws {
        let directory = try EndToEnd.makeDirectory("unit-model")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // nobody stands in for tmm-bridge (which this machine does not have).
        let uid: uid_t = 65534
        let gid = try #require(
            getgrnam("nogroup")?.pointee.gr_gid ?? getgrnam("nobody")?.pointee.gr_gid, "no nogroup group")
        let dialout = try #require(getgrnam("dialout")?.pointee.gr_gid, "no dialout group")
        let state = directory + "/var-lib-tmm-bridge", runtime = directory + "/run-tmm-bridge"
        let configuration = directory + "/etc-tmm-bridge"
        for (path, mode, owned) in [(state, 0o700, true), (runtime, 0o755, true), (configuration, 0o755, false)] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            chmod(path, mode_t(mode))
            if owned { chown(path, uid, gid) }
        }
        let ports = try PortSet.pick()
        var lines = [
            "# written by UnitPrivilegeModelTests", "listen = 127.0.0.1", "registration = open", "discovery = no",
            "demo = yes",
            "fallback-port-start = \(ports.fallbackStart)",
        ]
        for (key, option) in zip(PortSet.keys, PortSet.options) { lines.append("\(option) = \(ports.base[key]!)") }
        _ = FileManager.default.createFile(
            atPath: configuration + "/tmm-bridge.conf",
            contents: Data((lines.joined(separator: "\n") + "\n").utf8))
        let notify = try NotifySocket(path: directory + "/notify.sock")

        let daemon = try Spawned(
            "/usr/bin/env",
            [
                "STATE_DIRECTORY=" + state, "RUNTIME_DIRECTORY=" + runtime, "CONFIGURATION_DIRECTORY=" + configuration,
                "NOTIFY_SOCKET=" + notify.path,
                "setpriv", "--reuid", String(uid), "--regid", String(gid), "--groups", String(dialout),
                "--no-new-privs", "--bounding-set", "-all", "--inh-caps", "-all",
                try bridgeBinary().path, "run",
            ])
        defer { daemon.killNow() }
        #expect(
            waitUntil(20) { daemon.output.text.contains("tmm-bridge: ready\n") || !daemon.isRunning },
            "\(daemon.output.text)")
        #expect(
            waitUntil(5) {
                notify.drain()
                return notify.messages.contains { $0.text.hasPrefix("READY=1") }
            }, "no READY=1:\n\(daemon.output.text)")
        let log = daemon.output.text
        #expect(!log.contains("dropped privileges"), "\(log)")
        #expect(
            log.contains("control socket \(runtime)/control.sock"),
            "the runtime directory comes from RUNTIME_DIRECTORY:\n\(log)")

        // The files it made are the user's; the private gpsd runs as the user too.
        var info = stat()
        #expect(
            stat(state + "/registry.json", &info) == 0 || stat(state + "/tls", &info) == 0, "nothing in STATE_DIRECTORY"
        )
        #expect(info.st_uid == uid)
        #expect(stat(runtime + "/control.sock", &info) == 0 && info.st_uid == uid && info.st_mode & 0o777 == 0o660)
        let gpsdPID = log.split(separator: "\n").first { $0.contains("private gpsd started: pid ") }
            .flatMap { Int32($0.split(separator: " ")[5].dropLast()) }
        let gpsd = try #require(gpsdPID, "no private gpsd:\n\(log)")
        let status = String(
            decoding: FileManager.default.contents(atPath: "/proc/\(gpsd)/status") ?? Data(), as: UTF8.self)
        #expect(status.contains("\nUid:\t\(uid)\t\(uid)\t\(uid)\t\(uid)\n"), "\(status)")
        #expect(
            status.contains("\nCapEff:\t0000000000000000\n") && status.contains("\nCapBnd:\t0000000000000000\n"),
            "\(status)")
        #expect(status.contains("\nNoNewPrivs:\t1\n"), "\(status)")

        kill(daemon.pid, SIGTERM)
        #expect(daemon.wait(seconds: 15) == .exited(0), "\(daemon.output.text)")
        notify.drain()
        #expect(notify.messages.last?.text == "STOPPING=1")
        #expect(waitUntil(5) { kill(gpsd, 0) == -1 }, "the private gpsd outlived the daemon")
    }
}
