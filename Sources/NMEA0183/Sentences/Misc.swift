/// GST: pseudorange error statistics (the source of TMM's hrms and vrms).
///
/// `$GNGST,001037.00,13,,,,1.9,1.4,3.6*7B`
/// Fields: 1 time, 2 RMS of range residuals, 3 error ellipse semi-major, 4 semi-minor,
/// 5 orientation, 6 sigma latitude, 7 sigma longitude, 8 sigma altitude (metres, 1-sigma).
public struct GST: Sendable, Equatable, SentenceDecoder {
    public var time: NMEATime?
    public var rangeRMS: NMEADecimal?
    public var semiMajor: NMEADecimal?
    public var semiMinor: NMEADecimal?
    public var orientation: NMEADecimal?
    public var sigmaLatitude: NMEADecimal?
    public var sigmaLongitude: NMEADecimal?
    public var sigmaAltitude: NMEADecimal?

    /// Reads the fields of `s`, which has its row's `minimumFields` (`NMEAMessage(_:)` checks).
    init(_ s: borrowing NMEASentence) throws(NMEAError) {
        var c = s.cursor()
        time = try c.time()  // 1
        rangeRMS = try c.decimal()  // 2
        semiMajor = try c.decimal()  // 3
        semiMinor = try c.decimal()  // 4
        orientation = try c.decimal()  // 5
        sigmaLatitude = try c.decimal()  // 6
        sigmaLongitude = try c.decimal()  // 7
        sigmaAltitude = try c.decimal()  // 8
    }

    var message: NMEAMessage { .gst(self) }
}

/// ZDA: time and date with a four-digit year.
///
/// `$GNZDA,001037.00,12,04,2019,00,00*7C`
/// Fields: 1 time, 2 day, 3 month, 4 year, 5-6 local zone hours and minutes.
public struct ZDA: Sendable, Equatable, SentenceDecoder {
    public var time: NMEATime?
    public var date: NMEADate?

    /// Reads the fields of `s`, which has its row's `minimumFields` (`NMEAMessage(_:)` checks).
    init(_ s: borrowing NMEASentence) throws(NMEAError) {
        var c = s.cursor()
        time = try c.time()  // 1
        let day = try c.integer(), month = try c.integer(), year = try c.integer()  // 2, 3, 4
        if let day, let month, let year {
            guard (1...31).contains(day) else { throw .invalidField(index: 2) }
            guard (1...12).contains(month) else { throw .invalidField(index: 3) }
            guard (1980...9999).contains(year) else { throw .invalidField(index: 4) }
            date = NMEADate(year: year, month: month, day: day)
        }
    }

    var message: NMEAMessage { .zda(self) }
}

/// HDT: true heading.
///
/// `$GPHDT,123.456,T*32`. Fields: 1 heading (degrees true), 2 `T`.
public struct HDT: Sendable, Equatable, SentenceDecoder {
    public var heading: NMEADecimal?

    /// Reads the fields of `s`, which has its row's `minimumFields` (`NMEAMessage(_:)` checks).
    init(_ s: borrowing NMEASentence) throws(NMEAError) {
        var c = s.cursor()
        heading = try c.course()  // 1
    }

    var message: NMEAMessage { .hdt(self) }
}

/// Trimble `$PTNL,GGK`: time, date, position, quality and ellipsoidal height.
///
/// `$PTNL,GGK,172814.00,071296,3723.46587704,N,12202.26957864,W,3,06,1.7,EHT-6.777,M*4B`
/// Fields: 1 `GGK`, 2 time, 3 date `mmddyy`, 4-7 position, 8 quality (Trimble numbering: 3 is
/// RTK fixed, 2 RTK float), 9 satellites, 10 DOP, 11 `EHT` + ellipsoidal height, 12 `M`.
public struct PTNLGGK: Sendable, Equatable, SentenceDecoder {
    public var time: NMEATime?
    public var date: NMEADate?
    public var latitude: NMEACoordinate?
    public var longitude: NMEACoordinate?
    /// Raw Trimble quality 0...13 (see `FixQuality(ggkQuality:)` in GNSS).
    public var quality: UInt8?
    public var satellitesInUse: Int?
    public var dop: NMEADecimal?
    public var ellipsoidalHeight: NMEADecimal?

    /// Reads the fields of `s`, which has its row's `minimumFields` (`NMEAMessage(_:)` checks).
    init(_ s: borrowing NMEASentence) throws(NMEAError) {
        var c = s.cursor()
        c.skip()  // 1: GGK
        time = try c.time()  // 2
        date = try c.date(monthFirst: true)  // 3
        latitude = try c.latitude()  // 4-5
        longitude = try c.longitude()  // 6-7
        if let q = try c.integer() {  // 8
            guard q <= 13 else { throw .invalidField(index: 8) }
            quality = UInt8(q)
        }
        satellitesInUse = try c.integer()  // 9
        dop = try c.decimal()  // 10
        let height = s.bytes.extracting(c.fieldRange())  // 11
        if !height.isEmpty {
            // "EHT-6.777": the prefix is part of the field.
            guard height.count > 3, height[0] == UInt8(ascii: "E"), height[1] == UInt8(ascii: "H"),
                height[2] == UInt8(ascii: "T")
            else { throw .invalidField(index: 11) }
            ellipsoidalHeight = try NMEASentence.parseDecimal(height.extracting(3..<height.count), index: 11)
        }
    }

    var message: NMEAMessage { .ptnlGGK(self) }
}
