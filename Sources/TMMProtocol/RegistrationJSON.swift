/// A tiny, tolerant reader for the flat JSON objects that registration URLs carry.
///
/// Accepts one JSON object whose keys are JSON strings *or* unquoted identifiers
/// (`[A-Za-z_$][A-Za-z0-9_$]*`, as in Trimble's own doc example `{application_id:"…",returl:"…"}`).
/// String values are decoded with every JSON escape (`\uXXXX` with surrogate pairs). Values of other
/// types (numbers, `true`, `false`, `null`, nested objects and arrays up to `maximumDepth`) are
/// accepted and skipped: their keys land in `otherKeys`. Whitespace around tokens, a leading UTF-8
/// BOM and trailing whitespace are allowed; anything after the object is not. Duplicate keys are an
/// error (a smuggling risk: two readers could pick different ones).
struct RegistrationJSONObject: Equatable, Sendable {
    /// Members whose values are strings.
    var strings: [String: String] = [:]
    /// Keys whose values are not strings.
    var otherKeys: Set<String> = []

    static let maximumDepth = 32

    /// A parse failure with a short, human-readable reason.
    struct Failure: Error, Equatable, Sendable {
        var reason: String
        var offset: Int
    }

    static func parse(_ bytes: [UInt8]) throws(Failure) -> RegistrationJSONObject {
        var reader = Reader(bytes: bytes)
        return try reader.document()
    }

    static func parse(_ text: String) throws(Failure) -> RegistrationJSONObject {
        try parse(Array(text.utf8))
    }

    private struct Reader {
        let bytes: [UInt8]
        var i = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        func fail(_ reason: String) -> Failure { Failure(reason: reason, offset: i) }

        var atEnd: Bool { i >= bytes.count }
        var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

        mutating func skipSpace() {
            while let c = peek, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { i += 1 }
        }

        mutating func expect(_ c: UInt8, _ what: String) throws(Failure) {
            skipSpace()
            guard peek == c else { throw fail("expected \(what)") }
            i += 1
        }

        mutating func document() throws(Failure) -> RegistrationJSONObject {
            if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { i = 3 }
            skipSpace()
            guard peek == UInt8(ascii: "{") else { throw fail("expected a JSON object") }
            i += 1
            var object = RegistrationJSONObject()
            skipSpace()
            if peek == UInt8(ascii: "}") {
                i += 1
            } else {
                while true {
                    skipSpace()
                    let key = try self.key()
                    if object.strings[key] != nil || object.otherKeys.contains(key) {
                        throw fail("duplicate key \"\(key)\"")
                    }
                    try expect(UInt8(ascii: ":"), "':' after a key")
                    skipSpace()
                    if peek == UInt8(ascii: "\"") {
                        object.strings[key] = try string()
                    } else {
                        try skipValue(depth: 1)
                        object.otherKeys.insert(key)
                    }
                    skipSpace()
                    guard let c = peek else { throw fail("unterminated object") }
                    i += 1
                    if c == UInt8(ascii: "}") { break }
                    guard c == UInt8(ascii: ",") else { throw fail("expected ',' or '}'") }
                }
            }
            skipSpace()
            guard atEnd else { throw fail("unexpected bytes after the object") }
            return object
        }

        static func isIdentifierStart(_ c: UInt8) -> Bool {
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                || c == UInt8(ascii: "_") || c == UInt8(ascii: "$")
        }

        static func isIdentifierPart(_ c: UInt8) -> Bool {
            isIdentifierStart(c) || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9"))
        }

        mutating func key() throws(Failure) -> String {
            guard let c = peek else { throw fail("expected a key") }
            if c == UInt8(ascii: "\"") { return try string() }
            guard Self.isIdentifierStart(c) else { throw fail("expected a key") }
            let start = i
            while let d = peek, Self.isIdentifierPart(d) { i += 1 }
            var name: [UInt8] = []
            for k in start..<i { name.append(bytes[k]) }
            return String(decoding: name, as: UTF8.self)
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            guard i + 4 <= bytes.count else { throw fail("short \\u escape") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[i]
                let d: UInt32
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
                default: throw fail("bad \\u escape")
                }
                v = v << 4 | d
                i += 1
            }
            return v
        }

        /// Reads a JSON string starting at its opening quote.
        mutating func string() throws(Failure) -> String {
            i += 1  // opening quote
            var out: [UInt8] = []
            while true {
                guard let c = peek else { throw fail("unterminated string") }
                i += 1
                if c == UInt8(ascii: "\"") { break }
                if c < 0x20 { throw fail("control character in a string") }
                if c != UInt8(ascii: "\\") {
                    out.append(c)
                    continue
                }
                guard let e = peek else { throw fail("unterminated escape") }
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u")
                        else {
                            throw fail("lone surrogate")
                        }
                        i += 2
                        let low = try hex4()
                        guard low >= 0xDC00 && low < 0xE000 else { throw fail("lone surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw fail("lone surrogate")
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw fail("bad \\u escape") }
                    out.append(contentsOf: String(Character(u)).utf8)
                default:
                    throw fail("bad escape")
                }
            }
            guard let text = String(validating: out, as: UTF8.self) else { throw fail("string is not UTF-8") }
            return text
        }

        /// Skips any JSON value that is not a top-level string member value.
        mutating func skipValue(depth: Int) throws(Failure) {
            guard depth <= RegistrationJSONObject.maximumDepth else { throw fail("nested too deeply") }
            skipSpace()
            guard let c = peek else { throw fail("expected a value") }
            switch c {
            case UInt8(ascii: "\""):
                _ = try string()
            case UInt8(ascii: "{"):
                i += 1
                skipSpace()
                if peek == UInt8(ascii: "}") { i += 1; return }
                while true {
                    skipSpace()
                    _ = try key()
                    try expect(UInt8(ascii: ":"), "':' after a key")
                    try skipValue(depth: depth + 1)
                    skipSpace()
                    guard let d = peek else { throw fail("unterminated object") }
                    i += 1
                    if d == UInt8(ascii: "}") { return }
                    guard d == UInt8(ascii: ",") else { throw fail("expected ',' or '}'") }
                }
            case UInt8(ascii: "["):
                i += 1
                skipSpace()
                if peek == UInt8(ascii: "]") { i += 1; return }
                while true {
                    try skipValue(depth: depth + 1)
                    skipSpace()
                    guard let d = peek else { throw fail("unterminated array") }
                    i += 1
                    if d == UInt8(ascii: "]") { return }
                    guard d == UInt8(ascii: ",") else { throw fail("expected ',' or ']'") }
                }
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try number()
            default:
                throw fail("expected a value")
            }
        }

        mutating func literal(_ word: String) throws(Failure) {
            let n = word.utf8.count
            guard i + n <= bytes.count else { throw fail("bad literal") }
            var k = 0
            for c in word.utf8 {
                guard bytes[i + k] == c else { throw fail("bad literal") }
                k += 1
            }
            i += n
        }

        /// A JSON number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
        mutating func number() throws(Failure) {
            func isDigit(_ c: UInt8?) -> Bool { c.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false }
            if peek == UInt8(ascii: "-") { i += 1 }
            guard isDigit(peek) else { throw fail("bad number") }
            if peek == UInt8(ascii: "0") { i += 1 } else { while isDigit(peek) { i += 1 } }
            if peek == UInt8(ascii: ".") {
                i += 1
                guard isDigit(peek) else { throw fail("bad number") }
                while isDigit(peek) { i += 1 }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                i += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { i += 1 }
                guard isDigit(peek) else { throw fail("bad number") }
                while isDigit(peek) { i += 1 }
            }
        }
    }
}
