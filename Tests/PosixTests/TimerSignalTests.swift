import CLinux
import Glibc
import Posix
import Synchronization
import TestSupport
import Testing

@Suite("timerfd and signalfd", .tags(.integration))
struct TimerSignalTests {
    @Test func oneShotTimerFiresWithinTolerance() throws {
        let selector = try Selector()
        let timer = try MonotonicTimer()
        let id = try selector.register(timer.descriptor.rawValue, interest: .readable)
        #expect(try timer.readExpirations() == 0, "a fresh timer has not expired")
        let start = monotonicNanoseconds()
        try timer.arm(afterNanoseconds: 50_000_000)
        var events: [SelectorEvent] = []
        #expect(try selector.wait(timeoutMilliseconds: 2000, into: &events) == 1)
        let elapsed = monotonicNanoseconds() - start
        #expect(events.first?.registrationID == id)
        #expect(elapsed >= 50_000_000, "timerfd never fires early")
        #expect(elapsed < 1_000_000_000)
        #expect(try timer.readExpirations() == 1)
        #expect(try timer.readExpirations() == 0, "reading clears the count")
        // One-shot: nothing more.
        #expect(try selector.wait(timeoutMilliseconds: 80, into: &events) == 0)
        try selector.deregister(timer.descriptor.rawValue)
    }

    @Test func periodicTimerCountsExpirations() throws {
        let timer = try MonotonicTimer()
        try timer.arm(afterNanoseconds: 10_000_000, periodNanoseconds: 10_000_000)
        // A fixed span on purpose: what is tested is how many periods fit in it.
        sleep(for: .milliseconds(105))
        let count = try timer.readExpirations()
        #expect(count >= 5 && count <= 11, "about ten 10 ms periods in 105 ms, got \(count)")
        try timer.disarm()
        _ = try timer.readExpirations()
        // Three periods in which it would fire: its descriptor would turn readable at once.
        #expect(try !timer.descriptor.waitReadable(milliseconds: 30), "a disarmed timer stays quiet")
        #expect(try timer.readExpirations() == 0, "a disarmed timer stays quiet")
    }

    /// The signal is blocked only in a dedicated thread, so the test runner's threads keep
    /// their masks; the test thread sends it to that thread with pthread_kill.
    @Test func signalfdReceivesThreadDirectedSIGUSR1() throws {
        let ready = try Inbox<UInt>(capacity: 1)
        let received = try Inbox<CInt>(capacity: 4)
        let thread = try OSThread(name: "signal-test") {
            do {
                let signals = try SignalDescriptor(signals: [SIGUSR1])
                #expect(try signals.read() == nil, "nothing pending yet")
                ready.post(UInt(pthread_self()))
                guard try signals.descriptor.waitReadable(milliseconds: 5000) else {
                    received.post(-1)
                    return
                }
                received.post(try signals.read() ?? 0)
            } catch {
                received.post(-2)
            }
        }
        let target = try #require(ready.wait(milliseconds: 5000).first)
        #expect(pthread_kill(pthread_t(target), SIGUSR1) == 0)
        let result = received.wait(milliseconds: 5000)
        thread.join()
        #expect(result == [SIGUSR1])
    }
}
