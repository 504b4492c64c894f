import Glibc
import Posix
import Synchronization

// The receiver: one thread writes a synthetic RTK epoch (GGA, GST, RMC, valid checksums) into the
// pty at a fixed rate, for gpsd to read. Every epoch has its own UTC time, so a message a client
// receives names the epoch it belongs to. The writer runs for the whole benchmark, baseline and
// bridge alike, and is paced by absolute deadlines (clock_nanosleep), never by the client loop.
//
// A measurement is a `Schedule`: from receiver time `firstMilliseconds` (a whole second), `count`
// epochs at `rate` Hz. Between schedules the writer goes on at the last rate (a receiver does not
// stop), so servers see one continuous stream. Every rate divides 1000 ms into whole
// hundredths (`hhmmss.ss`), so every schedule can start on a whole second without a time jump.

/// The NMEA time of day the writer starts at (10:00:00.00 UTC); a run of the benchmark takes
/// minutes, far from midnight.
let receiverStartMilliseconds = 10 * 3_600_000

/// One measurement's epochs and their write times.
final class Schedule: Sendable {
    let rate: Int
    let firstMilliseconds: Int
    let count: Int
    /// `writeTimes[k]`: CLOCK_MONOTONIC just before epoch k's last sentence went into the pty.
    let writeTimes: Mutex<[Int64]>
    /// Epochs written so far.
    let written = Atomic<Int>(0)
    /// Epochs whose sentences did not fit into the pty (its reader is not keeping up).
    let overruns = Atomic<Int>(0)

    init(rate: Int, firstMilliseconds: Int, count: Int) {
        self.rate = rate
        self.firstMilliseconds = firstMilliseconds
        self.count = count
        writeTimes = Mutex([Int64](repeating: 0, count: count))
    }

    var stepMilliseconds: Int { 1000 / rate }
    var isComplete: Bool { written.load(ordering: .acquiring) >= count }

    /// The epoch index for receiver time `milliseconds`, if it is one of this schedule's.
    @inline(__always)
    func epoch(atMilliseconds milliseconds: Int) -> Int? {
        let offset = milliseconds - firstMilliseconds
        guard offset >= 0, offset % stepMilliseconds == 0 else { return nil }
        let k = offset / stepMilliseconds
        return k < count ? k : nil
    }
}

/// True when `rate` Hz gives a whole number of hundredths of a second per epoch.
func isSupportedRate(_ rate: Int) -> Bool {
    rate > 0 && 1000 % rate == 0 && (1000 / rate) % 10 == 0
}

final class EpochWriter: Sendable {
    private struct State {
        var rate: Int
        var pending: Schedule?
        var active: Schedule?
        var milliseconds = receiverStartMilliseconds
        var stopping = false
        var epochs = 0
    }

    private let state: Mutex<State>
    private let pty: CInt
    /// A pipe told each epoch's time of day (ms, 8 bytes) right after its last sentence was
    /// written (the floor server's trigger); -1: none.
    private let observer = Mutex<CInt>(-1)

    /// Writes into the pty controller `pty` (made non-blocking here), starting at `rate` Hz.
    init(pty: CInt, rate: Int) {
        precondition(isSupportedRate(rate), "unsupported rate \(rate) Hz")
        self.pty = pty
        _ = fcntl(pty, F_SETFL, fcntl(pty, F_GETFL) | O_NONBLOCK)
        state = Mutex(State(rate: rate))
    }

    /// Epochs written since start.
    var epochsWritten: Int { state.withLock { $0.epochs } }

    /// Queues a schedule of `count` epochs at `rate` Hz, starting at the first whole second at
    /// least one second of receiver time from now.
    func schedule(rate: Int, count: Int) -> Schedule {
        precondition(isSupportedRate(rate), "unsupported rate \(rate) Hz")
        return state.withLock { state in
            precondition(state.pending == nil && state.active == nil, "one schedule at a time")
            let first = (state.milliseconds / 1000 + 2) * 1000
            let schedule = Schedule(rate: rate, firstMilliseconds: first, count: count)
            state.pending = schedule
            return schedule
        }
    }

    func stop() { state.withLock { $0.stopping = true } }

    /// Starts (or, with nil, stops) telling the pipe `descriptor` about every epoch written.
    /// Once this returns with nil, the writer no longer touches the old descriptor.
    func setObserver(_ descriptor: CInt?) { observer.withLock { $0 = descriptor ?? -1 } }

