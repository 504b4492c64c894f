import GNSS

/// The LocationV2 rate cap and the stale rule (docs/server.md, "Rate"), as a state machine over
/// monotonic time: epochs in, what to send and when out. The server carries out what it says (a
/// frame to every V2 client, a one-shot timer); nothing here reads a clock or sleeps.
///
/// - At most one epoch per `minimumInterval`. An epoch that comes sooner waits as the pending
///   one and is replaced by any newer one (coalesced); at the next allowed instant the pending
///   one goes out, so the last epoch of a burst is never lost.
/// - Stale: an epoch not newer than the newest accepted, by less than `staleWindow` of receiver
///   time, while that one was accepted less than `staleWindow` ago, is dropped: duplicates and a
///   backlog replayed out of order. A timeline that really goes back (a capture looping, a
///   receiver reset, midnight without a date) is followed at once when it jumps by more, and
///   within `staleWindow` of monotonic time otherwise.
public struct LocationV2Pacer: Sendable {
    /// What became of an epoch offered to `accept`.
    public enum Acceptance: Equatable, Sendable {
        /// Pending now; `replacedPending`: an earlier pending epoch will never be sent.
        case accepted(replacedPending: Bool)
        case stale
    }

    /// What the server does next for V2.
    public enum Release: Equatable, Sendable {
        /// Send this epoch to every V2 client now.
        case send(Position)
        /// Arm the one-shot timer for this monotonic instant and call `timerExpired` then.
        case armTimer(at: Int64)
        /// Nothing to send, or the timer is armed already.
        case nothing
    }

    /// One second, of receiver time and of monotonic time.
    public static let staleWindow: Int64 = 1_000_000_000

    /// A reload may change it (`max-location-rate`); the next epoch is paced by the new value.
    public var minimumInterval: Int64
    /// The newest accepted epoch and when it was accepted (LocationV1 sends it once a second).
    public private(set) var latest: Position?
    public private(set) var latestAt: Int64 = 0
    private var pending: Position?
    private var lastSentAt: Int64?
    private var isTimerArmed = false
    /// Receiver time (`timeKey`) of the newest epoch accepted, and when (monotonic).
    private var newestTime: Int64?
    private var newestAt: Int64 = 0

    public init(minimumInterval: Int64) {
        self.minimumInterval = minimumInterval
    }

    /// Offers an epoch that arrived at `now`.
    public mutating func accept(_ position: Position, now: Int64) -> Acceptance {
        if let time = position.time.map(Self.timeKey) {
            if let newest = newestTime, (0..<Self.staleWindow).contains(newest - time), now - newestAt < Self.staleWindow {
                return .stale
            }
            newestTime = time
            newestAt = now
        }
        latest = position
        latestAt = now
        let replaced = pending != nil
        pending = position
        return .accepted(replacedPending: replaced)
    }

    /// Whether to send the pending epoch at `now`, or when.
    public mutating func release(now: Int64) -> Release {
        guard let position = pending else { return .nothing }
        if let sent = lastSentAt, now - sent < minimumInterval {
            guard !isTimerArmed else { return .nothing }
            isTimerArmed = true
            return .armTimer(at: sent + minimumInterval)
        }
        pending = nil
        lastSentAt = now
        return .send(position)
    }

    /// The timer armed by `.armTimer` expired: as `release`, now that it may be time.
    public mutating func timerExpired(now: Int64) -> Release {
        isTimerArmed = false
        return release(now: now)
    }

    /// Receiver time in nanoseconds, comparable across midnight when the date is known.
    public static func timeKey(_ time: UTCTimestamp) -> Int64 {
        Int64(time.date?.daysSinceEpoch ?? 0) * UTCTimestamp.nanosecondsPerDay + time.nanosecondsOfDay
    }
}
