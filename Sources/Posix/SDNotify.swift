import CLinux
import Glibc
import Synchronization

/// systemd's sd_notify, by hand (there is no libsystemd here): one datagram to the unix socket
/// named by `$NOTIFY_SOCKET`. A leading `@` names a socket in the abstract namespace.
public enum SDNotify {
    /// The environment variable systemd sets for `Type=notify` services.
    public static let environmentVariable = "NOTIFY_SOCKET"

    /// The socket `connect()` connected to `$NOTIFY_SOCKET` (-1: none), kept for the process's
    /// life.
    private static let connection = Mutex<CInt>(-1)

    /// Connects to `$NOTIFY_SOCKET` now and sends every later notification through this
    /// connection. For a daemon that drops privileges: the kernel checks who may write to a unix
    /// socket when it connects, not when it sends, so the connection made as root still delivers
    /// after the drop to a socket only root may reach (a service manager's own directory).
    /// Returns false when the variable is unset (not run by systemd). Safe to call again.
    @discardableResult
    public static func connect() throws(Errno) -> Bool {
        guard let path = socketPath else { return false }
        let (address, length) = try socketAddress(path)
        let fd = try valueOrErrno { socket(AF_UNIX, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0) }
        let descriptor = FileDescriptor(adopting: fd)
        var target = address
        _ = try withUnsafePointer(to: &target) { pointer throws(Errno) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(Errno) in
                try valueOrErrno { Glibc.connect(descriptor.rawValue, raw, length) }
            }
        }
        let kept = descriptor.release()
        let previous = connection.withLock { current -> CInt in
            defer { current = kept }
            return current
        }
        if previous >= 0 { Glibc.close(previous) }
        return true
    }

    /// Sends `state` (e.g. "READY=1", "WATCHDOG=1", "STATUS=…") to `$NOTIFY_SOCKET`, through the
    /// connection `connect()` made if there is one (a fresh socket if that one fails: the
    /// manager may have made its socket anew). Returns false without doing anything when the
    /// variable is unset or empty (not run by systemd).
    @discardableResult
    public static func notify(_ state: String) throws(Errno) -> Bool {
        guard let path = socketPath else { return false }
        let message = Array(state.utf8)
        let sentOnConnection = connection.withLock { fd -> Bool in
            guard fd >= 0 else { return false }
            return (try? send(message, on: fd, to: nil)) != nil
        }
        if !sentOnConnection { try notify(state, socketPath: path) }
        return true
    }

    /// Sends `state` to the datagram socket at `path` (`@name`: abstract namespace).
    public static func notify(_ state: String, socketPath path: String) throws(Errno) {
        let (address, length) = try socketAddress(path)
        let fd = try valueOrErrno { socket(AF_UNIX, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0) }
        let descriptor = FileDescriptor(adopting: fd)
        try send(Array(state.utf8), on: descriptor.rawValue, to: (address, length))
    }

    private static var socketPath: String? {
        guard let raw = getenv(environmentVariable) else { return nil }
        let path = String(cString: raw)
        return path.isEmpty ? nil : path
    }

    /// The address of `path`, with its length (`@name`: abstract, no terminator).
    private static func socketAddress(_ path: String) throws(Errno) -> (sockaddr_un, socklen_t) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var name = Array(path.utf8)
        let abstract = name.first == UInt8(ascii: "@")
        if abstract { name[0] = 0 }  // abstract: sun_path starts with NUL, no terminator
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard name.count + (abstract ? 0 : 1) <= capacity else { throw Errno(rawValue: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: name)
        }
        return (address, socklen_t(MemoryLayout<sa_family_t>.size + name.count + (abstract ? 0 : 1)))
    }

    /// One datagram on `fd`, to `destination` (nil: the socket's connected peer), whole or not at all.
    private static func send(_ message: [UInt8], on fd: CInt, to destination: (sockaddr_un, socklen_t)?) throws(Errno) {
        var address = destination?.0 ?? sockaddr_un()
        let length = destination?.1 ?? 0
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                message.withUnsafeBytes { bytes in
                    Result { () throws(Errno) -> Int in
                        try valueOrErrno {
                            sendto(
                                fd, bytes.baseAddress, bytes.count, CInt(MSG_NOSIGNAL),
                                destination == nil ? nil : target, length)
                        }
                    }
                }
            }
        }
        let count = try sent.get()
        guard count == message.count else { throw Errno(rawValue: EMSGSIZE) }
    }
}
