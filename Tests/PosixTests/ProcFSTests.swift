// The /proc readers behind the gpsd trust decisions (issue 9): /proc/net/tcp rows (malformed
// input table), /proc/PID/stat, the owner of a real connection's server end, and supervised
// children (credentials, socket activation, death with the spawning thread). The other user's
// socket ends are tmmtools/peers/hold_socket.py, run as `nobody`.
import CLinux
import Foundation
import Synchronization
import Glibc
import Posix
import TestSupport
import Testing

@Suite("/proc readers", .tags(.integration))
struct ProcFSTests {
    static let header =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"

    @Test func aListenerAndAConnectionRowParse() {
        let text =
            Self.header + """

                   0: 0100007F:0B83 00000000:0000 0A 00000000:00000000 00:00000000 00000000   102        0 \
                113125 1 0000000000000000 100 0 0 10 0
                   1: 0100007F:8ECB 0100007F:B892 01 00000000:00000000 00:00000000 00000000 65534        0 \
                0 1 0000000000000000 20 4 31 12 -1
                """
        let rows = TCPSocketEntry.parse(text)
        #expect(rows.count == 2)
        let loopback: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 127, 0, 0, 1]
        #expect(
            rows.first
                == TCPSocketEntry(
                    localAddress: loopback, localPort: 2947,
                    remoteAddress: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0],
                    remotePort: 0, state: TCPSocketEntry.listening, uid: 102, inode: 113125))
        #expect(
            rows.last?.uid == 65534 && rows.last?.state == TCPSocketEntry.established && rows.last?.remotePort == 0xB892
        )
        #expect(isLoopbackAddress(loopback))
    }

    @Test func anIPv6RowParsesWordByWord() {
        // ::1 as the kernel prints it: four host-order words, the last 01000000.
        let text =
            Self.header
            + "\n   0: 00000000000000000000000001000000:0B83 00000000000000000000000000000000:0000 0A "
            + "00000000:00000000 00:00000000 00000000     0        0 4242 1 0 100 0 0 10 0\n"
        let row = TCPSocketEntry.parse(text).first
        #expect(
            row?.localAddress == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1] && row?.localPort == 2947
                && row?.uid == 0)
        #expect(row.map { isLoopbackAddress($0.localAddress) } == true)
    }

    /// Each row is malformed in one way; none may come out (a half-read row must not decide trust).
    @Test(arguments: [
        "",
        "0: 0100007F:0B83 00000000:0000 0A",  // too few fields
        "0 0100007F:0B83 00000000:0000 0A 0:0 0:0 0 102 0 1",  // no "N:" slot
        "0: 0100007F0B83 00000000:0000 0A 0:0 0:0 0 102 0 1",  // no port colon
        "0: 0100007G:0B83 00000000:0000 0A 0:0 0:0 0 102 0 1",  // not hex
        "0: 0100007F:0B8 00000000:0000 0A 0:0 0:0 0 102 0 1",  // short port
        "0: 0100007F00:0B83 00000000:0000 0A 0:0 0:0 0 102 0 1",  // 10 digits
        "0: 0100007F:0B83 00000000:0000 A 0:0 0:0 0 102 0 1",  // one-digit state
        "0: 0100007F:0B83 00000000:0000 0A 0:0 0:0 0 -1 0 1",  // negative uid
        "0: 0100007F:0B83 00000000:0000 0A 0:0 0:0 0 99999999999 0 1",  // uid overflow
        "0: 0100007F:0B83 00000000:0000 0A 0:0 0:0 0 102 0 inode",  // inode not a number
        "0: 0100007F:0B83:00 00000000:0000 0A 0:0 0:0 0 102 0 1",  // two colons
    ])
    func malformedRowsAreSkipped(_ row: String) {
        #expect(TCPSocketEntry.parse(Self.header + "\n" + row + "\n").isEmpty, "\(row)")
    }

    @Test func processStatFindsTheFieldsAfterAnAwkwardName() {
        // The command name may hold spaces and ')' : fields are counted from the last ')'.
        let stat = "4242 (evil) 1 2 (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 376200 8888 100"
        let parsed = ProcessStat.parse(stat)
        #expect(parsed?.state == "S" && parsed?.startTime == 376200, "\(String(describing: parsed))")
        #expect(ProcessStat.parse("4242 (gpsd) Z 1 2 3") == nil)
        #expect(ProcessStat.parse("no parenthesis at all") == nil)
        #expect(ProcessStat.parse("1 (a) SS 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20") == nil)
        let mine = ProcessStat.of(getpid())
        #expect(mine?.state == "R" || mine?.state == "S")
        #expect(ProcessStat.of(-1) == nil)
    }

    /// A listener run as `nobody`: the server end of our connection says so, before and after
    /// the accept; our own listener says root.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs root"))
    func theServerEndOfAConnectionNamesItsOwner() throws {
        let listener = try TCPListener.bind(address: "127.0.0.1", port: 0)
        let own = try StreamSocket.connect(loopbackPort: listener.localPort)
        #expect(try tcpPeerOwner(of: own.descriptor.rawValue) == .local(uid: 0))

        let port = try #require(freeLoopbackPort())
        let nobody = try #require(getpwnam("nobody") as UnsafeMutablePointer<passwd>?).pointee
        let listen = PythonTools.command("peers.hold_socket", ["listen", "\(port)"])
        let server = try ChildProcess(
            executable: listen.executable, arguments: listen.arguments,
            supervision: .init(user: (uid: nobody.pw_uid, gid: nobody.pw_gid)))
        defer { server.stop(graceMilliseconds: 0) }
        var owner: TCPPeerOwner?
        _ = try waitUntil(pollInterval: .milliseconds(10)) {  // until the listener is up
            guard let connected = try? StreamSocket.connect(loopbackPort: port) else { return false }
            owner = try tcpPeerOwner(of: connected.descriptor.rawValue)
            return true
        }
        #expect(owner == .local(uid: nobody.pw_uid), "the nobody listener's connection")
    }
}

