/// One receiver epoch: everything the sentences of one cycle said, converted to SI units.
///
/// This is the edge where NMEA fixed-point values become `Double`s: the epoch assembler fills a
/// `Position` once per cycle and the TMM encoders read it once per cycle. A `nil` means "the
/// receiver did not say", never zero. Plain value type: it crosses from the gpsd thread to the
/// io thread as is and holds no heap storage (the satellite list is inline).
public struct Position: Sendable, Equatable {
    /// UTC of the epoch, if any sentence of the cycle carried a time.
    public var time: UTCTimestamp?

    /// Latitude in degrees, north positive (WGS 84 as the receiver reports it).
    public var latitude: Double?
    /// Longitude in degrees, east positive.
    public var longitude: Double?
    /// Height above mean sea level (geoid), metres: GGA/GNS altitude.
    public var mslHeight: Double?
    /// Geoid separation (undulation), metres: ellipsoid height minus MSL height.
    public var undulation: Double?
    /// Ellipsoidal height in metres when the receiver gave it directly (`$PTNL,GGK` EHT).
    public var ellipsoidalHeight: Double?

    /// Speed over ground, metres per second.
    public var speed: Double?
    /// Course over ground, degrees clockwise from true north.
    public var bearing: Double?
    /// True heading from `HDT`, degrees (dual-antenna receivers).
    public var heading: Double?

    /// What kind of solution this is; `.noFix` when the receiver reported none.
    public var quality: FixQuality = .noFix
    /// Age of differential corrections, seconds.
    public var diffAge: Double?
    /// Differential reference station id (0...1023 in GGA), if given.
    public var diffStationID: Int?

    /// Dilutions of precision from GSA (PDOP, VDOP) and GGA/GSA (HDOP).
    public var pdop: Double?
    public var hdop: Double?
    public var vdop: Double?

    /// 1-sigma errors from GST, metres. `hrms`/`vrms` are derived from these only.
    public var sigmaLatitude: Double?
    public var sigmaLongitude: Double?
    public var sigmaAltitude: Double?
    /// GST RMS of the pseudorange residuals, metres.
    public var rangeRMS: Double?
    /// Horizontal and vertical accuracy as the receiver itself estimated them, metres, where it
    /// reports them and there is no GST: a u-blox receiver's hAcc/vAcc, which gpsd passes as
    /// `eph`/`epv` (never gpsd's own DOP-based estimate). docs/input.md, "Two sources".
    public var receiverHorizontalAccuracy: Double?
    public var receiverVerticalAccuracy: Double?

    /// Satellites used in the solution as the position sentence reported it (GGA/GNS/GGK field).
    public var satellitesInUse: Int?
    /// The sky as seen by the last complete GSV/GSA set (kept across epochs without GSV).
    public var sky = SkyView()

    public init() {}

    /// Ellipsoidal height in metres: the receiver's own EHT, else MSL height plus undulation.
    public var altitude: Double? {
        if let ellipsoidalHeight { return ellipsoidalHeight }
        guard let mslHeight, let undulation else { return nil }
        return mslHeight + undulation
    }

    /// Horizontal RMS accuracy, metres: sqrt(σlat² + σlon²) from GST, else the receiver's own
    /// horizontal accuracy estimate; never derived from DOPs.
    public var hrms: Double? {
        guard let sigmaLatitude, let sigmaLongitude else { return receiverHorizontalAccuracy }
        return (sigmaLatitude * sigmaLatitude + sigmaLongitude * sigmaLongitude).squareRoot()
    }

    /// Vertical RMS accuracy, metres: σalt from GST, else the receiver's own vertical estimate.
    public var vrms: Double? { sigmaAltitude ?? receiverVerticalAccuracy }

    /// Satellites in view: the GSV sky when the receiver sends GSV; otherwise the satellites in
    /// use, since a receiver that sends no GSV (nmea-rtk.log: GGA and RMC only) sees at least those.
    public var satellitesInView: Int {
        sky.count > 0 ? sky.count : (satellitesInUse ?? 0)
    }

    /// Satellites used in the solution: the position sentence's count, else the GSA marks.
    public var satellitesUsed: Int { satellitesInUse ?? sky.usedCount }

    /// True when the epoch carries a usable horizontal position.
    public var hasFix: Bool { quality != .noFix && latitude != nil && longitude != nil }
}
