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
    while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
}
