// Typed field values. Numbers stay exact fixed point (as minmea does) until the GNSS layer
// converts them to SI doubles once per epoch: "The conversion is not reversible".

/// An exact decimal from an NMEA field: `value / 10^scale` ("-12.340" is -12340 at scale 3).
public struct NMEADecimal: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var value: Int64
    public var scale: UInt8

    public init(value: Int64, scale: UInt8) {
        self.value = value
        self.scale = scale
    }

    /// The nearest `Double`.
    public var doubleValue: Double { Double(value) / NMEADecimal.powerOf10(scale) }

    /// The value with at most `scale` digits after the point, or nil if it does not fit.
    public func rescaled(to newScale: UInt8) -> Int64? {
        var v = value
        var s = scale
        while s < newScale {
            let (m, overflow) = v.multipliedReportingOverflow(by: 10)
            if overflow { return nil }
            v = m
            s += 1
        }
        while s > newScale {
            v /= 10
            s -= 1
        }
        return v
    }

    public var description: String {
        var text = String(value.magnitude)
        if scale > 0 {
            while text.count <= Int(scale) { text = "0" + text }
            text.insert(".", at: text.index(text.endIndex, offsetBy: -Int(scale)))
        }
        return value < 0 ? "-" + text : text
    }

    static func powerOf10(_ n: UInt8) -> Double {
        var p = 1.0
        for _ in 0..<n { p *= 10 }
        return p
    }
}

/// A UTC time of day from an `hhmmss.sss` field.
public struct NMEATime: Sendable, Equatable, Hashable, Comparable {
    /// Nanoseconds since midnight; 23:59:60 (a leap second) is 86 400 s.
    public var nanosecondsOfDay: Int64

    public init(nanosecondsOfDay: Int64) { self.nanosecondsOfDay = nanosecondsOfDay }

    public init(hours: Int, minutes: Int, seconds: Int, nanoseconds: Int = 0) {
        nanosecondsOfDay = (Int64(hours) * 3600 + Int64(minutes) * 60 + Int64(seconds)) * 1_000_000_000
            + Int64(nanoseconds)
    }

    /// True during a leap second (23:59:60.x).
    public var isLeapSecond: Bool { nanosecondsOfDay >= 86_400_000_000_000 }
    public var hours: Int { isLeapSecond ? 23 : Int(nanosecondsOfDay / 3_600_000_000_000) }
    public var minutes: Int { isLeapSecond ? 59 : Int(nanosecondsOfDay / 60_000_000_000 % 60) }
    public var seconds: Int { isLeapSecond ? 60 : Int(nanosecondsOfDay / 1_000_000_000 % 60) }
    public var nanoseconds: Int { Int(nanosecondsOfDay % 1_000_000_000) }

    public static func < (lhs: NMEATime, rhs: NMEATime) -> Bool { lhs.nanosecondsOfDay < rhs.nanosecondsOfDay }
}

/// A calendar date from a `ddmmyy` (RMC), `mmddyy` (Trimble GGK) or ZDA field set.
public struct NMEADate: Sendable, Equatable, Hashable {
    /// Four-digit year. Two-digit years are placed in 1980...2079 (GPS time starts in 1980).
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The four-digit year for a two-digit NMEA year.
    public static func expandYear(_ twoDigits: Int) -> Int { twoDigits < 80 ? 2000 + twoDigits : 1900 + twoDigits }
}

/// Hemisphere-signed latitude or longitude in NMEA `(d)ddmm.mmmm` form, kept exact.
public struct NMEACoordinate: Sendable, Equatable, Hashable {
    /// `ddmm.mmmm` as fixed point, already negative for S or W.
    public var raw: NMEADecimal

    public init(raw: NMEADecimal) { self.raw = raw }

    /// Decimal degrees, computed once: whole degrees plus minutes / 60.
    public var degrees: Double {
        let scale = NMEADecimal.powerOf10(raw.scale)
        let magnitude = raw.value.magnitude
        let unitsPerDegree = UInt64(100) * UInt64(scale)
        let wholeDegrees = magnitude / unitsPerDegree
        let minuteUnits = magnitude % unitsPerDegree
        let value = Double(wholeDegrees) + Double(minuteUnits) / (60 * scale)
        return raw.value < 0 ? -value : value
    }
}

// MARK: - Field scanners

extension NMEASentence {
    /// Field `index` as an exact decimal (`-12.5`, `+3`, `.5`); nil when empty.
    public func decimal(_ index: Int) throws(NMEAError) -> NMEADecimal? {
        try NMEASentence.parseDecimal(field(index), index: index)
    }

    /// Field `index` as a non-negative integer (`07`, `0133`); nil when empty.
    public func integer(_ index: Int) throws(NMEAError) -> Int? {
        let f = field(index)
        if f.isEmpty { return nil }
        guard f.count <= 9 else { throw .invalidField(index: index) }
        var value = 0
        for i in f.indices {
            guard ASCII.isDigit(f[i]) else { throw .invalidField(index: index) }
            value = value * 10 + Int(f[i] &- ASCII.zero)
        }
        return value
    }

    /// Field `index` as a single character (`A`, `N`); nil when empty.
    public func character(_ index: Int) throws(NMEAError) -> UInt8? {
        let f = field(index)
        if f.isEmpty { return nil }
        guard f.count == 1 else { throw .invalidField(index: index) }
        return f[0]
    }

