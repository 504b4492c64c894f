// ASCII over bytes: the named bytes the parsers match, classification, case folding and
// case-insensitive comparison. The one home for them: HTTP1, WebSocket, TMMProtocol,
// NMEA0183, Discovery and the assembly tier use these instead of spelling `0x41...0x5A` again.
//
// Everything is `@inlinable` and a switch or a subtraction over `UInt8` (no tables, no globals):
// the NMEA framer and the HTTP parser call these per byte, across a module boundary.

/// ASCII byte classes and case rules, for bytes that are text in a protocol (RFC 20).
///
/// Only the 26 letters `A-Z`/`a-z` have a case here; every other byte, non-ASCII included, folds to
/// itself (RFC 9110 §5.1's "case-insensitive" and RFC 3986 §6.2.2.1's case normalization are both
/// ASCII-only).
public enum ASCII {
    // MARK: Named bytes

    @inlinable public static var tab: UInt8 { 0x09 }
    @inlinable public static var lf: UInt8 { 0x0A }
    @inlinable public static var cr: UInt8 { 0x0D }
    @inlinable public static var space: UInt8 { 0x20 }
    @inlinable public static var dollar: UInt8 { 0x24 }  // $
    @inlinable public static var hash: UInt8 { 0x23 }  // #
    @inlinable public static var percent: UInt8 { 0x25 }  // %
    @inlinable public static var ampersand: UInt8 { 0x26 }  // &
    @inlinable public static var star: UInt8 { 0x2A }  // *
    @inlinable public static var plus: UInt8 { 0x2B }  // +
    @inlinable public static var comma: UInt8 { 0x2C }  // ,
    @inlinable public static var minus: UInt8 { 0x2D }  // -
    @inlinable public static var dot: UInt8 { 0x2E }  // .
    @inlinable public static var slash: UInt8 { 0x2F }  // /
    @inlinable public static var zero: UInt8 { 0x30 }  // 0
    @inlinable public static var nine: UInt8 { 0x39 }  // 9
    @inlinable public static var colon: UInt8 { 0x3A }  // :
    @inlinable public static var semicolon: UInt8 { 0x3B }  // ;
    @inlinable public static var equals: UInt8 { 0x3D }  // =
    @inlinable public static var question: UInt8 { 0x3F }  // ?
    @inlinable public static var upperA: UInt8 { 0x41 }  // A
    @inlinable public static var upperZ: UInt8 { 0x5A }  // Z
    @inlinable public static var underscore: UInt8 { 0x5F }  // _
    @inlinable public static var lowerA: UInt8 { 0x61 }  // a
    @inlinable public static var lowerZ: UInt8 { 0x7A }  // z
    @inlinable public static var tilde: UInt8 { 0x7E }  // ~
    @inlinable public static var delete: UInt8 { 0x7F }

    // MARK: Classes

    /// `0-9` (RFC 5234 DIGIT).
    @inlinable @inline(__always)
    public static func isDigit(_ c: UInt8) -> Bool { c &- zero < 10 }

    /// `A-Z`.
    @inlinable @inline(__always)
    public static func isUpper(_ c: UInt8) -> Bool { c &- upperA < 26 }

    /// `a-z`.
    @inlinable @inline(__always)
    public static func isLower(_ c: UInt8) -> Bool { c &- lowerA < 26 }

    /// `A-Z a-z` (RFC 5234 ALPHA).
    @inlinable @inline(__always)
    public static func isLetter(_ c: UInt8) -> Bool { (c | 0x20) &- lowerA < 26 }

    /// `A-Z a-z 0-9`.
    @inlinable @inline(__always)
    public static func isAlphanumeric(_ c: UInt8) -> Bool { isLetter(c) || isDigit(c) }

    /// SP or HTAB: C's `isblank`, HTTP's optional whitespace (RFC 9110 §5.6.3 OWS).
    @inlinable @inline(__always)
    public static func isBlank(_ c: UInt8) -> Bool { c == space || c == tab }

    /// Visible ASCII and SP, `0x20...0x7E` (what an NMEA sentence may hold).
    @inlinable @inline(__always)
    public static func isPrintable(_ c: UInt8) -> Bool { c &- space <= 0x5E }

