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
    public mutating func isoTimestampValue(_ time: UTCTimestamp?) {
        separate()
        appendInPlace(maximumCount: Self.maximumTimestampLength) { out in
            Self.writeISOTimestamp(time, to: &out)
        }
    }

    /// The wall-clock instant `unixMilliseconds` as `isoTimestampValue` writes it: the `time` of
    /// `/events` messages and of the dashboard's snapshots.
    public mutating func isoTimestampValue(unixMilliseconds: Int64) {
        isoTimestampValue(BridgeEventEncoder.wallClock(unixMilliseconds))
    }

    /// `gpsTimeStamp`: the UTC instant on the GPS time scale (UTC + GPS-UTC leap seconds), same
    /// format as `isoTimestampValue`. `null` whenever the UTC timestamp itself would be `null`
    /// (so an invalid UTC date is never normalised into a valid GPS date) and before 1980-01-06.
    mutating func gpsTimestampValue(_ time: UTCTimestamp?) {
        separate()
        appendInPlace(maximumCount: Self.maximumTimestampLength) { out in
            Self.writeGPSTimestamp(time, to: &out)
        }
    }

    /// The longest timestamp value: `"9999-12-31T23:59:60.999Z"` with its quotes.
    static let maximumTimestampLength = 26

    /// Appends what `isoTimestampValue` writes, at most `maximumTimestampLength` bytes: every
    /// part in one pass, two digits at a time.
    static func writeISOTimestamp(_ time: UTCTimestamp?, to out: inout OutputSpan<UInt8>) {
        guard let time, let date = time.date, date.isValid, (1...9999).contains(date.year),
            let clock = ClockTime(nanosecondsOfDay: time.nanosecondsOfDay)
        else { return writeNull(to: &out) }
        out.append(UInt8(ascii: "\""))
        writeTwoDigits(date.year / 100, to: &out)
        writeTwoDigits(date.year % 100, to: &out)
        out.append(UInt8(ascii: "-"))
        writeTwoDigits(date.month, to: &out)
        out.append(UInt8(ascii: "-"))
        writeTwoDigits(date.day, to: &out)
        out.append(UInt8(ascii: "T"))
        writeTwoDigits(clock.hour, to: &out)
        out.append(UInt8(ascii: ":"))
        writeTwoDigits(clock.minute, to: &out)
        out.append(UInt8(ascii: ":"))
        writeTwoDigits(clock.second, to: &out)
        if clock.millisecond != 0 {
            out.append(UInt8(ascii: "."))
            writeDigits(UInt64(clock.millisecond), length: 3, to: &out)
        }
        out.append(UInt8(ascii: "Z"))
        out.append(UInt8(ascii: "\""))
    }

    /// Appends what `gpsTimestampValue` writes, at most `maximumTimestampLength` bytes.
    static func writeGPSTimestamp(_ time: UTCTimestamp?, to out: inout OutputSpan<UInt8>) {
        guard let time, let date = time.date, date.isValid,
            ClockTime(nanosecondsOfDay: time.nanosecondsOfDay) != nil
        else { return writeNull(to: &out) }
        writeISOTimestamp(time.gpsTime, to: &out)
    }

    /// Appends what `utcTimeValue` writes, at most `maximumNumberLength` bytes.
    static func writeUTCTime(_ time: UTCTimestamp?, nullWhenUnknown: Bool, to out: inout OutputSpan<UInt8>) {
        if let time, let clock = ClockTime(nanosecondsOfDay: time.nanosecondsOfDay) {
            writeFixedPoint(scaled: clock.hhmmssMilliseconds, decimals: LocationDecimals.time, to: &out)
        } else if nullWhenUnknown {
            writeNull(to: &out)
        } else {
            writeFixedPoint(scaled: 0, decimals: 1, to: &out)
        }
    }

    /// `diffID`: the reference station id as a 4-digit zero-padded string (`"0123"`), or `"-1"`
    /// when unknown or outside 0...9999.
    mutating func diffIDValue(_ stationID: Int?) {
        separate()
        appendInPlace(maximumCount: Self.maximumDiffIDLength) { out in Self.writeDiffID(stationID, to: &out) }
    }

    /// The longest `diffID` value: `"0123"` with its quotes.
    static let maximumDiffIDLength = 6

    /// Appends what `diffIDValue` writes.
    static func writeDiffID(_ stationID: Int?, to out: inout OutputSpan<UInt8>) {
        out.append(UInt8(ascii: "\""))
        if let stationID, (0...9999).contains(stationID) {
            writeTwoDigits(stationID / 100, to: &out)
            writeTwoDigits(stationID % 100, to: &out)
        } else {
            out.append(UInt8(ascii: "-"))
            out.append(UInt8(ascii: "1"))
        }
        out.append(UInt8(ascii: "\""))
    }
}
