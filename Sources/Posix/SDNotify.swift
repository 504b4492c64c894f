import CLinux
import Glibc

/// systemd's sd_notify, by hand (there is no libsystemd here): one datagram to the unix socket
/// named by `$NOTIFY_SOCKET`. A leading `@` names a socket in the abstract namespace.
public enum SDNotify {
    /// The environment variable systemd sets for `Type=notify` services.
    public static let environmentVariable = "NOTIFY_SOCKET"

    /// Sends `state` (e.g. "READY=1", "WATCHDOG=1", "STATUS=…") to `$NOTIFY_SOCKET`.
    /// Returns false without doing anything when the variable is unset or empty (not run by systemd).
    @discardableResult
    public static func notify(_ state: String) throws(Errno) -> Bool {
        guard let raw = getenv(environmentVariable) else { return false }
        let path = String(cString: raw)
        guard !path.isEmpty else { return false }
        try notify(state, socketPath: path)
        return true
    }

    /// Sends `state` to the datagram socket at `path` (`@name`: abstract namespace).
    public static func notify(_ state: String, socketPath path: String) throws(Errno) {
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
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count + (abstract ? 0 : 1))

        let fd = try valueOrErrno { socket(AF_UNIX, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0) }
        let descriptor = FileDescriptor(adopting: fd)
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                message.withUnsafeBytes { bytes in
                    Result { () throws(Errno) -> Int in
                        try valueOrErrno {
                            sendto(descriptor.rawValue, bytes.baseAddress, bytes.count, CInt(MSG_NOSIGNAL), target, length)
                        }
                    }
                }
            }
        }
        descriptor.close()
        let count = try sent.get()
        guard count == message.count else { throw Errno(rawValue: EMSGSIZE) }
    }
}
