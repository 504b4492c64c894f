/// What the bridge knows of a gpsd driver (gpsd's DEVICE `driver`, its `type_name`): which of a
/// receiver's two streams carries its epochs exactly.
///
/// For the drivers of NMEA receivers, gpsd passes the receiver's own sentences through, and the
/// bridge's parser reads them at the receiver's precision. For every other driver, gpsd's NMEA
/// stream is its *pseudo-NMEA* (gpsd/pseudonmea.c: latitude and longitude printed to 0.0001
/// minute, about 18 cm; heights re-derived from gpsd's geoid model; no RTK quality), so the epochs
/// come from gpsd's own reports instead (TPV, SKY, GST at full double precision).
public struct GPSDDriver: Sendable, Equatable {
    /// gpsd's name, e.g. `NMEA0183`, `u-blox`, `SiRF`, `Trimble TSIP`; empty before gpsd has
    /// identified the receiver.
    public var name: String

    public init(_ name: String) {
        self.name = name
    }

    /// gpsd 3.22's drivers whose packets are NMEA 0183 sentences (drivers/drivers.c, every
    /// driver with `packet_type = NMEA_PACKET`), passed through as the receiver sent them.
    public static let nmeaDrivers: Set<String> = [
        "NMEA0183", "Garmin NMEA", "Ashtech", "San Jose Navigation FV18", "Furuno Electric GH-79L4",
        "Delorme TripMate", "Pre-2003 Delorme EarthMate", "True North", "OceanServer OS5000",
        "Jackson Labs Fury", "MTK-3301", "iSync",
    ]

    /// Where this driver's epochs are read from. A driver gpsd has not named yet is taken as
    /// NMEA: gpsd starts every serial device on the NMEA driver and names a binary one as soon as
    /// its first packet is recognised.
    public var source: EpochSource {
        name.isEmpty || Self.nmeaDrivers.contains(name) ? .nmea : .gpsdReports
    }

    /// TPV's `eph`/`epv` are the receiver's own accuracy estimates, not gpsd's DOP × UERE model
    /// (libgpsd_core.c `gpsd_error_model` fills them only when the driver did not): gpsd's u-blox
    /// driver sets them from NAV-PVT's and NAV-HPPOSLLH's hAcc/vAcc (driver_ubx.c). Other binary
    /// drivers that set them (SiRF, GREIS, NavCom, ...) do so from DOPs or mixed sources, and
    /// their fixes carry no accuracy rather than a guessed one.
    public var reportsReceiverAccuracy: Bool { name == "u-blox" }
}

/// Which of gpsd's two streams a receiver's epochs come from.
public enum EpochSource: String, Sendable, Equatable, CaseIterable {
    /// The receiver's NMEA sentences, through the bridge's zero-copy parser.
    case nmea
    /// gpsd's JSON reports (TPV, SKY, GST), as libgps unpacked them.
    case gpsdReports = "gpsd-json"
}