    /// A C0 control or DEL (`0x00...0x1F`, `0x7F`).
    @inlinable @inline(__always)
    public static func isControl(_ c: UInt8) -> Bool { c < space || c == delete }

    /// `unreserved` of RFC 3986 §2.3 (`A-Z a-z 0-9 - . _ ~`): percent-encoding these is
    /// equivalent to sending them raw, and they are all a percent-encoder leaves as they are.
    @inlinable @inline(__always)
    public static func isUnreserved(_ c: UInt8) -> Bool {
        isAlphanumeric(c) || c == minus || c == dot || c == underscore || c == tilde
    }

    /// A byte of an RFC 3986 §3.1 scheme after its first: `ALPHA / DIGIT / "+" / "-" / "."`.
    @inlinable @inline(__always)
    public static func isSchemeCharacter(_ c: UInt8) -> Bool {
        isAlphanumeric(c) || c == plus || c == minus || c == dot
    }

    /// Whether `bytes` is an RFC 3986 §3.1 scheme: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`
    /// (at least one byte; case is not checked, schemes are case-insensitive).
    @inlinable
    public static func isScheme(_ bytes: some Sequence<UInt8>) -> Bool {
        var first = true
        for c in bytes {
            guard first ? isLetter(c) : isSchemeCharacter(c) else { return false }
            first = false
        }
        return !first
    }

    // MARK: Case

    /// `c` with `A-Z` lowered; every other byte unchanged.
    @inlinable @inline(__always)
    public static func lowercased(_ c: UInt8) -> UInt8 { isUpper(c) ? c | 0x20 : c }

    /// `c` with `a-z` raised; every other byte unchanged.
    @inlinable @inline(__always)
    public static func uppercased(_ c: UInt8) -> UInt8 { isLower(c) ? c & ~0x20 : c }

    /// `text` with `A-Z` lowered and everything else (non-ASCII included) unchanged, unlike
    /// `String.lowercased()`, which follows Unicode.
    public static func lowercased(_ text: some StringProtocol) -> String {
        String(decoding: text.utf8.map { lowercased($0) }, as: UTF8.self)
    }

    // MARK: Comparison

    /// Whether `a` and `b` are equal ignoring ASCII case.
    @inlinable
    public static func equalsIgnoringCase(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        let x = a.utf8, y = b.utf8
        guard x.count == y.count else { return false }
        return zip(x, y).allSatisfy { lowercased($0) == lowercased($1) }
    }

    /// Whether `bytes[range]` equals `text` ignoring ASCII case (RFC 9110 §5.1 field names; the
    /// tokens of Connection, Upgrade, Transfer-Encoding and Expect).
    @inlinable
    public static func equalsIgnoringCase(_ bytes: Span<UInt8>, _ range: Range<Int>, _ text: String) -> Bool {
        var i = range.lowerBound
        for c in text.utf8 {
            guard i < range.upperBound, lowercased(bytes[i]) == lowercased(c) else { return false }
            i += 1
        }
        return i == range.upperBound
    }

    /// Whether `bytes[range]` is exactly `text`, case included (HTTP methods, RFC 9110 §9.1).
    @inlinable
    public static func equals(_ bytes: Span<UInt8>, _ range: Range<Int>, _ text: String) -> Bool {
        var i = range.lowerBound
        for c in text.utf8 {
            guard i < range.upperBound, bytes[i] == c else { return false }
            i += 1
        }
        return i == range.upperBound
    }

    // MARK: Trimming

    /// `range` without leading and trailing SP and HTAB.
    @inlinable
    public static func trimmingBlanks(_ bytes: Span<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, isBlank(bytes[lower]) { lower += 1 }
        while upper > lower, isBlank(bytes[upper - 1]) { upper -= 1 }
        return lower..<upper
    }

    /// `text` without leading and trailing SP and HTAB.
    public static func trimmingBlanks(_ text: some StringProtocol) -> String {
        let utf8 = Array(text.utf8)
        let range = trimmingBlanks(utf8.span, 0..<utf8.count)
        return String(decoding: utf8[range], as: UTF8.self)
    }
}
