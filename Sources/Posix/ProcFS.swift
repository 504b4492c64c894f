import CLinux
import Glibc

// What /proc says about sockets and processes, for deciding whom to trust: who owns the other
// end of a loopback TCP connection (/proc/net/tcp{,6}), and whether a recorded pid is still the
// process we started (/proc/PID/stat start time, /proc/PID/exe). The text parsers are pure
// functions so their handling of malformed input is tested on its own.

/// One row of /proc/net/tcp or /proc/net/tcp6. Addresses are 16 bytes, IPv4 as ::ffff:a.b.c.d,
/// so an IPv4 connection matches the IPv6 dual-stack socket that serves it.
public struct TCPSocketEntry: Sendable, Equatable {
    public var localAddress: [UInt8]
    public var localPort: UInt16
    public var remoteAddress: [UInt8]
    public var remotePort: UInt16
    /// The kernel's TCP state number (1 ESTABLISHED, 10 LISTEN, ...).
    public var state: UInt8
    /// The socket's owner: its creator for a listener (and for a connection not yet accepted),
    /// the accepting process's user once accepted.
    public var uid: uid_t
    public var inode: UInt64

    public static let established: UInt8 = 1
    public static let listening: UInt8 = 10

    public init(
        localAddress: [UInt8], localPort: UInt16, remoteAddress: [UInt8], remotePort: UInt16, state: UInt8,
        uid: uid_t, inode: UInt64
    ) {
        self.localAddress = localAddress
        self.localPort = localPort
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
        self.state = state
        self.uid = uid
        self.inode = inode
    }

    /// The rows of a /proc/net/tcp or tcp6 text. The header and any malformed row are skipped
    /// (a row is never half-trusted).
    public static func parse(_ text: String) -> [TCPSocketEntry] {
        var entries: [TCPSocketEntry] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
            guard fields.count >= 10, fields[0].hasSuffix(":"),
                let local = endpoint(fields[1]), let remote = endpoint(fields[2]),
                fields[3].utf8.count == 2, let state = UInt8(fields[3], radix: 16),
                let uid = uid_t(fields[7]), let inode = UInt64(fields[9])
            else { continue }
            entries.append(
                TCPSocketEntry(
                    localAddress: local.address, localPort: local.port, remoteAddress: remote.address,
                    remotePort: remote.port, state: state, uid: uid, inode: inode))
        }
        return entries
    }

    /// "0100007F:0B83" (IPv4) or 32 hex digits + ":" + port (IPv6). The kernel prints each
    /// 32-bit word of the address as a host-order number, so each word's bytes come reversed
    /// (x86 and every other little-endian Linux).
    static func endpoint(_ text: Substring) -> (address: [UInt8], port: UInt16)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].utf8.count == 4, let port = UInt16(parts[1], radix: 16) else { return nil }
        let hex = Array(parts[0].utf8)
        guard hex.count == 8 || hex.count == 32 else { return nil }
        var bytes: [UInt8] = []
        for word in stride(from: 0, to: hex.count, by: 8) {
            guard let value = UInt32(String(decoding: hex[word..<word + 8], as: UTF8.self), radix: 16) else {
                return nil
            }
            withUnsafeBytes(of: value.littleEndian) { bytes += $0 }  // the word as it sat in memory
        }
        return (bytes.count == 4 ? mappedIPv4(bytes) : bytes, port)
    }
}

/// ::ffff:a.b.c.d for IPv4 bytes a.b.c.d.
func mappedIPv4(_ bytes: [UInt8]) -> [UInt8] {
    [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + bytes
}

/// Whether a 16-byte address is loopback: 127.0.0.0/8 (mapped) or ::1.
public func isLoopbackAddress(_ address: [UInt8]) -> Bool {
    guard address.count == 16 else { return false }
    if address[0..<12].elementsEqual(mappedIPv4([0, 0, 0, 0])[0..<12]) { return address[12] == 127 }
    return address[0..<15].allSatisfy { $0 == 0 } && address[15] == 1
}

/// Who serves the other end of a connected TCP socket.
public enum TCPPeerOwner: Sendable, Equatable {
    /// A socket on this machine (in this network namespace), owned by `uid`.
    case local(uid: uid_t)
    /// Not a socket of this machine: the peer is elsewhere on the network.
    case remote
    /// A loopback peer that /proc does not list (it closed already): treat as unknown.
    case unknown
}

/// The 16-byte address and port of a socket address (IPv4 as mapped), or nil for another family.
private func endpoint(of storage: sockaddr_storage) -> (address: [UInt8], port: UInt16)? {
    let family = CInt(storage.ss_family)
    return withUnsafeBytes(of: storage) { raw -> (address: [UInt8], port: UInt16)? in
        switch family {
        case AF_INET:
            let sin = raw.loadUnaligned(as: sockaddr_in.self)
            let address = withUnsafeBytes(of: sin.sin_addr) { Array($0) }
            return (mappedIPv4(address), UInt16(bigEndian: sin.sin_port))
        case AF_INET6:
            let sin6 = raw.loadUnaligned(as: sockaddr_in6.self)
            return (withUnsafeBytes(of: sin6.sin6_addr) { Array($0) }, UInt16(bigEndian: sin6.sin6_port))
        default:
            return nil
        }
    }
}

/// The owner of the socket at the other end of connected TCP socket `descriptor`: the row of
/// /proc/net/tcp{,6} whose local end is our peer and whose remote end is us. That row belongs to
/// whoever listens there (before accept) or accepted (after), so it names the real server, not
/// merely something that answered on the port.
public func tcpPeerOwner(of descriptor: CInt) throws(Errno) -> TCPPeerOwner {
    let (ours, peer) = try endpoints(of: descriptor)
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let bytes: [UInt8]?
        do { bytes = try AtomicFile.read(table) } catch { throw error.errno }
        guard let bytes else { continue }
        for entry in TCPSocketEntry.parse(String(decoding: bytes, as: UTF8.self))
        where entry.localAddress == peer.address && entry.localPort == peer.port
            && entry.remoteAddress == ours.address && entry.remotePort == ours.port
        {
            return .local(uid: entry.uid)
        }
    }
    return isLoopbackAddress(peer.address) ? .unknown : .remote
}

