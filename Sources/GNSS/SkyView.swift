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

extension Satellite {
    // The packed form: every field in one UInt64, so that the sky view is 1 KB rather than 1.8 KB
    // (a `Position` is copied whole when it is emitted), its scans compare one word per
    // satellite, and an encoder tells an unchanged satellite by one comparison.
    //   bits 63...48 id, 47...45 constellation, 44 used,
    //   43 SNR known, 42...35 SNR, 34 elevation known, 33...18 elevation, 17 azimuth known,
    //   16...1 azimuth, 0 always clear. An unknown value's bits are clear, so equal satellites
    //   have equal words and equal words are equal satellites.
    static let identityShift: UInt64 = 45
    static let usedBit: UInt64 = 1 << 44
    static let snrKnown: UInt64 = 1 << 43
    static let snrShift: UInt64 = 35
    static let elevationKnown: UInt64 = 1 << 34
    static let elevationShift: UInt64 = 18
    static let azimuthKnown: UInt64 = 1 << 17
    static let azimuthShift: UInt64 = 1
    /// The bits of each optional value, its presence bit included.
    static let snrBits: UInt64 = 0x1FF << 35
    static let elevationBits: UInt64 = 0x1_FFFF << 18
    static let azimuthBits: UInt64 = 0x1_FFFF << 1

    /// All fields in one word (see above).
    public var packed: UInt64 {
        var word = UInt64(id) << 48 | UInt64(constellation.rawValue & 7) << 45
        if used { word |= Self.usedBit }
        if let snr { word |= Self.snrKnown | UInt64(snr) << Self.snrShift }
        if let elevation { word |= Self.elevationKnown | UInt64(UInt16(bitPattern: elevation)) << Self.elevationShift }
        if let azimuth { word |= Self.azimuthKnown | UInt64(UInt16(bitPattern: azimuth)) << Self.azimuthShift }
        return word
    }

    /// The satellite a `packed` word was made from.
    public init(packed word: UInt64) {
        self.init(
            id: Self.id(word), constellation: Self.constellation(word), elevation: Self.elevation(word),
            azimuth: Self.azimuth(word), snr: Self.snr(word), used: Self.used(word))
    }

    // The fields of a packed word, read without unpacking the others.
    @inline(__always) public static func id(_ word: UInt64) -> UInt16 { UInt16(truncatingIfNeeded: word >> 48) }
    @inline(__always) public static func constellation(_ word: UInt64) -> Constellation {
        Constellation(rawValue: UInt8(truncatingIfNeeded: word >> 45) & 7) ?? .gps
    }
    @inline(__always) public static func used(_ word: UInt64) -> Bool { word & usedBit != 0 }
    @inline(__always) public static func snr(_ word: UInt64) -> UInt8? {
        word & snrKnown != 0 ? UInt8(truncatingIfNeeded: word >> snrShift) : nil
    }
    @inline(__always) public static func elevation(_ word: UInt64) -> Int16? {
        word & elevationKnown != 0 ? Int16(bitPattern: UInt16(truncatingIfNeeded: word >> elevationShift)) : nil
    }
    @inline(__always) public static func azimuth(_ word: UInt64) -> Int16? {
        word & azimuthKnown != 0 ? Int16(bitPattern: UInt16(truncatingIfNeeded: word >> azimuthShift)) : nil
    }
    /// Id and constellation, the satellite's identity in the sky view.
    @inline(__always) static func identity(_ word: UInt64) -> UInt64 { word >> identityShift }
}

/// The satellites in view, held inline so a `Position` never touches the heap: one packed word
/// per satellite (`Satellite.packed`).
public struct SkyView: Sendable, Equatable {
    /// More than any receiver tracks at once: four full constellations plus SBAS and QZSS.
    public static let capacity = 128

