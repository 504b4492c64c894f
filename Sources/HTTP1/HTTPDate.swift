/// The `Date` header's format, IMF-fixdate (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`.
///
/// A pure formatter: the pure tier reads no clock, so the server passes the time it read (and
/// formats it once per second, not once per response).
public enum HTTPDate {
    /// Formats `unixSeconds` (seconds since 1970-01-01T00:00:00Z, UTC) as an IMF-fixdate.
    public static func imfFixdate(unixSeconds: Int64) -> String {
        let days = floorDivide(unixSeconds, 86_400)
        let secondOfDay = Int(unixSeconds - days * 86_400)
        let (year, month, day) = civil(fromDays: days)
        // 1970-01-01 was a Thursday (index 4 with Sunday = 0).
        let weekday = Int(((days % 7) + 7 + 4) % 7)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return weekdays[weekday] + ", " + twoDigits(day) + " " + months[month - 1] + " " + fourDigits(year) + " "
            + twoDigits(secondOfDay / 3600) + ":" + twoDigits(secondOfDay / 60 % 60) + ":"
            + twoDigits(secondOfDay % 60) + " GMT"
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// Year, month (1...12), day (1...31) of `days` since 1970-01-01 in the proleptic Gregorian
    /// calendar (Howard Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (Int64, Int, Int) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func twoDigits(_ n: Int) -> String {
        n < 10 ? "0" + String(n) : String(n)
    }

    private static func fourDigits(_ n: Int64) -> String {
        let text = String(n)
        return n >= 0 && n < 1000 ? String(repeating: "0", count: 4 - text.count) + text : text
    }
}
