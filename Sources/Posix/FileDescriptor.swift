import CLinux
import Glibc

/// An owned descriptor: closed exactly once, by `close()` or when it goes out of scope.
public struct FileDescriptor: ~Copyable {
    public let rawValue: CInt

    public init(adopting rawValue: CInt) {
        precondition(rawValue >= 0, "adopting an invalid descriptor")
        self.rawValue = rawValue
    }

    /// Opens `path` with `flags` (O_CLOEXEC is always added).
    public static func open(_ path: String, _ flags: CInt, mode: mode_t = 0) throws(Errno) -> FileDescriptor {
        let fd = try valueOrErrno { Glibc.open(path, flags | O_CLOEXEC, mode) }
        return FileDescriptor(adopting: fd)
    }

    /// Opens the terminal `path` to write to it beside the process that owns it (gpsd):
    /// non-blocking, so that a receiver that stops reading cannot hold the writer; never as a
    /// controlling terminal; its settings untouched.
    public static func openTerminalForWriting(_ path: String) throws(Errno) -> FileDescriptor {
        try open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK)
    }

    /// Reads up to `buffer.count` bytes; 0 at end of file. Throws `.wouldBlock` on a
    /// non-blocking descriptor with nothing to read.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try valueOrErrno { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Writes all of `bytes` (see the free function `writeAll(_:to:whenFull:)`).
    public func writeAll(_ bytes: [UInt8]) throws(Errno) {
        try Posix.writeAll(bytes.span, to: rawValue)
    }

    public func writeAll(_ text: String) throws(Errno) {
        try writeAll(Array(text.utf8))
    }

    /// Bytes waiting to be read on socket or pipe `descriptor` (ioctl FIONREAD), nil when the
    /// kernel cannot say. For a descriptor a C library reads itself (libmosquitto's socket).
    public static func readableByteCount(_ descriptor: CInt) -> Int? {
        var count: CInt = 0
        guard ioctl(descriptor, UInt(FIONREAD), &count) == 0 else { return nil }
        return Int(count)
    }

    /// Waits until readable (or hung up) for at most `milliseconds` (-1: forever).
    /// Returns false on timeout.
    public func waitReadable(milliseconds: Int32) throws(Errno) -> Bool {
        var poller = pollfd(fd: rawValue, events: Int16(POLLIN), revents: 0)
        return try valueOrErrno { poll(&poller, 1, milliseconds) } > 0
    }

    /// What `waitWritable` saw.
    public enum WriteReadiness: Equatable, Sendable {
        /// The descriptor takes more bytes, or it hung up or failed: the next write says which.
        case writable
        /// `interrupt` was signalled first.
        case interrupted
        /// Neither within the time given.
        case timedOut
    }

    /// Waits until a non-blocking descriptor takes more bytes (POLLOUT; a hang-up or an error
    /// counts too, so that the write that follows reports it), until `interrupt` is signalled (a
    /// thread's stop request: it is not cleared), or for at most `milliseconds` (-1: forever).
    public func waitWritable(milliseconds: Int32, interrupt: WakeUpEvent? = nil) throws(Errno) -> WriteReadiness {
        var pollers = [pollfd(fd: rawValue, events: Int16(POLLOUT), revents: 0)]
        if let interrupt { pollers.append(pollfd(fd: interrupt.descriptor, events: Int16(POLLIN), revents: 0)) }
        let count = nfds_t(pollers.count)
        guard try valueOrErrno({ poll(&pollers, count, milliseconds) }) > 0 else { return .timedOut }
        if pollers.count > 1, pollers[1].revents != 0 { return .interrupted }
        return .writable
    }

    /// Sets or clears O_NONBLOCK.
    public func setNonBlocking(_ on: Bool) throws(Errno) {
        let flags = try valueOrErrno { fcntl(rawValue, F_GETFL) }
        _ = try valueOrErrno { fcntl(rawValue, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK) }
    }

    /// Never retried: Linux releases the descriptor even when close reports EINTR.
    public consuming func close() {
        _ = Glibc.close(rawValue)
        discard self
    }

    /// Gives up ownership without closing.
    public consuming func release() -> CInt {
        let fd = rawValue
        discard self
        return fd
    }

    deinit { _ = Glibc.close(rawValue) }
}

/// Writes all of `bytes` to `fd`: the one write-all loop of the package. A short write continues
/// where it stopped and EINTR is retried. When a non-blocking `fd` is full (EAGAIN), `whenFull`
/// runs with the count of bytes written so far (it may wait a little) and says whether to try
/// again; if it says no, `.wouldBlock` is thrown with the rest unwritten. Any other error is
/// thrown at once.
public func writeAll(
    _ bytes: Span<UInt8>, to fd: CInt, whenFull: (_ written: Int) -> Bool = { _ in false }
) throws(Errno) {
    var offset = 0
    while offset < bytes.count {
        let rest = bytes.extracting(offset..<bytes.count)
        let written = try rest.withUnsafeBufferPointer { buffer throws(Errno) -> Int? in
            try valueOrNilIfWouldBlock { Glibc.write(fd, buffer.baseAddress, buffer.count) }
        }
        if let written {
            offset += written
        } else if !whenFull(offset) {
            throw .wouldBlock
        }
    }
}

/// Number of open descriptors of this process (for leak checks in tests and logs).
public func openDescriptorCount() -> Int {
    guard let dir = opendir("/proc/self/fd") else { return -1 }
    defer { closedir(dir) }
    var count = -1  // the directory's own descriptor
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { count += 1 }
    }
    return count
}

/// Owner and mode of `path` itself (lstat: a symbolic link is described, not followed).
public struct PathStatus: Sendable, Equatable {
    public var owner: uid_t
    public var mode: mode_t
    public var group: gid_t

    public var isSymbolicLink: Bool { mode & S_IFMT == S_IFLNK }
    public var isDirectory: Bool { mode & S_IFMT == S_IFDIR }
    public var isSocket: Bool { mode & S_IFMT == S_IFSOCK }
    /// Group or others may create and rename entries in it (as in /tmp, sticky or not).
    public var isWritableByOthers: Bool { mode & (S_IWGRP | S_IWOTH) != 0 }

    public static func of(_ path: String) throws(Errno) -> PathStatus {
        var info = stat()
        _ = try valueOrErrno { lstat(path, &info) }
        return PathStatus(owner: info.st_uid, mode: info.st_mode, group: info.st_gid)
    }
}
