import GNSS

/// What a location encoder's writer remembers from one message to the next, so that the parts
/// of a message that did not change are copied rather than formatted again: the identity fields
/// (the same for every message of a receiver) and the satellite view (the same between GSV
/// groups, and mostly the same across them). Everything is allocated up front or on the first
/// message, so that encoding allocates nothing after that.
struct LocationMemory: Sendable {
    /// The identity `identityRun` was written for, once `hasIdentity` (not optional: comparing
    /// through an optional copied the identity, three strings retained and released).
    var identity = ReceiverIdentity(appVersion: "")
    var hasIdentity = false
    /// The bytes written for `identity` by `JSONWriter.appendRemembered`.
    var identityRun: [UInt8]
    var satelliteView = SatelliteViewMemory()
    /// Parts of a message remembered with the values they were written from
    /// (`JSONWriter.appendRemembered(part:key:...)`), numbered by the message format.
    var parts: [RememberedPart]

    /// Parts a message format may remember.
    static let partCount = 4

    init() {
        // Room for any identity of ordinary length, so that the first message does not allocate.
        identityRun = []
        identityRun.reserveCapacity(512)
        parts = []
        parts.reserveCapacity(Self.partCount)
        for _ in 0..<Self.partCount { parts.append(RememberedPart()) }
    }
}

/// The bytes last written for one part of a message, and the key they were written from.
struct RememberedPart: Sendable {
    /// Never equal to a key made with `PartKey.init()` and values: nothing remembered yet.
    var key = PartKey.nothing
    var bytes: [UInt8]

    init() {
        // Room for any part of a location message, so that the first message does not allocate.
        bytes = []
        bytes.reserveCapacity(1024)
    }
}

/// The values one part of a message is written from, each as 64 bits plus whether it is known:
/// equal keys, equal values, so equal bytes (a NaN or an infinity is kept as its bits, so it
/// matches only itself).
struct PartKey: Equatable, Sendable {
    static let capacity = 12
    private var words = InlineArray<12, UInt64>(repeating: 0)
    private var count = 0
    /// Bit i: value i is known (not nil).
    private var known: UInt64 = 0

    init() {}

    /// A key that no values make (its count is out of range).
    static let nothing: PartKey = {
        var key = PartKey()
        key.count = -1
        return key
    }()

    @inline(__always)
    mutating func append(_ value: Double?) {
        append(value?.bitPattern)
    }

    @inline(__always)
    mutating func append(_ value: Int?) {
        append(value.map { UInt64(bitPattern: Int64($0)) })
    }

    @inline(__always)
    mutating func append(_ bits: UInt64?) {
        precondition(count < Self.capacity, "PartKey holds at most 12 values")
        if let bits {
            words[count] = bits
            known |= 1 << UInt64(count)
        }
        count += 1
    }

    static func == (lhs: PartKey, rhs: PartKey) -> Bool {
        guard lhs.count == rhs.count, lhs.known == rhs.known else { return false }
        let left = lhs.words.span, right = rhs.words.span
        for i in 0..<max(lhs.count, 0) where left[i] != right[i] { return false }
        return true
    }
}

/// The last `satelliteView` array written, with what each object was written from.
///
/// `update` compares each satellite with the one at the same position last time (all its
/// fields are in its packed word, `Satellite.packed`): if none changed the bytes stay as they are; otherwise
/// the array is rebuilt, copying each run of unchanged objects in one piece and formatting the
/// others.
struct SatelliteViewMemory: Sendable {
    /// The array, `[` to `]`: objects separated by single commas.
    private(set) var bytes: [UInt8] = []
    /// The next array, built beside `bytes` and swapped in.
    private var next: [UInt8] = []
    /// Per object, what it was written from, and where it ends in `bytes` (after its `}`).
    private var keys: [UInt64]
    private var ends: [Int]
    private var nextEnds: [Int]
    /// Per object, where its SNR value starts and ends, counted from the object's start (its
    /// comma, if any): an object whose SNR alone changed (most changes: SNR moves from second
    /// to second, the angles every few minutes) is copied around a new SNR.
    private var snrStarts: [Int]
    private var snrEnds: [Int]
    /// Objects in `bytes`; -1 before the first update (nothing remembered).
    private var count = -1
    /// The null mode `bytes` was written in (V2 writes unknown values as `null`, V1 as `0`).
    private var unknownAsNull = false

