// Issue 9, defects 2, 3 and 6, against the real `tmm-bridge run`: the bridge reads only a gpsd it
// knows. A fake gpsd (tmmtools/peers/fake_gpsd.py, run as `nobody` with setpriv, or as root) answers with a release
// of its own and a position far from the capture's, so reading it shows in the log ("connected
// to gpsd 6.6.6-fake") and on the V1 WebSocket (latitude 12.3456...).
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

private let fakeRelease = "6.6.6-fake"

/// The fake gpsd, as `nobody` (setpriv) or as ourselves (root).
private func startFakeGPSD(
    port: UInt16, asNobody: Bool, bindSeconds: Double = 0,
    serveSeconds: Double = 30
) throws -> Spawned {
    let fake = PythonTools.argv("peers.fake_gpsd", [String(port), String(bindSeconds), String(serveSeconds)])
    if asNobody {
        return try Spawned("/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups"] + fake)
    }
    return try Spawned(fake[0], Array(fake.dropFirst()))
}

/// A free port nobody listens on (bound and released: the fake binds it next).
private func freePort() throws -> UInt16 {
    try #require(freeLoopbackPort())
}

/// `tmm-bridge run` with fresh directories, the test's ports, and `arguments`.
private func startBridge(_ directory: String, ports: PortSet, _ arguments: [String]) throws -> Spawned {
    try Spawned(
        try bridgeBinary().path,
        [
            "run", "--no-discovery", "--registration", "open", "--state-dir", directory + "/state",
            "--runtime-dir", directory + "/runtime", "--listen", "127.0.0.1",
        ] + ports.arguments + arguments)
}

/// The pid in the bridge's `private gpsd started: pid N,` lines, in order.
private func privateGPSDPIDs(_ log: String) -> [pid_t] {
    log.split(separator: "\n").filter { $0.contains("private gpsd started: pid ") }.compactMap { line in
        line.split(separator: " ").drop { $0 != "pid" }.dropFirst().first.flatMap { pid_t($0.dropLast()) }
    }
}

/// Gone, or a zombie nobody reaps (this sandbox's PID 1 does not).
private func hasEnded(_ pid: pid_t) -> Bool {
    guard let stat = ProcessStat.of(pid) else { return true }
    return stat.state == "Z"
}

private let setprivAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") && getuid() == 0

@Suite(
    "gpsd trust: the bridge reads only a gpsd it knows", .tags(.integration), .serialized,
    .enabled(if: EndToEnd.isAvailable && setprivAvailable, "needs gpsd, python3-websockets, setpriv and root"))
