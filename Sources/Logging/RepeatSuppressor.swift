// The rule for repeated warnings and errors: a client that can make the daemon fail at will (a
// TLS scanner, a bad access code in a loop, a gpsd that keeps dropping) must not be able to fill
// the journal, yet the operator must still see that it happens and how often.

/// Suppresses a message seen again within `window` of its first appearance and counts it; when
/// the window ends (noticed on the next message or the next `due` call: the io loop's tick, no
/// timer thread of its own) one summary line says how many were left out. Messages are told apart
/// by a key: the call site's when it gives one (a text with a running count in it is still "the
/// same" failure), else the text itself. The table is bounded: when full, the entry seen first
/// makes room (its summary is written then), so memory does not grow with the number of
/// distinct messages. Pure: the caller passes the time.
public struct RepeatSuppressor: Sendable {
    public struct Settings: Sendable, Equatable {
        /// How long after a message's first appearance copies of it are counted, not written.
        public var window: Int64
        /// Distinct messages tracked at once.
        public var capacity: Int

        public init(window: Int64 = 10_000_000_000, capacity: Int = 64) {
            self.window = window
            self.capacity = max(1, capacity)
        }
    }

    /// A line to write for a window that ended with copies left out.
    public struct Summary: Sendable, Equatable {
        public var level: LogLevel
        public var text: String

        public init(level: LogLevel, text: String) {
            self.level = level
            self.text = text
        }
    }

    private struct Entry: Sendable {
        var key: String
        var firstAt: Int64
        var level: LogLevel
        /// The latest copy's text (its running count is the newest).
        var latest: String
        var suppressed: Int
    }

    public let settings: Settings
    /// Oldest first (by `firstAt`): the table is small, a scan is cheaper than a second index.
    private var entries: [Entry] = []

    public init(_ settings: Settings = Settings()) {
        self.settings = settings
        entries.reserveCapacity(settings.capacity)
    }

    /// Messages tracked now (tests: the table stays bounded).
    public var trackedCount: Int { entries.count }

    /// Whether `message` is written now. Summaries of windows that ended by `now`, and of an
    /// entry pushed out to make room, are appended to `summaries`, to be written first.
    public mutating func admit(
        _ message: String, key: String? = nil, level: LogLevel, now: Int64,
        summaries: inout [Summary]
    ) -> Bool {
        collectDue(now: now, into: &summaries)
        let key = key ?? message
        if let index = entries.firstIndex(where: { $0.key == key }) {
            entries[index].suppressed += 1
            entries[index].latest = message
            entries[index].level = min(entries[index].level, level)
            return false
        }
        if entries.count >= settings.capacity {
            let evicted = entries.removeFirst()
            if let summary = Self.summary(of: evicted, now: now) { summaries.append(summary) }
        }
        entries.append(Entry(key: key, firstAt: now, level: level, latest: message, suppressed: 0))
        return true
    }

    /// Summaries of the windows that ended by `now`; their entries are forgotten.
    public mutating func due(now: Int64) -> [Summary] {
        var summaries: [Summary] = []
        collectDue(now: now, into: &summaries)
        return summaries
    }

    /// Summaries of every entry, windows ended or not (the daemon is stopping); the table is empty
    /// afterwards.
    public mutating func flushAll(now: Int64) -> [Summary] {
        defer { entries.removeAll(keepingCapacity: true) }
        return entries.compactMap { Self.summary(of: $0, now: now) }
    }

    private mutating func collectDue(now: Int64, into summaries: inout [Summary]) {
        // Oldest first, so the entries whose window ended are a prefix.
        var ended = 0
        while ended < entries.count, now - entries[ended].firstAt >= settings.window {
            if let summary = Self.summary(of: entries[ended], now: now) { summaries.append(summary) }
            ended += 1
        }
        if ended > 0 { entries.removeFirst(ended) }
    }

    /// "TEXT (repeated N times in the last T s)", N the copies not written, T whole seconds since
    /// the first (at least 1); nil when nothing was left out.
    private static func summary(of entry: Entry, now: Int64) -> Summary? {
        guard entry.suppressed > 0 else { return nil }
        let seconds = max(1, (now - entry.firstAt + 999_999_999) / 1_000_000_000)
        let times = entry.suppressed == 1 ? "once" : "\(entry.suppressed) times"
        return Summary(level: entry.level, text: "\(entry.latest) (repeated \(times) in the last \(seconds) s)")
    }
}
