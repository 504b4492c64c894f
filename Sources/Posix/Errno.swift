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

    /// strerror text, e.g. "No such file or directory".
    public var description: String { String(cString: strerror(rawValue)) }
}

/// The one place that interprets `-1` + errno: retries EINTR, throws the rest.
@inline(__always)
func retryingInterrupts<R: FixedWidthInteger>(_ body: () -> R) throws(Errno) -> R {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = Errno.current
        if error != .interrupted { throw error }
    }
}
