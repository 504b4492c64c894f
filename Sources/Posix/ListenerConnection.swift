import CLinux
import Glibc

/// An accepted, non-blocking stream connection (TCP or unix), owned by the io loop.
public struct SocketConnection: ~Copyable {
    public let descriptor: FileDescriptor

    public init(descriptor: consuming FileDescriptor) {
        self.descriptor = descriptor
    }

    /// Reads into `buffer`: `.processed(0)` at end of file, `.wouldBlock` when nothing is there.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> IOResult {
        let fd = descriptor.rawValue
        guard let count = try valueOrNilIfWouldBlock({ Glibc.read(fd, buffer.baseAddress, buffer.count) }) else {
            return .wouldBlock
        }
        return .processed(count)
    }

    /// Sends what fits of `bytes` (MSG_NOSIGNAL: a closed peer is EPIPE, never SIGPIPE).
    public func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> IOResult {
        let fd = descriptor.rawValue
        guard let count = try valueOrNilIfWouldBlock({ send(fd, bytes.baseAddress, bytes.count, CInt(MSG_NOSIGNAL)) })
        else {
            return .wouldBlock
        }
        return .processed(count)
    }

    /// Appends up to `maxCount` read bytes to `buffer` (read straight into its spare capacity).
    public func read(appendingTo buffer: inout [UInt8], maxCount: Int) throws(Errno) -> IOResult {
        precondition(maxCount > 0, "reading zero bytes cannot tell end of file from nothing")
        return try buffer.appendReading(maxCount: maxCount) { spare throws(Errno) in
            let result = try read(into: spare)
            return (result.byteCount, result)
        }
    }

    /// Sends what fits of `bytes[offset...]`.
    public func write(_ bytes: [UInt8], from offset: Int = 0) throws(Errno) -> IOResult {
        let result: Result<IOResult, Errno> = bytes.withUnsafeBytes { raw in
            Result { () throws(Errno) -> IOResult in
                try write(UnsafeRawBufferPointer(rebasing: raw[offset...]))
            }
        }
        return try result.get()
    }

    /// Turns off Nagle's algorithm: each frame goes out when written, not when the previous one
    /// is acknowledged (positions are small and latency matters more than packet count).
    public func setNoDelay() {
        var on: CInt = 1
        _ = setsockopt(descriptor.rawValue, CInt(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<CInt>.size))
    }

    /// Asks for a kernel send buffer of `bytes` (Linux doubles it for bookkeeping and turns off
    /// its automatic sizing for this socket).
    public func setSendBuffer(_ bytes: Int) {
        var size = CInt(clamping: bytes)
        _ = setsockopt(descriptor.rawValue, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<CInt>.size))
    }

    /// Shuts down the sending side (the peer reads end of file).
    public func shutdownWrite() {
        _ = Glibc.shutdown(descriptor.rawValue, CInt(SHUT_WR))
    }
}

extension IOResult {
    /// The bytes transferred (0 for `.wouldBlock`).
    public var byteCount: Int {
        if case .processed(let count) = self { count } else { 0 }
    }
}