/// Both ends of connected TCP socket `descriptor`: (ours, the peer's).
private func endpoints(
    of descriptor: CInt
) throws(Errno)
    -> (ours: (address: [UInt8], port: UInt16), peer: (address: [UInt8], port: UInt16))
{
    func name(
        _ call: (CInt, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> CInt
    ) throws(Errno)
        -> sockaddr_storage
    {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { pointer throws(Errno) -> CInt in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(Errno) -> CInt in
                try valueOrErrno { call(descriptor, raw, &length) }
            }
        }
        return storage
    }
    guard let ours = endpoint(of: try name { getsockname($0, $1, $2) }),
        let peer = endpoint(of: try name { getpeername($0, $1, $2) })
    else { throw Errno(rawValue: EAFNOSUPPORT) }
    return (ours, peer)
}

/// Who is at the other end of a connection a listener accepted: the client's address (16
/// bytes, IPv4 mapped), whether it is a loopback address, and the owner of the client's socket
/// when that socket is on this machine.
public struct TCPClientIdentity: Sendable, Equatable {
    public var address: [UInt8]
    public var isLoopback: Bool
    /// The uid owning the client's end (nil: no such socket in this network namespace: a client
    /// on the network, or one already gone). The kernel names root for a socket its process
    /// closed already.
    public var owner: uid_t?
}

/// The client at the other end of accepted TCP socket `descriptor`, its owner asked of the
/// kernel's socket table by the connection's exact addresses and ports (sock_diag: one lookup,
/// whatever the number of sockets; a /proc/net/tcp read is a whole table). Unlike an address,
/// the owner is something a local client cannot choose.
public func tcpClientIdentity(of descriptor: CInt) throws(Errno) -> TCPClientIdentity {
    let (ours, peer) = try endpoints(of: descriptor)
    // An IPv4 client of a dual-stack listener has an IPv4 socket: look it up as one.
    let isIPv4 = peer.address[0..<12].elementsEqual(mappedIPv4([0, 0, 0, 0])[0..<12])
    let family = isIPv4 ? AF_INET : AF_INET6
    let client = isIPv4 ? Array(peer.address[12...]) : peer.address
    let server = isIPv4 ? Array(ours.address[12...]) : ours.address
    var uid: uid_t = 0
    // ENOENT: not a socket of this machine. Any other failure (a kernel without sock_diag, a
    // sandbox without netlink) names no owner either; the address then decides.
    let found =
        (try? valueOrErrno { clinux_tcp_socket_owner(family, client, peer.port, server, ours.port, &uid) }) != nil
    let owner: uid_t? = found ? uid : nil
    return TCPClientIdentity(address: peer.address, isLoopback: isLoopbackAddress(peer.address), owner: owner)
}

/// What /proc/PID/stat says that identifies a process across pid reuse.
public struct ProcessStat: Sendable, Equatable {
    /// R, S, D, Z (zombie: ended, not yet reaped), ...
    public var state: Character
    /// Clock ticks after boot at which it started (field 22).
    public var startTime: UInt64

    /// Parses the text of /proc/PID/stat. The command name (field 2) is in parentheses and may
    /// itself hold spaces and parentheses, so the fields after it are counted from the last ')'.
    public static func parse(_ text: String) -> ProcessStat? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let rest = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        // rest[0] is field 3 (state); field 22 is rest[19].
        guard rest.count >= 20, rest[0].count == 1, let state = rest[0].first, let start = UInt64(rest[19]) else {
            return nil
        }
        return ProcessStat(state: state, startTime: start)
    }

    /// The stat of process `pid`, nil when there is none.
    public static func of(_ pid: pid_t) -> ProcessStat? {
        guard pid > 0, let bytes = try? AtomicFile.read("/proc/\(pid)/stat", limit: 4096) else { return nil }
        return parse(String(decoding: bytes, as: UTF8.self))
    }
}

/// The executable of process `pid` (/proc/PID/exe), nil when it is gone or not ours to read.
public func processExecutable(_ pid: pid_t) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let capacity = buffer.count - 1
    guard
        let count = try? buffer.withUnsafeMutableBufferPointer({ raw throws(Errno) -> Int in
            try valueOrErrno { readlink("/proc/\(pid)/exe", raw.baseAddress!, capacity) }
        }), count > 0
    else { return nil }
    return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
