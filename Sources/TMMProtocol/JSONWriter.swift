/// A reusable JSON byte buffer that encodes without heap allocations once it has grown.
///
/// The writer appends UTF-8 bytes to one `[UInt8]` that is reserved once and cleared with
/// `reset()` (keeping its capacity) before each message, so encoding a message performs no heap
/// allocation once the buffer is large enough. Every value is written digit by digit: no `String`
/// conversion, no `description`, no interpolation.
///
/// Separators are automatic: each value or key written after a sibling is preceded by a comma,
/// so callers only say what they write (`beginObject`, `key`, a value, `endObject`...). The writer
/// does not validate nesting: it trusts its callers (the encoders in this module) to balance
/// `begin`/`end` calls and to write a value after every key.
///
/// Numbers:
/// - integers are written exactly (`Int.min` included);
/// - doubles are written in fixed-point decimal with a per-call number of decimals: the value is
///   scaled by 10^d, rounded to the nearest integer (ties away from zero) and printed as an Int64
///   with the decimal point put back; trailing zeros are trimmed but one digit always follows the
///   point (`180000.0`, `35.412`, `-43.52961234`), so a double never reads as a JSON integer;
/// - a result that rounds to zero prints `0.0`, never `-0.0`;
/// - NaN and ±infinity print `null`;
/// - when |value| × 10^d does not fit the Int64 range, fewer decimals are used (down to none);
///   a value whose magnitude is 9×10^18 or more prints `null`. See `maximumMagnitude`.
///
/// Strings: `"` and `\` are escaped with a backslash, the control characters U+0000...U+001F as
/// `\u00xx` (lowercase hex); everything else, including DEL and all non-ASCII UTF-8, passes
/// through unchanged (Swift strings are always valid UTF-8).
public struct JSONWriter: Sendable {
    /// The largest scaled magnitude written: below `Int64.max` (≈9.22×10^18) with room to spare
    /// for the rounding of the scaled double.
    public static let maximumMagnitude: Double = 9e18
    /// The largest number of decimals `number(_:decimals:)` accepts (larger requests are clamped).
    public static let maximumDecimals = 15

    private var buffer: [UInt8]
    /// True when the next value or key is a sibling of something already written and needs a comma.
    private var needsComma = false

    /// Creates an empty writer with `capacity` bytes reserved.
    public init(reservingCapacity capacity: Int = 16_384) {
        buffer = []
        buffer.reserveCapacity(capacity)
    }

    // MARK: Output

    /// The bytes written since the last `reset()`.
    ///
    /// The array shares storage with the writer. Holding a copy across the next `reset()` makes
    /// that reset copy the buffer (copy-on-write), which is one allocation per message; callers
    /// that want zero allocations copy the bytes out or use `span` / `withBytes`.
    public var bytes: [UInt8] { buffer }

    /// The bytes written since the last `reset()`, borrowed.
    public var span: Span<UInt8> {
        @_lifetime(borrow self)
        get { buffer.span }
    }

    /// Calls `body` with the bytes written since the last `reset()`.
    public func withBytes<R, E: Error>(_ body: (Span<UInt8>) throws(E) -> R) throws(E) -> R {
        try body(buffer.span)
    }

    /// Number of bytes written since the last `reset()`.
    public var count: Int { buffer.count }

    /// Bytes the buffer can hold before it must grow.
    public var capacity: Int { buffer.capacity }

    /// Empties the buffer, keeping its capacity, and forgets any pending separator.
    public mutating func reset() {
        buffer.removeAll(keepingCapacity: true)
        needsComma = false
    }

    // MARK: Structure

