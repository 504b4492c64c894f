import CLinux
import Glibc

// Non-blocking listening sockets for the io loop: TCP on a literal address and the unix control
// socket. Accepted connections are non-blocking and close-on-exec (accept4), and "nothing to do
// now" is a value (`.wouldBlock`), not an error (style rule 7).

/// Why a listener could not be set up, naming the endpoint and the fix.
public struct ListenerError: Error, Sendable, CustomStringConvertible {
    /// The step that failed ("parse address", "socket", "bind", "listen", ...).
    public let operation: String
    /// `address:port` or the unix path.
    public let endpoint: String
    public let errno: Errno

    public init(operation: String, endpoint: String, errno: Errno) {
        self.operation = operation
        self.endpoint = endpoint
        self.errno = errno
    }

    /// Something else already listens there (EADDRINUSE): try another port.
    public var isAddressInUse: Bool { errno == .addressInUse }

    /// The address is not one this machine has (EADDRNOTAVAIL), or its family is not configured
    /// here (EAFNOSUPPORT: IPv6 turned off).
    public var isAddressUnavailable: Bool { errno == .addressNotAvailable || errno == .addressFamilyNotSupported }

    public var description: String {
        if operation == "parse address" {
            return "\(endpoint): not a numeric IPv4 or IPv6 address (use e.g. 127.0.0.1 or ::1)"
        }
        let hint: String
        switch errno.rawValue {
        case EADDRINUSE: hint = " (another process listens there: stop it or choose another port)"
        case EACCES: hint = " (permission denied: use a port above 1023 or check the directory's permissions)"
        case EADDRNOTAVAIL: hint = " (no local interface has that address)"
        default: hint = ""
        }
        return "\(operation) \(endpoint): \(errno)\(hint)"
    }
}

/// The outcome of a non-blocking read or write.
public enum IOResult: Sendable, Hashable {
    /// Bytes transferred; for a read, 0 means the peer closed its side (end of file).
    case processed(Int)
    /// Nothing could be transferred now; wait for the selector.
    case wouldBlock
}

/// The outcome of a non-blocking accept.
public enum AcceptResult: ~Copyable {
    case accepted(SocketConnection)
    /// No pending connection; wait for the selector.
    case wouldBlock
}

/// Accepts one connection from listening `fd`.
func acceptConnection(_ fd: CInt) throws(Errno) -> AcceptResult {
    let flags = CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
    // ECONNABORTED: the client gave up while queued; nothing to accept from it.
    while true {
        do {
            guard let accepted = try valueOrNilIfWouldBlock({ clinux_accept4(fd, nil, nil, flags) }) else {
                return .wouldBlock
            }
            return .accepted(SocketConnection(descriptor: FileDescriptor(adopting: accepted)))
        } catch {
            if error == .connectionAborted { continue }
            throw error
        }
    }
}

/// A non-blocking TCP listening socket.
public struct TCPListener: ~Copyable {
    public let descriptor: FileDescriptor
    /// The port actually bound (the kernel's choice when 0 was asked for).
    public let localPort: UInt16
    /// The address as given.
    public let address: String