    /// The longest array: a sky view full of the widest objects.
    static let maximumLength = 2 + SkyView.capacity * (SatelliteObject.maximumLength + 1)

    init() {
        keys = [UInt64](repeating: 0, count: SkyView.capacity)
        ends = [Int](repeating: 0, count: SkyView.capacity)
        // Not `nextEnds = ends`: the shared buffer would be copied at the first update.
        nextEnds = [Int](repeating: 0, count: SkyView.capacity)
        snrStarts = [Int](repeating: 0, count: SkyView.capacity)
        snrEnds = [Int](repeating: 0, count: SkyView.capacity)
        bytes.reserveCapacity(Self.maximumLength)
        next.reserveCapacity(Self.maximumLength)
    }

    /// Makes `bytes` the `satelliteView` array of `sky`.
    mutating func update(_ sky: SkyView, unknownAsNull: Bool) {
        let satellites = sky.packedSatellites
        let n = satellites.count
        if unknownAsNull != self.unknownAsNull {
            // Another null mode writes other bytes for the same satellites: nothing is reusable.
            count = -1
            self.unknownAsNull = unknownAsNull
        }
        // The common prefix with the last view; all of it (and the same count) is a hit.
        var unchanged = 0
        while unchanged < min(n, count), keys[unchanged] == satellites[unchanged] {
            unchanged += 1
        }
        if unchanged == n, n == count { return }
        if n == count, patchSNRs(satellites, from: unchanged) { return }

        next.removeAll(keepingCapacity: true)
        next.append(UInt8(ascii: "["))
        // A run of unchanged objects, first..<index, waiting to be copied in one piece.
        var runStart = unchanged > 0 ? 0 : -1
        for index in unchanged..<n {
            let key = satellites[index]
            if index < count, keys[index] == key {
                if runStart < 0 { runStart = index }
                continue
            }
            if runStart >= 0 {
                copyRun(runStart..<index)
                runStart = -1
            }
            let objectStart = next.count
            if index < count, Satellite.differInSNROnly(keys[index], key) {
                let start = index == 0 ? 1 : ends[index - 1]
                next.append(contentsOf: bytes[start..<start + snrStarts[index]])
                next.append(addingCapacity: SatelliteObject.maximumValueLength) { out in
                    SatelliteObject.writeValue(
                        Satellite.snr(key).map { Int($0) }, unknownAsNull: unknownAsNull, to: &out)
                }
                let snrEnd = next.count - objectStart
                next.append(contentsOf: bytes[start + snrEnds[index]..<ends[index]])
                snrEnds[index] = snrEnd
            } else {
                var snr = (start: 0, end: 0)
                next.append(addingCapacity: SatelliteObject.maximumLength + 1) { out in
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    snr = SatelliteObject.write(satellites[index], unknownAsNull: unknownAsNull, to: &out)
                }
                snrStarts[index] = snr.start
                snrEnds[index] = snr.end
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

    /// When every satellite from `first` on is either unchanged or differs in an SNR known
    /// before and after and written with as many digits (44 to 45 dB-Hz: the common change from
    /// one second to the next), writes those SNRs over the old ones in `bytes` and returns true;
    /// otherwise changes nothing and returns false.
    private mutating func patchSNRs(_ satellites: Span<UInt64>, from first: Int) -> Bool {
        func digits(_ word: UInt64) -> Int {
            guard let snr = Satellite.snr(word) else { return 0 }
            return snr < 10 ? 1 : snr < 100 ? 2 : 3
        }
        for index in first..<satellites.count where keys[index] != satellites[index] {
            let old = keys[index], new = satellites[index]
            guard Satellite.differInSNROnly(old, new), digits(old) > 0, digits(old) == digits(new) else { return false }
        }
        // Moved out while patched (a span of `bytes` would hold all of `self` exclusively).
        var patched: [UInt8] = []
        swap(&patched, &bytes)
        defer { swap(&patched, &bytes) }
        var out = patched.mutableSpan
        for index in first..<satellites.count where keys[index] != satellites[index] {
            let new = satellites[index]
            var snr = Int(Satellite.snr(new) ?? 0)
            let start = (index == 0 ? 1 : ends[index - 1]) + snrStarts[index]
            var position = start + digits(new) - 1
            while position >= start {
                out[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: snr % 10)
                snr /= 10
                position -= 1
            }
            keys[index] = new
        }
        return true
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
