import ByteCoding

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
        nanosecondsOfDay =
            (Int64(hours) * 3600 + Int64(minutes) * 60 + Int64(seconds)) * 1_000_000_000
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

/// The field scanners, shared by the per-index accessors (`decimal(_:)` and friends, on the bytes
/// of one field) and by `FieldCursor` (on the whole sentence). Each reads the field that starts
/// at `from` and ends at the first `,` or at `limit` (`from >= limit`: an empty field), and
/// returns its value (nil when empty) and the offset where the field ends. Anything malformed
/// is `invalidField(index:)`.
enum FieldScan {
    /// Where the field starting at `from` ends: the next `,`, or `limit`.
    @inline(__always)
    static func end(_ b: Span<UInt8>, _ from: Int, _ limit: Int) -> Int {
        var i = from
        while i < limit && b[i] != ASCII.comma { i &+= 1 }
        return i
    }

    /// A non-negative integer of at most 9 digits (`07`, `0133`).
    @inline(__always)
    static func integer(_ b: Span<UInt8>, _ from: Int, _ limit: Int, _ index: Int) throws(NMEAError) -> (Int?, Int) {
        var i = from
        var value = 0
        while i < limit {
            let c = b[i]
            let d = c &- ASCII.zero
            if d >= 10 {
                if c == ASCII.comma { break }
                throw .invalidField(index: index)
            }
            value = value &* 10 &+ Int(d)  // wraps only past 18 digits, which are rejected below
            i &+= 1
        }
        let digits = i &- from
        if digits <= 0 { return (nil, i) }
        guard digits <= 9 else { throw .invalidField(index: index) }
        return (value, i)
    }

    /// A single character (`A`, `N`).
    @inline(__always)
    static func character(_ b: Span<UInt8>, _ from: Int, _ limit: Int, _ index: Int) throws(NMEAError) -> (UInt8?, Int)
    {
        guard from < limit else { return (nil, from) }
        let c = b[from]
        if c == ASCII.comma { return (nil, from) }
        let next = from &+ 1
        guard next == limit || b[next] == ASCII.comma else { throw .invalidField(index: index) }
        return (c, next)
    }

    /// Exact decimal: optional sign, digits, optional point and digits. At most 18 significant
    /// digits (fits Int64 exactly).
    @inline(__always)
    static func decimal(
        _ b: Span<UInt8>, _ from: Int, _ limit: Int, _ index: Int
    ) throws(NMEAError) -> (NMEADecimal?, Int) {
        guard from < limit else { return (nil, from) }
        let first = b[from]
        if first == ASCII.comma { return (nil, from) }
        let negative = first == ASCII.minus
        var i = negative || first == ASCII.plus ? from &+ 1 : from
        let digitsStart = i
        var value: Int64 = 0
        var dot = -1
        while i < limit {
            let c = b[i]
            let d = c &- ASCII.zero
            if d < 10 {
                value = value &* 10 &+ Int64(d)  // wraps only past 18 digits, rejected below
            } else if c == ASCII.dot && dot < 0 {
                dot = i
            } else if c == ASCII.comma {
                break
            } else {
                throw .invalidField(index: index)
            }
            i &+= 1
        }
        let digits = i &- digitsStart &- (dot >= 0 ? 1 : 0)
        guard digits > 0, digits <= 18 else { throw .invalidField(index: index) }
        let scale = dot >= 0 ? UInt8(truncatingIfNeeded: i &- 1 &- dot) : 0
        return (NMEADecimal(value: negative ? -value : value, scale: scale), i)
    }

