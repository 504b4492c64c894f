import CLinux
import Glibc

// Connections the daemon opens itself (an NTRIP caster): a name resolved on a thread that may
// wait (getaddrinfo blocks on DNS), then a non-blocking connect the io loop finishes when the
// socket turns writable, so the io thread never waits on the network.

/// A socket address getaddrinfo produced (IPv4 or IPv6), kept as bytes so that it can cross
/// threads.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    public let family: CInt
    let storage: [UInt8]

    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        family = CInt(address.pointee.sa_family)
        storage = Array(UnsafeRawBufferPointer(start: address, count: Int(length)))
    }

    /// `192.0.2.1:2101` or `[2001:db8::1]:2101`.
    public var description: String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let status = storage.withUnsafeBytes { raw in
            getnameinfo(
                raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(storage.count), &host,
                socklen_t(host.count), &service, socklen_t(service.count), NI_NUMERICHOST | NI_NUMERICSERV)
        }
        guard status == 0 else { return "(address of family \(family))" }
        let hostText = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let serviceText = String(decoding: service.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return family == AF_INET6 ? "[\(hostText)]:\(serviceText)" : "\(hostText):\(serviceText)"
    }
}

/// Why a name did not resolve: getaddrinfo's own message ("Name or service not known").
public struct ResolveError: Error, Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let reason: String
    public var description: String { "cannot resolve \(host): \(reason)" }
}

/// The addresses of `host` for TCP `port`, in getaddrinfo's order (RFC 6724 preference). Blocks
/// on DNS: call it from a worker, never from the io thread.
public func resolveTCP(host: String, port: UInt16) throws(ResolveError) -> [SocketAddress] {
    var hints = addrinfo()
    hints.ai_socktype = CInt(SOCK_STREAM.rawValue)
    hints.ai_family = AF_UNSPEC
    hints.ai_flags = AI_ADDRCONFIG | AI_NUMERICSERV
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0, let first = list else {
        let reason = status == EAI_SYSTEM ? Errno.current.description : String(cString: gai_strerror(status))
        throw ResolveError(host: host, reason: reason)
    }
    defer { freeaddrinfo(first) }
    var addresses: [SocketAddress] = []
    var entry: UnsafeMutablePointer<addrinfo>? = first
    while let current = entry {
        if let address = current.pointee.ai_addr,
            current.pointee.ai_family == AF_INET || current.pointee.ai_family == AF_INET6
        {
            let next = SocketAddress(address, length: current.pointee.ai_addrlen)
            if !addresses.contains(next) { addresses.append(next) }
        }
        entry = current.pointee.ai_next
    }
    guard !addresses.isEmpty else { throw ResolveError(host: host, reason: "no IPv4 or IPv6 address") }
    return addresses
}

/// A TCP connection being opened without waiting: `start` returns at once; when the socket turns
/// writable the caller asks `finish()` whether it connected.
public struct OutboundConnection: ~Copyable {
    public let descriptor: FileDescriptor

    /// Starts connecting to `address` (non-blocking, close-on-exec). Returns the socket, already
    /// connected or in progress; throws what the kernel refused at once (no route, EMFILE).
    public static func start(to address: SocketAddress) throws(Errno) -> OutboundConnection {
        let kind = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue) | CInt(SOCK_NONBLOCK.rawValue)
        let fd = try valueOrErrno { socket(address.family, kind, 0) }
        let descriptor = FileDescriptor(adopting: fd)
        let started = address.storage.withUnsafeBytes { raw in
            Glibc.connect(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        if started == -1 {
            // Read errno before anything else: EINPROGRESS is the normal answer of a
            // non-blocking connect (and EINTR means the connect goes on in the background).
            let error = Errno.current
            guard error.rawValue == EINPROGRESS || error == .interrupted else { throw error }
        }
        return OutboundConnection(descriptor: descriptor)
    }

    /// After the socket turned writable: nil when connected, else why it failed (SO_ERROR:
    /// ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH).
    public func finish() -> Errno? {
        var error: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        if getsockopt(descriptor.rawValue, SOL_SOCKET, SO_ERROR, &error, &length) == -1 { return Errno.current }
        return error == 0 ? nil : Errno(rawValue: error)
    }

    /// The connected socket, for reads and writes.
    public consuming func connected() -> SocketConnection {
        SocketConnection(descriptor: FileDescriptor(adopting: descriptor.release()))
    }
}
