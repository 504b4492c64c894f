/// A GNSS constellation, numbered as TMM's satellite `Type` (0 GPS ... 7 IRNSS/NavIC).
public enum Constellation: UInt8, Sendable, Equatable, CaseIterable {
    case gps = 0
    case sbas = 1
    case glonass = 2
    case omnistar = 3
    case galileo = 4
    case beidou = 5
    case qzss = 6
    case irnss = 7
}

/// One satellite of the sky view, as TMM's `satelliteView[]` element needs it.
public struct Satellite: Sendable, Equatable {
    /// The satellite id as the receiver numbered it in GSV (PRN for GPS, 65-96 for GLONASS, ...).
    public var id: UInt16
    public var constellation: Constellation
    /// Elevation and azimuth in whole degrees, SNR in dB-Hz; `nil` when the receiver left them empty.
    public var elevation: Int16?
    public var azimuth: Int16?
    public var snr: UInt8?
    /// Listed as used in the solution by a GSA of the same cycle.
    public var used: Bool

    public init(id: UInt16, constellation: Constellation, elevation: Int16? = nil, azimuth: Int16? = nil,
                snr: UInt8? = nil, used: Bool = false) {
        self.id = id
        self.constellation = constellation
        self.elevation = elevation
        self.azimuth = azimuth
        self.snr = snr
        self.used = used
    }
}

/// The satellites in view, held inline so a `Position` never touches the heap.
public struct SkyView: Sendable, Equatable {
    /// More than any receiver tracks at once: four full constellations plus SBAS and QZSS.
    public static let capacity = 128

    private var storage = InlineArray<128, Satellite>(
        repeating: Satellite(id: 0, constellation: .gps))
    public private(set) var count = 0
    /// Satellites that did not fit (counted, never silently lost).
    public private(set) var overflowed = 0
    /// One bit per (id, constellation) hash of the satellites present, a Bloom filter with one
    /// hash: a clear bit means "not in view", so `merge` appends a new satellite without
    /// scanning the list (most of a GSV set is new: the set replaced its constellation's
    /// satellites); a set bit means "maybe", and the list is scanned.
    private var present = (low: UInt64(0), high: UInt64(0))

    public init() {}

    public subscript(index: Int) -> Satellite {
        precondition(index >= 0 && index < count, "satellite index out of range")
        return storage[index]
    }

    /// The satellites in view, borrowed. Loops over a sky view should read through this: every
    /// `sky[index]` on a sky view held as a value (a parameter) copies its 1.8 KB of inline
    /// storage to a temporary to read one element; a span is taken once.
    public var satellites: Span<Satellite> {
        @_lifetime(borrow self)
        get { storage.span.extracting(0..<count) }
    }

    /// Number of satellites marked as used.
    public var usedCount: Int {
        var used = 0
        let satellites = storage.span
        for i in 0..<count where satellites[i].used { used += 1 }
        return used
    }

    public mutating func removeAll() {
        count = 0
        overflowed = 0
        present = (0, 0)
    }

    /// The bit of `present` for a satellite: bit 0...127 of a multiplicative hash.
    private static func presenceBit(_ id: UInt16, _ constellation: Constellation) -> (high: Bool, mask: UInt64) {
        let hash = (UInt32(id) &* 0x9E37_79B1 ^ UInt32(constellation.rawValue) &* 0x85EB_CA77) >> 25
        return (hash >= 64, 1 << UInt64(hash & 63))
    }

    // Static, over the filter alone: a non-mutating method of the sky view called from a
    // mutating one would copy its inline storage.
    private static func mayContain(_ present: (low: UInt64, high: UInt64), _ id: UInt16,
                                   _ constellation: Constellation) -> Bool {
        let bit = presenceBit(id, constellation)
        return (bit.high ? present.high : present.low) & bit.mask != 0
    }

    private static func adding(_ present: (low: UInt64, high: UInt64), _ id: UInt16,
                               _ constellation: Constellation) -> (low: UInt64, high: UInt64) {
        let bit = presenceBit(id, constellation)
        return bit.high ? (present.low, present.high | bit.mask) : (present.low | bit.mask, present.high)
    }

    /// Index of the satellite with this id in this constellation, if present.
    public func index(of id: UInt16, in constellation: Constellation) -> Int? {
        let satellites = storage.span
        for i in 0..<count where satellites[i].id == id && satellites[i].constellation == constellation {
            return i
        }
        return nil
    }

    /// `index(of:in:)` for the mutating methods. It is `mutating` only so that `self` is passed by
    /// address: a non-mutating call from a mutating method copies the whole inline storage
    /// (1.8 KB) first, once per satellite per GSV sentence.
    private mutating func slot(of id: UInt16, in constellation: Constellation) -> Int? {
        guard Self.mayContain(present, id, constellation) else { return nil }
        for i in 0..<count where storage[i].id == id && storage[i].constellation == constellation {
            return i
        }
        return nil
    }

    /// Adds a satellite, or merges it into the entry already seen on another signal (NMEA 4.10
    /// GSV lists a satellite once per signal): the strongest SNR wins, known angles are kept.
    public mutating func merge(_ satellite: Satellite) {
        // Through a mutable span of the storage: element reads and writes on the inline array
        // itself copied it (1.8 KB) per satellite of every GSV sentence.
        let n = count
        var slots = storage.mutableSpan
        if Self.mayContain(present, satellite.id, satellite.constellation) {
            for i in 0..<n where slots[i].id == satellite.id && slots[i].constellation == satellite.constellation {
                if let elevation = satellite.elevation { slots[i].elevation = elevation }
                if let azimuth = satellite.azimuth { slots[i].azimuth = azimuth }
                if let snr = satellite.snr { slots[i].snr = max(snr, slots[i].snr ?? 0) }
                if satellite.used { slots[i].used = true }
                return
            }
        }
        guard n < Self.capacity else {
            overflowed += 1
            return
        }
        slots[n] = satellite
        count = n + 1
        present = Self.adding(present, satellite.id, satellite.constellation)
    }

    /// Marks a satellite as used in the solution; returns false if it is not in view.
    @discardableResult
    public mutating func markUsed(_ id: UInt16, in constellation: Constellation) -> Bool {
        guard let i = slot(of: id, in: constellation) else { return false }
        storage[i].used = true
        return true
    }

    /// Removes every satellite of one constellation (a new GSV set for it replaces the old one).
    public mutating func removeAll(of constellation: Constellation) {
        var kept = 0
        var present = (low: UInt64(0), high: UInt64(0))
        var slots = storage.mutableSpan
        for i in 0..<count where slots[i].constellation != constellation {
            let satellite = slots[i]
            slots[kept] = satellite
            present = Self.adding(present, satellite.id, satellite.constellation)
            kept += 1
        }
        count = kept
        self.present = present
    }

    /// Clears every `used` mark (a new GSA set replaces the previous one).
    public mutating func clearUsed() {
        for i in 0..<count { storage[i].used = false }
    }

    public static func == (lhs: SkyView, rhs: SkyView) -> Bool {
        guard lhs.count == rhs.count else { return false }
        let left = lhs.storage.span, right = rhs.storage.span
        for i in 0..<lhs.count where left[i] != right[i] { return false }
        return true
    }
}
