import GNSS

// The served receiver's fix quality over the last ten minutes, as the operator dashboard draws it
// (issue 25): the changes, oldest first, the first entry being the state at the window's start
// (its time moved up to that start). Pure: times are passed in (wall-clock Unix milliseconds).
// Bounded: a receiver flapping between fixed and float many times a second keeps the newest
// `capacity` changes.

/// Fix quality changes within the last `window`.
public struct FixHistory: Sendable, Equatable {
    /// The quality from `unixMilliseconds` on.
    public struct Change: Sendable, Equatable {
        public var unixMilliseconds: Int64
        public var quality: FixQuality

        public init(unixMilliseconds: Int64, quality: FixQuality) {
            self.unixMilliseconds = unixMilliseconds
            self.quality = quality
        }
    }

    public static let defaultWindow: Int64 = 600_000
    public static let defaultCapacity = 256

    /// The span kept, milliseconds, and the most changes kept.
    public let window: Int64
    public var capacity: Int { ring.capacity }

    private var ring: BoundedRing<Change>

    public init(window: Int64 = defaultWindow, capacity: Int = defaultCapacity) {
        precondition(window >= 0 && capacity >= 1, "a fix history needs a window and room for one change")
        self.window = window
        ring = BoundedRing(capacity: capacity)
    }

    public var count: Int { ring.count }
    public var isEmpty: Bool { ring.isEmpty }

    /// The i-th change, oldest first.
    public subscript(index: Int) -> Change { ring[index] }

    /// The changes, oldest first.
    public var changes: [Change] { ring.elements }

    /// The latest quality, if any was recorded.
    public var current: FixQuality? { ring.last?.quality }

    /// Records the quality of an epoch at `unixMilliseconds`: an entry when it differs from the
    /// current one, then the window moved up to that time. A time before the newest entry's (the
    /// wall clock was stepped back) starts the history anew with this quality.
    public mutating func record(_ quality: FixQuality, unixMilliseconds: Int64) {
        if let last = ring.last, unixMilliseconds < last.unixMilliseconds { removeAll() }
        if quality != current { ring.append(Change(unixMilliseconds: unixMilliseconds, quality: quality)) }
        trim(now: unixMilliseconds)
    }

    /// Moves the window's start up to `now - window`: drops the changes superseded before it, and
    /// moves the first entry's time up to it (the state the window starts in).
    public mutating func trim(now: Int64) {
        let start = now - window
        while ring.count >= 2 && ring[1].unixMilliseconds <= start { ring.removeFirst() }
        if let first = ring.first, first.unixMilliseconds < start { ring[0].unixMilliseconds = start }
    }

    /// Empties the history (the served receiver changed), keeping its storage.
    public mutating func removeAll() { ring.removeAll() }

    public static func == (lhs: FixHistory, rhs: FixHistory) -> Bool {
        lhs.window == rhs.window && lhs.ring == rhs.ring
    }
}
