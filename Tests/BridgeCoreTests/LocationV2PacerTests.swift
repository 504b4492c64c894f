// The LocationV2 rate cap and stale rule as a state machine: epochs and instants in, what to send
// and when out. No sockets, threads, clocks or sleeps: time is whatever the test says.
import BridgeCore
import GNSS
import TestSupport
import Testing

/// An epoch at `second` (plus `milliseconds`) of the day, on 2026-12-02.
private func epoch(_ second: Int64, _ milliseconds: Int64 = 0, date: Bool = true) -> Position {
    var position = Position()
    position.time = UTCTimestamp(date: date ? CalendarDate(year: 2026, month: 12, day: 2) : nil,
                                 nanosecondsOfDay: second * 1_000_000_000 + milliseconds * 1_000_000)
    position.latitude = Double(second) + Double(milliseconds) / 1000
    return position
}

private let ms: Int64 = 1_000_000

@Suite("LocationV2 pacer", .tags(.unit))
struct LocationV2PacerTests {
    @Test func epochsAtTheCapGoOutAtOnce() {
        var pacer = LocationV2Pacer(minimumInterval: 50 * ms)  // 20 Hz
        for i in 0..<10 {
            let now = Int64(i) * 100 * ms  // 10 Hz: slower than the cap
            #expect(pacer.accept(epoch(100, Int64(i) * 100), now: now) == .accepted(replacedPending: false))
            #expect(pacer.release(now: now) == .send(epoch(100, Int64(i) * 100)))
        }
        #expect(pacer.release(now: 2000 * ms) == .nothing, "nothing pending")
    }

    /// A burst faster than the cap: the first goes out, the others replace each other while
    /// waiting, the timer is armed once for the next allowed instant, and the newest goes then.
    @Test func aBurstCoalescesToItsNewestAndTheLastIsNeverLost() {
        var pacer = LocationV2Pacer(minimumInterval: 50 * ms)
        #expect(pacer.accept(epoch(100, 0), now: 0) == .accepted(replacedPending: false))
        #expect(pacer.release(now: 0) == .send(epoch(100, 0)))
        #expect(pacer.accept(epoch(100, 10), now: 1 * ms) == .accepted(replacedPending: false))
        #expect(pacer.release(now: 1 * ms) == .armTimer(at: 50 * ms))
        for i in 2..<20 {
            #expect(pacer.accept(epoch(100, Int64(i) * 10), now: Int64(i) * ms) == .accepted(replacedPending: true))
            #expect(pacer.release(now: Int64(i) * ms) == .nothing, "the timer is armed already")
        }
        #expect(pacer.timerExpired(now: 50 * ms) == .send(epoch(100, 190)))
        #expect(pacer.release(now: 51 * ms) == .nothing)
    }

    /// A timer that fires before the allowed instant (by the caller's clock) re-arms.
    @Test func anEarlyTimerRearms() {
        var pacer = LocationV2Pacer(minimumInterval: 100 * ms)
        _ = pacer.accept(epoch(10), now: 0)
        _ = pacer.release(now: 0)
        _ = pacer.accept(epoch(10, 50), now: 10 * ms)
        #expect(pacer.release(now: 10 * ms) == .armTimer(at: 100 * ms))
        #expect(pacer.timerExpired(now: 99 * ms) == .armTimer(at: 100 * ms))
        #expect(pacer.timerExpired(now: 100 * ms) == .send(epoch(10, 50)))
    }

    /// Duplicates and a backlog replayed out of order are stale; the newest stays the latest.
    @Test func duplicatesAndOlderEpochsAreStale() {
        var pacer = LocationV2Pacer(minimumInterval: 1)
        #expect(pacer.accept(epoch(100), now: 0) == .accepted(replacedPending: false))
        #expect(pacer.accept(epoch(100), now: 1 * ms) == .stale, "the same time again")
        #expect(pacer.accept(epoch(99, 500), now: 2 * ms) == .stale, "half a second older")
        #expect(pacer.latest == epoch(100))
        #expect(pacer.accept(epoch(100, 100), now: 3 * ms) == .accepted(replacedPending: true))
    }

    /// A timeline that really goes back is followed: at once when it jumps by more than the
    /// window (a capture looping), after the window of monotonic time otherwise (a reset).
    @Test func aTimelineThatGoesBackIsFollowed() {
        var pacer = LocationV2Pacer(minimumInterval: 1)
        _ = pacer.accept(epoch(3600), now: 0)
        #expect(pacer.accept(epoch(10), now: 1 * ms) == .accepted(replacedPending: true), "an hour back: a loop")
        _ = pacer.accept(epoch(20), now: 2 * ms)
        #expect(pacer.accept(epoch(19, 800), now: 3 * ms) == .stale)
        #expect(pacer.accept(epoch(19, 800), now: 3 * ms + LocationV2Pacer.staleWindow) != .stale,
                "a second of monotonic time later the older time is taken")
    }

    /// Midnight: with dates, the next day is newer; without, 00:00:00.1 is a big jump back.
    @Test func midnight() {
        var dated = LocationV2Pacer(minimumInterval: 1)
        var position = epoch(86_399, 900)
        _ = dated.accept(position, now: 0)
        position.time = UTCTimestamp(date: CalendarDate(year: 2026, month: 12, day: 3), nanosecondsOfDay: 100 * ms)
        #expect(dated.accept(position, now: 100 * ms) == .accepted(replacedPending: true))

        var undated = LocationV2Pacer(minimumInterval: 1)
        _ = undated.accept(epoch(86_399, 900, date: false), now: 0)
        #expect(undated.accept(epoch(0, 100, date: false), now: 100 * ms) == .accepted(replacedPending: true))
    }

    @Test func epochsWithoutTimeAreNeverStale() {
        var pacer = LocationV2Pacer(minimumInterval: 1)
        _ = pacer.accept(epoch(100), now: 0)
        #expect(pacer.accept(Position(), now: 1) == .accepted(replacedPending: true))
        #expect(pacer.accept(Position(), now: 2) == .accepted(replacedPending: true))
    }
}
