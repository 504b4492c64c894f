import CLinux
import Glibc

/// A typed `errno` (swift-system's `Errno`, which Linux toolchains don't ship).
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: CInt
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// Read on the line after the failing call: any libc call may overwrite it.
    public static var current: Errno { Errno(rawValue: clinux_errno()) }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    public static let noChild = Errno(rawValue: ECHILD)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let operationNotPermitted = Errno(rawValue: EPERM)
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    public static let addressNotAvailable = Errno(rawValue: EADDRNOTAVAIL)
    public static let addressFamilyNotSupported = Errno(rawValue: EAFNOSUPPORT)
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    public static let tooManyOpenFilesInSystem = Errno(rawValue: ENFILE)
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    public static let fileExists = Errno(rawValue: EEXIST)
    /// A tty another process holds exclusively (TIOCEXCL), as gpsd holds serial receivers.
    public static let deviceBusy = Errno(rawValue: EBUSY)
    /// A protocol layer above the socket failed (a TLS transport's bad record or refused handshake).
    public static let protocolError = Errno(rawValue: EPROTO)

    /// strerror text, e.g. "No such file or directory".
    public var description: String { String(cString: strerror(rawValue)) }
}

// MARK: - The one place that interprets a C call's result and errno

/// Runs a C call that reports failure as `-1` and the reason in `errno` (the POSIX convention of
/// open, read, write, socket, poll, waitpid, nanosleep, ...): its result, or the `Errno` thrown.
///
/// Every raw call in the package goes through this (or `valueOrNilIfWouldBlock`), so errno is
/// read on the line after the call, before anything else can overwrite it (swift-system's
/// `valueOrErrno`).
///
/// - Parameters:
///   - retryOnInterrupt: call again when a signal interrupted the call (EINTR). Pass false for
///     `close` (Linux releases the descriptor even then) and for calls whose retry needs other
///     arguments (`nanosleep` with the time left).
///   - body: the call.
@inline(__always)
public func valueOrErrno<R: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ body: () -> R) throws(Errno) -> R {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = Errno.current
        if error != .interrupted || !retryOnInterrupt { throw error }
    }
}

/// `valueOrErrno` for a call on a non-blocking descriptor: nil when it would block (EAGAIN,
/// EWOULDBLOCK), so that "nothing to do now" is a value and not an error (style rule 7).
@inline(__always)
public func valueOrNilIfWouldBlock<R: FixedWidthInteger>(_ body: () -> R) throws(Errno) -> R? {
    do {
        return try valueOrErrno(body)
    } catch {
        if error == .wouldBlock { return nil }  // EWOULDBLOCK == EAGAIN on Linux
        throw error
    }
}

/// Runs a C call that reports failure as a NULL pointer and the reason in `errno` (opendir,
/// libudev's constructors): the pointer, or the `Errno` thrown.
@inline(__always)
public func pointerOrErrno<P>(_ body: () -> P?) throws(Errno) -> P {
    while true {
        if let pointer = body() { return pointer }
        let error = Errno.current
        if error != .interrupted { throw error }
    }
}
