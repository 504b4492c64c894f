/// RMC: recommended minimum data: time, date, status, position, speed and course.
///
/// `$GNRMC,132819.60,A,4134.49795459,N,09345.03431408,W,0.148,124.888,180320,11.5985,E,D*3F`
/// Fields: 1 time, 2 status (A valid, V warning), 3-6 position, 7 speed (knots), 8 course
/// (degrees true), 9 date ddmmyy, 10-11 magnetic variation, 12 FAA mode (NMEA 2.3),
/// 13 navigational status (NMEA 4.10).
public struct RMC: Sendable, Equatable {
    public var time: NMEATime?
    /// `A` data valid, `V` receiver warning.
    public var status: UInt8?
    public var latitude: NMEACoordinate?
    public var longitude: NMEACoordinate?
    /// Speed over ground, knots (never negative).
    public var speedKnots: NMEADecimal?
    /// Course over ground, degrees true (0...360).
    public var courseTrue: NMEADecimal?
    public var date: NMEADate?
    /// Magnetic variation, degrees, east positive.
    public var magneticVariation: NMEADecimal?
    public var faaMode: UInt8?
    public var navigationalStatus: UInt8?

    public static let minimumFields = 10

    public init(_ s: borrowing NMEASentence) throws(NMEAError) {
        guard s.fieldCount >= Self.minimumFields else {
            throw .tooFewFields(needed: Self.minimumFields, found: s.fieldCount)
        }
        var c = s.cursor()
        time = try c.time()  // 1
        status = try c.character()  // 2
        latitude = try c.latitude()  // 3-4
        longitude = try c.longitude()  // 5-6
        speedKnots = try c.speed()  // 7
        courseTrue = try c.course()  // 8
        date = try c.date()  // 9
        if var variation = try c.decimal() {  // 10
            switch try c.character() {  // 11
            case UInt8(ascii: "E"), nil: break
            case UInt8(ascii: "W"): variation.value = -variation.value
            default: throw .invalidField(index: 11)
            }
            magneticVariation = variation
        } else {
            c.skip()  // 11, not looked at without a variation
        }
        faaMode = try c.character()  // 12
        navigationalStatus = try c.character()  // 13
    }

    /// True when the receiver flags the data valid (status `A`) and the mode is not `N`.
    public var isValid: Bool { status == UInt8(ascii: "A") && faaMode != UInt8(ascii: "N") }
}
