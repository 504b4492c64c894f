import CLinux
import Glibc

/// A CLOCK_MONOTONIC timerfd: readable in a `Selector` whenever it has expired.
///
/// Non-blocking and close-on-exec. Owned: the descriptor is closed exactly once.
public struct MonotonicTimer: ~Copyable {
    public let descriptor: FileDescriptor

    /// Creates a disarmed timer.
    public init() throws(Errno) {
        let fd = try valueOrErrno { timerfd_create(CLOCK_MONOTONIC, CInt(TFD_NONBLOCK | TFD_CLOEXEC)) }
        descriptor = FileDescriptor(adopting: fd)
    }

    /// Arms the timer: first expiry after `nanoseconds` (must be > 0), then every
    /// `periodNanoseconds` (0: one-shot). Re-arming replaces the previous setting.
    public func arm(afterNanoseconds nanoseconds: Int64, periodNanoseconds: Int64 = 0) throws(Errno) {
        precondition(nanoseconds > 0, "a zero first expiry would disarm the timer; use disarm()")
        precondition(periodNanoseconds >= 0, "a negative period is meaningless")
        try set(value: nanoseconds, interval: periodNanoseconds)
    }

    /// Stops the timer (pending expirations stay readable until read).
    public func disarm() throws(Errno) {
        try set(value: 0, interval: 0)
    }

    /// Reads and clears the number of expirations since the last read; 0 when none (would block).
    public func readExpirations() throws(Errno) -> UInt64 {
        var count: UInt64 = 0
        let result = withUnsafeMutableBytes(of: &count) { raw in
            Result { () throws(Errno) -> Int in
                try valueOrErrno { Glibc.read(descriptor.rawValue, raw.baseAddress, 8) }
            }
        }
        switch result {
        case .success: return count
        case .failure(let error) where error == .wouldBlock: return 0
        case .failure(let error): throw error
        }
    }

    private func set(value: Int64, interval: Int64) throws(Errno) {
        var spec = itimerspec(it_interval: Self.timespec(interval), it_value: Self.timespec(value))
        _ = try valueOrErrno { timerfd_settime(descriptor.rawValue, 0, &spec, nil) }
    }

    private static func timespec(_ nanoseconds: Int64) -> Glibc.timespec {
        Glibc.timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    }
}
