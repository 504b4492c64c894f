// The served receiver's recent track, as the operator dashboard draws it (issue 25): at most one
// point per `interval` over the last `window`, oldest first. Pure: the caller passes the times
// (wall-clock Unix milliseconds) and resets the track when the served receiver changes. Storage is
// a ring of at most `capacity` points, allocated once, so a 50 Hz receiver fed for days costs what
// ten minutes cost.

/// The recent positions of the served receiver, thinned to one per `interval`, within `window`.
public struct DashboardTrack: Sendable, Equatable {
    /// One point of the track.
    public struct Point: Sendable, Equatable {
        public var latitude: Double
        public var longitude: Double
        /// When the position was taken (wall-clock Unix milliseconds).
        public var unixMilliseconds: Int64

        public init(latitude: Double, longitude: Double, unixMilliseconds: Int64) {
            self.latitude = latitude
            self.longitude = longitude
            self.unixMilliseconds = unixMilliseconds
        }
    }

    /// One point a second over ten minutes.
    public static let defaultInterval: Int64 = 1000
    public static let defaultWindow: Int64 = 600_000

    /// The shortest time between two kept points, and the span kept, milliseconds.
    public let interval: Int64
    public let window: Int64
    /// The most points the track holds: `window / interval + 1` (both ends of the window).
    public let capacity: Int

    /// The ring: `storage[(head + i) % capacity]` is the i-th point, oldest first.
    private var storage: [Point] = []
    private var head = 0
    public private(set) var count = 0

    /// A track keeping one point per `interval` over `window` (milliseconds, both positive).
    public init(interval: Int64 = defaultInterval, window: Int64 = defaultWindow) {
        precondition(interval > 0 && window >= 0, "a track needs a positive interval and a window")
        self.interval = interval
        self.window = window
        capacity = Int(window / interval) + 1
    }

    public var isEmpty: Bool { count == 0 }

    /// The i-th point, oldest first.
    public subscript(index: Int) -> Point {
        precondition(index >= 0 && index < count, "track index out of range")
        return storage[(head + index) % capacity]
    }

    /// The points, oldest first.
    public var points: [Point] { (0..<count).map { self[$0] } }

    /// The newest point, if any.
    public var last: Point? { isEmpty ? nil : self[count - 1] }

    /// Forgets the points older than `window` before `unixMilliseconds`, then adds the position
    /// taken then unless the newest point is less than `interval` older. A time before the newest
    /// point's (the wall clock was stepped back) starts the track anew: its order is its meaning.
    /// Non-finite coordinates are ignored.
    public mutating func add(latitude: Double, longitude: Double, unixMilliseconds: Int64) {
        guard latitude.isFinite, longitude.isFinite else { return }
        if let last, unixMilliseconds < last.unixMilliseconds { removeAll() }
        removeOlder(than: unixMilliseconds - window)
        if let last, unixMilliseconds - last.unixMilliseconds < interval { return }
        let point = Point(latitude: latitude, longitude: longitude, unixMilliseconds: unixMilliseconds)
        if storage.isEmpty { storage.reserveCapacity(capacity) }
        if count == capacity {
            // Unreachable with points `interval` apart within `window`; kept as the bound's guard.
            head = (head + 1) % capacity
            count -= 1
        }
        let slot = (head + count) % capacity
        if slot < storage.count { storage[slot] = point } else { storage.append(point) }
        count += 1
    }

    /// Forgets the points taken before `oldest` (Unix milliseconds).
    public mutating func removeOlder(than oldest: Int64) {
        while count > 0 && storage[head].unixMilliseconds < oldest {
            head = (head + 1) % capacity
            count -= 1
        }
        if count == 0 { head = 0 }
    }

    /// Empties the track (the served receiver changed), keeping its storage.
    public mutating func removeAll() {
        head = 0
        count = 0
    }

    public static func == (lhs: DashboardTrack, rhs: DashboardTrack) -> Bool {
        lhs.interval == rhs.interval && lhs.window == rhs.window && lhs.points == rhs.points
    }
}
