import CLinux
import Glibc
import Posix
import TestSupport
import Testing

@Suite("TCP and unix listeners", .tags(.integration))
struct ListenerTests {
    @Test func loopbackListenerAcceptsAndExchangesBytes() throws {
        let listener = try TCPListener.bind(address: "127.0.0.1", port: 0)
        #expect(listener.localPort != 0)
        if case .accepted = try listener.accept() { Issue.record("nothing connected yet") }

        let selector = try Selector()
        let id = try selector.register(listener.descriptor.rawValue, interest: .readable)
        let client = try StreamSocket.connect(loopbackPort: listener.localPort)
        var events: [SelectorEvent] = []
        #expect(try selector.wait(timeoutMilliseconds: 2000, into: &events) == 1)
        #expect(events.first?.registrationID == id)
        try selector.deregister(listener.descriptor.rawValue)

        switch try listener.accept() {
        case .wouldBlock:
            Issue.record("a connection was pending")
        case .accepted(let connection):
            let flags = fcntl(connection.descriptor.rawValue, F_GETFL)
            #expect(flags & O_NONBLOCK != 0, "accepted sockets are non-blocking")
            #expect(fcntl(connection.descriptor.rawValue, F_GETFD) & FD_CLOEXEC != 0)

            var buffer: [UInt8] = []
            #expect(try connection.read(appendingTo: &buffer, maxCount: 64) == .wouldBlock)
            #expect(try connection.write(Array("hello\n".utf8)) == .processed(6))
            #expect(try client.readUntil(UInt8(ascii: "\n"), limit: 64, milliseconds: 2000) == Array("hello\n".utf8))

            try client.descriptor.writeAll("ping")
            #expect(try connection.descriptor.waitReadable(milliseconds: 2000))
            #expect(try connection.read(appendingTo: &buffer, maxCount: 64) == .processed(4))
            #expect(buffer == Array("ping".utf8))

            _ = consume client  // closes it
            #expect(try connection.descriptor.waitReadable(milliseconds: 2000))
            #expect(try connection.read(appendingTo: &buffer, maxCount: 64) == .processed(0), "end of file")
        }
    }

    @Test func writeToClosedPeerThrowsInsteadOfSIGPIPE() throws {
        let listener = try TCPListener.bind(address: "127.0.0.1", port: 0)
        let client = try StreamSocket.connect(loopbackPort: listener.localPort)
        #expect(try listener.descriptor.waitReadable(milliseconds: 2000))
        guard case .accepted(let connection) = try listener.accept() else {
            Issue.record("a connection was pending")
            return
        }
        _ = consume client  // closes it
        let chunk = [UInt8](repeating: 0x41, count: 65536)
        var failure: Errno?
        // Writes until the peer's reset arrives and a write fails (a signal would end the test).
        _ = waitUntil(timeout: .seconds(2), pollInterval: .milliseconds(1)) {
            do throws(Errno) { _ = try connection.write(chunk) } catch {
                failure = error
                return true
            }
            return false
        }
        #expect(failure?.rawValue == EPIPE || failure?.rawValue == ECONNRESET)
    }

    @Test func fullSendBufferIsWouldBlockNotAnError() throws {
        let listener = try TCPListener.bind(address: "127.0.0.1", port: 0)
        let client = try StreamSocket.connect(loopbackPort: listener.localPort)
        #expect(try listener.descriptor.waitReadable(milliseconds: 2000))
        guard case .accepted(let connection) = try listener.accept() else {
            Issue.record("a connection was pending")
            return
        }
        let chunk = [UInt8](repeating: 0x42, count: 65536)
        var total = 0
        var sawWouldBlock = false
        // The client never reads: kernel buffers fill up within a few MiB.
        for _ in 0..<10_000 {
            switch try connection.write(chunk) {
            case .processed(let count): total += count
            case .wouldBlock: sawWouldBlock = true
            }
            if sawWouldBlock { break }
        }
        #expect(sawWouldBlock)
        #expect(total > 0)
        _ = client.descriptor.rawValue
    }

