// Log severities and how a line is written for a terminal or for journald. Pure (no I/O, no
// clock): Posix's Logger does the writing, BridgeCore's configuration names a level.

/// A message's severity, numbered as syslog(3) and sd-daemon.h (`SD_ERR` ... `SD_DEBUG`) number
/// them: a smaller number is more severe. `tmm-bridge` uses five of the eight.
public enum LogLevel: Int, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    /// Something failed: a request cannot be served, a file cannot be written.
    case error = 3
    /// Something is wrong but the daemon carries on (a refused client, a setting it cannot apply).
    case warning = 4
    /// A normal but significant fact (ready, stopping, a reload).
    case notice = 5
    /// What an operator follows: start-up facts, receivers coming and going, registrations.
    case info = 6
    /// Per-connection details, only when asked for (`log-level = debug`).
    case debug = 7

    /// The name used by `--log-level` and `log-level =`.
    public var description: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// The level called `name` (as `description` spells it), or nil.
    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = level
    }

    /// More severe first, as syslog numbers them: `.error < .debug`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// How a log line is written.
public enum LogFormat: Sendable, Equatable {
    /// For a terminal or a file: `program: message` (no time stamp: a terminal user sees it
    /// happen, and a file written by a supervisor gets its own).
    case plain(program: String)
    /// For journald's stream (stderr connected to it, `JOURNAL_STREAM`): `<N>message`, the
    /// priority prefix of sd-daemon.h that journald reads and strips. No program name: journald
    /// records it (`SYSLOG_IDENTIFIER`) with the time.
    case journal

    /// `message` at `level` as one line ending in a newline: one message is one journald entry.
    ///
    /// Every control character in it is escaped (`Self.escaped`), the newline too, and so are
    /// the Unicode characters that break, move or reorder text on a terminal, whichever value
    /// they came from: logged values are often another party's (udev strings, paths, headers).
    /// This works on Unicode scalars, never on Characters: `"\r\n"` is one grapheme, and a
    /// Character loop looking for `"\n"` once copied a USB product string's `\r\n<0>…` through,
    /// which journald read as a second entry at emergency priority and broadcast to every
    /// terminal.
    public func line(_ message: String, level: LogLevel) -> String {
        let prefix: String
        switch self {
        case .plain(let program): prefix = program.isEmpty ? "" : program + ": "
        case .journal: prefix = "<\(level.rawValue)>"
        }
        var text = prefix
        text.reserveCapacity(prefix.utf8.count + message.utf8.count + 1)
        for scalar in message.unicodeScalars {
            if let escape = Self.escaped(scalar) {
                text += escape
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text + "\n"
    }

    /// How `scalar` is written when a terminal or journald would act on it rather than show it
    /// (`isTextControl`), else nil: `\xHH` up to U+00FF (`\n` is `\x0A`, `\r` `\x0D`),
    /// `\u{HHHH}` above.
    static func escaped(_ scalar: Unicode.Scalar) -> String? {
        let value = scalar.value
        guard scalar.isTextControl else { return nil }
        let digits = String(value, radix: 16, uppercase: true)
        return value <= 0xFF
            ? "\\x" + String(repeating: "0", count: 2 - digits.count) + digits
            : "\\u{" + digits + "}"
    }
}

/// systemd's rule for "is standard error the journal?" (systemd.exec(5), `$JOURNAL_STREAM`;
/// sd_journal_stream_fd(3)): the service manager sets `JOURNAL_STREAM` to `DEVICE:INODE` (decimal)
/// of the stream it connected, and a program checks that its stderr is still that stream, since
/// a child whose stderr was redirected inherits the variable too.
public enum JournalStream {
    /// The environment variable.
    public static let environmentVariable = "JOURNAL_STREAM"

    /// `DEVICE:INODE` as two decimal numbers, or nil when malformed.
    public static func parse(_ value: String) -> (device: UInt64, inode: UInt64)? {
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = decimal(parts[0]), let inode = decimal(parts[1]) else { return nil }
        return (device, inode)
    }

    /// Whether `value` (the variable; nil when unset) names the stream whose `st_dev` and
    /// `st_ino` are `device` and `inode`.
    public static func matches(_ value: String?, device: UInt64, inode: UInt64) -> Bool {
        guard let value, let named = parse(value) else { return false }
        return named.device == device && named.inode == inode
    }

    /// Digits only (no sign, no space), as systemd writes them.
    private static func decimal(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return UInt64(text)
    }
}
