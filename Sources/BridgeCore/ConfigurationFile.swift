// The configuration file format, as a pure parser (standard library only, so Fuzz/run-bridge.sh
// can build it alone): text in, `name = value` entries out, or the line that is wrong.

/// A configuration mistake: which option, where, and what was expected.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `file:line: ` for a file entry, empty for the command line.
    public var location: String
    public var message: String

    public init(location: String = "", message: String) {
        self.location = location
        self.message = message
    }

    public var description: String { location + message }
}

/// A configuration file: `name = value` lines. `#` starts a comment (at the start of a line or
/// after white space), blank lines are ignored, values may be double-quoted to keep spaces or `#`
/// (the value then runs to the next quote, and only a comment may follow it).
public enum ConfigurationFile {
    /// One `name = value` line.
    public struct Entry: Sendable, Equatable {
        public var name: String
        public var value: String
        public var line: Int
    }

    /// Parses the text of a file (named `path` in errors).
    ///
    /// Works on Unicode scalars, not Characters: the syntax is ASCII, and a combining mark after a
    /// quote or a space must not change what the quote or space means. Lines end at LF (a CR right
    /// before it is part of the line end); any other control character in a line is an error.
    public static func parse(_ text: String, path: String) throws(ConfigurationError) -> [Entry] {
        var entries: [Entry] = []
        var number = 0
        let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, raw) in lines.enumerated() {
            number += 1
            let location = "\(path):\(number): "
            var line = raw
            // CRLF: the CR belongs to the line end only when an LF follows it.
            if line.last == "\r" && index < lines.count - 1 { line.removeLast() }
            if let control = line.first(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) {
                let hex = String(control.value, radix: 16, uppercase: true)
                throw ConfigurationError(
                    location: location,
                    message: "control character U+\(String(repeating: "0", count: 4 - hex.count) + hex) in the line")
            }
            let trimmed = trimSpaces(line)
            if trimmed.isEmpty || trimmed.first == "#" { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw ConfigurationError(
                    location: location, message: "expected 'name = value', got '\(string(trimmed))'")
            }
            let name = trimSpaces(trimmed[..<equals])
            guard !name.isEmpty, name.allSatisfy(isNameScalar) else {
                throw ConfigurationError(location: location, message: "'\(string(name))' is not an option name")
            }
            var value = trimSpaces(trimmed[trimmed.index(after: equals)...])
            if value.first == "\"" {
                // The value runs to the next quote; after it only white space or a comment.
                let opening = value.startIndex
                guard let closing = value[value.index(after: opening)...].firstIndex(of: "\"") else {
                    throw ConfigurationError(location: location, message: "unterminated quoted value")
                }
                let after = trimSpaces(value[value.index(after: closing)...])
                guard after.isEmpty || after.first == "#" else {
                    throw ConfigurationError(
                        location: location,
                        message: "unexpected '\(string(after))' after the closing quote (a comment starts with #)")
                }
                value = value[value.index(after: opening)..<closing]
            } else if let hash = commentStart(value) {
                value = trimSpaces(value[..<hash])
            }
            entries.append(Entry(name: string(name), value: string(value), line: number))
        }
        return entries
    }

    private typealias Scalars = Substring.UnicodeScalarView

    private static func string(_ scalars: Scalars) -> String { String(Substring(scalars)) }

    private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-": true
        default: false
        }
    }

    private static func trimSpaces(_ text: Scalars) -> Scalars {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }

    /// A `#` at the start or after white space starts a comment (`a#b` stays a value).
    private static func commentStart(_ value: Scalars) -> Scalars.Index? {
        var previous: Unicode.Scalar = " "
        for index in value.indices {
            if value[index] == "#" && (previous == " " || previous == "\t") { return index }
            previous = value[index]
        }
        return nil
    }
}
