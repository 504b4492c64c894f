// Waiting for a condition instead of for time: a test that needs something to have happened
// (a thread to end, a log line, a counter, a socket state) polls for it with a deadline, so it
// goes on as soon as the condition holds and fails with a message when it never does.
import Foundation

/// Polls `condition` until it holds or `timeout` has passed; returns whether it held (it is
/// checked once more at the deadline, so a slow machine gets the whole timeout).
///
/// The pause between polls is the only fixed sleep a waiting test needs, and it is here: a
/// condition that holds is seen within `pollInterval`. Use it as
/// `#expect(waitUntil { ... }, "what did not happen")` or `try #require(waitUntil { ... })`.
public func waitUntil(
    timeout: Duration = .seconds(5), pollInterval: Duration = .milliseconds(2), _ condition: () throws -> Bool
) rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while clock.now < deadline {
        if try condition() { return true }
        sleep(for: min(pollInterval, clock.now.duration(to: deadline)))
    }
    return try condition()
}

/// Blocks the calling thread for `duration` (never less). For what is the behaviour under test:
/// a client that stays silent to trigger a time-out, a receiver's pace. Waiting for something to
/// happen is `waitUntil`.
public func sleep(for duration: Duration) {
    guard duration > .zero else { return }
    let (seconds, attoseconds) = duration.components
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}
