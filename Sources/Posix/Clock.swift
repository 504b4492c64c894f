import CLinux
import Glibc

/// CLOCK_MONOTONIC in nanoseconds: the clock for timeouts, backoff and latency.
public func monotonicNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// Sleeps the calling thread (only for dedicated threads and tests, never the io loop).
public func sleep(nanoseconds: Int64) {
    guard nanoseconds > 0 else { return }
    var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    var remaining = timespec()
    while true {
        // Not retried by valueOrErrno: after a signal the retry sleeps only what is left.
        do throws(Errno) {
            _ = try valueOrErrno(retryOnInterrupt: false) { nanosleep(&request, &remaining) }
            return
        } catch {
            guard error == .interrupted else { return }
            request = remaining
        }
    }
}

/// CLOCK_REALTIME in milliseconds since 1970-01-01T00:00:00Z: for timestamps people read and for
/// access codes, never for measuring intervals (it jumps when the clock is set).
public func wallClockMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// Raises the soft limit on open descriptors to the hard limit (a thousand WebSocket clients need
/// more than the customary 1024). Returns the soft limit in force afterwards.
@discardableResult
public func raiseOpenFileLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return -1 }
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit)
        _ = getrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit)
    }
    return Int(clamping: limit.rlim_cur)
}
