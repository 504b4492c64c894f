/// GSA: DOPs and the satellites used in the solution.
///
/// `$GNGSA,A,3,10,12,14,20,21,24,25,31,32,,,,1.23,0.68,1.02,1*0E`
/// Fields: 1 selection mode (M/A), 2 fix mode (1 none, 2 2D, 3 3D), 3-14 satellite ids,
/// 15 PDOP, 16 HDOP, 17 VDOP, 18 GNSS system id (NMEA 4.10: 1 GPS, 2 GLONASS, 3 Galileo,
/// 4 BeiDou, 5 QZSS, 6 NavIC).
public struct GSA: Sendable, Equatable, SentenceDecoder {
    public var selectionMode: UInt8?
    public var fixMode: Int?
    /// Satellite ids in use (up to 12, in field order; empty fields skipped).
    public var satelliteIDs: SatelliteIDList
    public var pdop: NMEADecimal?
    public var hdop: NMEADecimal?
    public var vdop: NMEADecimal?
    public var systemID: Int?

    /// Reads the fields of `s`, which has its row's `minimumFields` (`NMEAMessage(_:)` checks).
    init(_ s: borrowing NMEASentence) throws(NMEAError) {
        var c = s.cursor()
        selectionMode = try c.character()  // 1
        fixMode = try c.integer()  // 2
        satelliteIDs = SatelliteIDList()
        for index in 3...14 {
            if let id = try c.integer() {
                guard id <= 999 else { throw .invalidField(index: index) }
                satelliteIDs.append(UInt16(id))
            }
        }
        pdop = try c.decimal()  // 15
        hdop = try c.decimal()  // 16
        vdop = try c.decimal()  // 17
        systemID = try c.integer()  // 18
    }

    var message: NMEAMessage { .gsa(self) }
}

/// Up to 12 satellite ids, inline.
public struct SatelliteIDList: Sendable, Equatable, Hashable {
    private var storage = InlineArray<12, UInt16>(repeating: 0)
    public private(set) var count = 0

    public init() {}

    public mutating func append(_ id: UInt16) {
        guard count < 12 else { return }
        storage[count] = id
        count += 1
    }

    public subscript(i: Int) -> UInt16 {
        precondition(i >= 0 && i < count, "satellite index out of range")
        return storage[i]
    }

    public static func == (a: SatelliteIDList, b: SatelliteIDList) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a.storage[i] != b.storage[i] { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        for i in 0..<count { hasher.combine(storage[i]) }
    }
}
