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

    public init(
        id: UInt16, constellation: Constellation, elevation: Int16? = nil, azimuth: Int16? = nil,
        snr: UInt8? = nil, used: Bool = false
    ) {
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
        Self.pack(id: id, constellation: constellation, elevation: elevation, azimuth: azimuth, snr: snr, used: used)
    }

    /// The packed word of a satellite with these fields, without making the satellite first.
    @inline(__always)
    public static func pack(
        id: UInt16, constellation: Constellation, elevation: Int16?, azimuth: Int16?, snr: UInt8?,
        used: Bool = false
    ) -> UInt64 {
        var word = UInt64(id) << 48 | UInt64(constellation.rawValue & 7) << 45
        if used { word |= usedBit }
        if let snr { word |= snrKnown | UInt64(snr) << snrShift }
        if let elevation { word |= elevationKnown | UInt64(UInt16(bitPattern: elevation)) << elevationShift }
        if let azimuth { word |= azimuthKnown | UInt64(UInt16(bitPattern: azimuth)) << azimuthShift }
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
    /// Whether two packed satellites differ in their SNR at most.
    @inline(__always) public static func differInSNROnly(_ a: UInt64, _ b: UInt64) -> Bool {
        (a ^ b) & ~snrBits == 0
    }
    /// Id and constellation, the satellite's identity in the sky view.
    @inline(__always) static func identity(_ word: UInt64) -> UInt64 { word >> identityShift }
}

/// The satellites in view, held inline so a `Position` never touches the heap: one packed word
/// per satellite (`Satellite.packed`), and a hash index from identity to position.
public struct SkyView: Sendable, Equatable {
    /// More than any receiver tracks at once: four full constellations plus SBAS and QZSS.
    public static let capacity = 128

    private var storage = InlineArray<128, UInt64>(repeating: 0)
    /// Open addressing, linear probing: slot `hash(identity)` onward holds the satellite's
    /// position plus one (0: empty). At most 128 of the 256 slots are used, so a probe ends
    /// after a few slots; `merge` and `markUsed` find a satellite without scanning the list.
    private var table = InlineArray<256, UInt8>(repeating: 0)
    public private(set) var count = 0
    /// Satellites that did not fit (counted, never silently lost).
    public private(set) var overflowed = 0

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
        var slots = table.mutableSpan
        slots.update(repeating: 0)
    }

    /// The first table slot for a satellite identity (`Satellite.identity`).
    @inline(__always)
    private static func home(_ identity: UInt64) -> Int {
        Int((UInt32(truncatingIfNeeded: identity) &* 0x9E37_79B1) >> 24)
    }

    /// The position of the satellite with `identity`, or nil and the empty slot where its
    /// position would go.
    @inline(__always)
    private static func find(
        _ identity: UInt64, _ words: Span<UInt64>, _ slots: Span<UInt8>
    ) -> (index: Int?, slot: Int) {
        var slot = home(identity)
        while true {
            let entry = slots[slot]
            if entry == 0 { return (nil, slot) }
            let index = Int(entry) &- 1
            if Satellite.identity(words[index]) == identity { return (index, slot) }
            slot = (slot &+ 1) & 255
        }
    }

    private static func identity(_ id: UInt16, _ constellation: Constellation) -> UInt64 {
        UInt64(id) << 3 | UInt64(constellation.rawValue & 7)
    }

    /// Index of the satellite with this id in this constellation, if present.
    public func index(of id: UInt16, in constellation: Constellation) -> Int? {
        Self.find(Self.identity(id, constellation), storage.span, table.span).index
    }

    /// Adds a satellite, or merges it into the entry already seen on another signal (NMEA 4.10
    /// GSV lists a satellite once per signal): the strongest SNR wins, known angles are kept.
    public mutating func merge(_ satellite: Satellite) {
        merge(packed: satellite.packed)
    }

    /// `merge(_:)` for a satellite already packed (`Satellite.packed`).
    public mutating func merge(packed word: UInt64) {
        let identity = Satellite.identity(word)
        let n = count
        // Through spans of the storage: element reads and writes on the inline arrays themselves
        // copied them per satellite of every GSV sentence.
        let found = Self.find(identity, storage.span, table.span)
        if let i = found.index {
            var words = storage.mutableSpan
            var old = words[i]
            if word & Satellite.elevationKnown != 0 {
                old = old & ~Satellite.elevationBits | word & Satellite.elevationBits
            }
            if word & Satellite.azimuthKnown != 0 { old = old & ~Satellite.azimuthBits | word & Satellite.azimuthBits }
            // max(new, old ?? 0): a known SNR replaces an unknown or weaker one (a known 0
            // over an unknown one included).
            if word & Satellite.snrKnown != 0,
                old & Satellite.snrKnown == 0 || word & Satellite.snrBits > old & Satellite.snrBits
            {
                old = old & ~Satellite.snrBits | word & Satellite.snrBits
            }
            words[i] = old | word & Satellite.usedBit
            return
        }
        guard n < Self.capacity else {
            overflowed += 1
            return
        }
        var words = storage.mutableSpan
        words[n] = word
        var slots = table.mutableSpan
        slots[found.slot] = UInt8(truncatingIfNeeded: n &+ 1)
        count = n + 1
    }

    /// Marks a satellite as used in the solution; returns false if it is not in view.
    @discardableResult
    public mutating func markUsed(_ id: UInt16, in constellation: Constellation) -> Bool {
        guard let i = Self.find(Self.identity(id, constellation), storage.span, table.span).index else { return false }
        var words = storage.mutableSpan
        words[i] |= Satellite.usedBit
        return true
    }

    /// Removes every satellite of one constellation (a new GSV set for it replaces the old one).
    public mutating func removeAll(of constellation: Constellation) {
        let raw = UInt64(constellation.rawValue & 7)
        var kept = 0
        let n = count
        var words = storage.mutableSpan
        for i in 0..<n {
            let word = words[i]
            if word >> Satellite.identityShift & 7 == raw { continue }
            words[kept] = word
            kept += 1
        }
        guard kept < n else { return }
        count = kept
        // Positions moved: index the satellites again.
        var slots = table.mutableSpan
        slots.update(repeating: 0)
        for i in 0..<kept {
            var slot = Self.home(Satellite.identity(words[i]))
            while slots[slot] != 0 { slot = (slot &+ 1) & 255 }
            slots[slot] = UInt8(truncatingIfNeeded: i &+ 1)
        }
    }

    /// Clears every `used` mark (a new GSA set replaces the previous one).
    public mutating func clearUsed() {
        let n = count
        var words = storage.mutableSpan
        for i in 0..<n { words[i] &= ~Satellite.usedBit }
    }

    public static func == (lhs: SkyView, rhs: SkyView) -> Bool {
        guard lhs.count == rhs.count else { return false }
        let left = lhs.storage.span, right = rhs.storage.span
        for i in 0..<lhs.count where left[i] != right[i] { return false }
        return true
    }
}
