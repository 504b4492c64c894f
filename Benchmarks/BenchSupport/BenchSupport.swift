// What the in-process benchmarks (tmm-bench, tmm-inputcost) share: clocks, the median, fixed-point
// text for their tables, standard error. One home, so two tables never round differently.
import Glibc

public func printError(_ text: String) {
    var text = text
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// CPU time of this thread: excludes time the thread was preempted, so it is the steadier figure
/// on a shared machine. Reported next to wall time, never instead of it.
public func threadCPUNanoseconds() -> UInt64 { clockNanoseconds(CLOCK_THREAD_CPUTIME_ID) }

public func clockNanoseconds(_ clock: clockid_t) -> UInt64 {
    var ts = timespec()
    clock_gettime(clock, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// The median (the mean of the middle two for an even count).
public func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// `value` with exactly `decimals` decimals, rounded half away from zero.
public func fixed(_ value: Double, _ decimals: Int) -> String {
    var p = 1.0
    for _ in 0..<decimals { p *= 10 }
    let scaled = (value * p).rounded()
    var text = String(Int64(scaled.magnitude))
    if decimals > 0 {
        while text.count <= decimals { text = "0" + text }
        text.insert(".", at: text.index(text.endIndex, offsetBy: -decimals))
    }
    return scaled < 0 ? "-" + text : text
}