extension ProcFSTests {
    /// The client end of an accepted connection, as the kernel's socket table names it: a user
    /// other than ours (`nobody`) sending from an address of 127/8 it picked, and our own.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs root"))
    func theClientEndOfAnAcceptedConnectionNamesItsOwner() throws {
        let listener = try TCPListener.bind(address: "127.0.0.1", port: 0)
        let nobody = try #require(getpwnam("nobody") as UnsafeMutablePointer<passwd>?).pointee
        let connect = PythonTools.command("peers.hold_socket", ["connect", "127.0.0.9", "\(listener.localPort)"])
        let client = try ChildProcess(
            executable: connect.executable, arguments: connect.arguments,
            supervision: .init(user: (uid: nobody.pw_uid, gid: nobody.pw_gid)))
        defer { client.stop(graceMilliseconds: 0) }
        #expect(try listener.descriptor.waitReadable(milliseconds: 5000))
        guard case .accepted(let theirs) = try listener.accept() else {
            Issue.record("the client did not connect")
            return
        }
        let identity = try tcpClientIdentity(of: theirs.descriptor.rawValue)
        #expect(identity.owner == nobody.pw_uid)
        #expect(
            identity.isLoopback && identity.address == [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 127, 0, 0, 9])

        let own = try StreamSocket.connect(loopbackPort: listener.localPort)
        #expect(try listener.descriptor.waitReadable(milliseconds: 2000))
        guard case .accepted(let ours) = try listener.accept() else {
            Issue.record("a connection was pending")
            return
        }
        #expect(try tcpClientIdentity(of: ours.descriptor.rawValue).owner == getuid())
        // A client that closed before it was looked up: the kernel says root (or has nothing).
        _ = consume own
        let closed = try tcpClientIdentity(of: ours.descriptor.rawValue)
        #expect(closed.owner == 0 || closed.owner == nil)
    }

    @Test func anIPv6ClientIsFoundToo() throws {
        guard let listener = try? TCPListener.bind(address: "::1", port: 0) else { return }  // no IPv6 here
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = listener.localPort.bigEndian
        address.sin6_addr = in6addr_loopback
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
        try #require(connected == 0)
        #expect(try listener.descriptor.waitReadable(milliseconds: 2000))
        guard case .accepted(let accepted) = try listener.accept() else {
            Issue.record("a connection was pending")
            return
        }
        let identity = try tcpClientIdentity(of: accepted.descriptor.rawValue)
        #expect(identity.owner == getuid() && identity.isLoopback)
        #expect(identity.address == [UInt8](repeating: 0, count: 15) + [1])
    }
}

