import GNSS
import TMMProtocol

/// Which of the input side's epochs are published at all (the stale rule, docs/server.md,
/// "Rate"), and the newest one published: the hub's gate, before any output paces what it gets.
///
/// **Stale**: an epoch not newer than the newest accepted, by less than `staleWindow` of receiver
/// time, while that one was accepted less than `staleWindow` ago, is dropped: duplicates and a
/// backlog replayed out of order. A timeline that really goes back (a capture looping, a receiver
/// reset, midnight without a date) is followed at once when it jumps by more, and within
/// `staleWindow` of monotonic time otherwise. Epochs without a time are never stale.
public struct EpochTimeline: Sendable {
    /// One second, of receiver time and of monotonic time.
    public static let staleWindow: Int64 = 1_000_000_000

    /// The newest accepted epoch and when it was accepted (monotonic).
    public private(set) var latest: Position?
    public private(set) var latestAt: Int64 = 0
    /// Receiver time (`timeKey`) of the newest epoch accepted that had one, and when.
    private var newestTime: Int64?
    private var newestAt: Int64 = 0

    public init() {}

    /// Offers an epoch that arrived at `now`: true when it is published, false when stale.
    public mutating func accept(_ position: Position, now: Int64) -> Bool {
        if let time = position.time.map(Self.timeKey) {
            if let newest = newestTime, (0..<Self.staleWindow).contains(newest - time),
                now - newestAt < Self.staleWindow
            {
                return false
            }
            newestTime = time
            newestAt = now
        }
        latest = position
        latestAt = now
        return true
    }

    /// Receiver time in nanoseconds, comparable across midnight when the date is known.
    public static func timeKey(_ time: UTCTimestamp) -> Int64 {
        Int64(time.date?.daysSinceEpoch ?? 0) * UTCTimestamp.nanosecondsPerDay + time.nanosecondsOfDay
    }
}

/// LocationV1's pacing (TMM-API.md §5.1: once a second): the newest published epoch, while it
/// is no older than `maximumAge`, at each of the output's own ticks; nothing once input stopped
/// (a V1 client sees the stream pause rather than an old position repeated).
public struct LocationV1Pacer: Sendable {
    /// How old (monotonic) the newest epoch may be and still be sent (`BridgeLimits`).
    public var maximumAge: Int64
    private var latest: Position?
    private var latestAt: Int64 = 0

    public init(maximumAge: Int64) {
        self.maximumAge = maximumAge
    }

    /// A published epoch arrived at `now`.
    public mutating func accept(_ position: Position, now: Int64) {
        latest = position
        latestAt = now
    }

    /// What to send at the output's tick `now`: the newest epoch, or nil when there is none or
    /// it is too old.
    public func due(now: Int64) -> Position? {
        guard let latest, now - latestAt <= maximumAge else { return nil }
        return latest
    }
}

/// When a `fixQualityChanged` event goes out (TMM-API.md §5.3): when an epoch sent to V2 clients
/// has another quality than the one sent before it. The events therefore follow the epochs sent
/// and are bounded by V2's cap too; the current quality is also what a new `/events` client's
/// `status` event says.
public struct FixQualityWatch: Sendable {
    /// The quality of the last epoch sent (no fix before the first).
    public private(set) var current = FixQuality.noFix

    public init() {}

    /// An epoch of this quality was sent: the event to publish, if the quality changed.
    public mutating func sent(_ quality: FixQuality) -> BridgeEvent? {
        guard quality != current else { return nil }
        let previous = current
        current = quality
        return .fixQualityChanged(previous: previous, current: quality)
    }
}