    /// Binds and listens on numeric `address` ("127.0.0.1", "::1", "0.0.0.0", "::", ...) and
    /// `port` (0: any free port). SO_REUSEADDR is set (restart while old connections linger in
    /// TIME_WAIT); IPv6 sockets are IPV6_V6ONLY so the IPv4 and IPv6 listeners are separate.
    ///
    /// With `listening: false` the socket is bound but does not listen: it holds the port (a
    /// connection attempt is refused) without serving it. SO_REUSEADDR is then not set, since on
    /// Linux two sockets that both set it may share a port as long as neither listens.
    public static func bind(
        address: String, port: UInt16, backlog: CInt = 128, listening: Bool = true
    )
        throws(ListenerError) -> TCPListener
    {
        let endpoint = address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
        func fail(_ operation: String, _ errno: Errno) -> ListenerError {
            ListenerError(operation: operation, endpoint: endpoint, errno: errno)
        }
        var storage = sockaddr_storage()
        let length: socklen_t
        let family: CInt
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            family = AF_INET
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = port.bigEndian
            sin.sin_addr = v4
            withUnsafeBytes(of: &sin) { raw in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else if inet_pton(AF_INET6, address, &v6) == 1 {
            family = AF_INET6
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = port.bigEndian
            sin6.sin6_addr = v6
            withUnsafeBytes(of: &sin6) { raw in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            throw fail("parse address", Errno(rawValue: EINVAL))
        }

        let type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        let fd: CInt
        do { fd = try valueOrErrno { socket(family, type, 0) } } catch { throw fail("socket", error) }
        let descriptor = FileDescriptor(adopting: fd)
        var on: CInt = 1
        let size = socklen_t(MemoryLayout<CInt>.size)
        do {
            if listening { _ = try valueOrErrno { setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, size) } }
            if family == AF_INET6 {
                _ = try valueOrErrno { setsockopt(fd, CInt(IPPROTO_IPV6), IPV6_V6ONLY, &on, size) }
            }
        } catch { throw fail("setsockopt", error) }
        do {
            _ = try withUnsafePointer(to: &storage) { pointer throws(Errno) -> CInt in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(Errno) -> CInt in
                    try valueOrErrno { Glibc.bind(fd, raw, length) }
                }
            }
        } catch { throw fail("bind", error) }
        if listening {
            do { _ = try valueOrErrno { listen(fd, backlog) } } catch { throw fail("listen", error) }
        }

        var bound = sockaddr_storage()
        var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        do {
            _ = try withUnsafeMutablePointer(to: &bound) { pointer throws(Errno) -> CInt in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(Errno) -> CInt in
                    try valueOrErrno { getsockname(fd, raw, &boundLength) }
                }
            }
        } catch { throw fail("getsockname", error) }
        // sin_port and sin6_port sit at the same offset (2) in both layouts.
        let boundPort = withUnsafeBytes(of: &bound) { raw in
            UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        }
        return TCPListener(descriptor: descriptor, localPort: boundPort, address: address)
    }

    /// Accepts one pending connection (non-blocking, close-on-exec), or `.wouldBlock`.
    public func accept() throws(Errno) -> AcceptResult {
        try acceptConnection(descriptor.rawValue)
    }
}

/// A non-blocking unix stream listening socket (the control socket). The path is unlinked when
/// the listener goes away.
public struct UnixListener: ~Copyable {
    public let descriptor: FileDescriptor
    public let path: String

    /// Binds `path` with permission bits `mode` (e.g. 0o660) and listens. A stale socket left by
    /// a previous run (nobody accepts on it) is removed; a live one is `EADDRINUSE`; a path that
    /// exists but is not a socket is `EEXIST` (never deleted). Liveness is probed by connecting,
    /// so a live listener sees one connection that closes at once.
    public static func bind(path: String, mode: mode_t, backlog: CInt = 16) throws(ListenerError) -> UnixListener {
        func fail(_ operation: String, _ errno: Errno) -> ListenerError {
            ListenerError(operation: operation, endpoint: path, errno: errno)
        }
        var address = sockaddr_un()
        let length = clinux_sockaddr_un(&address, path)
        guard length != socklen_t(bitPattern: -1) else { throw fail("bind", Errno(rawValue: ENAMETOOLONG)) }

        let existing: PathStatus?
        do { existing = try PathStatus.of(path) } catch {
            guard error == .noSuchFileOrDirectory else { throw fail("lstat", error) }
            existing = nil
        }
        if let existing {
            guard existing.isSocket else { throw fail("bind", .fileExists) }
            do {
                _ = try StreamSocket.connect(unixPath: path)
                throw fail("bind", .addressInUse)
            } catch let error as ListenerError {
                throw error
            } catch {
                // Nobody answers: a leftover from a previous run.
                unlink(path)
            }
        }

        let type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        let fd: CInt
        do { fd = try valueOrErrno { socket(AF_UNIX, type, 0) } } catch { throw fail("socket", error) }
        let descriptor = FileDescriptor(adopting: fd)
        do {
            _ = try withUnsafePointer(to: &address) { pointer throws(Errno) -> CInt in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(Errno) -> CInt in
                    try valueOrErrno { Glibc.bind(fd, raw, length) }
                }
            }
        } catch { throw fail("bind", error) }
        // fchmod on a socket does not change the path's mode on Linux; chmod the path.
        do { _ = try valueOrErrno { chmod(path, mode) } } catch {
            unlink(path)
            throw fail("chmod", error)
        }
        do { _ = try valueOrErrno { listen(fd, backlog) } } catch {
            unlink(path)
            throw fail("listen", error)
        }
        return UnixListener(descriptor: descriptor, path: path)
    }

    /// Accepts one pending connection (non-blocking, close-on-exec), or `.wouldBlock`.
    public func accept() throws(Errno) -> AcceptResult {
        try acceptConnection(descriptor.rawValue)
    }

    deinit { unlink(path) }
}