@Suite("ChildProcess supervision", .tags(.integration))
struct ChildProcessSupervisionTests {
    private func output(of script: String, supervision: ChildProcess.Supervision, passing: [CInt] = []) throws -> String
    {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/out"
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o666)
        defer { Glibc.close(fd) }
        let child = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", script], logDescriptor: fd, passing: passing,
            supervision: supervision)
        #expect(child.wait() == .exited(0))
        return String(decoding: try AtomicFile.read(path) ?? [], as: UTF8.self)
    }

    @Test func socketActivationNamesTheChildsOwnPid() throws {
        var ends: [CInt] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { for fd in ends { Glibc.close(fd) } }
        let text = try output(
            of: "echo $LISTEN_PID $$ $LISTEN_FDS; ls /proc/self/fd | tr '\\n' ' '",
            supervision: .init(socketActivation: true), passing: [ends[0]])
        let fields = text.split(whereSeparator: \.isWhitespace)
        #expect(fields.count >= 3 && fields[0] == fields[1] && fields[2] == "1", "\(text)")
        let open = fields.dropFirst(3).compactMap { Int($0) }.filter { $0 > 2 }
        #expect(
            open.contains(3) && open.filter { $0 > 3 }.count <= 1, "only the passed descriptor (and ls's own): \(text)")
    }

    @Test(.enabled(if: getuid() == 0, "needs root")) func theChildTakesTheGivenCredentialsAndKeepsItsDeathSignal()
        throws
    {
        let nobody = try #require(getpwnam("nobody") as UnsafeMutablePointer<passwd>?).pointee
        let text = try output(
            of: "id -u; id -g; grep -E '^(Groups):' /proc/self/status",
            supervision: .init(deathSignal: SIGKILL, user: (uid: nobody.pw_uid, gid: nobody.pw_gid)))
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.count == 3 && lines[0] == "\(nobody.pw_uid)" && lines[1] == "\(nobody.pw_gid)", "\(text)")
        #expect(
            lines.last == "Groups:\t\(nobody.pw_gid)" || lines.last?.hasSuffix("\(nobody.pw_gid)") == true, "\(text)")
    }

    /// PR_SET_PDEATHSIG follows the thread that forked: when it ends, the child is killed.
    @Test func theChildDiesWithTheThreadThatStartedIt() throws {
        final class Started: Sendable { let pid = Mutex<pid_t?>(nil) }
        let started = Started()
        let thread = try OSThread(name: "spawner") {
            let child = try? ChildProcess(
                executable: "/bin/sleep", arguments: ["30"], supervision: .init(deathSignal: SIGKILL))
            started.pid.withLock { $0 = child?.pid }
        }
        thread.join()
        let pid = try #require(started.pid.withLock { $0 })
        // Ours to reap: it is our child whatever thread started it.
        var status: CInt = 0
        var reaped: pid_t = 0
        _ = waitUntil(timeout: .seconds(3), pollInterval: .milliseconds(10)) {
            reaped = waitpid(pid, &status, WNOHANG)
            return reaped != 0
        }
        if reaped == 0 { kill(pid, SIGKILL); _ = waitpid(pid, &status, 0) }
        #expect(reaped == pid && status & 0x7F == SIGKILL, "the child outlived its spawning thread")
    }

    @Test func aMissingExecutableIsReportedAsItsErrno() {
        #expect(throws: Errno(rawValue: ENOENT)) {
            _ = try ChildProcess(executable: "/nonexistent/gpsd", arguments: [], supervision: .init())
        }
    }
}
