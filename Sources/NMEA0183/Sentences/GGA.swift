/// GGA: time, position and fix data.
///
/// `$GNGGA,132819.60,4134.49795459,N,09345.03431408,W,2,10,0.9,278.161,M,-31.442,M,6.6,0133*6A`
/// Fields: 1 time, 2-3 latitude, 4-5 longitude, 6 quality, 7 satellites in use, 8 HDOP,
/// 9-10 altitude above MSL (M), 11-12 geoid separation (M), 13 DGPS age, 14 DGPS station.
public struct GGA: Sendable, Equatable, SentenceDecoder {
    public var time: NMEATime?
    public var latitude: NMEACoordinate?
    public var longitude: NMEACoordinate?
    /// Raw quality indicator (0 invalid, 1 GPS, 2 DGPS, 4 RTK fixed, 5 RTK float, ...).
    public var quality: UInt8?
    public var satellitesInUse: Int?
    public var hdop: NMEADecimal?
    public var altitudeMSL: NMEADecimal?
    public var geoidSeparation: NMEADecimal?
    public var dgpsAge: NMEADecimal?
    public var dgpsStation: Int?

    /// Reads the fields of `s`, which has its row's `minimumFields` (`NMEAMessage(_:)` checks).
    init(_ s: borrowing NMEASentence) throws(NMEAError) {
        var c = s.cursor()
        time = try c.time()  // 1
        latitude = try c.latitude()  // 2-3
        longitude = try c.longitude()  // 4-5
        if let q = try c.integer() {  // 6
            guard q <= 9 else { throw .invalidField(index: 6) }
            quality = UInt8(q)
        }
        satellitesInUse = try c.integer()  // 7
        hdop = try c.decimal()  // 8
        altitudeMSL = try c.decimal()  // 9
        c.skip()  // 10: M
        geoidSeparation = try c.decimal()  // 11
        c.skip()  // 12: M
        dgpsAge = try c.decimal()  // 13
        dgpsStation = try c.integer()  // 14
    }

    var message: NMEAMessage { .gga(self) }
}
