import ByteCoding
import GNSS

// The GGA sentence the client sends upstream: a network caster (VRS, nearest base) needs the
// rover's approximate position to make or pick its corrections.
//
//   $GPGGA,hhmmss.ss,DDMM.MMMMMMMM,N,DDDMM.MMMMMMMM,W,4,12,0.8,1666.5,M,-16.5,M,1.0,0001*hh\r\n
//
// Choices: talker `GP`, which every caster accepts (some refuse `GN`); minutes to 8 decimals (about
// 0.02 mm: the receiver's own precision is kept, never the caster's problem to round); HDOP,
// altitude, undulation and age to one decimal, as NMEA 0183 writes them; satellites and station as
// the standard's fixed widths (2 and 4 digits). A value the receiver did not give is an empty field.
// Numbers are formatted with integer arithmetic on the rounded, scaled value, so 59.999999996
// minutes carries into the degrees instead of printing as 60.
//
// NMEA0183 computes checksums inline while it validates and exposes no function for them; this
// file is the one place that writes one.

/// Builds the upstream GGA sentence from a position.
public enum GGAWriter {
    /// The sentence for `position`, CRLF-terminated, or nil when it is no fix (quality 0 or no
    /// latitude/longitude): a caster must never be sent a position the receiver does not have.
    public static func sentence(for position: Position) -> [UInt8]? {
        guard isWritable(position), let latitude = position.latitude, let longitude = position.longitude else {
            return nil
        }
        var fields: [String] = ["GPGGA"]
        fields.append(position.time.map { time(nanosecondsOfDay: $0.nanosecondsOfDay) } ?? "")
        fields.append(angle(latitude, degreeDigits: 2))
        fields.append(latitude < 0 ? "S" : "N")
        fields.append(angle(longitude, degreeDigits: 3))
        fields.append(longitude < 0 ? "W" : "E")
        fields.append(String(ggaQuality(position.quality)))
        fields.append(position.satellitesInUse.map { padded(min(max($0, 0), 99), width: 2) } ?? "")
        fields.append(decimal(position.hdop, decimals: 1))
        fields.append(decimal(position.mslHeight, decimals: 1))
        fields.append("M")
        fields.append(decimal(position.undulation, decimals: 1))
        fields.append("M")
        fields.append(decimal(position.diffAge, decimals: 1))
        fields.append(position.diffStationID.map { padded(min(max($0, 0), 9999), width: 4) } ?? "")
        var bytes = Array(("$" + fields.joined(separator: ",")).utf8)
        bytes.append(ASCII.star)
        Hex.append(checksum(bytes.span.extracting(1..<(bytes.count - 1))), to: &bytes)
        bytes.append(ASCII.cr)
        bytes.append(ASCII.lf)
        return bytes
    }

    /// Whether `position` makes a sentence: a fix (quality above 0) with a latitude and longitude
    /// that are finite and in range.
    public static func isWritable(_ position: Position) -> Bool {
        guard position.hasFix, let latitude = position.latitude, let longitude = position.longitude else {
            return false
        }
        return latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
    }

    /// The NMEA 0183 checksum: the XOR of every byte between `$` and `*`.
    public static func checksum(_ bytes: Span<UInt8>) -> UInt8 {
        var sum: UInt8 = 0
        for i in bytes.indices { sum ^= bytes[i] }
        return sum
    }

    /// GGA field 6 for `quality` (NMEA 0183 4.11: 0 invalid, 1 GPS, 2 DGPS, 3 PPS, 4 RTK fixed,
    /// 5 RTK float, 6 estimated, 7 manual, 8 simulator).
    static func ggaQuality(_ quality: FixQuality) -> Int {
        switch quality {
        case .noFix: 0
        case .autonomous: 1
        case .dgps: 2
        case .pps: 3
        case .rtkFixed: 4
        case .rtkFloat: 5
        case .estimated: 6
        case .manual: 7
        case .simulated: 8
        }
    }

    /// `hhmmss.ss` (a leap second reads 23:59:60); hundredths truncated, so the time never rounds
    /// into the next second, minute or day.
    static func time(nanosecondsOfDay: Int64) -> String {
        let ns = min(max(nanosecondsOfDay, 0), 86_400_999_999_999)
        let seconds = ns / 1_000_000_000
        let hundredths = ns / 10_000_000 % 100
        let (hours, minutes, second) =
            seconds >= 86_400 ? (23, 59, 60) : (seconds / 3600, seconds / 60 % 60, seconds % 60)
        return padded(Int(hours), width: 2) + padded(Int(minutes), width: 2) + padded(Int(second), width: 2) + "."
            + padded(Int(hundredths), width: 2)
    }

    /// `DDMM.MMMMMMMM` (or `DDDMM...` with 3 degree digits) for the absolute value of `degrees`.
    static func angle(_ degrees: Double, degreeDigits: Int) -> String {
        let minuteScale: Int64 = 100_000_000
        let total = Int64((abs(degrees) * 60 * Double(minuteScale)).rounded())
        let wholeDegrees = total / (60 * minuteScale)
        let minutes = total % (60 * minuteScale)
        return padded(Int(wholeDegrees), width: degreeDigits) + padded(Int(minutes / minuteScale), width: 2) + "."
            + padded(Int(minutes % minuteScale), width: 8)
    }

    /// `value` with `decimals` decimals, or an empty field for nil, NaN or an absurd magnitude.
    static func decimal(_ value: Double?, decimals: Int) -> String {
        guard let value, value.isFinite, abs(value) < 1e9 else { return "" }
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((abs(value) * Double(scale)).rounded())
        let sign = value < 0 && scaled != 0 ? "-" : ""
        let whole = String(scaled / scale)
        return decimals == 0 ? sign + whole : sign + whole + "." + padded(Int(scaled % scale), width: decimals)
    }

    /// `value` (not negative) with leading zeros to `width` digits.
    static func padded(_ value: Int, width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
