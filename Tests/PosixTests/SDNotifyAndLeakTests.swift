import CLinux
import Glibc
import Posix
import TestSupport
import Testing

@Suite("sd_notify", .tags(.integration))
struct SDNotifyTests {
    @Test func datagramReachesPathSocket() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/notify"
        let receiver = try datagramSocket(boundTo: path)
        try SDNotify.notify("READY=1\nSTATUS=listening", socketPath: path)
        #expect(try receiver.waitReadable(milliseconds: 2000))
        #expect(try readAvailable(receiver) == Array("READY=1\nSTATUS=listening".utf8))
    }

    @Test func leadingAtMeansAbstractNamespace() throws {
        let name = "@tmm-bridge-notify-test-\(getpid())-\(monotonicNanoseconds())"
        let receiver = try datagramSocket(boundTo: name)
        try SDNotify.notify("WATCHDOG=1", socketPath: name)
        #expect(try receiver.waitReadable(milliseconds: 2000))
        #expect(try readAvailable(receiver) == Array("WATCHDOG=1".utf8))
    }

    @Test func missingSocketIsAnError() throws {
        #expect(throws: Errno.self) { try SDNotify.notify("READY=1", socketPath: "/nonexistent/tmm-notify") }
    }

    // Never setenv here: other test threads may call getenv concurrently (libudev does).
    @Test(.enabled(if: getenv("NOTIFY_SOCKET") == nil, "NOTIFY_SOCKET is set in this environment"))
    func noOpWithoutNotifySocket() throws {
        #expect(try SDNotify.notify("READY=1") == false)
    }
}

@Suite("No descriptor leaks", .tags(.integration))
struct DescriptorLeakTests {
    /// Each round opens at least ten descriptors; a leak in any path shows up 100 times over.
    /// The margin absorbs descriptors other suites running in parallel hold meanwhile.
    @Test func repeatedUseLeavesNoDescriptors() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let before = openDescriptorCount()
        for round in 0..<100 {
            let selector = try Selector()
            let timer = try MonotonicTimer()
            try selector.register(timer.descriptor.rawValue, interest: .readable)
            let listener = try TCPListener.bind(address: "127.0.0.1", port: 0)
            let client = try StreamSocket.connect(loopbackPort: listener.localPort)
            _ = try listener.descriptor.waitReadable(milliseconds: 2000)
            if case .accepted(let connection) = try listener.accept() {
                _ = try connection.write(Array("x".utf8))
            }
            _ = try? TCPListener.bind(address: "127.0.0.1", port: listener.localPort)  // fails: in use
            let unix = try UnixListener.bind(path: directory.path + "/c\(round % 3)", mode: 0o600)
            _ = try StreamSocket.connect(unixPath: unix.path)
            if case .accepted = try unix.accept() {}
            try? SDNotify.notify("x", socketPath: directory.path + "/none")  // fails: no receiver
            try selector.deregister(timer.descriptor.rawValue)
            _ = client.descriptor.rawValue
        }
        #expect(openDescriptorCount() - before < 50, "descriptors leaked")
    }
}