    /// A latitude or longitude magnitude `(d)ddmm.mmmm`: a decimal that is not negative, with at
    /// most 12 decimals, minutes below 60 and at most `maxDegrees`.
    @inline(__always)
    static func coordinate(
        _ b: Span<UInt8>, _ from: Int, _ limit: Int, _ index: Int, maxDegrees: Int
    ) throws(NMEAError)
        -> (NMEADecimal?, Int)
    {
        guard from < limit else { return (nil, from) }
        let first = b[from]
        if first == ASCII.comma { return (nil, from) }
        let negative = first == ASCII.minus
        var i = negative || first == ASCII.plus ? from &+ 1 : from
        let digitsStart = i
        var value: Int64 = 0
        var dot = -1
        // Degrees and whole minutes (`dddmm`, saturated: never overflows), and whether the
        // decimals of the minutes are all zero: the range checks need no division by 10^scale.
        var whole = 0
        var fraction: UInt8 = 0
        while i < limit {
            let c = b[i]
            let d = c &- ASCII.zero
            if d < 10 {
                value = value &* 10 &+ Int64(d)
                if dot < 0 {
                    whole = min(whole &* 10 &+ Int(d), 1_000_000)
                } else {
                    fraction |= d
                }
            } else if c == ASCII.dot && dot < 0 {
                dot = i
            } else if c == ASCII.comma {
                break
            } else {
                throw .invalidField(index: index)
            }
            i &+= 1
        }
        let digits = i &- digitsStart &- (dot >= 0 ? 1 : 0)
        guard digits > 0, digits <= 18 else { throw .invalidField(index: index) }
        let scale = dot >= 0 ? UInt8(truncatingIfNeeded: i &- 1 &- dot) : 0
        // More than 12 minute decimals (sub-micrometre) is no real receiver. "-0" is 0.
        guard !negative || value == 0, scale <= 12 else { throw .invalidField(index: index) }
        let degrees = whole / 100
        let minutes = whole % 100
        guard minutes < 60, degrees < maxDegrees || (degrees == maxDegrees && minutes == 0 && fraction == 0) else {
            throw .invalidField(index: index)
        }
        return (NMEADecimal(value: value, scale: scale), i)
    }

    /// `hhmmss[.s...]` (1 to 9 decimals of a second); second 60 only at 23:59.
    @inline(__always)
    static func time(_ b: Span<UInt8>, _ from: Int, _ limit: Int, _ index: Int) throws(NMEAError) -> (NMEATime?, Int) {
        guard from < limit, b[from] != ASCII.comma else { return (nil, from) }
        guard limit &- from >= 6 else { throw .invalidField(index: index) }
        var digits = 0
        var i = from
        let whole = from &+ 6
        while i < whole {
            let d = b[i] &- ASCII.zero
            guard d < 10 else { throw .invalidField(index: index) }
            digits = digits &* 10 &+ Int(d)
            i &+= 1
        }
        let hours = digits / 10_000
        let minutes = digits / 100 % 100
        let seconds = digits % 100
        // Second 60 exists only as a leap second, at 23:59:60.
        guard hours < 24, minutes < 60, seconds < 60 || (seconds == 60 && hours == 23 && minutes == 59) else {
            throw .invalidField(index: index)
        }
        var nanoseconds = 0
        if i < limit && b[i] != ASCII.comma {
            guard b[i] == ASCII.dot else { throw .invalidField(index: index) }
            i &+= 1
            let fractionStart = i
            while i < limit {
                let c = b[i]
                let d = c &- ASCII.zero
                if d >= 10 {
                    if c == ASCII.comma { break }
                    throw .invalidField(index: index)
                }
                nanoseconds = nanoseconds &* 10 &+ Int(d)
                i &+= 1
            }
            var decimals = i &- fractionStart
            guard decimals >= 1, decimals <= 9 else { throw .invalidField(index: index) }
            while decimals < 9 {
                nanoseconds &*= 10
                decimals &+= 1
            }
        }
        return (NMEATime(hours: hours, minutes: minutes, seconds: seconds, nanoseconds: nanoseconds), i)
    }

    /// A six-digit date; `monthFirst` for Trimble's `mmddyy`.
    @inline(__always)
    static func date(
        _ b: Span<UInt8>, _ from: Int, _ limit: Int, _ index: Int, monthFirst: Bool
    ) throws(NMEAError)
        -> (NMEADate?, Int)
    {
        guard from < limit, b[from] != ASCII.comma else { return (nil, from) }
        let end = from &+ 6
        guard end <= limit, end == limit || b[end] == ASCII.comma else { throw .invalidField(index: index) }
        var digits = 0
        var i = from
        while i < end {
            let d = b[i] &- ASCII.zero
            guard d < 10 else { throw .invalidField(index: index) }
            digits = digits &* 10 &+ Int(d)
            i &+= 1
        }
        let first = digits / 10_000
        let second = digits / 100 % 100
        let day = monthFirst ? second : first
        let month = monthFirst ? first : second
        guard (1...12).contains(month), (1...31).contains(day) else { throw .invalidField(index: index) }
        return (NMEADate(year: NMEADate.expandYear(digits % 100), month: month, day: day), end)
    }

