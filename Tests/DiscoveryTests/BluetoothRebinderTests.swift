// RFCOMMRebinder driven by a fake clock: the backoff sequence after a drop, resets, and the
// longest wait at once for failures only a person can fix.
import Discovery
import Glibc
import Input
import Posix
import TestSupport
import Testing

@Suite("rfcomm rebinder", .tags(.unit))
struct BluetoothRebinderTests {
    static let second: Int64 = 1_000_000_000
    static let binding = RFCOMMBinding(
        device: 0, address: try! BluetoothAddress(parsing: "00:07:80:AB:CD:EF"), channel: 1)

    static func failure(_ code: CInt) -> RFCOMMError {
        .system(.bind(device: 0, address: binding.address, channel: 1), Errno(rawValue: code))
    }

    /// Runs the loop the daemon runs: ask, sleep as told (on the fake clock), bind when told, with
    /// every bind failing; returns the times of the bind attempts.
    static func attemptTimes(
        _ rebinder: inout RFCOMMRebinder, from start: Int64, count: Int, error: RFCOMMError
    ) -> [Int64] {
        var now = start
        var attempts: [Int64] = []
        while attempts.count < count {
            switch rebinder.next(now: now) {
            case .idle:
                return attempts
            case .wait(let nanoseconds):
                #expect(nanoseconds > 0)
                now += nanoseconds
            case .bind:
                attempts.append(now)
                rebinder.bindFailed(error, now: now)
            }
        }
        return attempts
    }

    @Test func backoffDelays() {
        let backoff = RFCOMMBackoff()
        #expect(backoff.first == Self.second / 2)
        #expect(backoff.cap == 30 * Self.second)
        let delays = (0...8).map { backoff.delay(afterFailures: $0) }
        #expect(delays == [0.5, 1, 2, 4, 8, 16, 30, 30, 30].map { Int64($0 * Double(Self.second)) })
        #expect(backoff.delay(afterFailures: 10_000) == backoff.cap)
        #expect(backoff.delay(afterFailures: -1) == backoff.first)
    }

    @Test func boundAndPresentIsIdle() {
        let rebinder = RFCOMMRebinder(binding: Self.binding, ttyPresent: true, now: 0)
        #expect(rebinder.state == .bound)
        #expect(rebinder.next(now: 0) == .idle)
        #expect(rebinder.next(now: 1_000 * Self.second) == .idle)
    }

    @Test func rebindsAfterADropWithCappedDoublingBackoff() {
        var rebinder = RFCOMMRebinder(binding: Self.binding, ttyPresent: true, now: 0)
        let drop = 100 * Self.second
        rebinder.ttyDisappeared(now: drop)
        #expect(rebinder.next(now: drop) == .wait(nanoseconds: Self.second / 2))
        let times = Self.attemptTimes(&rebinder, from: drop, count: 9, error: Self.failure(EHOSTDOWN))
        // First retry 0.5 s after the drop, then waits of 1, 2, 4, 8, 16, 30, 30, 30 s.
        let offsets = times.map { Double($0 - drop) / Double(Self.second) }
        #expect(offsets == [0.5, 1.5, 3.5, 7.5, 15.5, 31.5, 61.5, 91.5, 121.5])
        #expect(rebinder.lastError == Self.failure(EHOSTDOWN))
        #expect(rebinder.state == .unbound(due: drop + Int64(151.5 * Double(Self.second)), failures: 9))

        // Success resets everything: the next drop starts again at 0.5 s.
        rebinder.bindSucceeded(now: drop + 200 * Self.second)
        #expect(rebinder.state == .bound)
        #expect(rebinder.lastError == nil)
        #expect(rebinder.next(now: drop + 200 * Self.second) == .idle)
        rebinder.ttyDisappeared(now: 1_000 * Self.second)
        let again = Self.attemptTimes(&rebinder, from: 1_000 * Self.second, count: 2, error: Self.failure(EHOSTDOWN))
        #expect(again == [1_000 * Self.second + Self.second / 2, 1_001 * Self.second + Self.second / 2])
    }

    @Test func bindsAtOnceAtStartWhenTheTTYIsMissing() {
        var rebinder = RFCOMMRebinder(binding: Self.binding, ttyPresent: false, now: 5 * Self.second)
        #expect(rebinder.next(now: 5 * Self.second) == .bind)
        #expect(rebinder.next(now: 5 * Self.second) == .bind, "next(now:) does not change the state")
        rebinder.bindSucceeded(now: 5 * Self.second)
        #expect(rebinder.next(now: 6 * Self.second) == .idle)
    }

    @Test func failuresOnlyAPersonCanFixWaitTheCapAtOnce() {
        for code in [EAFNOSUPPORT, EPROTONOSUPPORT, EOPNOTSUPP, EPERM, EACCES] {
            var rebinder = RFCOMMRebinder(binding: Self.binding, ttyPresent: false, now: 0)
            let times = Self.attemptTimes(&rebinder, from: 0, count: 3, error: Self.failure(code))
            #expect(times == [0, 30 * Self.second, 60 * Self.second], "errno \(code)")
            #expect(!Self.failure(code).isRetryable)
        }
        // "Already bound" (someone else holds rfcomm0) is retried at the normal pace.
        #expect(Self.failure(EADDRINUSE).isRetryable)
        #expect(!RFCOMMError.invalidChannel(31).isRetryable)
    }

    @Test func theTTYComingBackWhileWaitingEndsTheRetries() {
        var rebinder = RFCOMMRebinder(binding: Self.binding, ttyPresent: true, now: 0)
        rebinder.ttyDisappeared(now: 0)
        rebinder.bindFailed(Self.failure(EADDRINUSE), now: Self.second / 2)
        #expect(rebinder.next(now: Self.second) == .wait(nanoseconds: Self.second / 2))
        rebinder.ttyAppeared(now: Self.second)
        #expect(rebinder.next(now: Self.second) == .idle)
        #expect(rebinder.lastError == nil)
    }

    @Test func aSecondDisappearanceDoesNotRestartTheSchedule() {
        var rebinder = RFCOMMRebinder(binding: Self.binding, ttyPresent: true, now: 0)
        rebinder.ttyDisappeared(now: 0)
        rebinder.ttyDisappeared(now: Self.second / 4)
        #expect(rebinder.next(now: Self.second / 4) == .wait(nanoseconds: Self.second / 4))
    }

    @Test func customBackoff() {
        var rebinder = RFCOMMRebinder(
            binding: Self.binding, backoff: RFCOMMBackoff(first: 100, cap: 500),
            ttyPresent: true, now: 0)
        rebinder.ttyDisappeared(now: 0)
        let times = Self.attemptTimes(&rebinder, from: 0, count: 6, error: Self.failure(EIO))
        #expect(times == [100, 300, 700, 1_200, 1_700, 2_200])
    }
}
