/// GLL: geographic position, latitude and longitude.
///
/// `$GNGLL,4404.14012,N,12118.85993,W,001037.00,A,A*67`
/// Fields: 1-4 position, 5 time, 6 status (A valid, V invalid), 7 FAA mode (NMEA 2.3).
public struct GLL: Sendable, Equatable, SentenceDecoder {
    public var latitude: NMEACoordinate?
    public var longitude: NMEACoordinate?
    public var time: NMEATime?
    public var status: UInt8?
    public var faaMode: UInt8?

    /// Reads the fields of `s`, which has its row's `minimumFields` (`NMEAMessage(_:)` checks).
    init(_ s: borrowing NMEASentence) throws(NMEAError) {
        var c = s.cursor()
        latitude = try c.latitude()  // 1-2
        longitude = try c.longitude()  // 3-4
        time = try c.time()  // 5
        status = try c.character()  // 6
        faaMode = try c.character()  // 7
    }

    var message: NMEAMessage { .gll(self) }

    public var isValid: Bool { status == UInt8(ascii: "A") && faaMode != UInt8(ascii: "N") }
}
