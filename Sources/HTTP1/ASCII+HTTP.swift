import ByteCoding

// The byte classes only HTTP has (RFC 9110 §5.6, RFC 9112 §3.2), as switches over `UInt8` (no
// tables, no globals). Letters, digits, case and hex digits are ByteCoding's `ASCII` and `Hex`.

extension ASCII {
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
}