    /// Writes `{` (after a comma if it follows a sibling value).
    public mutating func beginObject() {
        separate()
        buffer.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Writes `}`.
    public mutating func endObject() {
        buffer.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Writes `[` (after a comma if it follows a sibling value).
    public mutating func beginArray() {
        separate()
        buffer.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Writes `]`.
    public mutating func endArray() {
        buffer.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes an object key and its colon (after a comma if it is not the first member).
    public mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        buffer.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Values

    /// Writes `null`.
    public mutating func null() {
        separate()
        appendASCII("null")
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        appendASCII(value ? "true" : "false")
        needsComma = true
    }

    /// Writes a JSON string with escaping.
    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
        needsComma = true
    }

    /// Writes an integer exactly.
    public mutating func integer(_ value: Int) {
        separate()
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        appendDigits(UInt64(value.magnitude), minimumDigits: 1)
        needsComma = true
    }

    /// Writes a double in fixed-point decimal with at most `decimals` digits after the point,
    /// trailing zeros trimmed and at least one digit after the point; `null` when not finite or
    /// too large (see the type's documentation).
    public mutating func number(_ value: Double, decimals: Int) {
        guard value.isFinite else { return null() }
        var d = min(max(decimals, 0), Self.maximumDecimals)
        var scaled = (value * Self.powerOfTen(d)).rounded()
        while !(scaled.magnitude < Self.maximumMagnitude) {
            guard d > 0 else { return null() }
            d -= 1
            scaled = (value * Self.powerOfTen(d)).rounded()
        }
        fixedPoint(scaled: Int64(scaled), decimals: d)
    }

    /// Writes the decimal number `scaled / 10^decimals` with trailing zeros trimmed and at least
    /// one digit after the point (`fixedPoint(scaled: 1_328_196_000, decimals: 4)` writes
    /// `132819.6`). Exact: no floating point is involved. `decimals` is clamped to 0...18.
    public mutating func fixedPoint(scaled: Int64, decimals: Int) {
        separate()
        let d = min(max(decimals, 0), 18)
        let magnitude = scaled.magnitude
        if scaled < 0 { buffer.append(UInt8(ascii: "-")) }
        let divisor = Self.integerPowerOfTen(d)
        appendDigits(magnitude / divisor, minimumDigits: 1)
        buffer.append(UInt8(ascii: "."))
        var fraction = magnitude % divisor
        var digits = d
        if fraction == 0 {
            buffer.append(UInt8(ascii: "0"))
        } else {
            while fraction % 10 == 0 {
                fraction /= 10
                digits -= 1
            }
            appendDigits(fraction, minimumDigits: digits)
        }
        needsComma = true
    }

    // MARK: Optional values (nil writes null)

    public mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    public mutating func integer(_ value: Int?) {
        if let value { integer(value) } else { null() }
    }

    public mutating func bool(_ value: Bool?) {
        if let value { bool(value) } else { null() }
    }

    public mutating func number(_ value: Double?, decimals: Int) {
        if let value { number(value, decimals: decimals) } else { null() }
    }

    // MARK: Fields (key plus value)

    public mutating func field(_ name: String, string value: String?) {
        key(name)
        string(value)
    }

    public mutating func field(_ name: String, integer value: Int?) {
        key(name)
        integer(value)
    }

    public mutating func field(_ name: String, bool value: Bool?) {
        key(name)
        bool(value)
    }

    public mutating func field(_ name: String, number value: Double?, decimals: Int) {
        key(name)
        number(value, decimals: decimals)
    }

    /// Writes `"name":null`.
    public mutating func nullField(_ name: String) {
        key(name)
        null()
    }

    // MARK: Raw building blocks for composite values (timestamps)

    /// Writes `"` and opens a string value whose content the caller appends with
    /// `appendStringContent` / `appendStringDigits`, then closes with `endString()`.
    public mutating func beginString() {
        separate()
        buffer.append(UInt8(ascii: "\""))
    }

    /// Appends text, escaped, inside an open string.
    public mutating func appendStringContent(_ text: String) {
        appendEscaped(text)
    }

    /// Appends `value` in decimal, left-padded with zeros to `minimumDigits`, inside an open string.
    public mutating func appendStringDigits(_ value: UInt64, minimumDigits: Int) {
        appendDigits(value, minimumDigits: minimumDigits)
    }

    /// Closes a string opened by `beginString()`.
    public mutating func endString() {
        buffer.append(UInt8(ascii: "\""))
        needsComma = true
    }

    // MARK: Private

    private mutating func separate() {
        if needsComma { buffer.append(UInt8(ascii: ",")) }
    }

    private mutating func appendASCII(_ text: String) {
        for byte in text.utf8 { buffer.append(byte) }
    }

    private mutating func appendQuoted(_ text: String) {
        buffer.append(UInt8(ascii: "\""))
        appendEscaped(text)
        buffer.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ text: String) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                buffer.append(UInt8(ascii: "\\"))
                buffer.append(byte)
            case 0x00..<0x20:
                buffer.append(UInt8(ascii: "\\"))
                buffer.append(UInt8(ascii: "u"))
                buffer.append(UInt8(ascii: "0"))
                buffer.append(UInt8(ascii: "0"))
                buffer.append(Self.hexDigit(byte >> 4))
                buffer.append(Self.hexDigit(byte & 0x0F))
            default:
                buffer.append(byte)
            }
        }
    }

    /// Appends `value` in decimal, left-padded with zeros to at least `minimumDigits` digits:
    /// reserves the digits in place, then fills them from the right.
    private mutating func appendDigits(_ value: UInt64, minimumDigits: Int) {
        var length = 1
        var rest = value / 10
        while rest != 0 {
            length += 1
            rest /= 10
        }
        length = max(length, minimumDigits)
        let start = buffer.count
        for _ in 0..<length { buffer.append(UInt8(ascii: "0")) }
        var remaining = value
        var index = start + length - 1
        while remaining != 0 {
            buffer[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10)
            remaining /= 10
            index -= 1
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10)
    }

    /// 10^d as a Double, exact for 0...15 (every power of ten up to 10^22 is representable).
    private static func powerOfTen(_ d: Int) -> Double {
        var result = 1.0
        for _ in 0..<d { result *= 10 }
        return result
    }

    /// 10^d as a UInt64 for 0...18.
    private static func integerPowerOfTen(_ d: Int) -> UInt64 {
        var result: UInt64 = 1
        for _ in 0..<d { result *= 10 }
        return result
    }
}
