// Byte classes of RFC 9110 §5.6 and RFC 3986, as switches over `UInt8` (no tables, no globals).

enum ASCII {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")
    static let comma = UInt8(ascii: ",")
    static let semicolon = UInt8(ascii: ";")
    static let slash = UInt8(ascii: "/")
    static let question = UInt8(ascii: "?")
    static let hash = UInt8(ascii: "#")
    static let star = UInt8(ascii: "*")
    static let percent = UInt8(ascii: "%")
    static let plus = UInt8(ascii: "+")
    static let ampersand = UInt8(ascii: "&")
    static let equals = UInt8(ascii: "=")
    static let dot = UInt8(ascii: ".")

    /// `tchar` of RFC 9110 §5.6.2: the bytes of a method or a field name.
    @inline(__always)
    static func isTokenChar(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// A byte allowed inside a field value (RFC 9110 §5.5): HTAB, visible ASCII, SP and obs-text.
    /// NUL, the other controls and DEL are not.
    @inline(__always)
    static func isFieldValueChar(_ c: UInt8) -> Bool {
        c == tab || (c >= 0x20 && c != 0x7F)
    }

    /// A byte allowed in a request-target: visible ASCII except `#` (a fragment is never sent,
    /// RFC 9112 §3.2). Like picohttpparser and nginx, the characters RFC 3986 wants encoded but
    /// browsers send raw (`"<>\^`{|}`) are tolerated; controls, SP, DEL and non-ASCII are not.
    @inline(__always)
    static func isTargetChar(_ c: UInt8) -> Bool {
        c > 0x20 && c < 0x7F && c != hash
    }

    /// `unreserved` of RFC 3986 §2.3: percent-encoding these is equivalent to sending them raw.
    @inline(__always)
    static func isUnreserved(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    @inline(__always)
    static func isDigit(_ c: UInt8) -> Bool {
        c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")
    }

    @inline(__always)
    static func isAlpha(_ c: UInt8) -> Bool {
        (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z")
    }

    @inline(__always)
    static func isWhitespace(_ c: UInt8) -> Bool {
        c == space || c == tab
    }

    @inline(__always)
    static func lowercased(_ c: UInt8) -> UInt8 {
        c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") ? c | 0x20 : c
    }

    @inline(__always)
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c &- UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c &- UInt8(ascii: "A") &+ 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c &- UInt8(ascii: "a") &+ 10
        default: nil
        }
    }

    /// Whether `bytes[range]` equals `name` ignoring ASCII case (RFC 9110 §5.1: field names are
    /// case-insensitive; so are the tokens of Connection, Upgrade, Transfer-Encoding and Expect).
    static func equalsIgnoringCase(_ bytes: Span<UInt8>, _ range: Range<Int>, _ name: String) -> Bool {
        var i = range.lowerBound
        for c in name.utf8 {
            guard i < range.upperBound, lowercased(bytes[i]) == lowercased(c) else { return false }
            i += 1
        }
        return i == range.upperBound
    }

    /// Whether `bytes[range]` is exactly `text`, case included (methods, RFC 9110 §9.1, and the
    /// `null` origin).
    static func equals(_ bytes: Span<UInt8>, _ range: Range<Int>, _ text: String) -> Bool {
        var i = range.lowerBound
        for c in text.utf8 {
            guard i < range.upperBound, bytes[i] == c else { return false }
            i += 1
        }
        return i == range.upperBound
    }

    /// Whether two strings are equal ignoring ASCII case (for field names our own code writes).
    static func equalsCaseInsensitive(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lowercased($0) == lowercased($1) }
    }

    /// `range` without leading and trailing SP and HTAB (OWS, RFC 9110 §5.6.3).
    static func trimmingWhitespace(_ bytes: Span<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, isWhitespace(bytes[lower]) { lower += 1 }
        while upper > lower, isWhitespace(bytes[upper - 1]) { upper -= 1 }
        return lower..<upper
    }
}
