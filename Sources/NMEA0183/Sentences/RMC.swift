/// RMC: recommended minimum data: time, date, status, position, speed and course.
///
/// `$GNRMC,132819.60,A,4134.49795459,N,09345.03431408,W,0.148,124.888,180320,11.5985,E,D*3F`
/// Fields: 1 time, 2 status (A valid, V warning), 3-6 position, 7 speed (knots), 8 course
/// (degrees true), 9 date ddmmyy, 10-11 magnetic variation, 12 FAA mode (NMEA 2.3),
/// 13 navigational status (NMEA 4.10).
public struct RMC: Sendable, Equatable, SentenceDecoder {
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

    /// Reads the fields of `s`, which has its row's `minimumFields` (`NMEAMessage(_:)` checks).
    init(_ s: borrowing NMEASentence) throws(NMEAError) {
        var c = s.cursor()
        time = try c.time()  // 1
        status = try c.character()  // 2
        latitude = try c.latitude()  // 3-4
        longitude = try c.longitude()  // 5-6
        speedKnots = try c.speed()  // 7
        courseTrue = try c.course()  // 8
        date = try c.date()  // 9
        var modeInDirectionField: UInt8?
        if var variation = try c.decimal() {  // 10
            switch try c.character() {  // 11
            case UInt8(ascii: "E"), nil: magneticVariation = variation
            case UInt8(ascii: "W"):
                variation.value = -variation.value
                magneticVariation = variation
            case let mode? where s.fieldCount == 12 && Self.isFAAMode(mode):  // field 11 is the last
                // Motorola T805 (gpsd's motorola-t805.log): `...,181207,0,A*75` leaves the
                // direction out, so the FAA mode moves into the last field, 11. The variation's sign is unknown.
                modeInDirectionField = mode
            default: throw .invalidField(index: 11)
            }
        } else {
            c.skip()  // 11, not looked at without a variation
        }
        if let modeInDirectionField {
            faaMode = modeInDirectionField
        } else {
            faaMode = try c.character()  // 12
            navigationalStatus = try c.character()  // 13
        }
    }

    var message: NMEAMessage { .rmc(self) }

    /// True when the receiver flags the data valid (status `A`) and the mode is not `N`.
    public var isValid: Bool { status == UInt8(ascii: "A") && faaMode != UInt8(ascii: "N") }

    /// The FAA mode letters of NMEA 2.3 and later.
    static func isFAAMode(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A"), UInt8(ascii: "D"), UInt8(ascii: "E"), UInt8(ascii: "F"), UInt8(ascii: "M"),
            UInt8(ascii: "N"), UInt8(ascii: "P"), UInt8(ascii: "R"), UInt8(ascii: "S"):
            true
        default: false
        }
    }
}
