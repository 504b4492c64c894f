// Issue 9, defects 2, 3 and 6, against the real `tmm-bridge run`: the bridge reads only a gpsd it
// knows. A fake gpsd (Python, run as `nobody` with setpriv, or as root) answers with a release
// of its own and a position far from the capture's, so reading it shows in the log ("connected
// to gpsd 6.6.6-fake") and on the V1 WebSocket (latitude 12.3456...).
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

private let fakeRelease = "6.6.6-fake"

/// A fake gpsd: binds PORT (retrying for up to `bind_seconds`, as an attacker waiting for the
/// port would), prints `bound PORT` or `bind failed`, then serves VERSION, DEVICES and NMEA at a
/// fake position to everyone who connects, for `serve_seconds`.
private let fakeGPSDScript = #"""
import socket, sys, time, threading
port, bind_seconds, serve_seconds = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
def nmea(body):
    c = 0
    for ch in body.encode(): c ^= ch
    return "$%s*%02X\r\n" % (body, c)
deadline = time.monotonic() + bind_seconds
server = None
while server is None:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        s.bind(("127.0.0.1", port)); s.listen(16); server = s
    except OSError as e:
        s.close()
        if time.monotonic() > deadline:
            print("bind failed:", e, flush=True); sys.exit(0)
        time.sleep(0.002)  # an attacker's retry pace for the port