    /// Field `index` as `hhmmss[.s...]`; nil when empty.
    public func time(_ index: Int) throws(NMEAError) -> NMEATime? {
        let f = field(index)
        if f.isEmpty { return nil }
        guard f.count >= 6 else { throw .invalidField(index: index) }
        var digits = 0
        for i in 0..<6 {
            guard ASCII.isDigit(f[i]) else { throw .invalidField(index: index) }
            digits = digits * 10 + Int(f[i] &- ASCII.zero)
        }
        let hours = digits / 10_000
        let minutes = digits / 100 % 100
        let seconds = digits % 100
        // Second 60 exists only as a leap second, at 23:59:60.
        guard hours < 24, minutes < 60, seconds < 60 || (seconds == 60 && hours == 23 && minutes == 59) else {
            throw .invalidField(index: index)
        }
        var nanoseconds = 0
        if f.count > 6 {
            guard f[6] == ASCII.dot, f.count > 7, f.count <= 16 else { throw .invalidField(index: index) }
            var place = 100_000_000
            for i in 7..<f.count {
                guard ASCII.isDigit(f[i]) else { throw .invalidField(index: index) }
                nanoseconds += Int(f[i] &- ASCII.zero) * place
                place /= 10
            }
        }
        return NMEATime(hours: hours, minutes: minutes, seconds: seconds, nanoseconds: nanoseconds)
    }

    /// Field `index` as a six-digit date; `monthFirst` for Trimble's `mmddyy`.
    public func date(_ index: Int, monthFirst: Bool = false) throws(NMEAError) -> NMEADate? {
        let f = field(index)
        if f.isEmpty { return nil }
        guard f.count == 6 else { throw .invalidField(index: index) }
        var digits = 0
        for i in 0..<6 {
            guard ASCII.isDigit(f[i]) else { throw .invalidField(index: index) }
            digits = digits * 10 + Int(f[i] &- ASCII.zero)
        }
        let first = digits / 10_000
        let second = digits / 100 % 100
        let day = monthFirst ? second : first
        let month = monthFirst ? first : second
        guard (1...12).contains(month), (1...31).contains(day) else { throw .invalidField(index: index) }
        return NMEADate(year: NMEADate.expandYear(digits % 100), month: month, day: day)
    }

    /// A latitude (`ddmm.mmmm` in field `index`, `N`/`S` in `index + 1`); nil when empty.
    public func latitude(_ index: Int) throws(NMEAError) -> NMEACoordinate? {
        try coordinate(index, positive: UInt8(ascii: "N"), negative: UInt8(ascii: "S"), maxDegrees: 90)
    }

    /// A longitude (`dddmm.mmmm` in field `index`, `E`/`W` in `index + 1`); nil when empty.
    public func longitude(_ index: Int) throws(NMEAError) -> NMEACoordinate? {
        try coordinate(index, positive: UInt8(ascii: "E"), negative: UInt8(ascii: "W"), maxDegrees: 180)
    }

    private func coordinate(_ index: Int, positive: UInt8, negative: UInt8, maxDegrees: Int64)
        throws(NMEAError) -> NMEACoordinate?
    {
        guard let raw = try decimal(index) else { return nil }
        // More than 12 minute decimals (sub-micrometre) is no real receiver, and would overflow.
        guard raw.value >= 0, raw.scale <= 12 else { throw .invalidField(index: index) }
        let unit = Int64(NMEADecimal.powerOf10(raw.scale))
        let degrees = raw.value / (100 * unit)
        let minutes = raw.value % (100 * unit)
        guard minutes < 60 * unit, degrees * 100 * unit + minutes <= maxDegrees * 100 * unit else {
            throw .invalidField(index: index)
        }
        switch try character(index + 1) {
        case positive: return NMEACoordinate(raw: raw)
        case negative: return NMEACoordinate(raw: NMEADecimal(value: -raw.value, scale: raw.scale))
        default: throw .invalidField(index: index + 1)
        }
    }

    /// Exact decimal scan: optional sign, digits, optional point and digits. At most 18
    /// significant digits (fits Int64 exactly); anything else is `invalidField`.
    static func parseDecimal(_ f: Span<UInt8>, index: Int) throws(NMEAError) -> NMEADecimal? {
        if f.isEmpty { return nil }
        var i = 0
        var negative = false
        if f[0] == ASCII.minus || f[0] == ASCII.plus {
            negative = f[0] == ASCII.minus
            i = 1
        }
        var value: Int64 = 0
        var scale: UInt8 = 0
        var digits = 0
        var seenDot = false
        while i < f.count {
            let b = f[i]
            if b == ASCII.dot {
                guard !seenDot else { throw .invalidField(index: index) }
                seenDot = true
            } else {
                guard ASCII.isDigit(b), digits < 18 else { throw .invalidField(index: index) }
                value = value * 10 + Int64(b &- ASCII.zero)
                digits += 1
                if seenDot { scale += 1 }
            }
            i += 1
        }
        guard digits > 0 else { throw .invalidField(index: index) }
        return NMEADecimal(value: negative ? -value : value, scale: scale)
    }
}