    /// A speed: a decimal that is not negative.
    @inline(__always)
    static func speed(
        _ b: Span<UInt8>, _ from: Int, _ limit: Int, _ index: Int
    ) throws(NMEAError) -> (NMEADecimal?, Int) {
        let (speed, end) = try decimal(b, from, limit, index)
        if let speed, speed.value < 0 { throw .invalidField(index: index) }
        return (speed, end)
    }

    /// A course, bearing or heading: a decimal in 0...360 degrees (both inclusive, compared
    /// exactly at the field's own scale; with more than 12 decimals only 0 is accepted).
    @inline(__always)
    static func course(
        _ b: Span<UInt8>, _ from: Int, _ limit: Int, _ index: Int
    ) throws(NMEAError) -> (NMEADecimal?, Int) {
        let (angle, end) = try decimal(b, from, limit, index)
        if let angle {
            var maximum: Int64 = 0
            if angle.scale <= 12 {
                maximum = 360
                for _ in 0..<angle.scale { maximum &*= 10 }
            }
            guard angle.value >= 0, angle.value <= maximum else { throw .invalidField(index: index) }
        }
        return (angle, end)
    }
}

extension NMEASentence {
    /// Field `index` as an exact decimal (`-12.5`, `+3`, `.5`); nil when empty.
    public func decimal(_ index: Int) throws(NMEAError) -> NMEADecimal? {
        try NMEASentence.parseDecimal(field(index), index: index)
    }

    /// Field `index` as a non-negative integer (`07`, `0133`); nil when empty.
    public func integer(_ index: Int) throws(NMEAError) -> Int? {
        let f = field(index)
        return try FieldScan.integer(f, 0, f.count, index).0
    }

    /// Field `index` as a single character (`A`, `N`); nil when empty.
    public func character(_ index: Int) throws(NMEAError) -> UInt8? {
        let f = field(index)
        return try FieldScan.character(f, 0, f.count, index).0
    }

    /// Field `index` as `hhmmss[.s...]`; nil when empty.
    public func time(_ index: Int) throws(NMEAError) -> NMEATime? {
        let f = field(index)
        return try FieldScan.time(f, 0, f.count, index).0
    }

    /// Field `index` as a six-digit date; `monthFirst` for Trimble's `mmddyy`.
    public func date(_ index: Int, monthFirst: Bool = false) throws(NMEAError) -> NMEADate? {
        let f = field(index)
        return try FieldScan.date(f, 0, f.count, index, monthFirst: monthFirst).0
    }

    /// Field `index` as a speed (knots or km/h): a decimal that is not negative; nil when empty.
    public func speed(_ index: Int) throws(NMEAError) -> NMEADecimal? {
        let f = field(index)
        return try FieldScan.speed(f, 0, f.count, index).0
    }

    /// Field `index` as a course, bearing or heading in degrees: a decimal in 0...360 (both
    /// inclusive, compared exactly at the field's own scale); nil when empty.
    public func course(_ index: Int) throws(NMEAError) -> NMEADecimal? {
        let f = field(index)
        return try FieldScan.course(f, 0, f.count, index).0
    }

    /// A latitude (`ddmm.mmmm` in field `index`, `N`/`S` in `index + 1`); nil when empty.
    public func latitude(_ index: Int) throws(NMEAError) -> NMEACoordinate? {
        var c = cursor(at: index)
        return try c.coordinate(positive: UInt8(ascii: "N"), negative: UInt8(ascii: "S"), maxDegrees: 90)
    }

    /// A longitude (`dddmm.mmmm` in field `index`, `E`/`W` in `index + 1`); nil when empty.
    public func longitude(_ index: Int) throws(NMEAError) -> NMEACoordinate? {
        var c = cursor(at: index)
        return try c.coordinate(positive: UInt8(ascii: "E"), negative: UInt8(ascii: "W"), maxDegrees: 180)
    }

