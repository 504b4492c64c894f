// The served receiver's recent track, as the operator dashboard draws it (issue 25): at most one
// point per `interval` over the last `window`, oldest first. Pure: the caller passes the times
// (wall-clock Unix milliseconds) and resets the track when the served receiver changes. Storage is
// a BoundedRing of at most `capacity` points, so a 50 Hz receiver fed for days costs what ten
// minutes cost.

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
    public var capacity: Int { ring.capacity }

    private var ring: BoundedRing<Point>

    /// A track keeping one point per `interval` over `window` (milliseconds, both positive).
    public init(interval: Int64 = defaultInterval, window: Int64 = defaultWindow) {
        precondition(interval > 0 && window >= 0, "a track needs a positive interval and a window")
        self.interval = interval
        self.window = window
        ring = BoundedRing(capacity: Int(window / interval) + 1)
    }

    public var count: Int { ring.count }
    public var isEmpty: Bool { ring.isEmpty }

    /// The i-th point, oldest first.
    public subscript(index: Int) -> Point { ring[index] }

    /// The points, oldest first.
    public var points: [Point] { ring.elements }

    /// The newest point, if any.
    public var last: Point? { ring.last }

    /// Forgets the points older than `window` before `unixMilliseconds`, then adds the position
    /// taken then unless the newest point is less than `interval` older. A time before the newest
    /// point's (the wall clock was stepped back) starts the track anew: its order is its meaning.
    /// Non-finite coordinates are ignored.
    public mutating func add(latitude: Double, longitude: Double, unixMilliseconds: Int64) {
        guard latitude.isFinite, longitude.isFinite else { return }
        if let last, unixMilliseconds < last.unixMilliseconds { removeAll() }
        removeOlder(than: unixMilliseconds - window)
        if let last, unixMilliseconds - last.unixMilliseconds < interval { return }
        // A full ring (unreachable with points `interval` apart within `window`) drops the oldest.
        ring.append(Point(latitude: latitude, longitude: longitude, unixMilliseconds: unixMilliseconds))
    }

    /// Forgets the points taken before `oldest` (Unix milliseconds).
    public mutating func removeOlder(than oldest: Int64) {
        while let first = ring.first, first.unixMilliseconds < oldest { ring.removeFirst() }
    }

    /// Empties the track (the served receiver changed), keeping its storage.
    public mutating func removeAll() { ring.removeAll() }

    public static func == (lhs: DashboardTrack, rhs: DashboardTrack) -> Bool {
        lhs.interval == rhs.interval && lhs.window == rhs.window && lhs.ring == rhs.ring
    }
}
