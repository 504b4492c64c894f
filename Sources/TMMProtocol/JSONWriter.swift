import ByteCoding

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
/// Keys are escaped like strings, except the encoders' constant runs (`verbatimKey`), which are
/// written as they are.
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
    /// What the location encoders remember from one message to the next (the identity fields,
    /// the satellite view); nil for writers that write one-off bodies.
    var memory: LocationMemory?

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

    /// Writes a line feed and starts a new top-level value: no comma before the next one (JSON
    /// Lines, one message per line).
    public mutating func endLine() {
        buffer.append(UInt8(ascii: "\n"))
        needsComma = false
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

    /// Writes `run` byte for byte: constant JSON text that ends where a value goes, such as
    /// `"latitude":`, `,"geoidModel":null,"hrms":` or `},{"Id":`.
    ///
    /// For the per-epoch encoders: escaping the same constant keys one byte at a time on every
    /// message cost more than all their values, so they write keys pre-escaped, merged with the
    /// punctuation and constant values around them into one copy. Nothing is checked or
    /// escaped: `run` must be valid JSON at this point (the tests pin every message). No comma
    /// is added before it (the run carries its own) and none before the value that follows.
    public mutating func verbatimKey(_ run: String) {
        // A literal's UTF-8 is stored contiguously in the binary: one capacity check and one
        // memcpy, no per-byte append.
        buffer.append(contentsOf: run.utf8)
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
        buffer.append(addingCapacity: Self.maximumIntegerLength) { out in Self.writeInteger(value, to: &out) }
        needsComma = true
    }

    /// Writes a double in fixed-point decimal with at most `decimals` digits after the point,
    /// trailing zeros trimmed and at least one digit after the point; `null` when not finite or
    /// too large (see the type's documentation).
    public mutating func number(_ value: Double, decimals: Int) {
        separate()
        appendInPlace(maximumCount: Self.maximumNumberLength) { out in
            Self.writeNumber(value, decimals: decimals, to: &out)
        }
    }

    /// Writes the decimal number `scaled / 10^decimals` with trailing zeros trimmed and at least
    /// one digit after the point (`fixedPoint(scaled: 1_328_196_000, decimals: 4)` writes
    /// `132819.6`). Exact: no floating point is involved. `decimals` is clamped to 0...18.
    public mutating func fixedPoint(scaled: Int64, decimals: Int) {
        separate()
        appendInPlace(maximumCount: Self.maximumNumberLength) { out in
            Self.writeFixedPoint(scaled: scaled, decimals: decimals, to: &out)
        }
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

    /// Writes up to `maximumCount` bytes with `body`, straight into the buffer (one capacity
    /// check for all of them). For the encoders' hot spots (the fields of a location message, a
    /// satellite object): `body` writes verbatim runs and values with the static `write...`
    /// helpers; as with `verbatimKey`, no comma is added before it (its runs carry their own).
    /// `endingInKey` says that `body` ends with a key rather than a value, so that the value
    /// written next gets no comma. Writing more than `maximumCount` bytes traps.
    mutating func appendInPlace(maximumCount: Int, endingInKey: Bool = false, _ body: (inout OutputSpan<UInt8>) -> Void)
    {
        buffer.append(addingCapacity: maximumCount, initializingWith: body)
        needsComma = !endingInKey
    }

    /// Appends `bytes` as they are (one capacity check and one copy): a run remembered from an
    /// earlier message, or constant text; like `verbatimKey`, no comma is added before it.
    mutating func appendBytes(_ bytes: [UInt8], endingInKey: Bool = false) {
        buffer.append(contentsOf: bytes)
        needsComma = !endingInKey
    }

    /// Appends what `write` writes for `identity`: copied from the writer's memory when the last
    /// call had the same identity, written (and remembered) otherwise; without memory, written.
    /// `write` must end with a value, in the same state every time for one identity.
    @inline(__always)
    mutating func appendRemembered(_ identity: ReceiverIdentity, _ write: (inout JSONWriter) -> Void) {
        // The memory is read and updated where it is (`memory!`, `memory?`): a local copy of it
        // retained and released each of its arrays, per message.
        guard memory != nil else { return write(&self) }
        if memory!.hasIdentity && memory!.identity == identity {
            buffer.append(contentsOf: memory!.identityRun)
            needsComma = true
            return
        }
        let start = buffer.count
        write(&self)
        memory!.identityRun.removeAll(keepingCapacity: true)
        memory!.identityRun.append(contentsOf: buffer[start...])
        memory!.identity = identity
        memory!.hasIdentity = true
    }

    /// Appends part `part` of a message (up to `maximumCount` bytes that `body` writes in place,
    /// as `appendInPlace`), copied from the writer's memory when `key`, the values the part is
    /// written from, is what it was the last time; otherwise written and remembered. Without
    /// memory, written. Equal keys must mean equal bytes.
    @inline(__always)
    mutating func appendRemembered(
        part: Int, key: PartKey, maximumCount: Int, endingInKey: Bool = false, _ body: (inout OutputSpan<UInt8>) -> Void
    ) {
        guard memory != nil else { return appendInPlace(maximumCount: maximumCount, endingInKey: endingInKey, body) }
        needsComma = !endingInKey
        if memory!.parts[part].key == key {
            buffer.append(contentsOf: memory!.parts[part].bytes)
            return
        }
        let start = buffer.count
        buffer.append(addingCapacity: maximumCount, initializingWith: body)
        memory!.parts[part].bytes.removeAll(keepingCapacity: true)
        memory!.parts[part].bytes.append(contentsOf: buffer[start...])
        memory!.parts[part].key = key
    }

    /// The longest integer: `-9223372036854775808`.
    static let maximumIntegerLength = 20

    // MARK: Private

    /// Writes the comma owed to a preceding sibling, if any.
    mutating func separate() {
        if needsComma { buffer.append(UInt8(ascii: ",")) }
    }

    private mutating func appendASCII(_ text: String) {
        buffer.append(contentsOf: text.utf8)
    }

    private mutating func appendQuoted(_ text: String) {
        buffer.append(UInt8(ascii: "\""))
        appendEscaped(text)
        buffer.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ text: String) {
        // Nearly all text (keys, model names, versions, solution types) needs no escape: one
        // scan, then one bulk copy instead of an append per byte.
        if !Self.containsEscapes(text.utf8.span) {
            buffer.append(contentsOf: text.utf8)
            return
        }
        buffer.append(addingCapacity: 6 * text.utf8.count) { out in Self.writeEscaped(text, to: &out) }
    }

    /// True when `bytes` holds one that `appendEscaped` must escape: `"`, `\` or
    /// U+0000...U+001F. Indexing the span directly: `contains(where:)` on the UTF-8 view went
    /// through the generic string iterator, several times slower.
    private static func containsEscapes(_ bytes: Span<UInt8>) -> Bool {
        for index in bytes.indices {
            let byte = bytes[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
        }
        return false
    }

    /// Appends `value` in decimal, left-padded with zeros to at least `minimumDigits` digits.
    private mutating func appendDigits(_ value: UInt64, minimumDigits: Int) {
        let length = max(Self.decimalLength(value), minimumDigits)
        buffer.append(addingCapacity: length) { out in
            Self.writeDigits(value, length: length, to: &out)
        }
    }

    /// Appends exactly `length` digits of `value` to `out`, zero-padded on the left (`length`
    /// must be at least `decimalLength(value)`), straight into the array's storage.
    @inline(__always)
    static func writeDigits(_ value: UInt64, length: Int, to out: inout OutputSpan<UInt8>) {
        var value = value
        var length = length
        // Padding beyond UInt64's 20 digits (a caller's `minimumDigits`) is all zeros.
        if length > 20 {
            out.append(repeating: UInt8(ascii: "0"), count: length - 20)
            length = 20
        }
        // Eight digits at a time, most significant group first.
        if length > 16 {
            writeDigitGroup(value / 10_000_000_000_000_000, length: length - 16, to: &out)
            value %= 10_000_000_000_000_000
            length = 16
        }
        if length > 8 {
            writeDigitGroup(value / 100_000_000, length: length - 8, to: &out)
            value %= 100_000_000
            length = 8
        }
        writeDigitGroup(value, length: length, to: &out)
    }

    /// Appends exactly `length` (at most 8) digits of `value` (below 10^length), zero-padded.
    /// All eight digits are computed at once in one UInt64, a byte each with the most
    /// significant in the low byte (SWAR: the halves, the pairs and the digits split with
    /// multiply-and-shift divisions, exact in these ranges), then the `length` last are
    /// appended from the low byte up.
    @inline(__always)
    private static func writeDigitGroup(_ value: UInt64, length: Int, to out: inout OutputSpan<UInt8>) {
        // Two 32-bit lanes: value / 10^4 (low lane), value % 10^4.
        let halves = value / 10_000 | (value % 10_000) << 32
        // Four 16-bit lanes of two digits: (y * 10486) >> 20 == y / 100 for y < 10^4.
        let hundreds = (halves &* 10_486) >> 20 & 0x0000_007F_0000_007F
        let pairs = hundreds | (halves &- hundreds &* 100) << 16
        // Eight bytes of one digit: (z * 103) >> 10 == z / 10 for z < 100.
        let tens = (pairs &* 103) >> 10 & 0x000F_000F_000F_000F
        let digits = tens | (pairs &- tens &* 10) << 8
        var ascii = (digits | 0x3030_3030_3030_3030) >> UInt64(8 * (8 - length))
        for _ in 0..<length {
            out.append(UInt8(truncatingIfNeeded: ascii))
            ascii >>= 8
        }
    }

    /// Appends `value` in decimal (`-` and up to 19 digits, at most 20 bytes).
    @inline(__always)
    static func writeInteger(_ value: Int, to out: inout OutputSpan<UInt8>) {
        // Most integers of a location message are below 1000 (satellite ids, angles, SNRs,
        // counts): their one to three digits directly.
        if value >= 0 && value < 1000 { return writeSmall(value, to: &out) }
        if value < 0 { out.append(UInt8(ascii: "-")) }
        let magnitude = UInt64(value.magnitude)
        writeDigits(magnitude, length: decimalLength(magnitude), to: &out)
    }

    /// Appends `value` (0...999) in decimal, without leading zeros.
    @inline(__always)
    private static func writeSmall(_ value: Int, to out: inout OutputSpan<UInt8>) {
        let zero = UInt8(ascii: "0")
        if value < 10 {
            out.append(zero &+ UInt8(truncatingIfNeeded: value))
            return
        }
        var rest = value
        if value >= 100 {
            let hundreds = value / 100
            out.append(zero &+ UInt8(truncatingIfNeeded: hundreds))
            rest = value &- hundreds &* 100
        }
        let tens = rest / 10
        out.append(zero &+ UInt8(truncatingIfNeeded: tens))
        out.append(zero &+ UInt8(truncatingIfNeeded: rest &- tens &* 10))
    }

    /// Appends the bytes of `run` (constant JSON text, see `verbatimKey`) one by one: for the
    /// short runs inside a reservation, cheaper than a separate bulk copy per run.
    static func writeVerbatim(_ run: String, to out: inout OutputSpan<UInt8>) {
        let bytes = run.utf8.span
        for index in bytes.indices { out.append(bytes[index]) }
    }

    /// The most `writeString` writes for `text`: its bytes escaped as `\u00xx` (six each) and
    /// the quotes; `null` for nil.
    static func maximumStringLength(_ text: String?) -> Int {
        guard let text else { return 4 }
        return 2 + 6 * text.utf8.count
    }

    /// Appends `text` as a JSON string, escaped as `string(_:)` escapes it, or `null` for nil;
    /// at most `maximumStringLength(text)` bytes.
    static func writeString(_ text: String?, to out: inout OutputSpan<UInt8>) {
        guard let text else { return writeNull(to: &out) }
        out.append(UInt8(ascii: "\""))
        writeEscaped(text, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// Appends `text` escaped: `"` and `\` with a backslash, U+0000...U+001F as `\u00xx`; at
    /// most six bytes per byte of `text`.
    private static func writeEscaped(_ text: String, to out: inout OutputSpan<UInt8>) {
        let bytes = text.utf8.span
        for index in bytes.indices {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0x00..<0x20:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "u"))
                out.append(UInt8(ascii: "0"))
                out.append(UInt8(ascii: "0"))
                out.append(Hex.digit(byte >> 4, uppercase: false))
                out.append(Hex.digit(byte & 0x0F, uppercase: false))
            default:
                out.append(byte)
            }
        }
    }

    /// Appends `value` in decimal, or `null` for nil (at most 20 bytes).
    static func writeInteger(_ value: Int?, to out: inout OutputSpan<UInt8>) {
        if let value { writeInteger(value, to: &out) } else { writeNull(to: &out) }
    }

    /// Appends the bytes of `run` one by one, as `writeVerbatim(_: String, to:)`; for runs held
    /// as bytes.
    @inline(__always)
    static func writeVerbatim(_ run: [UInt8], to out: inout OutputSpan<UInt8>) {
        let bytes = run.span
        for index in bytes.indices { out.append(bytes[index]) }
    }

    /// Appends `null`.
    static func writeNull(to out: inout OutputSpan<UInt8>) {
        out.append(UInt8(ascii: "n"))
        out.append(UInt8(ascii: "u"))
        out.append(UInt8(ascii: "l"))
        out.append(UInt8(ascii: "l"))
    }

    /// The longest number `writeNumber` and `writeFixedPoint` write: a sign, 20 digits (19 of an
    /// Int64 plus the `0` after the point of a whole number) and the point
    /// (`-9223372036854775808.0`).
    static let maximumNumberLength = 22

    /// Appends `value` as `number(_:decimals:)` writes it (`null` when nil, not finite or too
    /// large), at most `maximumNumberLength` bytes.
    @inline(__always)
    static func writeNumber(_ value: Double?, decimals: Int, to out: inout OutputSpan<UInt8>) {
        guard let value, value.isFinite else { return writeNull(to: &out) }
        var d = min(max(decimals, 0), maximumDecimals)
        var scaled = (value * powerOfTen(d)).rounded()
        while !(scaled.magnitude < maximumMagnitude) {
            guard d > 0 else { return writeNull(to: &out) }
            d -= 1
            scaled = (value * powerOfTen(d)).rounded()
        }
        writeFixedPoint(scaled: Int64(scaled), decimals: d, to: &out)
    }

    /// Appends `scaled / 10^decimals` as `fixedPoint(scaled:decimals:)` writes it, at most
    /// `maximumNumberLength` bytes.
    @inline(__always)
    static func writeFixedPoint(scaled: Int64, decimals: Int, to out: inout OutputSpan<UInt8>) {
        let d = min(max(decimals, 0), 18)
        let magnitude = scaled.magnitude
        let divisor = integerPowerOfTen(d)
        let whole = magnitude / divisor
        var fraction = magnitude % divisor
        // Trailing zeros trimmed, but a zero fraction still prints one `0`. At most 18 of them:
        // removed eight, four, two and one at a time (one division each instead of one per zero).
        var fractionLength = 1
        if fraction != 0 {
            fractionLength = d
            if fraction % 100_000_000 == 0 {
                fraction /= 100_000_000
                fractionLength -= 8
                if fraction % 100_000_000 == 0 {
                    fraction /= 100_000_000
                    fractionLength -= 8
                }
            }
            if fraction % 10_000 == 0 {
                fraction /= 10_000
                fractionLength -= 4
            }
            if fraction % 100 == 0 {
                fraction /= 100
                fractionLength -= 2
            }
            if fraction % 10 == 0 {
                fraction /= 10
                fractionLength -= 1
            }
        }
        if scaled < 0 { out.append(UInt8(ascii: "-")) }
        // Most whole parts of a location message are below 1000 (degrees, metres per second).
        if whole < 1000 {
            writeSmall(Int(whole), to: &out)
        } else {
            writeDigits(whole, length: decimalLength(whole), to: &out)
        }
        out.append(UInt8(ascii: "."))
        writeDigits(fraction, length: fractionLength, to: &out)
    }

    /// Appends `value` as two digits (`07`); `value` must be in 0...99.
    @inline(__always)
    static func writeTwoDigits(_ value: Int, to out: inout OutputSpan<UInt8>) {
        let tens = value / 10
        out.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: tens))
        out.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value &- tens &* 10))
    }

    /// The number of decimal digits of `value` (1 for 0), without dividing: the binary length
    /// times log10(2) (1233 / 4096) is the length or one less, and one comparison tells which.
    static func decimalLength(_ value: UInt64) -> Int {
        let estimate = ((64 - value.leadingZeroBitCount) &* 1233) >> 12
        return max(estimate + (value >= integerPowerOfTen(estimate) ? 1 : 0), 1)
    }

    /// 10^d as a Double for 0...15, exact (every power of ten up to 10^22 is representable).
    /// A switch rather than a loop or an array: it compiles to a constant table, with no lazy
    /// global to initialise.
    private static func powerOfTen(_ d: Int) -> Double {
        switch d {
        case 0: 1
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        default: 1e15
        }
    }

    /// 10^d as a UInt64 for 0...19.
    private static func integerPowerOfTen(_ d: Int) -> UInt64 {
        switch d {
        case 0: 1
        case 1: 10
        case 2: 100
        case 3: 1_000
        case 4: 10_000
        case 5: 100_000
        case 6: 1_000_000
        case 7: 10_000_000
        case 8: 100_000_000
        case 9: 1_000_000_000
        case 10: 10_000_000_000
        case 11: 100_000_000_000
        case 12: 1_000_000_000_000
        case 13: 10_000_000_000_000
        case 14: 100_000_000_000_000
        case 15: 1_000_000_000_000_000
        case 16: 10_000_000_000_000_000
        case 17: 100_000_000_000_000_000
        case 18: 1_000_000_000_000_000_000
        default: 10_000_000_000_000_000_000
        }
    }
}