    /// Exact decimal scan: optional sign, digits, optional point and digits. At most 18
    /// significant digits (fits Int64 exactly); anything else is `invalidField`.
    static func parseDecimal(_ f: Span<UInt8>, index: Int) throws(NMEAError) -> NMEADecimal? {
        try FieldScan.decimal(f, 0, f.count, index).0
    }
}

/// Reads the fields of a sentence in order, each byte once: what the typed decoders use. Every
/// read consumes one field (a coordinate two) and reports errors with that field's index;
/// fields past the last one read as empty, as `NMEASentence.field(_:)` does.
struct FieldCursor: ~Escapable {
    let bytes: Span<UInt8>
    /// Where the last field ends (the `*`, or the end of the sentence).
    let limit: Int
    /// First byte of the current field (past `limit` once every field has been read).
    var position: Int
    /// Index of the current field.
    var index: Int

    @_lifetime(copy bytes)
    init(bytes: Span<UInt8>, limit: Int, position: Int, index: Int) {
        self.bytes = bytes
        self.limit = limit
        self.position = position
        self.index = index
    }

    @inline(__always)
    private mutating func advance(past end: Int) {
        position = end &+ 1
        index &+= 1
    }

    /// Skips the current field without looking at its contents.
    @inline(__always)
    mutating func skip() {
        advance(past: FieldScan.end(bytes, position, limit))
    }

    /// Offsets of the current field's bytes in the sentence (empty past the last field).
    @inline(__always)
    mutating func fieldRange() -> Range<Int> {
        let start = min(position, limit)
        let end = FieldScan.end(bytes, start, limit)
        advance(past: max(end, position))
        return start..<end
    }

    @inline(__always)
    mutating func integer() throws(NMEAError) -> Int? {
        let (value, end) = try FieldScan.integer(bytes, position, limit, index)
        advance(past: end)
        return value
    }

    @inline(__always)
    mutating func character() throws(NMEAError) -> UInt8? {
        let (value, end) = try FieldScan.character(bytes, position, limit, index)
        advance(past: end)
        return value
    }

    @inline(__always)
    mutating func decimal() throws(NMEAError) -> NMEADecimal? {
        let (value, end) = try FieldScan.decimal(bytes, position, limit, index)
        advance(past: end)
        return value
    }

    @inline(__always)
    mutating func speed() throws(NMEAError) -> NMEADecimal? {
        let (value, end) = try FieldScan.speed(bytes, position, limit, index)
        advance(past: end)
        return value
    }

    @inline(__always)
    mutating func course() throws(NMEAError) -> NMEADecimal? {
        let (value, end) = try FieldScan.course(bytes, position, limit, index)
        advance(past: end)
        return value
    }

    @inline(__always)
    mutating func time() throws(NMEAError) -> NMEATime? {
        let (value, end) = try FieldScan.time(bytes, position, limit, index)
        advance(past: end)
        return value
    }

    @inline(__always)
    mutating func date(monthFirst: Bool = false) throws(NMEAError) -> NMEADate? {
        let (value, end) = try FieldScan.date(bytes, position, limit, index, monthFirst: monthFirst)
        advance(past: end)
        return value
    }

    /// A latitude or longitude and its hemisphere (two fields). The hemisphere is not looked at
    /// when the coordinate is empty.
    mutating func coordinate(positive: UInt8, negative: UInt8, maxDegrees: Int) throws(NMEAError) -> NMEACoordinate? {
        let (raw, end) = try FieldScan.coordinate(bytes, position, limit, index, maxDegrees: maxDegrees)
        advance(past: end)
        guard let raw else {
            skip()
            return nil
        }
        let hemisphereIndex = index
        switch try character() {
        case positive: return NMEACoordinate(raw: raw)
        case negative: return NMEACoordinate(raw: NMEADecimal(value: -raw.value, scale: raw.scale))
        default: throw .invalidField(index: hemisphereIndex)
        }
    }

    @inline(__always)
    mutating func latitude() throws(NMEAError) -> NMEACoordinate? {
        try coordinate(positive: UInt8(ascii: "N"), negative: UInt8(ascii: "S"), maxDegrees: 90)
    }

    @inline(__always)
    mutating func longitude() throws(NMEAError) -> NMEACoordinate? {
        try coordinate(positive: UInt8(ascii: "E"), negative: UInt8(ascii: "W"), maxDegrees: 180)
    }
}