print("bound", server.getsockname()[1], flush=True)
def serve(conn):
    try:
        conn.sendall(b'{"class":"VERSION","release":"6.6.6-fake","rev":"x","proto_major":3,"proto_minor":14}\r\n')
        conn.sendall(b'{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/fake","driver":"NMEA0183","activated":"2026-01-01T00:00:00.000Z","flags":1,"native":0,"bps":4800,"parity":"N","stopbits":1,"cycle":1.00}]}\r\n')
        t = 0
        while True:
            hms = "%02d%02d%02d.00" % (12, (t // 60) % 60, t % 60)
            conn.sendall((nmea("GPGGA,%s,1220.74074,N,02030.00000,E,4,12,0.7,100.0,M,40.0,M,1.0,0001" % hms)
                          + nmea("GPRMC,%s,A,1220.74074,N,02030.00000,E,0.0,0.0,010126,,,R" % hms)).encode())
            t += 1
            time.sleep(0.1)  # a 10 Hz receiver's pace
    except OSError:
        pass
server.settimeout(0.2)
end = time.monotonic() + serve_seconds
while time.monotonic() < end:
    try:
        conn, _ = server.accept()
    except socket.timeout:
        continue
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
"""#

/// Prints every V1 WebSocket message of ws://127.0.0.1:PORT/ as one line, until killed.
private let v1WatchScript = #"""
import asyncio, sys, websockets
async def main():
    while True:
        try:
            async with websockets.connect("ws://127.0.0.1:%s/" % sys.argv[1], open_timeout=5, ping_interval=None) as ws:
                while True:
                    print(await ws.recv(), flush=True)
        except Exception as e:
            print("closed:", e, flush=True)
            await asyncio.sleep(0.1)  # reconnect pace while the bridge restarts
asyncio.run(main())
"""#

/// Writes the helper scripts into `directory`.
private func writeScripts(_ directory: String) throws {
    try fakeGPSDScript.write(toFile: directory + "/fake_gpsd.py", atomically: true, encoding: .utf8)
    try v1WatchScript.write(toFile: directory + "/v1_watch.py", atomically: true, encoding: .utf8)
}

/// The fake gpsd, as `nobody` (setpriv) or as ourselves (root).
private func startFakeGPSD(_ directory: String, port: UInt16, asNobody: Bool, bindSeconds: Double = 0,
                           serveSeconds: Double = 30) throws -> Spawned {
    let script = [EndToEnd.python, "-u", directory + "/fake_gpsd.py", String(port), String(bindSeconds), String(serveSeconds)]
    if asNobody {
        return try Spawned("/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups"] + script)
    }
    return try Spawned(script[0], Array(script.dropFirst()))
}

/// A free port nobody listens on (bound and released: the fake binds it next).
private func freePort() throws -> UInt16 {
    try #require(freeLoopbackPort())
}

/// `tmm-bridge run` with fresh directories, the test's ports, and `arguments`.
private func startBridge(_ directory: String, ports: PortSet, _ arguments: [String]) throws -> Spawned {
    try Spawned(try bridgeBinary().path,
                ["run", "--no-discovery", "--registration", "open", "--state-dir", directory + "/state",
                 "--runtime-dir", directory + "/runtime", "--listen", "127.0.0.1"] + ports.arguments + arguments)
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

@Suite("gpsd trust: the bridge reads only a gpsd it knows", .tags(.integration), .serialized,
       .enabled(if: EndToEnd.isAvailable && setprivAvailable, "needs gpsd, python3-websockets, setpriv and root"))
struct GPSDTrustTests {
    /// (a) The private gpsd dies and a local user races for its port: the bind fails (the bridge
    /// holds the listener), the restarted gpsd is the bridge's own, no fake position goes out.
    @Test func aLocalUserCannotTakeOverThePrivateGPSDPort() throws {
        let directory = try EndToEnd.makeDirectory("takeover")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeScripts(directory)
        let receiver = try PtyReceiver()
        let ports = try PortSet.pick()
        let bridge = try startBridge(directory, ports: ports, ["--device", receiver.devicePath])
        defer { bridge.killNow() }
        #expect(waitUntil(20) { bridge.output.text.contains("tmm-bridge: ready\n") && privateGPSDPIDs(bridge.output.text).count == 1 },
                "\(bridge.output.text)")
        let gpsdPID = try #require(privateGPSDPIDs(bridge.output.text).first)
        let gpsdPort = try #require(bridge.output.text.split(separator: "\n").first { $0.contains("private gpsd started") }
            .flatMap { $0.split(separator: " ").drop { $0 != "port" }.dropFirst().first }.flatMap { UInt16($0.dropLast()) })
        let watcher = try Spawned(EndToEnd.python, ["-u", directory + "/v1_watch.py", String(ports.base["locationPort"]!)])
        defer { watcher.killNow() }
        #expect(waitUntil(10) { watcher.output.text.contains("latitude") }, "V1 positions before: \(watcher.output.text)")

        kill(gpsdPID, SIGKILL)
        let attacker = try startFakeGPSD(directory, port: gpsdPort, asNobody: true, bindSeconds: 3, serveSeconds: 8)
        defer { attacker.killNow() }
        #expect(waitUntil(10) { attacker.output.text.contains("bound") || attacker.output.text.contains("bind failed") },
                "attacker: \(attacker.output.text)")
        #expect(attacker.output.text.contains("bind failed"), "nobody bound the private gpsd's port: \(attacker.output.text)")
        // The bridge restarts its own gpsd and positions resume; meanwhile nothing fake arrives.
        #expect(waitUntil(10) { privateGPSDPIDs(bridge.output.text).count >= 2 }, "\(bridge.output.text)")
        let before = watcher.output.text.count
        #expect(waitUntil(15) { watcher.output.text.dropFirst(before).contains("latitude") }, "positions after the restart")
        _ = attacker.wait(seconds: 10)
        #expect(!watcher.output.text.contains("12.3456"), "a fake position reached a TMM client:\n\(watcher.output.text.suffix(2000))")
        #expect(!bridge.output.text.contains(fakeRelease), "the bridge read the fake gpsd:\n\(bridge.output.text)")
    }

    /// (b) A configured gpsd whose socket belongs to `nobody` is refused (exit 78, a clear line);
    /// the same fake run by root is read.
    @Test func aConfiguredGPSDIsReadOnlyWhenRootOrGPSDOwnsIt() throws {
        let directory = try EndToEnd.makeDirectory("configured")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeScripts(directory)
        for asNobody in [true, false] {
            let port = try freePort()
            let fake = try startFakeGPSD(directory, port: port, asNobody: asNobody, bindSeconds: 2)
            defer { fake.killNow() }
            #expect(waitUntil(10) { fake.output.text.contains("bound") }, "fake: \(fake.output.text)")
            let bridge = try startBridge(directory, ports: try PortSet.pick(), ["--gpsd", "127.0.0.1:\(port)"])
            defer { bridge.killNow() }
            if asNobody {
                let ended = bridge.wait(seconds: 20)
                #expect(ended == .exited(78), "a nobody-owned configured gpsd: \(ended.map { "\($0)" } ?? "still running")\n\(bridge.output.text)")
                #expect(bridge.output.text.contains("refusing the configured gpsd at 127.0.0.1:\(port)")
                        && bridge.output.text.contains("(nobody)"), "\(bridge.output.text)")
                #expect(!bridge.output.text.contains(fakeRelease), "\(bridge.output.text)")
            } else {
                #expect(waitUntil(20) { bridge.output.text.contains("connected to gpsd \(fakeRelease)") || !bridge.isRunning },
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
        try writeScripts(directory)
        let fake = (asNobody ? "setpriv --reuid=nobody --regid=nogroup --clear-groups " : "")
            + "\(EndToEnd.python) -u \(directory)/fake_gpsd.py 2947 2 20 > \(directory)/fake.log 2>&1 &"
        let bridge = "exec \(try bridgeBinary().path) run --no-discovery --registration open --state-dir \(directory)/state "
            + "--runtime-dir \(directory)/runtime --listen 127.0.0.1" + (demo ? " --demo" : "")
        // Waits for the fake's `bound` line (a condition, polled), then becomes the bridge.
        let script = "ip link set lo up && \(fake) for i in $(seq 200); do grep -q bound \(directory)/fake.log && break; sleep 0.05; done; "
            + "cat \(directory)/fake.log; \(bridge)"
        let run = try Spawned("/usr/bin/unshare", ["--net", "/bin/sh", "-c", script])
        defer { run.killNow() }
        #expect(waitUntil(25) { run.output.text.contains("connected to gpsd ") || !run.isRunning }, "\(run.output.text)")
        let log = run.output.text
        #expect(log.contains("bound 2947"), "the fake gpsd did not start: \(log)")
        if !asNobody && !demo {
            #expect(log.contains("using the system gpsd at 127.0.0.1:2947: its socket belongs to uid 0 (root)")
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
        #expect(waitUntil(20) { bridge.output.text.contains("tmm-bridge: ready\n") && !privateGPSDPIDs(bridge.output.text).isEmpty },
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
        let resolved = try #require(processExecutableOfNewChild(gpsdPath, ["-N", "-n", "-b", "-S", String(try freePort()), "-F", runtime + "/gpsd.sock"]))
        let stale = resolved.child
        defer { stale.stop() }
        #expect(waitUntil(5) { connectsToControl(runtime + "/gpsd.sock") }, "the stale gpsd did not start")
        let staleStat = try #require(ProcessStat.of(stale.pid))
        try "\(stale.pid) \(staleStat.startTime) \(resolved.executable)\n".write(toFile: runtime + "/gpsd.pid", atomically: true, encoding: .utf8)

        let bridge = try startBridge(directory, ports: try PortSet.pick(), ["--demo"])
        defer { bridge.killNow() }
        #expect(waitUntil(20) { bridge.output.text.contains("tmm-bridge: ready\n") }, "\(bridge.output.text)")
        #expect(waitUntil(5) { stale.poll() != nil }, "the recorded gpsd \(stale.pid) is still running:\n\(bridge.output.text)")
        #expect(bridge.output.text.contains("ending the private gpsd (pid \(stale.pid))"), "\(bridge.output.text)")
        bridge.killNow()

        // A record that matches a live pid but not its start time: pid reuse; left alone.
        let unrelated = try ChildProcess(executable: "/bin/sleep", arguments: ["60"])
        defer { unrelated.stop() }
        let unrelatedStat = try #require(ProcessStat.of(unrelated.pid))
        try "\(unrelated.pid) \(unrelatedStat.startTime + 1) \(resolved.executable)\n".write(toFile: runtime + "/gpsd.pid", atomically: true, encoding: .utf8)
        let second = try startBridge(directory, ports: try PortSet.pick(), ["--demo"])
        defer { second.killNow() }
        #expect(waitUntil(20) { second.output.text.contains("tmm-bridge: ready\n") }, "\(second.output.text)")
        #expect(unrelated.poll() == nil, "an unrelated process with a reused pid was killed")
        #expect(second.output.text.contains("recorded private gpsd pid \(unrelated.pid) is now another process: left alone"),
                "\(second.output.text)")
        second.killNow()

        // A record naming a real gpsd, but written by another user: never acted on.
        let other = try #require(processExecutableOfNewChild(
            gpsdPath, ["-N", "-n", "-b", "-S", String(try freePort()), "-F", directory + "/other-gpsd.sock"]))
        defer { other.child.stop() }
        let otherStat = try #require(ProcessStat.of(other.child.pid))
        try "\(other.child.pid) \(otherStat.startTime) \(other.executable)\n".write(toFile: runtime + "/gpsd.pid", atomically: true, encoding: .utf8)
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
private func processExecutableOfNewChild(_ executable: String, _ arguments: [String]) throws -> (child: ChildProcess, executable: String)? {
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
