// The LocationV2 rate cap and the stale rule (EpochTimeline, the hub's gate) as state machines:
// epochs and instants in, what to send and when out. No sockets, threads, clocks or sleeps: time is
// whatever the test says.
import BridgeCore
import GNSS
import TMMProtocol
import TestSupport
import Testing

/// An epoch at `second` (plus `milliseconds`) of the day, on 2026-12-02.
private func epoch(_ second: Int64, _ milliseconds: Int64 = 0, date: Bool = true) -> Position {
    var position = Position()
    position.time = UTCTimestamp(
        date: date ? CalendarDate(year: 2026, month: 12, day: 2) : nil,
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
            #expect(pacer.accept(epoch(100, Int64(i) * 100), now: now) == false)
            #expect(pacer.release(now: now) == .send(epoch(100, Int64(i) * 100)))
        }
        #expect(pacer.release(now: 2000 * ms) == .nothing, "nothing pending")
    }

    /// A burst faster than the cap (20 Hz: a burst of 2): the bucket's two tokens go at once;
    /// with none left only the newest epoch waits (the older ones are coalesced), the timer is
    /// armed once for the next token, and the burst's last epoch goes out then.
    @Test func aBurstIsCappedAndItsLastIsNeverLost() {
        var pacer = LocationV2Pacer(minimumInterval: 50 * ms)
        #expect(pacer.burst == 2)
        #expect(pacer.accept(epoch(100, 0), now: 0) == false)
        #expect(pacer.release(now: 0) == .send(epoch(100, 0)))
        #expect(pacer.release(now: 0) == .nothing)
        #expect(pacer.accept(epoch(100, 10), now: 1 * ms) == false)
        #expect(pacer.release(now: 1 * ms) == .send(epoch(100, 10)))
        for i in 2..<20 {
            _ = pacer.accept(epoch(100, Int64(i) * 10), now: Int64(i) * ms)
            #expect(
                pacer.release(now: Int64(i) * ms) == (i == 2 ? .armTimer(at: 50 * ms) : .nothing),
                "no token until 50 ms; the timer is armed once")
        }
        #expect(pacer.coalesced == 17, "20 ms ... 180 ms were replaced while waiting")
        #expect(pacer.timerExpired(now: 50 * ms) == .send(epoch(100, 190)))
        #expect(pacer.release(now: 50 * ms) == .nothing)
    }

    /// A bucket that stayed full while idle gets its next token one interval after it is spent:
    /// a burst 5 ms after an idle release gets its burst now and the next epoch 50 ms later, not
    /// 45 (ServerRateTests found the early token as one frame over T × rate + burst).
    @Test func anIdleFullBucketGainsNothing() {
        var pacer = LocationV2Pacer(minimumInterval: 50 * ms)  // burst 2
        #expect(pacer.release(now: 0) == .nothing, "idle: the bucket fills")
        for i in 0..<3 { _ = pacer.accept(epoch(7, Int64(i) * 10), now: 5 * ms) }
        #expect(pacer.release(now: 5 * ms) == .send(epoch(7, 10)))
        #expect(pacer.release(now: 5 * ms) == .send(epoch(7, 20)))
        #expect(pacer.release(now: 5 * ms) == .nothing)
        _ = pacer.accept(epoch(7, 30), now: 6 * ms)
        #expect(pacer.release(now: 6 * ms) == .armTimer(at: 55 * ms))
    }

    /// Two 10 Hz epochs drained at once (the io thread was late): both are fresh, both go out.
    @Test func freshEpochsDrainedTogetherAreAllSent() {
        var pacer = LocationV2Pacer(minimumInterval: 10 * ms)  // the default 100 Hz: a burst of 10
        #expect(pacer.burst == 10)
        _ = pacer.accept(epoch(10, 0), now: 0)
        #expect(pacer.release(now: 0) == .send(epoch(10, 0)))
        #expect(pacer.accept(epoch(10, 100), now: 170 * ms) == false)
        #expect(pacer.accept(epoch(10, 200), now: 170 * ms) == false)
        #expect(pacer.release(now: 170 * ms) == .send(epoch(10, 100)))
        #expect(pacer.release(now: 170 * ms) == .send(epoch(10, 200)))
        #expect(pacer.release(now: 170 * ms) == .nothing)
    }

    /// A stall's backlog arrives at once: only its newest epochs within 250 ms (at most a burst)
    /// are sent, in order (a straggler from the backlog after them is stale: `Gate` below).
    @Test func aBacklogSendsOnlyItsFreshNewestEpochs() {
        var pacer = LocationV2Pacer(minimumInterval: 10 * ms)
        _ = pacer.accept(epoch(0), now: 0)
        _ = pacer.release(now: 0)
        for k in 0..<200 { _ = pacer.accept(epoch(1 + Int64(k) / 100, Int64(k % 100) * 10), now: 3000 * ms) }
        var sent: [Position] = []
        while case .send(let position) = pacer.release(now: 3000 * ms) { sent.append(position) }
        #expect(sent == (90..<100).map { epoch(2, Int64($0) * 10) }, "the newest ten, oldest first")
    }

    /// A flood for one second at 1,000 epochs a second: at most T × 100 Hz + 10 go out (T from
    /// the first send to the last), the flood's last epoch does, and at most one interval after
    /// the flood ended (only the newest waits when the bucket is empty).
    @Test func aSustainedFloodIsCapped() {
        var pacer = LocationV2Pacer(minimumInterval: 10 * ms)
        var sent: [Position] = []
        var lastSentAt: Int64 = 0
        var timer: Int64?
        func carry(_ release: LocationV2Pacer.Release, now: Int64) {
            var next = release
            while case .send(let position) = next {
                sent.append(position)
                lastSentAt = now
                next = pacer.release(now: now)
            }
            if case .armTimer(let at) = next { timer = at }
        }
        for i in 0..<1000 {
            let now = Int64(i) * ms
            if let at = timer, at <= now { timer = nil; carry(pacer.timerExpired(now: now), now: now) }
            _ = pacer.accept(epoch(50, Int64(i)), now: now)
            carry(pacer.release(now: now), now: now)
        }
        var now: Int64 = 1000 * ms
        while let at = timer { timer = nil; now = max(now, at); carry(pacer.timerExpired(now: now), now: now) }
        #expect(sent.count <= Int(lastSentAt / (10 * ms)) + 10, "\(sent.count) epochs in \(lastSentAt / ms) ms")
        #expect(sent.count >= 100, "\(sent.count): the cap lets 100 a second through")
        #expect(sent.last == epoch(50, 999))
        #expect(lastSentAt <= 1009 * ms, "the newest waited \(lastSentAt / ms - 999) ms")
        #expect(pacer.coalesced == 1000 - sent.count)
    }

    /// A slower cap set while the bucket is full (a REST client asking for 5 Hz under 100 Hz)
    /// takes effect at the next epoch: the tokens saved at 100 Hz are not spent at 5 Hz.
    @Test func aSlowerCapLimitsTheNextEpochs() {
        var pacer = LocationV2Pacer(minimumInterval: 10 * ms)
        #expect(pacer.burst == 10)
        _ = pacer.accept(epoch(10), now: 0)
        #expect(pacer.release(now: 0) == .send(epoch(10)))
        pacer.minimumInterval = 200 * ms
        #expect(pacer.burst == 1)
        _ = pacer.accept(epoch(10, 10), now: 10 * ms)
        #expect(pacer.release(now: 10 * ms) == .send(epoch(10, 10)), "the one token the slower bucket holds")
        _ = pacer.accept(epoch(10, 20), now: 20 * ms)
        #expect(pacer.release(now: 20 * ms) == .armTimer(at: 210 * ms), "then one epoch per 200 ms")
        #expect(pacer.timerExpired(now: 210 * ms) == .send(epoch(10, 20)))
    }

    /// The cap in force is the slower of `max-location-rate` and what a client asked for.
    @Test func theBroadcastCapIsTheSlowerOfTheConfiguredAndTheRequested() {
        var broadcast = LocationV2Broadcast(configuredMinimumInterval: 10 * ms)
        #expect(broadcast.minimumInterval == 10 * ms)
        broadcast.requestedInterval = 200 * ms
        #expect(broadcast.minimumInterval == 200 * ms)
        broadcast.requestedInterval = 1 * ms
        #expect(broadcast.minimumInterval == 10 * ms, "never faster than max-location-rate")
        broadcast.configuredMinimumInterval = 500 * ms
        #expect(broadcast.minimumInterval == 500 * ms)
        broadcast.requestedInterval = nil
        #expect(broadcast.minimumInterval == 500 * ms)
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
        var pacer = Gate()
        #expect(pacer.accept(epoch(100), now: 0) == .accepted(replacedPending: false))
        #expect(pacer.accept(epoch(100), now: 1 * ms) == .stale, "the same time again")
        #expect(pacer.accept(epoch(99, 500), now: 2 * ms) == .stale, "half a second older")
        #expect(pacer.timeline.latest == epoch(100))
        #expect(pacer.accept(epoch(100, 100), now: 3 * ms) == .accepted(replacedPending: false), "fresh: both wait")
    }

    /// A timeline that really goes back is followed: at once when it jumps by more than the
    /// window (a capture looping), after the window of monotonic time otherwise (a reset).
    @Test func aTimelineThatGoesBackIsFollowed() {
        var pacer = Gate()
        _ = pacer.accept(epoch(3600), now: 0)
        #expect(pacer.accept(epoch(10), now: 1 * ms) == .accepted(replacedPending: true), "an hour back: a loop")
        _ = pacer.accept(epoch(20), now: 2 * ms)
        #expect(pacer.accept(epoch(19, 800), now: 3 * ms) == .stale)
        #expect(
            pacer.accept(epoch(19, 800), now: 3 * ms + EpochTimeline.staleWindow) != .stale,
            "a second of monotonic time later the older time is taken")
    }

    /// Midnight: with dates, the next day is newer; without, 00:00:00.1 is a big jump back.
    @Test func midnight() {
        var dated = Gate()
        var position = epoch(86_399, 900)
        _ = dated.accept(position, now: 0)
        position.time = UTCTimestamp(date: CalendarDate(year: 2026, month: 12, day: 3), nanosecondsOfDay: 100 * ms)
        #expect(dated.accept(position, now: 100 * ms) == .accepted(replacedPending: false), "200 ms later: both wait")

        var undated = Gate()
        _ = undated.accept(epoch(86_399, 900, date: false), now: 0)
        #expect(
            undated.accept(epoch(0, 100, date: false), now: 100 * ms) == .accepted(replacedPending: true),
            "a day back: the one before the jump is dropped")
    }

    @Test func epochsWithoutTimeAreNeverStale() {
        var pacer = Gate()
        _ = pacer.accept(epoch(100), now: 0)
        #expect(pacer.accept(Position(), now: 1) == .accepted(replacedPending: false))
        #expect(pacer.accept(Position(), now: 2) == .accepted(replacedPending: false))
    }
}

