import GNSS

/// A UTC (or GPS-scale) instant split into the parts TMM's time fields print, to the millisecond.
///
/// Milliseconds are truncated, never rounded, so a time never rolls forward into the next second
/// or day. A leap second (23:59:60.x, `nanosecondsOfDay` ≥ 86 400 s) keeps its 60.
struct ClockTime: Equatable {
    var hour: Int
    var minute: Int
    var second: Int
    var millisecond: Int

    /// `nil` when the time of day is outside 0 ..< 86 401 s (not a time NMEA can express).
    init?(nanosecondsOfDay: Int64) {
        guard nanosecondsOfDay >= 0, nanosecondsOfDay < UTCTimestamp.nanosecondsPerDay + 1_000_000_000 else {
            return nil
        }
        let milliseconds = Int(nanosecondsOfDay / 1_000_000)
        hour = min(milliseconds / 3_600_000, 23)
        let afterHour = milliseconds - hour * 3_600_000
        minute = min(afterHour / 60_000, 59)
        let afterMinute = afterHour - minute * 60_000
        second = afterMinute / 1000
        millisecond = afterMinute % 1000
    }

    /// TMM's `utcTime` number `hhmmss.sss` scaled by 1000 (13:28:19.600 → 132 819 600).
    var hhmmssMilliseconds: Int64 {
        Int64(hour) * 10_000_000 + Int64(minute) * 100_000 + Int64(second) * 1000 + Int64(millisecond)
    }
}

extension JSONWriter {
    /// `utcTime`: `hhmmss.sss` as a JSON number (`132819.6`, `180000.0`); `null` without a time
    /// when `nullWhenUnknown`, else `0.0`.
    mutating func utcTimeValue(_ time: UTCTimestamp?, nullWhenUnknown: Bool) {
        if let time, let clock = ClockTime(nanosecondsOfDay: time.nanosecondsOfDay) {
            fixedPoint(scaled: clock.hhmmssMilliseconds, decimals: LocationDecimals.time)
        } else if nullWhenUnknown {
            null()
        } else {
            fixedPoint(scaled: 0, decimals: 1)
        }
    }

    /// An ISO 8601 UTC timestamp string, `2020-03-18T13:28:19.600Z`, with the milliseconds only
    /// when they are not zero (`2024-02-22T18:00:00Z`). `null` without a date, with an invalid
    /// date, a year outside 1...9999, or a time of day out of range.
    mutating func isoTimestampValue(_ time: UTCTimestamp?) {
        guard let time, let date = time.date, date.isValid, (1...9999).contains(date.year),
              let clock = ClockTime(nanosecondsOfDay: time.nanosecondsOfDay)
        else { return null() }
        beginString()
        appendStringDigits(UInt64(date.year), minimumDigits: 4)
        appendStringByte(UInt8(ascii: "-"))
        appendStringDigits(UInt64(date.month), minimumDigits: 2)
        appendStringByte(UInt8(ascii: "-"))
        appendStringDigits(UInt64(date.day), minimumDigits: 2)
        appendStringByte(UInt8(ascii: "T"))
        appendStringDigits(UInt64(clock.hour), minimumDigits: 2)
        appendStringByte(UInt8(ascii: ":"))
        appendStringDigits(UInt64(clock.minute), minimumDigits: 2)
        appendStringByte(UInt8(ascii: ":"))
        appendStringDigits(UInt64(clock.second), minimumDigits: 2)
        if clock.millisecond != 0 {
            appendStringByte(UInt8(ascii: "."))
            appendStringDigits(UInt64(clock.millisecond), minimumDigits: 3)
        }
        appendStringByte(UInt8(ascii: "Z"))
        endString()
    }

    /// `gpsTimeStamp`: the UTC instant on the GPS time scale (UTC + GPS-UTC leap seconds), same
    /// format as `isoTimestampValue`. `null` whenever the UTC timestamp itself would be `null`
    /// (so an invalid UTC date is never normalised into a valid GPS date) and before 1980-01-06.
    mutating func gpsTimestampValue(_ time: UTCTimestamp?) {
        guard let time, let date = time.date, date.isValid,
              ClockTime(nanosecondsOfDay: time.nanosecondsOfDay) != nil
        else { return null() }
        isoTimestampValue(time.gpsTime)
    }

    /// `diffID`: the reference station id as a 4-digit zero-padded string (`"0123"`), or `"-1"`
    /// when unknown or outside 0...9999.
    mutating func diffIDValue(_ stationID: Int?) {
        guard let stationID, (0...9999).contains(stationID) else { return string("-1") }
        beginString()
        appendStringDigits(UInt64(stationID), minimumDigits: 4)
        endString()
    }
}