    /// The writer thread's body: returns after `stop()`.
    func run() {
        var sentences = EpochSentences()
        var deadline = monotonicNanoseconds()
        while true {
            // Take this epoch's time, rate and schedule.
            let (milliseconds, rate, schedule, stopping) = state.withLock { state in
                if let pending = state.pending, state.milliseconds >= pending.firstMilliseconds {
                    precondition(state.milliseconds == pending.firstMilliseconds, "schedule not on an epoch")
                    state.active = pending
                    state.pending = nil
                    state.rate = pending.rate
                }
                return (state.milliseconds, state.rate, state.active, state.stopping)
            }
            if stopping { return }

            sentences.setTime(millisecondsOfDay: milliseconds)
            var complete = write(sentences.gga) && write(sentences.gst)
            let writeTime = monotonicNanoseconds()
            complete = write(sentences.rmc) && complete
            observer.withLock { fd in
                guard fd >= 0 else { return }
                var value = Int64(milliseconds)
                _ = Glibc.write(fd, &value, 8)
            }
            if let schedule, let k = schedule.epoch(atMilliseconds: milliseconds) {
                schedule.writeTimes.withLock { $0[k] = writeTime }
                if !complete { schedule.overruns.add(1, ordering: .relaxed) }
                schedule.written.store(k + 1, ordering: .releasing)
            }
            state.withLock { state in
                state.milliseconds += 1000 / rate
                state.epochs += 1
                if let active = state.active, active.isComplete { state.active = nil }
            }

            let period = Int64(1_000_000_000 / rate)
            deadline += period
            let now = monotonicNanoseconds()
            // Fell more than a period behind (machine stalled): restart the grid from now rather
            // than write a burst of late epochs.
            if deadline < now - period { deadline = now }
            var target = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
        }
    }

    /// Writes one sentence whole; false when the pty had no room (the rest is dropped).
    private func write(_ sentence: [UInt8]) -> Bool {
        sentence.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(pty, raw.baseAddress! + offset, raw.count - offset)
                if n > 0 {
                    offset += n
                } else if n == -1 && errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
    }
}

/// One epoch's three sentences as byte templates: only the time digits and the checksum change,
/// so writing an epoch allocates nothing.
struct EpochSentences {
    /// Fixed RTK values: fix quality 4 (RTK fixed), 14 satellites, centimetre GST, mode R.
    private(set) var gga = EpochSentences.template(
        "GNGGA,000000.00,4807.0380000,N,01131.0020000,E,4,14,0.62,545.400,M,47.321,M,1.0,0123")
    private(set) var gst = EpochSentences.template("GNGST,000000.00,0.012,0.011,0.009,45.0,0.011,0.009,0.018")
    private(set) var rmc = EpochSentences.template(
        "GNRMC,000000.00,A,4807.0380000,N,01131.0020000,E,0.012,,201125,,,R,V")

    /// `$` + body + `*00\r\n`; the time sits at bytes 7..<16 (`hhmmss.ss`).
    private static func template(_ body: String) -> [UInt8] {
        Array("$\(body)*00\r\n".utf8)
    }

    mutating func setTime(millisecondsOfDay milliseconds: Int) {
        let hundredths = milliseconds / 10
        Self.stamp(&gga, hundredths)
        Self.stamp(&gst, hundredths)
        Self.stamp(&rmc, hundredths)
    }

    private static let hex: InlineArray<16, UInt8> = [
        0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46,
    ]

    /// Writes `hhmmss.ss` for `hundredths` of the day at bytes 7..<16 and the checksum after `*`.
    private static func stamp(_ sentence: inout [UInt8], _ hundredths: Int) {
        func put(_ offset: Int, _ value: Int) {
            sentence[7 + offset] = UInt8(ascii: "0") + UInt8(value / 10)
            sentence[8 + offset] = UInt8(ascii: "0") + UInt8(value % 10)
        }
        put(0, hundredths / 360_000)
        put(2, hundredths / 6000 % 60)
        put(4, hundredths / 100 % 60)
        put(7, hundredths % 100)
        var sum: UInt8 = 0
        let star = sentence.count - 5
        for i in 1..<star { sum ^= sentence[i] }
        sentence[star + 1] = hex[Int(sum >> 4)]
        sentence[star + 2] = hex[Int(sum & 15)]
    }
}
