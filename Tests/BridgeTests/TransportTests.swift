// The plain transport over a real socket pair: what the server reads and writes passes through it
// unchanged, partial writes report what the socket took, and shutting down the write side is an
// end of file for the peer.
import Glibc
import Posix
import TestSupport
import Testing

@testable import Bridge

@Suite("Transport (plain)", .tags(.unit))
struct TransportTests {
    /// A connected, non-blocking pair of unix stream sockets: the server's end as a transport,
    /// the client's as a raw descriptor (closed with `client.close()` by each test).
    private func pair() -> (PlainTransport, CInt) {
        var fds: [CInt] = [-1, -1]
        #expect(
            socketpair(
                AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0,
                &fds) == 0)
        let transport = PlainTransport(SocketConnection(descriptor: FileDescriptor(adopting: fds[0])))
        return (transport, fds[1])
    }

    @Test func bytesPassUnchangedBothWays() throws {
        let (transport, fd) = pair()
        let client = FileDescriptor(adopting: fd)
        var input: [UInt8] = []
        #expect(try transport.read(appendingTo: &input, maxCount: 16) == .wouldBlock, "nothing sent yet")
        try client.writeAll("GET / HTTP/1.1\r\n")
        #expect(try transport.read(appendingTo: &input, maxCount: 64) == .processed(16))
        #expect(String(decoding: input, as: UTF8.self) == "GET / HTTP/1.1\r\n")

        try client.writeAll([1, 2, 3])
        var scratch = [UInt8](repeating: 0, count: 8)
        #expect(try transport.read(into: &scratch) == .processed(3))
        #expect(Array(scratch.prefix(3)) == [1, 2, 3])

        #expect(try transport.write(Array("xxHTTP/1.1 200 OK\r\n".utf8), from: 2) == .processed(17))
        var reply = [UInt8](repeating: 0, count: 64)
        let count = try reply.withUnsafeMutableBytes { raw in try client.read(into: raw) }
        #expect(String(decoding: reply.prefix(count), as: UTF8.self) == "HTTP/1.1 200 OK\r\n")
        #expect(!transport.hasPendingOutput)
    }

    @Test func aFullSocketTakesPartOfAWriteThenNone() throws {
        let (transport, fd) = pair()
        let client = FileDescriptor(adopting: fd)
        let big = [UInt8](repeating: 0x41, count: 4 << 20)
        guard case .processed(let taken) = try transport.write(big, from: 0) else {
            Issue.record("an empty socket took nothing")
            return
        }
        #expect(taken > 0 && taken < big.count, "the socket buffer is smaller than 4 MiB")
        #expect(try transport.write(big, from: taken) == .wouldBlock)
        _ = client
    }

    @Test func shuttingDownTheWriteSideIsEndOfFileForThePeer() throws {
        let (transport, fd) = pair()
        let client = FileDescriptor(adopting: fd)
        transport.shutdownWrite()
        var byte = [UInt8](repeating: 0, count: 1)
        let count = try byte.withUnsafeMutableBytes { raw in try client.read(into: raw) }
        #expect(count == 0)
        // The read side still works after the shutdown (the server drains what the client sends).
        try client.writeAll("late")
        var input: [UInt8] = []
        #expect(try transport.read(appendingTo: &input, maxCount: 16) == .processed(4))
    }
}