    private var storage = InlineArray<128, UInt64>(repeating: 0)
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
        return Satellite(packed: storage[index])
    }

    /// The satellites in view as packed words (`Satellite.packed`), borrowed: what encoders
    /// read (a word compares and formats without unpacking). Loops over a sky view should read
    /// through this: every `sky[index]` on a sky view held as a value (a parameter) may copy
    /// its inline storage to a temporary to read one element; a span is taken once.
    public var packedSatellites: Span<UInt64> {
        @_lifetime(borrow self)
        get { storage.span.extracting(0..<count) }
    }

    /// Number of satellites marked as used.
    public var usedCount: Int {
        var used = 0
        let words = storage.span
        for i in 0..<count where words[i] & Satellite.usedBit != 0 { used += 1 }
        return used
    }

    public mutating func removeAll() {
        count = 0
        overflowed = 0
        present = (0, 0)
    }

    /// The bit of `present` for a satellite identity (`Satellite.identity`): bit 0...127 of a
    /// multiplicative hash.
    private static func presenceBit(_ identity: UInt64) -> (high: Bool, mask: UInt64) {
        let hash = (UInt32(truncatingIfNeeded: identity) &* 0x9E37_79B1) >> 25
        return (hash >= 64, 1 << UInt64(hash & 63))
    }

    // Static, over the filter alone: a non-mutating method of the sky view called from a
    // mutating one would copy its inline storage.
    private static func mayContain(_ present: (low: UInt64, high: UInt64), _ identity: UInt64) -> Bool {
        let bit = presenceBit(identity)
        return (bit.high ? present.high : present.low) & bit.mask != 0
    }

    private static func adding(_ present: (low: UInt64, high: UInt64), _ identity: UInt64) -> (low: UInt64, high: UInt64) {
        let bit = presenceBit(identity)
        return bit.high ? (present.low, present.high | bit.mask) : (present.low | bit.mask, present.high)
    }

    private static func identity(_ id: UInt16, _ constellation: Constellation) -> UInt64 {
        UInt64(id) << 3 | UInt64(constellation.rawValue & 7)
    }

    /// Index of the satellite with this id in this constellation, if present.
    public func index(of id: UInt16, in constellation: Constellation) -> Int? {
        let identity = Self.identity(id, constellation)
        let words = storage.span
        for i in 0..<count where Satellite.identity(words[i]) == identity { return i }
        return nil
    }

    /// Adds a satellite, or merges it into the entry already seen on another signal (NMEA 4.10
    /// GSV lists a satellite once per signal): the strongest SNR wins, known angles are kept.
    public mutating func merge(_ satellite: Satellite) {
        let word = satellite.packed
        let identity = Satellite.identity(word)
        // Through a mutable span of the storage: element reads and writes on the inline array
        // itself copied it per satellite of every GSV sentence.
        let n = count
        var slots = storage.mutableSpan
        if Self.mayContain(present, identity) {
            for i in 0..<n where Satellite.identity(slots[i]) == identity {
                var old = slots[i]
                if word & Satellite.elevationKnown != 0 { old = old & ~Satellite.elevationBits | word & Satellite.elevationBits }
                if word & Satellite.azimuthKnown != 0 { old = old & ~Satellite.azimuthBits | word & Satellite.azimuthBits }
                // max(new, old ?? 0): a known SNR replaces an unknown or weaker one (a known 0
                // over an unknown one included).
                if word & Satellite.snrKnown != 0, old & Satellite.snrKnown == 0 || word & Satellite.snrBits > old & Satellite.snrBits {
                    old = old & ~Satellite.snrBits | word & Satellite.snrBits
                }
                slots[i] = old | word & Satellite.usedBit
                return
            }
        }
        guard n < Self.capacity else {
            overflowed += 1
            return
        }
        slots[n] = word
        count = n + 1
        present = Self.adding(present, identity)
    }

    /// Marks a satellite as used in the solution; returns false if it is not in view.
    @discardableResult
    public mutating func markUsed(_ id: UInt16, in constellation: Constellation) -> Bool {
        let identity = Self.identity(id, constellation)
        guard Self.mayContain(present, identity) else { return false }
        let n = count
        var slots = storage.mutableSpan
        for i in 0..<n where Satellite.identity(slots[i]) == identity {
            slots[i] |= Satellite.usedBit
            return true
        }
        return false
    }

    /// Removes every satellite of one constellation (a new GSV set for it replaces the old one).
    public mutating func removeAll(of constellation: Constellation) {
        let raw = UInt64(constellation.rawValue & 7)
        var kept = 0
        var present = (low: UInt64(0), high: UInt64(0))
        let n = count
        var slots = storage.mutableSpan
        for i in 0..<n {
            let word = slots[i]
            if word >> Satellite.identityShift & 7 == raw { continue }
            slots[kept] = word
            present = Self.adding(present, Satellite.identity(word))
            kept += 1
        }
        count = kept
        self.present = present
    }

    /// Clears every `used` mark (a new GSA set replaces the previous one).
    public mutating func clearUsed() {
        let n = count
        var slots = storage.mutableSpan
        for i in 0..<n { slots[i] &= ~Satellite.usedBit }
    }

    public static func == (lhs: SkyView, rhs: SkyView) -> Bool {
        guard lhs.count == rhs.count else { return false }
        let left = lhs.storage.span, right = rhs.storage.span
        for i in 0..<lhs.count where left[i] != right[i] { return false }
        return true
    }
}
