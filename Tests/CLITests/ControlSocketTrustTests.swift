// `tmm-bridge open` hands the daemon's reply to xdg-open, so it must only believe a daemon it can
// trust and only ever open the application's own return URL. A fake daemon
// (tmmtools/peers/fake_control.py, as `nobody` with setpriv, or as root) listens where `open` is
// pointed and answers an attacker's URL.
import Foundation
import Glibc
import TestSupport
import Testing

@Suite("tmm-bridge open trusts only its own daemon", .tags(.integration), .serialized)
struct ControlSocketTrustTests {
    static let returnURL = "myapp://response"
    static let request = "trimblemobilemanager://request/tmmSocketServerPort?callback=myapp%3A%2F%2Fresponse"

    /// A control socket served by tmmtools/peers/fake_control.py as `uid` (nil: as ourselves) that
    /// answers one request with `reply` and records the request it got in `<socket>.got`.
    final class FakeDaemon {
        let socketPath: String
        let process: Spawned

        init(socketPath: String, reply: String, uid: uid_t?) throws {
            self.socketPath = socketPath
            let fake = PythonTools.argv("peers.fake_control", [socketPath, reply])
            if let uid {
                process = try Spawned(
                    "/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"] + fake)
            } else {
                process = try Spawned(fake[0], Array(fake.dropFirst()))
            }
            guard waitUntil(10, { access(socketPath, F_OK) == 0 }) else {
                process.killNow()
                throw HarnessError("the fake daemon did not listen: \(process.output.text)")
            }
        }

        /// What the daemon was sent, or nil when nothing reached it.
        var received: String? { try? String(contentsOfFile: socketPath + ".got", encoding: .utf8) }

        deinit { process.killNow() }
    }

    private func scratch(mode: mode_t) throws -> String {
        let path = "/tmp/tmm-trust-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        #expect(chmod(path, mode) == 0)
        return path
    }

    private func open(_ url: String, control: String) throws -> (status: Int32?, output: String) {
        try runTool(try bridgeBinary().path, ["open", url, "--print", "--control", control])
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to act as another user"))
    func aSocketAnotherUserPlacedInASquattedDirectoryIsRefused() throws {
        let shared = try scratch(mode: 0o1777)  // like /tmp
        defer { _ = system("rm -rf \(shared)") }
        let squatted = shared + "/tmm-bridge-0"
        #expect(system("setpriv --reuid=65534 --regid=65534 --clear-groups mkdir -m 0777 \(squatted)") == 0)
        let daemon = try FakeDaemon(
            socketPath: squatted + "/control.sock", reply: "OK - \(Self.returnURL)?evil=1", uid: 65534)
        // Before the fix, open printed (and without --print opened) the attacker's reply.
        let run = try open(Self.request, control: daemon.socketPath)
        #expect(run.status == 1, "\(run.output)")
        #expect(
            run.output.contains("refusing the daemon at \(daemon.socketPath): it runs as uid 65534"), "\(run.output)")
        #expect(!run.output.contains("evil"), "\(run.output)")
        #expect(daemon.received == nil || daemon.received == "", "the request reached an untrusted daemon")
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to act as another user"))
    func aServiceUsersSocketInADirectoryOnlyRootCouldMakeIsTrusted() throws {
        let root = try scratch(mode: 0o755)  // like /run
        defer { _ = system("rm -rf \(root)") }
        let runtime = root + "/tmm-bridge"  // like systemd's RuntimeDirectory= for User=nobody
        #expect(mkdir(runtime, 0o755) == 0 && chown(runtime, 65534, 65534) == 0)
        let daemon = try FakeDaemon(
            socketPath: runtime + "/control.sock", reply: "OK - \(Self.returnURL)?locationPort=9635", uid: 65534)
        let run = try open(Self.request, control: daemon.socketPath)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output == "\(Self.returnURL)?locationPort=9635\n", "\(run.output)")
        #expect(daemon.received == "OPEN \(Self.request)\n")
    }

    @Test func aReplyThatDoesNotGoToTheReturnURLIsNotOpened() throws {
        let dir = try scratch(mode: 0o700)
        defer { _ = system("rm -rf \(dir)") }
        for evil in ["file:///etc/passwd", "myapp://responseX?a=1", "javascript:alert(1)//\(Self.returnURL)?"] {
            let daemon = try FakeDaemon(
                socketPath: dir + "/control-\(evil.count).sock", reply: "OK - \(evil)", uid: nil)
            let run = try open(Self.request, control: daemon.socketPath)
            #expect(run.status == 1, "\(evil): \(run.output)")
            #expect(
                run.output.contains("does not go to the request's return URL myapp://response; not opened"),
                "\(run.output)")
        }
    }

    @Test(arguments: [
        (
            "trimblemobilemanager://request/tmmRegister?applicationId=12345678-1234-1234-1234-123456789abc"
                + "&callback=file:///etc/passwd",
            "file"
        ),
        ("trimblemobilemanager://request/tmmSocketServerPort?callback=smb://attacker/share", "smb"),
        // {"returl":"javascript:alert(1)"}
        ("tmmsocketserverport://?eyJyZXR1cmwiOiJqYXZhc2NyaXB0OmFsZXJ0KDEpIn0=", "javascript"),
    ])
    func aRefusedReturnURLIsRefusedBeforeTheDaemonIsAsked(_ url: String, _ scheme: String) throws {
        let run = try open(url, control: "/nonexistent/control.sock")
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("\"\(scheme):\" is not an app's scheme"), "\(run.output)")
        #expect(!run.output.contains("no tmm-bridge daemon"), "\(run.output)")
    }
}