    @Test func secondBindOnSamePortIsAddressInUse() throws {
        let first = try TCPListener.bind(address: "127.0.0.1", port: 0)
        do {
            _ = try TCPListener.bind(address: "127.0.0.1", port: first.localPort)
            Issue.record("the port is taken")
        } catch {
            #expect(error.isAddressInUse)
            #expect(error.operation == "bind")
            #expect(error.description.contains("127.0.0.1:\(first.localPort)"))
        }
    }

    @Test func nonNumericAddressIsAClearError() {
        do {
            _ = try TCPListener.bind(address: "localhost", port: 0)
            Issue.record("only literals are accepted")
        } catch {
            #expect(!error.isAddressInUse)
            #expect(error.description.contains("localhost"))
        }
    }

    @Test(.enabled(if: hasIPv6Loopback, "needs IPv6 loopback")) func ipv6LoopbackIsV6Only() throws {
        let listener = try TCPListener.bind(address: "::1", port: 0)
        #expect(listener.localPort != 0)
        var on: CInt = 0
        var size = socklen_t(MemoryLayout<CInt>.size)
        #expect(getsockopt(listener.descriptor.rawValue, CInt(IPPROTO_IPV6), IPV6_V6ONLY, &on, &size) == 0)
        #expect(on == 1)
        // V6ONLY: the same port number is still free on IPv4.
        let v4 = try TCPListener.bind(address: "127.0.0.1", port: listener.localPort)
        #expect(v4.localPort == listener.localPort)
    }

    @Test func unixListenerModeStaleSocketAndCleanup() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/control.sock"

        // A stale socket file: bound, then closed without unlinking (a crashed previous run).
        let stale = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0)
        #expect(withUnixAddress(path) { Glibc.bind(stale, $0, $1) } == 0)
        Glibc.close(stale)

        do {
            let listener = try UnixListener.bind(path: path, mode: 0o660)
            var info = stat()
            #expect(stat(path, &info) == 0)
            #expect(info.st_mode & S_IFMT == S_IFSOCK)
            #expect(info.st_mode & 0o777 == 0o660)

            let client = try StreamSocket.connect(unixPath: path)
            #expect(try listener.descriptor.waitReadable(milliseconds: 2000))
            guard case .accepted(let connection) = try listener.accept() else {
                Issue.record("a connection was pending")
                return
            }
            try client.descriptor.writeAll("+/dev/ttyACM0\n")
            #expect(try connection.descriptor.waitReadable(milliseconds: 2000))
            var buffer: [UInt8] = []
            #expect(try connection.read(appendingTo: &buffer, maxCount: 64) == .processed(14))
            if case .accepted = try listener.accept() { Issue.record("only one client connected") }

            // A live listener is detected by connecting to it, and never replaced.
            do {
                _ = try UnixListener.bind(path: path, mode: 0o600)
                Issue.record("a live listener must not be replaced")
            } catch {
                #expect(error.isAddressInUse)
            }
            // The probe shows up as one connection that closes at once.
            #expect(try listener.descriptor.waitReadable(milliseconds: 2000))
            guard case .accepted(let probe) = try listener.accept() else {
                Issue.record("the liveness probe connected")
                return
            }
            #expect(try probe.descriptor.waitReadable(milliseconds: 2000))
            #expect(try probe.read(appendingTo: &buffer, maxCount: 64) == .processed(0))
        }
        #expect(access(path, F_OK) != 0, "the listener unlinks its path when it goes away")
    }

    @Test func unixListenerNeverDeletesARegularFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/not-a-socket"
        let fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        Glibc.close(fd)
        do {
            _ = try UnixListener.bind(path: path, mode: 0o660)
            Issue.record("a regular file is in the way")
        } catch {
            #expect(error.errno.rawValue == EEXIST)
        }
        #expect(access(path, F_OK) == 0)
    }
}
