/// A calendar date, proleptic Gregorian.
public struct CalendarDate: Sendable, Equatable, Comparable {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`, exact for all years).
    public var daysSinceEpoch: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date `daysSinceEpoch` days after 1970-01-01 (`civil_from_days`).
    public init(daysSinceEpoch days: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        self.init(year: yoe + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day)
    }

    /// True for a real calendar day (checks month lengths and leap years).
    public var isValid: Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let length =
            switch month {
            case 2: leap ? 29 : 28
            case 4, 6, 9, 11: 30
            default: 31
            }
        return day <= length
    }

    public static func < (lhs: CalendarDate, rhs: CalendarDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

/// A UTC instant as NMEA carries it: a time of day (nanosecond resolution) and, when some
/// sentence of the cycle supplied one, a date.
public struct UTCTimestamp: Sendable, Equatable {
    public static let nanosecondsPerDay: Int64 = 86_400 * 1_000_000_000

    public var date: CalendarDate?
    /// Nanoseconds since midnight UTC, 0 ..< 86 400 s (a leap second 23:59:60 reads as 86 400 s).
    public var nanosecondsOfDay: Int64

    public init(date: CalendarDate?, nanosecondsOfDay: Int64) {
        self.date = date
        self.nanosecondsOfDay = nanosecondsOfDay
    }

    /// Seconds since the Unix epoch, when the date is known.
    public var unixSeconds: Double? {
        guard let date else { return nil }
        return Double(date.daysSinceEpoch) * 86_400 + Double(nanosecondsOfDay) / 1e9
    }

    /// The same instant on the GPS time scale, as a "timestamp" whose wall-clock reads GPS time
    /// (UTC plus the leap seconds in force), which is what TMM's `gpsTimeStamp` shows.
    public var gpsTime: UTCTimestamp? {
        guard let date, let leap = LeapSeconds.gpsMinusUTC(on: date) else { return nil }
        var ns = nanosecondsOfDay + Int64(leap) * 1_000_000_000
        // Same day (all but the last leap-seconds of a day): the date as it is. A valid date is
        // what the round trip through days since the epoch gives back; an invalid one is
        // normalised by it, as before.
        if ns < Self.nanosecondsPerDay && date.isValid { return UTCTimestamp(date: date, nanosecondsOfDay: ns) }
        var days = date.daysSinceEpoch
        if ns >= Self.nanosecondsPerDay {
            ns -= Self.nanosecondsPerDay
            days += 1
        }
        return UTCTimestamp(date: CalendarDate(daysSinceEpoch: days), nanosecondsOfDay: ns)
    }
}

/// GPS-UTC offsets from IERS Bulletin C (GPS time began equal to UTC on 1980-01-06).
public enum LeapSeconds {
    /// Dates on which GPS-UTC increased by one second (the offset applies from that date on).
    private static let steps: [(year: Int, month: Int)] = [
        (1981, 7), (1982, 7), (1983, 7), (1985, 7), (1988, 1), (1990, 1), (1991, 1), (1992, 7),
        (1993, 7), (1994, 7), (1996, 1), (1997, 7), (1999, 1), (2006, 1), (2009, 1), (2012, 7),
        (2015, 7), (2017, 1),
    ]

    /// GPS-UTC on `date`, or nil before GPS time existed.
    public static func gpsMinusUTC(on date: CalendarDate) -> Int? {
        guard date >= CalendarDate(year: 1980, month: 1, day: 6) else { return nil }
        // Since the last step (every date a receiver reports today): all of them.
        if let last = steps.last, date >= CalendarDate(year: last.year, month: last.month, day: 1) {
            return steps.count
        }
        var offset = 0
        // By index: iterating the array itself allocates an iterator per step in debug builds.
        for i in steps.indices where date >= CalendarDate(year: steps[i].year, month: steps[i].month, day: 1) {
            offset += 1
        }
        return offset
    }
}

extension UTCTimestamp {
    /// The instant `seconds` (plus `nanoseconds`) after the Unix epoch, as gpsd's JSON times are
    /// kept by libgps.
    public init(unixSeconds seconds: Int64, nanoseconds: Int64 = 0) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        self.init(
            date: CalendarDate(daysSinceEpoch: Int(days)),
            nanosecondsOfDay: secondOfDay * 1_000_000_000 + nanoseconds)
    }

    /// Nanoseconds since the Unix epoch when the date is known: an exact key for ordering epochs.
    /// Nil as well for an instant Int64 nanoseconds cannot hold (before 1677 or after 2262).
    public var unixNanoseconds: Int64? {
        guard let date else { return nil }
        let (days, overflow) = Int64(date.daysSinceEpoch).multipliedReportingOverflow(by: Self.nanosecondsPerDay)
        guard !overflow else { return nil }
        let (total, overflowed) = days.addingReportingOverflow(nanosecondsOfDay)
        return overflowed ? nil : total
    }
}
