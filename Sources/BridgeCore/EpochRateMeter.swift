/// The receiver's epoch rate, measured over a sliding window: the arrival instants of the latest
/// epochs in a fixed ring (no allocation after `init`, so recording costs nothing on the io
/// loop's hot path), and the rate over those of the last `window` nanoseconds.
///
/// (n - 1) epochs in the time between the first and the last of n instants is the rate; a
/// receiver that stops shows its last rate until its epochs leave the window, then nil (`rate`
/// is taken at `now`).
public struct EpochRateMeter: Sendable {
    /// How far back epochs count (10 s: a 1 Hz receiver still gives 10 instants).
    public let window: Int64
    private var instants: [Int64]
    /// Index of the next slot to write; the ring holds `count` instants ending before it.
    private var next = 0
    private var count = 0

    /// `capacity` instants at most (64: 6.4 s of a 10 Hz receiver, 0.64 s at 100 Hz).
    public init(capacity: Int = 64, window: Int64 = 10_000_000_000) {
        precondition(capacity >= 2, "a rate needs two instants")
        instants = [Int64](repeating: 0, count: capacity)
        self.window = window
    }

    /// An epoch arrived at `now` (monotonic nanoseconds, never decreasing).
    public mutating func record(_ now: Int64) {
        instants[next] = now
        next = (next + 1) % instants.count
        count = min(count + 1, instants.count)
    }

    /// When the latest epoch arrived; nil before any.
    public var latest: Int64? { count == 0 ? nil : instants[(next - 1 + instants.count) % instants.count] }

    /// Epochs per second over the instants within `window` of `now`; nil with fewer than two.
    public func rate(now: Int64) -> Double? {
        guard let latest else { return nil }
        var oldest = latest
        var counted = 1
        var index = next - 1
        while counted < count {
            index = (index - 1 + instants.count) % instants.count
            guard now - instants[index] <= window else { break }
            oldest = instants[index]
            counted += 1
        }
        guard counted >= 2, latest > oldest, now - latest <= window else { return nil }
        return Double(counted - 1) * 1e9 / Double(latest - oldest)
    }
}
