import GNSS

/// What a location encoder's writer remembers from one message to the next, so that the parts
/// of a message that did not change are copied rather than formatted again: the identity fields
/// (the same for every message of a receiver) and the satellite view (the same between GSV
/// groups, and mostly the same across them). Everything is allocated up front or on the first
/// message, so that encoding allocates nothing after that.
struct LocationMemory: Sendable {
    /// The identity `identityRun` was written for (nil before the first message).
    var identity: ReceiverIdentity?
    /// The bytes written for `identity` by `JSONWriter.appendRemembered`.
    var identityRun: [UInt8]
    var satelliteView = SatelliteViewMemory()

    init() {
        // Room for any identity of ordinary length, so that the first message does not allocate.
        identityRun = []
        identityRun.reserveCapacity(512)
    }
}

/// The last `satelliteView` array written, with what each object was written from.
///
/// `update` compares each satellite with the one at the same position last time (all its
/// fields packed into a `SatelliteKey`): if none changed the bytes stay as they are; otherwise
/// the array is rebuilt, copying each run of unchanged objects in one piece and formatting the
/// others.
struct SatelliteViewMemory: Sendable {
    /// The array, `[` to `]`: objects separated by single commas.
    private(set) var bytes: [UInt8] = []
    /// The next array, built beside `bytes` and swapped in.
    private var next: [UInt8] = []
    /// Per object, what it was written from, and where it ends in `bytes` (after its `}`).
    private var keys: [SatelliteKey]
    private var ends: [Int]
    private var nextEnds: [Int]
    /// Objects in `bytes`; -1 before the first update (nothing remembered).
    private var count = -1

    /// The longest array: a sky view full of the widest objects.
    static let maximumLength = 2 + SkyView.capacity * (SatelliteObject.maximumLength + 1)

    init() {
        keys = [SatelliteKey](repeating: SatelliteKey(high: 0, low: 0), count: SkyView.capacity)
        ends = [Int](repeating: 0, count: SkyView.capacity)
        // Not `nextEnds = ends`: the shared buffer would be copied at the first update.
        nextEnds = [Int](repeating: 0, count: SkyView.capacity)
        bytes.reserveCapacity(Self.maximumLength)
        next.reserveCapacity(Self.maximumLength)
    }

    /// Makes `bytes` the `satelliteView` array of `sky`.
    mutating func update(_ sky: SkyView, unknownAsNull: Bool) {
        let satellites = sky.satellites
        let n = satellites.count
        // The common prefix with the last view; all of it (and the same count) is a hit.
        var unchanged = 0
        while unchanged < min(n, count), keys[unchanged] == SatelliteKey(satellites[unchanged], unknownAsNull: unknownAsNull) {
            unchanged += 1
        }
        if unchanged == n, n == count { return }

        next.removeAll(keepingCapacity: true)
        next.append(UInt8(ascii: "["))
        // A run of unchanged objects, first..<index, waiting to be copied in one piece.
        var runStart = unchanged > 0 ? 0 : -1
        for index in unchanged..<n {
            let key = SatelliteKey(satellites[index], unknownAsNull: unknownAsNull)
            if index < count, keys[index] == key {
                if runStart < 0 { runStart = index }
                continue
            }
            if runStart >= 0 {
                copyRun(runStart..<index)
                runStart = -1
            }
            next.append(addingCapacity: SatelliteObject.maximumLength + 1) { out in
                if index > 0 { out.append(UInt8(ascii: ",")) }
                SatelliteObject.write(satellites[index], unknownAsNull: unknownAsNull, to: &out)
            }
            nextEnds[index] = next.count
            keys[index] = key
        }
        if runStart >= 0 { copyRun(runStart..<n) }
        next.append(UInt8(ascii: "]"))
        swap(&bytes, &next)
        swap(&ends, &nextEnds)
        count = n
    }

    /// Copies the objects `run` of `bytes` (with the comma in front of each but the very first)
    /// to the end of `next`, noting where each now ends.
    private mutating func copyRun(_ run: Range<Int>) {
        let start = run.lowerBound == 0 ? 1 : ends[run.lowerBound - 1]
        let shift = next.count - start
        next.append(contentsOf: bytes[start..<ends[run.upperBound - 1]])
        for index in run { nextEnds[index] = ends[index] + shift }
    }
}

/// Every field of a satellite object, packed, and the null mode: equal keys write equal objects.
struct SatelliteKey: Equatable, Sendable {
    var high: UInt64
    var low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Id (16 bits), constellation (8), SNR (8 plus presence), used, the null mode; elevation
    /// and azimuth (16 each, plus a presence bit).
    init(_ satellite: Satellite, unknownAsNull: Bool) {
        func field(_ value: Int16?) -> UInt64 { value.map { 1 << 16 | UInt64(UInt16(bitPattern: $0)) } ?? 0 }
        high = UInt64(satellite.id) << 48 | UInt64(satellite.constellation.rawValue) << 40
            | UInt64(satellite.snr.map { 1 << 8 | UInt16($0) } ?? 0) << 24
            | (satellite.used ? 1 << 1 : 0) | (unknownAsNull ? 1 : 0)
        low = field(satellite.elevation) << 32 | field(satellite.azimuth)
    }
}