struct GPSDTrustTests {
    /// (a) The private gpsd dies and a local user races for its port: the bind fails (the bridge
    /// holds the listener), the restarted gpsd is the bridge's own, no fake position goes out.
    @Test func aLocalUserCannotTakeOverThePrivateGPSDPort() throws {
        let directory = try EndToEnd.makeDirectory("takeover")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let receiver = try PtyReceiver()
        let ports = try PortSet.pick()
        let bridge = try startBridge(directory, ports: ports, ["--device", receiver.devicePath])
        defer { bridge.killNow() }
        #expect(
            waitUntil(20) {
                bridge.output.text.contains("tmm-bridge: ready\n") && privateGPSDPIDs(bridge.output.text).count == 1
            },
            "\(bridge.output.text)")
        let gpsdPID = try #require(privateGPSDPIDs(bridge.output.text).first)
        let gpsdPort = try #require(
            bridge.output.text.split(separator: "\n").first { $0.contains("private gpsd started") }
                .flatMap { $0.split(separator: " ").drop { $0 != "port" }.dropFirst().first }.flatMap {
                    UInt16($0.dropLast())
                })
        let v1Watch = PythonTools.command("peers.v1_watch", [String(ports.base["locationPort"]!)])
        let watcher = try Spawned(v1Watch.executable, v1Watch.arguments)
        defer { watcher.killNow() }
        #expect(
            waitUntil(10) { watcher.output.text.contains("latitude") }, "V1 positions before: \(watcher.output.text)")

        kill(gpsdPID, SIGKILL)
        let attacker = try startFakeGPSD(port: gpsdPort, asNobody: true, bindSeconds: 3, serveSeconds: 8)
        defer { attacker.killNow() }
        #expect(
            waitUntil(10) { attacker.output.text.contains("bound") || attacker.output.text.contains("bind failed") },
            "attacker: \(attacker.output.text)")
        #expect(
            attacker.output.text.contains("bind failed"),
            "nobody bound the private gpsd's port: \(attacker.output.text)")
        // The bridge restarts its own gpsd and positions resume; meanwhile nothing fake arrives.
        #expect(waitUntil(10) { privateGPSDPIDs(bridge.output.text).count >= 2 }, "\(bridge.output.text)")
        let before = watcher.output.text.count
        #expect(
            waitUntil(15) { watcher.output.text.dropFirst(before).contains("latitude") }, "positions after the restart")
        _ = attacker.wait(seconds: 10)
        #expect(
            !watcher.output.text.contains("12.3456"),
            "a fake position reached a TMM client:\n\(watcher.output.text.suffix(2000))")
        #expect(!bridge.output.text.contains(fakeRelease), "the bridge read the fake gpsd:\n\(bridge.output.text)")
    }

    /// (b) A configured gpsd whose socket belongs to `nobody` is refused (exit 78, a clear line);
    /// the same fake run by root is read.
    @Test func aConfiguredGPSDIsReadOnlyWhenRootOrGPSDOwnsIt() throws {
        let directory = try EndToEnd.makeDirectory("configured")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for asNobody in [true, false] {
            let port = try freePort()
            let fake = try startFakeGPSD(port: port, asNobody: asNobody, bindSeconds: 2)
            defer { fake.killNow() }
            #expect(waitUntil(10) { fake.output.text.contains("bound") }, "fake: \(fake.output.text)")
            let bridge = try startBridge(directory, ports: try PortSet.pick(), ["--gpsd", "127.0.0.1:\(port)"])
            defer { bridge.killNow() }
            if asNobody {
                let ended = bridge.wait(seconds: 20)
                #expect(
                    ended == .exited(78),
                    "a nobody-owned configured gpsd: \(ended.map { "\($0)" } ?? "still running")\n\(bridge.output.text)"
                )
                #expect(
                    bridge.output.text.contains("refusing the configured gpsd at 127.0.0.1:\(port)")
                        && bridge.output.text.contains("(nobody)"), "\(bridge.output.text)")
                #expect(!bridge.output.text.contains(fakeRelease), "\(bridge.output.text)")
            } else {
                #expect(
                    waitUntil(20) {
                        bridge.output.text.contains("connected to gpsd \(fakeRelease)") || !bridge.isRunning
                    },
                    "a root-owned configured gpsd is read:\n\(bridge.output.text)")
            }
        }
    }

    /// (b, c) Inside a network namespace of its own, where 127.0.0.1:2947 is ours to fill: a
    /// `nobody` gpsd there is passed over with a clear line (a private gpsd is read instead), a
    /// root-owned one is read, and `--demo` ignores even a root-owned one.
    @Test(arguments: [(asNobody: true, demo: false), (asNobody: false, demo: false), (asNobody: false, demo: true)])
    func theSystemPortIsUsedOnlyWhenTrustedAndNeverForTheDemo(asNobody: Bool, demo: Bool) throws {
        let directory = try EndToEnd.makeDirectory("system-port")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fake =
            (asNobody ? "setpriv --reuid=nobody --regid=nogroup --clear-groups " : "")
            + PythonTools.argv("peers.fake_gpsd", ["2947", "2", "20"]).joined(separator: " ")
            + " > \(directory)/fake.log 2>&1 &"
        let bridge =
            "exec \(try bridgeBinary().path) run --no-discovery --registration open --state-dir \(directory)/state "
            + "--runtime-dir \(directory)/runtime --listen 127.0.0.1" + (demo ? " --demo" : "")
        // Waits for the fake's `bound` line (a condition, polled), then becomes the bridge.
        let script =
            "ip link set lo up && \(fake) "
            + "for i in $(seq 200); do grep -q bound \(directory)/fake.log && break; sleep 0.05; done; "
            + "cat \(directory)/fake.log; \(bridge)"
        let run = try Spawned("/usr/bin/unshare", ["--net", "/bin/sh", "-c", script])
        defer { run.killNow() }
        #expect(
            waitUntil(25) { run.output.text.contains("connected to gpsd ") || !run.isRunning }, "\(run.output.text)")
        let log = run.output.text
        #expect(log.contains("bound 2947"), "the fake gpsd did not start: \(log)")
        if !asNobody && !demo {
            #expect(
                log.contains("using the system gpsd at 127.0.0.1:2947: its socket belongs to uid 0 (root)")
                    && log.contains("connected to gpsd \(fakeRelease)") && !log.contains("private gpsd started"),
                "a root-owned gpsd on 2947 is the system gpsd:\n\(log)")
        } else {
            #expect(!log.contains("connected to gpsd \(fakeRelease)"), "the bridge read the fake gpsd on 2947:\n\(log)")
            #expect(log.contains("private gpsd started") && log.contains("connected to gpsd 3.22"), "\(log)")
        }
        if asNobody {
            #expect(log.contains("not using the gpsd at 127.0.0.1:2947") && log.contains("(nobody)"), "\(log)")
        }
        // The bridge's gpsd ends with it (parent-death signal); the fake ends after 20 s.
        run.killNow()
    }

    /// (d) SIGKILL of the bridge takes its gpsd with it.
    @Test func theBridgesGPSDDiesWithIt() throws {
        let directory = try EndToEnd.makeDirectory("orphan")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bridge = try startBridge(directory, ports: try PortSet.pick(), ["--demo"])
        defer { bridge.killNow() }
        #expect(
            waitUntil(20) {
                bridge.output.text.contains("tmm-bridge: ready\n") && !privateGPSDPIDs(bridge.output.text).isEmpty
            },
            "\(bridge.output.text)")
        let gpsd = try #require(privateGPSDPIDs(bridge.output.text).last)
        #expect(!hasEnded(gpsd))
        bridge.killNow()
        let gone = waitUntil(3) { hasEnded(gpsd) }
        if !gone { kill(gpsd, SIGKILL) }
        #expect(gone, "the private gpsd \(gpsd) outlived its SIGKILLed bridge by 3 s")
    }

    /// (d) A gpsd recorded by an earlier run is ended at start; a process whose pid merely
    /// matches a record (another start time: the pid was reused) is left alone, and so is a gpsd
    /// named by a record another user wrote.
    @Test func aStaleRecordedGPSDIsEndedAndAnUnrelatedProcessIsNot() throws {
        let directory = try EndToEnd.makeDirectory("stale")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let runtime = directory + "/runtime"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        let gpsdPath = try #require(findExecutable("gpsd"))
        let resolved = try #require(
            processExecutableOfNewChild(
                gpsdPath, ["-N", "-n", "-b", "-S", String(try freePort()), "-F", runtime + "/gpsd.sock"]))
        let stale = resolved.child
        defer { stale.stop() }
        #expect(waitUntil(5) { connectsToControl(runtime + "/gpsd.sock") }, "the stale gpsd did not start")
        let staleStat = try #require(ProcessStat.of(stale.pid))
        try "\(stale.pid) \(staleStat.startTime) \(resolved.executable)\n".write(
            toFile: runtime + "/gpsd.pid", atomically: true, encoding: .utf8)

        let bridge = try startBridge(directory, ports: try PortSet.pick(), ["--demo"])
        defer { bridge.killNow() }
        #expect(waitUntil(20) { bridge.output.text.contains("tmm-bridge: ready\n") }, "\(bridge.output.text)")
        #expect(
            waitUntil(5) { stale.poll() != nil },
            "the recorded gpsd \(stale.pid) is still running:\n\(bridge.output.text)")
        #expect(bridge.output.text.contains("ending the private gpsd (pid \(stale.pid))"), "\(bridge.output.text)")
        bridge.killNow()

        // A record that matches a live pid but not its start time: pid reuse; left alone.
        let unrelated = try ChildProcess(executable: "/bin/sleep", arguments: ["60"])
        defer { unrelated.stop() }
        let unrelatedStat = try #require(ProcessStat.of(unrelated.pid))
        try "\(unrelated.pid) \(unrelatedStat.startTime + 1) \(resolved.executable)\n".write(
            toFile: runtime + "/gpsd.pid", atomically: true, encoding: .utf8)
        let second = try startBridge(directory, ports: try PortSet.pick(), ["--demo"])
        defer { second.killNow() }
        #expect(waitUntil(20) { second.output.text.contains("tmm-bridge: ready\n") }, "\(second.output.text)")
        #expect(unrelated.poll() == nil, "an unrelated process with a reused pid was killed")
        #expect(
            second.output.text.contains(
                "recorded private gpsd pid \(unrelated.pid) is now another process: left alone"),
            "\(second.output.text)")
        second.killNow()

        // A record naming a real gpsd, but written by another user: never acted on.
        let other = try #require(
            processExecutableOfNewChild(
                gpsdPath, ["-N", "-n", "-b", "-S", String(try freePort()), "-F", directory + "/other-gpsd.sock"]))
        defer { other.child.stop() }
        let otherStat = try #require(ProcessStat.of(other.child.pid))
        try "\(other.child.pid) \(otherStat.startTime) \(other.executable)\n".write(
            toFile: runtime + "/gpsd.pid", atomically: true, encoding: .utf8)
        let nobody = try #require(getpwnam("nobody") as UnsafeMutablePointer<passwd>?).pointee
        #expect(chown(runtime + "/gpsd.pid", nobody.pw_uid, nobody.pw_gid) == 0)
        let third = try startBridge(directory, ports: try PortSet.pick(), ["--demo"])
        defer { third.killNow() }
        #expect(waitUntil(20) { third.output.text.contains("tmm-bridge: ready\n") }, "\(third.output.text)")
        #expect(other.child.poll() == nil, "a gpsd named by another user's record was killed")
        #expect(third.output.text.contains("ignoring the private gpsd record"), "\(third.output.text)")
    }
}

/// Starts `executable` as a plain child and reads back its resolved /proc/PID/exe.
private func processExecutableOfNewChild(
    _ executable: String, _ arguments: [String]
) throws -> (child: ChildProcess, executable: String)? {
    // Its output (gpsd's DBUS complaint) goes nowhere: it is not under test.
    let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
    defer { if null >= 0 { close(null) } }
    let child = try ChildProcess(executable: executable, arguments: arguments, logDescriptor: null >= 0 ? null : nil)
    guard waitUntil(5, { processExecutable(child.pid).map { $0.hasSuffix("/gpsd") } == true }),
        let resolved = processExecutable(child.pid)
    else {
        child.stop()
        return nil
    }
    return (child, resolved)
}

private func connectsToControl(_ path: String) -> Bool {
    (try? StreamSocket.connect(unixPath: path)) != nil
}
