/// VTG: course and speed over ground.
///
/// `$GNVTG,,T,,M,0.021,N,0.038,K,A*3C`
/// Fields: 1 course true, 2 `T`, 3 course magnetic, 4 `M`, 5 speed knots, 6 `N`, 7 speed km/h,
/// 8 `K`, 9 FAA mode. The pre-2.0 form without the unit letters
/// (`$GPVTG,054.7,034.4,005.5,010.2`) is accepted too. Courses must be within 0...360 and
/// speeds not negative, else `invalidField`.
public struct VTG: Sendable, Equatable, SentenceDecoder {
    public var courseTrue: NMEADecimal?
    public var courseMagnetic: NMEADecimal?
    public var speedKnots: NMEADecimal?
    public var speedKmh: NMEADecimal?
    public var faaMode: UInt8?

    /// Reads the fields of `s`, which has its row's `minimumFields` (`NMEAMessage(_:)` checks).
    init(_ s: borrowing NMEASentence) throws(NMEAError) {
        var c = s.cursor()
        if s.fieldCount >= 9 {
            courseTrue = try c.course()  // 1
            c.skip()  // 2: T
            courseMagnetic = try c.course()  // 3
            c.skip()  // 4: M
            speedKnots = try c.speed()  // 5
            c.skip()  // 6: N
            speedKmh = try c.speed()  // 7
            c.skip()  // 8: K
            faaMode = try c.character()  // 9
        } else {
            courseTrue = try c.course()  // 1
            courseMagnetic = try c.course()  // 2
            speedKnots = try c.speed()  // 3
            speedKmh = try c.speed()  // 4
        }
    }

    var message: NMEAMessage { .vtg(self) }
}
