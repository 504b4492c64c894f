import CLinux
import Glibc

/// A connected stream socket, unix or TCP (client side only).
public struct StreamSocket: ~Copyable {
    public let descriptor: FileDescriptor

    /// Adopts a connected socket.
    public init(descriptor: consuming FileDescriptor) {
        self.descriptor = descriptor
    }

    /// Connects to the unix socket at `path`.
    public static func connect(unixPath path: String) throws(Errno) -> StreamSocket {
        let fd = try valueOrErrno { socket(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0) }
        let descriptor = FileDescriptor(adopting: fd)
        var address = sockaddr_un()
        let length = clinux_sockaddr_un(&address, path)
        guard length != socklen_t(bitPattern: -1) else { throw Errno(rawValue: ENAMETOOLONG) }
        _ = try withUnsafePointer(to: &address) { (pointer) throws(Errno) -> CInt in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (raw) throws(Errno) -> CInt in
                try valueOrErrno { Glibc.connect(fd, raw, length) }
            }
        }
        return StreamSocket(descriptor: descriptor)
    }

    /// Connects to TCP `port` on IPv4 loopback.
    public static func connect(loopbackPort port: UInt16) throws(Errno) -> StreamSocket {
        let fd = try valueOrErrno { socket(AF_INET, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0) }
        let descriptor = FileDescriptor(adopting: fd)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        _ = try withUnsafePointer(to: &address) { (pointer) throws(Errno) -> CInt in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (raw) throws(Errno) -> CInt in
                try valueOrErrno { Glibc.connect(fd, raw, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        return StreamSocket(descriptor: descriptor)
    }

    /// The user id of the process that created the socket at the other end (a unix socket's
    /// SO_PEERCRED, recorded by the kernel at connect/listen: the peer cannot forge it).
    public func peerUserID() throws(Errno) -> uid_t {
        var uid: uid_t = 0
        _ = try valueOrErrno { clinux_peer_uid(descriptor.rawValue, &uid) }
        return uid
    }

    /// Reads until `terminator` (included) or EOF, up to `limit` bytes, waiting at most
    /// `milliseconds` in total. Throws `.timedOut` on timeout.
    public func readUntil(_ terminator: UInt8, limit: Int, milliseconds: Int32) throws(Errno) -> [UInt8] {
        var result: [UInt8] = []
        let deadline = monotonicNanoseconds() + Int64(milliseconds) * 1_000_000
        var chunk = [UInt8](repeating: 0, count: 512)
        while result.count < limit {
            let left = Int32(max(0, (deadline - monotonicNanoseconds()) / 1_000_000))
            guard try descriptor.waitReadable(milliseconds: left) else { throw .timedOut }
            let read: Result<Int, Errno> = chunk.withUnsafeMutableBytes { raw in
                do throws(Errno) { return .success(try descriptor.read(into: raw)) } catch { return .failure(error) }
            }
            let count = try read.get()
            if count == 0 { break }
            if let end = chunk[0..<count].firstIndex(of: terminator) {
                result += chunk[0...end]
                break
            }
            result += chunk[0..<count]
        }
        return result
    }
}

/// A TCP port on 127.0.0.1 that is free right now (the kernel's choice for port 0).
public func freeLoopbackPort() -> UInt16? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { Glibc.close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
            bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
        }
    }
    return bound ? UInt16(bigEndian: address.sin_port) : nil
}
