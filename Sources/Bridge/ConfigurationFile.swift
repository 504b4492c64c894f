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
/// after white space), blank lines are ignored, values may be double-quoted to keep spaces or `#`.
public enum ConfigurationFile {
    /// One `name = value` line.
    public struct Entry: Sendable, Equatable {
        public var name: String
        public var value: String
        public var line: Int
    }

    /// Parses the text of a file (named `path` in errors).
    public static func parse(_ text: String, path: String) throws(ConfigurationError) -> [Entry] {
        var entries: [Entry] = []
        var number = 0
        // "\r\n" is one Character in Swift, so both line ends are named.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            let location = "\(path):\(number): "
            let trimmed = trimSpaces(line)
            if trimmed.isEmpty || trimmed.first == "#" { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw ConfigurationError(location: location, message: "expected 'name = value', got '\(trimmed)'")
            }
            let name = String(trimSpaces(trimmed[..<equals]))
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
                throw ConfigurationError(location: location, message: "'\(name)' is not an option name")
            }
            var value = trimSpaces(trimmed[trimmed.index(after: equals)...])
            if value.first == "\"" {
                guard value.count >= 2, value.last == "\"" else {
                    throw ConfigurationError(location: location, message: "unterminated quoted value")
                }
                value = value.dropFirst().dropLast()
            } else if let hash = commentStart(value) {
                value = trimSpaces(value[..<hash])
            }
            entries.append(Entry(name: name, value: String(value), line: number))
        }
        return entries
    }

    private static func trimSpaces(_ text: Substring) -> Substring {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }

    /// A `#` preceded by white space starts a comment (`a#b` stays a value).
    private static func commentStart(_ value: Substring) -> Substring.Index? {
        var previous: Character = " "
        for index in value.indices {
            if value[index] == "#" && (previous == " " || previous == "\t") { return index }
            previous = value[index]
        }
        return nil
    }
}
