import GNSS

/// The LocationV2 rate cap (docs/server.md, "Rate"), as a state machine over monotonic time: the
/// hub's published epochs (EpochTimeline dropped the stale ones) in, what to send and when out.
/// The V2 output carries out what it says (a frame to every V2 client, a one-shot timer);
/// nothing here reads a clock or sleeps.
///
/// - **Cap, with a burst**: a token bucket. One token per `minimumInterval`, at most `burst`
///   saved (100 ms of the cap: 10 at the default 100 Hz); each epoch sent spends one. Epochs
///   that arrive together go out together, oldest first, while tokens last; when none is left
///   only the newest waits (the others are coalesced: under a flood the newest is at most one
///   interval late), for a one-shot timer at the next token, so the last epoch of a burst is never
///   lost. In any T seconds a client gets at most T × rate + `burst` epochs. The burst is what
///   lets a healthy stream through a hiccup of the io thread (two 10 Hz epochs drained at once
///   are both fresh, and both are sent).
/// - **Fresh epochs only wait**: of the epochs waiting, those more than `freshness` (250 ms) of
///   receiver time older than the newest, and all but the newest `burst`, are dropped
///   (coalesced): a backlog that arrives at once after a stall is not replayed, only its newest
///   epochs go out.
public struct LocationV2Pacer: Sendable {
    /// What the server does next for V2.
    public enum Release: Equatable, Sendable {
        /// Send this epoch to every V2 client now, then ask `release` again (more may be due).
        case send(Position)
        /// Arm the one-shot timer for this monotonic instant and call `timerExpired` then.
        case armTimer(at: Int64)
        /// Nothing to send, or the timer is armed already.
        case nothing
    }

    /// How much older (receiver time) than the newest waiting epoch another may be and still be
    /// sent: longer than an io-thread hiccup, far shorter than a stall.
    public static let freshness: Int64 = 250_000_000

    /// A reload (`max-location-rate`) or a REST client (`LocationV2Broadcast`) may change it; the
    /// next epoch is paced by the new value, and the burst follows it unless it was given (tokens
    /// saved under a faster cap are not spent at the slower one).
    public var minimumInterval: Int64 {
        didSet {
            minimumInterval = max(1, minimumInterval)
            tokens = min(tokens, burst)
        }
    }
    private let givenBurst: Int?
    /// Tokens the bucket holds at most: epochs that may go out back to back.
    public var burst: Int { min(Self.maximumBurst, max(1, givenBurst ?? Int(100_000_000 / minimumInterval))) }
    /// Accepted epochs dropped unsent (coalesced), since the start.
    public private(set) var coalesced = 0
    /// Accepted epochs not sent yet, oldest first (at most `burst`).
    private var waiting: [Position] = []
    private var tokens = 0
    /// When the bucket last gained a token (nil before the first release: the bucket starts full).
    private var refilledAt: Int64?
    private var isTimerArmed = false

    /// Most epochs that may wait (and go out back to back), whatever the cap.
    public static let maximumBurst = 100

    /// `burst` defaults to 100 ms of the cap, from 1 to `maximumBurst`.
    public init(minimumInterval: Int64, burst: Int? = nil) {
        self.minimumInterval = max(1, minimumInterval)
        givenBurst = burst
        waiting.reserveCapacity(self.burst + 1)
    }

    /// Offers a published epoch that arrived at `now`: it waits for `release`. Returns true when
    /// an earlier waiting epoch was dropped and will never be sent (coalesced).
    @discardableResult
    public mutating func accept(_ position: Position, now: Int64) -> Bool {
        let time = position.time.map(EpochTimeline.timeKey)
        waiting.append(position)
        var dropped = 0
        while let oldest = waiting.first, waiting.count > burst || Self.isBacklog(oldest, behind: time) {
            waiting.removeFirst()
            dropped += 1
        }
        coalesced += dropped
        return dropped > 0
    }

    /// Too far from the newest epoch's receiver time to be sent: older than `freshness`, or from
    /// before a timeline that went back (a capture looping, a receiver reset).
    private static func isBacklog(_ position: Position, behind newest: Int64?) -> Bool {
        guard let newest, let time = position.time.map(EpochTimeline.timeKey) else { return false }
        return newest - time > freshness || time > newest
    }

    /// Whether to send the oldest waiting epoch at `now`, or when. Call it again after `.send`.
    public mutating func release(now: Int64) -> Release {
        refill(now: now)
        guard !waiting.isEmpty else { return .nothing }
        if tokens > 0 {
            tokens -= 1
            return .send(waiting.removeFirst())
        }
        // No token: only the newest may wait for the next one.
        if waiting.count > 1 {
            coalesced += waiting.count - 1
            waiting.removeFirst(waiting.count - 1)
        }
        guard !isTimerArmed else { return .nothing }
        isTimerArmed = true
        return .armTimer(at: (refilledAt ?? now) + minimumInterval)
    }

    /// The timer armed by `.armTimer` expired: as `release`, now that it may be time.
    public mutating func timerExpired(now: Int64) -> Release {
        isTimerArmed = false
        return release(now: now)
    }

    private mutating func refill(now: Int64) {
        guard let last = refilledAt else {
            tokens = burst
            refilledAt = now
            return
        }
        // A full bucket gains nothing while it waits: its next token is one interval after it
        // is first spent, not after it last filled (else a burst right after an idle spell would
        // get one token early).
        if tokens >= burst {
            refilledAt = now
            return
        }
        let gained = (now - last) / minimumInterval
        guard gained > 0 else { return }
        if gained >= Int64(burst - tokens) {
            tokens = burst
            refilledAt = now
        } else {
            tokens += Int(gained)
            refilledAt = last + gained * minimumInterval
        }
    }
}

/// The LocationV2 broadcast configuration in force (`GET` and `PUT
/// /api/v1/positionStream/locationV2`, docs/server.md): the rate cap `max-location-rate` sets, and
/// a slower one a client may ask for. A client cannot raise the cap above the configured one (it
/// protects every client and the io thread, docs/server.md "The V2 rate cap"), and no cap makes
/// the stream faster than the receiver makes epochs. Kept while the daemon runs (TMM's own
/// setting is not documented to survive a restart; a restart starts from the configuration).
public struct LocationV2Broadcast: Equatable, Sendable {
    /// The shortest interval `max-location-rate` allows (nanoseconds); a reload may change it.
    public var configuredMinimumInterval: Int64
    /// The interval a client asked for (nanoseconds; 1 ms to 1 s, `max-location-rate`'s own
    /// bounds), nil when none did (or one cleared it).
    public var requestedInterval: Int64?

    public init(configuredMinimumInterval: Int64, requestedInterval: Int64? = nil) {
        self.configuredMinimumInterval = configuredMinimumInterval
        self.requestedInterval = requestedInterval
    }

    /// The interval the V2 output paces by: the longer of the configured and the requested one.
    public var minimumInterval: Int64 { max(configuredMinimumInterval, requestedInterval ?? 0) }
}