/// The hub's composition: the timeline's stale rule, then V2's pacer (what the V2 output gets).
private struct Gate {
    enum Outcome: Equatable {
        case accepted(replacedPending: Bool)
        case stale
    }

    var timeline = EpochTimeline()
    var pacer = LocationV2Pacer(minimumInterval: 1)

    mutating func accept(_ position: Position, now: Int64) -> Outcome {
        guard timeline.accept(position, now: now) else { return .stale }
        return .accepted(replacedPending: pacer.accept(position, now: now))
    }
}

@Suite("Epoch timeline", .tags(.unit))
struct EpochTimelineTests {
    /// A straggler from a backlog already sent is stale.
    @Test func aStragglerAfterABacklogIsStale() {
        var timeline = EpochTimeline()
        let newest = timeline.accept(epoch(2, 900), now: 3000 * ms)
        let straggler = timeline.accept(epoch(2, 500), now: 3001 * ms)
        #expect(newest && !straggler)
        #expect(timeline.latest == epoch(2, 900) && timeline.latestAt == 3000 * ms)
    }
}

@Suite("LocationV1 pacer and fix-quality events", .tags(.unit))
struct LocationV1PacerTests {
    @Test func theNewestEpochWhileFresh() {
        var pacer = LocationV1Pacer(maximumAge: 3000 * ms)
        #expect(pacer.due(now: 0) == nil, "nothing yet")
        pacer.accept(epoch(10), now: 100 * ms)
        pacer.accept(epoch(11), now: 1100 * ms)
        #expect(pacer.due(now: 2000 * ms) == epoch(11))
        #expect(pacer.due(now: 4100 * ms) == epoch(11), "3 s old: still sent")
        #expect(pacer.due(now: 4101 * ms) == nil, "older: input stopped, nothing repeated")
    }

    @Test func qualityEventsOnlyOnChange() {
        var watch = FixQualityWatch()
        #expect(watch.sent(.noFix) == nil)
        #expect(watch.sent(.autonomous) == .fixQualityChanged(previous: .noFix, current: .autonomous))
        #expect(watch.sent(.autonomous) == nil)
        #expect(watch.sent(.rtkFixed) == .fixQualityChanged(previous: .autonomous, current: .rtkFixed))
        #expect(watch.current == .rtkFixed)
    }
}
