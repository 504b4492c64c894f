import NMEA0183

/// gpsd's own reports of a receiver, as libgps unpacked them: the second source of epochs, for
/// receivers gpsd decodes in binary (u-blox UBX, SiRF, TSIP, GREIS, ...), whose NMEA stream is
/// only gpsd's pseudo-NMEA (latitude printed to 0.0001 minute, heights re-derived; docs/input.md,
/// "Two sources"). Every value is gpsd's, in gpsd's units (degrees, metres, m/s), at full double
/// precision; `nil` means gpsd did not send it (libgps's NaN), never zero.
public enum GPSDReport: Sendable, Equatable {
    /// A TPV object: one fix (or a report that there is none).
    case fix(GPSDFix)
    /// A SKY object: satellites and DOPs.
    case sky(GPSDSky)
    /// A GST object: pseudorange noise statistics (1-sigma errors).
    case noise(GPSDNoise)
}

/// A TPV report.
public struct GPSDFix: Sendable, Equatable {
    /// The fix's time, UTC (gpsd's `time`); nil when the report had none.
    public var time: UTCTimestamp?
    /// gpsd's `mode`: 0 not seen, 1 no fix, 2 two-dimensional, 3 three-dimensional.
    public var mode: Int
    /// gpsd 3.22's `status` (gps.h STATUS_*); 0 when gpsd left it out, as it does for a plain fix.
    public var status: Int
    public var latitude: Double?
    public var longitude: Double?
    /// Height above the ellipsoid (`altHAE`), above mean sea level (`altMSL`), and the geoid
    /// separation (`geoidSep`), metres: as gpsd gives them, never re-derived from each other.
    public var altitudeHAE: Double?
    public var altitudeMSL: Double?
    public var geoidSeparation: Double?
    /// Speed over ground (m/s), course over ground (`track`, degrees true), vertical speed (m/s).
    public var speed: Double?
    public var track: Double?
    public var climb: Double?
    /// gpsd's horizontal and vertical error estimates, metres (`eph`, `epv`): the receiver's own
    /// for some drivers (u-blox hAcc/vAcc), gpsd's DOP × UERE model for others.
    public var eph: Double?
    public var epv: Double?
    /// Age of the differential corrections, seconds, and the reference station (`dgpsAge`, `dgpsSta`).
    public var dgpsAge: Double?
    public var dgpsStation: Int?

    public init(
        time: UTCTimestamp? = nil, mode: Int = 0, status: Int = 0, latitude: Double? = nil,
        longitude: Double? = nil, altitudeHAE: Double? = nil, altitudeMSL: Double? = nil,
        geoidSeparation: Double? = nil, speed: Double? = nil, track: Double? = nil, climb: Double? = nil,
        eph: Double? = nil, epv: Double? = nil, dgpsAge: Double? = nil, dgpsStation: Int? = nil
    ) {
        self.time = time
        self.mode = mode
        self.status = status
        self.latitude = latitude
        self.longitude = longitude
        self.altitudeHAE = altitudeHAE
        self.altitudeMSL = altitudeMSL
        self.geoidSeparation = geoidSeparation
        self.speed = speed
        self.track = track
        self.climb = climb
        self.eph = eph
        self.epv = epv
        self.dgpsAge = dgpsAge
        self.dgpsStation = dgpsStation
    }

    /// The kind of solution (`FixQuality(gpsdMode:status:)`).
    public var quality: FixQuality { FixQuality(gpsdMode: mode, status: status) }
}

/// A GST report: 1-sigma errors, metres.
public struct GPSDNoise: Sendable, Equatable {
    public var time: UTCTimestamp?
    /// RMS of the pseudorange residuals.
    public var rms: Double?
    public var latitudeError: Double?
    public var longitudeError: Double?
    public var altitudeError: Double?

    public init(
        time: UTCTimestamp? = nil, rms: Double? = nil, latitudeError: Double? = nil,
        longitudeError: Double? = nil, altitudeError: Double? = nil
    ) {
        self.time = time
        self.rms = rms
        self.latitudeError = latitudeError
        self.longitudeError = longitudeError
        self.altitudeError = altitudeError
    }
}

/// A SKY report: the satellites (inline, as a `Position` holds them) and the DOPs.
public struct GPSDSky: Sendable, Equatable {
    public var time: UTCTimestamp?
    public var pdop: Double?
    public var hdop: Double?
    public var vdop: Double?
    /// Satellites used in the solution (libgps counts the `used` marks).
    public var satellitesUsed: Int?
    /// The satellites listed; empty when the report carried DOPs only.
    public var satellites = SkyView()

    public init(
        time: UTCTimestamp? = nil, pdop: Double? = nil, hdop: Double? = nil, vdop: Double? = nil,
        satellitesUsed: Int? = nil
    ) {
        self.time = time
        self.pdop = pdop
        self.hdop = hdop
        self.vdop = vdop
        self.satellitesUsed = satellitesUsed
    }
}

extension Constellation {
    /// A satellite of a gpsd SKY report: by its u-blox `gnssid` when gpsd gave one (0 GPS,
    /// 1 SBAS, 2 Galileo, 3 BeiDou, 4 IMES, 5 QZSS, 6 GLONASS, 7 NavIC), else by gpsd's NMEA-style
    /// PRN ranges. IMES (indoor transmitters on GPS L1) is counted as GPS.
    public init(gpsdGNSSID gnssid: Int?, prn: Int) {
        switch gnssid {
        case 0, 4: self = .gps
        case 1: self = .sbas
        case 2: self = .galileo
        case 3: self = .beidou
        case 5: self = .qzss
        case 6: self = .glonass
        case 7: self = .irnss
        default:
            // The ranges an NMEA GSV of a combined talker uses, which gpsd's PRNs follow.
            self.init(satelliteID: UInt16(clamping: prn), system: nil, talker: .combined)
        }
    }
}

extension Satellite {
    /// The satellite number a TMM client sees, for a satellite of a gpsd SKY report: what an NMEA
    /// receiver's GSV would say. GPS, SBAS and GLONASS keep gpsd's PRN (GLONASS 65-96, as NMEA
    /// numbers it); Galileo, BeiDou, QZSS and NavIC, which gpsd moves to 301+, 401+, 193+ ranges,
    /// take the constellation's own number (`svid`), as their NMEA 4.10 talkers do.
    public static func gpsdNumber(prn: Int, svid: Int, in constellation: Constellation) -> UInt16 {
        switch constellation {
        case .galileo, .beidou, .qzss, .irnss: UInt16(clamping: svid > 0 ? svid : prn)
        default: UInt16(clamping: prn)
        }
    }
}
