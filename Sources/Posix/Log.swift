import CLinux
import Glibc
import Logging
import Synchronization

/// The daemon's one way to log: a severity per message (Logging's `LogLevel`), a threshold
/// (`log-level`, changed live by a reload), journald's `<N>` prefixes when standard error is the
/// journal (`LogFormat`, `JournalStream`), and repeated warnings and errors held back and counted
/// (`RepeatSuppressor`). One value is shared by every thread that logs (io, gpsd, udev, workers):
/// a line is formatted and written whole under one lock, so lines never interleave and a summary
/// always comes before the line that triggered it.
///
/// Call it as `log("text")` (info), `log("text", level: .warning)` or `log.warning("text")`.
/// Modules below this one that take a `(String) -> Void` closure get `log.lines(at:)`.
public final class Logger: Sendable {
    private struct State {
        var level: LogLevel
        var suppressor: RepeatSuppressor
        /// Runs around every write (a live status line erases itself first and is drawn again).
        var surround: (@Sendable (() -> Void) -> Void)?
    }

    public let format: LogFormat
    private let state: Mutex<State>
    private let clock: @Sendable () -> Int64
    private let write: @Sendable (String) -> Void

    /// `write` gets each finished line (newline included); `clock` is monotonic nanoseconds
    /// (injected by tests to drive the suppressor's windows).
    public init(
        format: LogFormat, level: LogLevel = .info, suppression: RepeatSuppressor.Settings = .init(),
        clock: @escaping @Sendable () -> Int64 = { monotonicNanoseconds() },
        write: @escaping @Sendable (String) -> Void
    ) {
        self.format = format
        self.clock = clock
        self.write = write
        state = Mutex(State(level: level, suppressor: RepeatSuppressor(suppression)))
    }

    /// Writing to standard error, as journald lines when it is the journal (`standardErrorFormat`).
    public static func standardError(program: String, level: LogLevel = .info) -> Logger {
        Logger(format: standardErrorFormat(program: program), level: level) { line in
            var line = line
            line.withUTF8 { _ = try? writeAll($0.span, to: STDERR_FILENO) }
        }
    }

    /// `.journal` when `$JOURNAL_STREAM` names the stream standard error is (systemd's rule: a
    /// redirected stderr of a service's child inherits the variable but is not the journal),
    /// else `.plain(program:)`.
    public static func standardErrorFormat(program: String) -> LogFormat {
        format(
            of: STDERR_FILENO, journalStream: CurrentProcess.environment(JournalStream.environmentVariable),
            program: program)
    }

    /// The format for writing to `descriptor` when `$JOURNAL_STREAM` is `journalStream`.
    public static func format(of descriptor: CInt, journalStream: String?, program: String) -> LogFormat {
        var status = stat()
        guard fstat(descriptor, &status) == 0,
            JournalStream.matches(journalStream, device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        else { return .plain(program: program) }
        return .journal
    }

    /// The least severe level written; changed by a reload.
    public var level: LogLevel {
        get { state.withLock { $0.level } }
        set { state.withLock { $0.level = newValue } }
    }

    /// Whether a message at `level` would be written (to skip building an expensive one).
    public func isEnabled(_ level: LogLevel) -> Bool { level <= self.level }

    /// Logs `message` at `level`. Warnings and errors, and any message given a `key` (the call
    /// site's name for it, when its text carries a running count), are suppressed when the same
    /// one was written within the window (see `RepeatSuppressor`). The message is an autoclosure:
    /// a debug line on a hot path costs a level check, not a string, when debug is off.
    public func callAsFunction(_ message: @autoclosure () -> String, level: LogLevel = .info, key: String? = nil) {
        guard isEnabled(level) else { return }
        let message = message()
        let now = clock()
        state.withLock { state in
            var summaries: [RepeatSuppressor.Summary] = []
            var written = true
            if level <= .warning || key != nil {
                written = state.suppressor.admit(message, key: key, level: level, now: now, summaries: &summaries)
            }
            for summary in summaries { emit(format.line(summary.text, level: summary.level), state) }
            if written { emit(format.line(message, level: level), state) }
        }
    }

    /// Has `surround` run around every write from now on (nil: none). A live status line on the
    /// terminal uses it to erase itself before a log line and draw itself again below it.
    public func surroundWrites(with surround: (@Sendable (() -> Void) -> Void)?) {
        state.withLock { $0.surround = surround }
    }

    private func emit(_ line: String, _ state: State) {
        if let surround = state.surround { surround { write(line) } } else { write(line) }
    }

    public func error(_ message: @autoclosure () -> String, key: String? = nil) {
        self(message(), level: .error, key: key)
    }
    public func warning(_ message: @autoclosure () -> String, key: String? = nil) {
        self(message(), level: .warning, key: key)
    }
    public func notice(_ message: @autoclosure () -> String, key: String? = nil) {
        self(message(), level: .notice, key: key)
    }
    public func info(_ message: @autoclosure () -> String, key: String? = nil) {
        self(message(), level: .info, key: key)
    }
    public func debug(_ message: @autoclosure () -> String, key: String? = nil) {
        self(message(), level: .debug, key: key)
    }

    /// Writes the summaries of suppression windows that have ended (the io loop's tick calls it,
    /// so a burst that stopped is reported without waiting for the next message).
    public func flush() {
        let now = clock()
        state.withLock { state in
            for summary in state.suppressor.due(now: now) {
                emit(format.line(summary.text, level: summary.level), state)
            }
        }
    }

    /// Writes every pending summary, windows ended or not (at stop).
    public func flushAll() {
        let now = clock()
        state.withLock { state in
            for summary in state.suppressor.flushAll(now: now) {
                emit(format.line(summary.text, level: summary.level), state)
            }
        }
    }

    /// A closure logging at `level`, for modules whose interface takes `(String) -> Void`.
    public func lines(at level: LogLevel = .info) -> @Sendable (String) -> Void {
        { [self] message in self(message, level: level) }
    }
}
