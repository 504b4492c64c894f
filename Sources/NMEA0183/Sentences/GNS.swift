import ByteCoding

/// GNS: multi-constellation fix data, with one mode character per constellation.
///
/// `$GNGNS,122310.2,3722.425671,N,12258.856215,W,DAAA,14,0.9,1005.543,6.5,,,S*0E`
/// Fields: 1 time, 2-5 position, 6 mode indicators (GP, GL, GA, GB, ... order), 7 satellites,
/// 8 HDOP, 9 altitude MSL, 10 geoid separation, 11 DGPS age, 12 DGPS station,
/// 13 navigational status (NMEA 4.10).
public struct GNS: Sendable, Equatable, SentenceDecoder {
    public var time: NMEATime?
    public var latitude: NMEACoordinate?
    public var longitude: NMEACoordinate?
    /// Mode characters (`N` no fix, `A` autonomous, `D` differential, `P` precise, `R` RTK
    /// fixed, `F` RTK float, `E` estimated, `M` manual, `S` simulator), first one first.
    public var modes: ModeIndicators
    public var satellitesInUse: Int?
    public var hdop: NMEADecimal?
    public var altitudeMSL: NMEADecimal?
    public var geoidSeparation: NMEADecimal?
    public var dgpsAge: NMEADecimal?
    public var dgpsStation: Int?
    /// `S` safe, `C` caution, `U` unsafe, `V` not valid (NMEA 4.10).
    public var navigationalStatus: UInt8?

    /// Reads the fields of `s`, which has its row's `minimumFields` (`NMEAMessage(_:)` checks).
    init(_ s: borrowing NMEASentence) throws(NMEAError) {
        var c = s.cursor()
        time = try c.time()  // 1
        latitude = try c.latitude()  // 2-3
        longitude = try c.longitude()  // 4-5
        modes = try ModeIndicators(s.bytes.extracting(c.fieldRange()), index: 6)
        satellitesInUse = try c.integer()  // 7
        hdop = try c.decimal()  // 8
        altitudeMSL = try c.decimal()  // 9
        geoidSeparation = try c.decimal()  // 10
        dgpsAge = try c.decimal()  // 11
        dgpsStation = try c.integer()  // 12
        navigationalStatus = try c.character()  // 13
    }

    var message: NMEAMessage { .gns(self) }
}

/// Up to eight GNS mode characters, packed so the value stays inline.
public struct ModeIndicators: Sendable, Equatable, Hashable {
    public static let capacity = 8
    private var packed: UInt64 = 0
    public private(set) var count = 0

    public init() {}

    init(_ f: Span<UInt8>, index: Int) throws(NMEAError) {
        guard f.count <= Self.capacity else { throw .invalidField(index: index) }
        for i in f.indices {
            guard ASCII.isUpper(f[i]) else { throw .invalidField(index: index) }
            packed |= UInt64(f[i]) << (8 * UInt64(i))
        }
        count = f.count
    }

    public subscript(i: Int) -> UInt8 {
        precondition(i >= 0 && i < count, "mode index out of range")
        return UInt8(truncatingIfNeeded: packed >> (8 * UInt64(i)))
    }

    /// The best mode any constellation reports (RTK fixed > float > differential > ...).
    public var best: UInt8? {
        var best: UInt8?
        var bestRank = -1
        for i in 0..<count {
            let rank = ModeIndicators.rank(self[i])
            if rank > bestRank {
                bestRank = rank
                best = self[i]
            }
        }
        return best
    }

    static func rank(_ mode: UInt8) -> Int {
        switch mode {
        case UInt8(ascii: "R"): 8
        case UInt8(ascii: "F"): 7
        case UInt8(ascii: "P"): 6
        case UInt8(ascii: "D"): 5
        case UInt8(ascii: "A"): 4
        case UInt8(ascii: "E"): 3
        case UInt8(ascii: "M"): 2
        case UInt8(ascii: "S"): 1
        default: 0
        }
    }
}
