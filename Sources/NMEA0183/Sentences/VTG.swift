/// VTG: course and speed over ground.
///
/// `$GNVTG,,T,,M,0.021,N,0.038,K,A*3C`
/// Fields: 1 course true, 2 `T`, 3 course magnetic, 4 `M`, 5 speed knots, 6 `N`, 7 speed km/h,
/// 8 `K`, 9 FAA mode. The pre-2.0 form without the unit letters
/// (`$GPVTG,054.7,034.4,005.5,010.2`) is accepted too.
public struct VTG: Sendable, Equatable {
    public var courseTrue: NMEADecimal?
    public var courseMagnetic: NMEADecimal?
    public var speedKnots: NMEADecimal?
    public var speedKmh: NMEADecimal?
    public var faaMode: UInt8?

    public static let minimumFields = 5

    public init(_ s: borrowing NMEASentence) throws(NMEAError) {
        guard s.fieldCount >= Self.minimumFields else {
            throw .tooFewFields(needed: Self.minimumFields, found: s.fieldCount)
        }
        if s.fieldCount >= 9 {
            courseTrue = try s.decimal(1)
            courseMagnetic = try s.decimal(3)
            speedKnots = try s.decimal(5)
            speedKmh = try s.decimal(7)
            faaMode = try s.character(9)
        } else {
            courseTrue = try s.decimal(1)
            courseMagnetic = try s.decimal(2)
            speedKnots = try s.decimal(3)
            speedKmh = try s.decimal(4)
        }
    }
}
