// When the operator dashboard's page gets its next snapshot (issue 25): only when something changed
// and at most `maximumRate` times a second, however fast the receiver runs. Pure: the caller passes
// the time (milliseconds of any clock that does not jump, the monotonic one in the daemon).

/// Paces the dashboard's snapshots: a snapshot is due when something changed since the last one
/// and at least `minimumInterval` has passed since it.
public struct DashboardPacer: Sendable, Equatable {
    /// Snapshots per second, at most.
    public static let maximumRate = 4
    /// The shortest time between two snapshots, milliseconds.
    public let minimumInterval: Int64

    private var changed = false
    /// When the last snapshot was due; nil before the first.
    private var last: Int64?

    /// A pacer allowing `maximumRate` snapshots a second (or `rate`, for tests and other pages).
    public init(rate: Int = maximumRate) {
        precondition(rate > 0, "a pacer needs a positive rate")
        minimumInterval = (1000 + Int64(rate) - 1) / Int64(rate)
    }

    /// Something the snapshot shows has changed (an epoch, a status, a subscriber).
    public mutating func markChanged() { changed = true }

    /// Whether a snapshot is due at `now` (milliseconds); if so, it counts as sent: the change is
    /// consumed and the interval starts again. A clock before the last snapshot's (it cannot go
    /// back, but a test's may) does not hold the snapshot back.
    public mutating func due(now: Int64) -> Bool {
        guard changed else { return false }
        if let last, now >= last, now - last < minimumInterval { return false }
        last = now
        changed = false
        return true
    }

    /// When `due` will next say yes (milliseconds, `now` at the earliest); nil while nothing changed.
    /// For the caller's timer.
    public func nextDue(now: Int64) -> Int64? {
        guard changed else { return nil }
        guard let last, now >= last else { return now }
        return max(now, last + minimumInterval)
    }
}
