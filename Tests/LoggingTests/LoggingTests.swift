import Glibc
import Logging
import Posix
import Synchronization
import TestSupport
import Testing

@Suite("log levels and line formats", .tags(.unit))
struct LogFormatTests {
    @Test func levelsAreSyslogNumbersAndNamed() {
        #expect(LogLevel.allCases.map(\.rawValue) == [3, 4, 5, 6, 7])
        #expect(LogLevel.allCases.map(\.description) == ["error", "warning", "notice", "info", "debug"])
        for level in LogLevel.allCases { #expect(LogLevel(name: level.description) == level) }
        #expect(LogLevel(name: "err") == nil && LogLevel(name: "INFO") == nil && LogLevel(name: "") == nil)
        #expect(LogLevel.error < .warning && LogLevel.info < .debug, "more severe sorts first, as syslog numbers")
    }

    @Test func plainLinesKeepTheProgramPrefix() {
        #expect(LogFormat.plain(program: "tmm-bridge").line("ready", level: .notice) == "tmm-bridge: ready\n")
        #expect(LogFormat.plain(program: "").line("ready", level: .error) == "ready\n")
    }

    @Test func journalLinesCarryThePriority() {
        #expect(LogFormat.journal.line("ready", level: .notice) == "<5>ready\n")
        #expect(LogFormat.journal.line("bad", level: .error) == "<3>bad\n")
        #expect(LogFormat.journal.line("chat", level: .debug) == "<7>chat\n")
        #expect(
            LogFormat.journal.line("one\ntwo", level: .warning) == "<4>one\\x0Atwo\n",
            "journald reads each line as an entry: a message is one")
    }

    /// A value another party chose (a USB product or serial string, a path, a header) cannot make
    /// a line of its own, forge journald's priority prefix, or move text on a terminal.
    @Test(
        "Control and reordering characters are escaped, on scalars, never split into entries",
        arguments: [
            ("product\r\n<0>PANIC", "product\\x0D\\x0A<0>PANIC"),
            ("a\nb", "a\\x0Ab"),
            ("a\rb", "a\\x0Db"),
            ("bell\u{07}esc\u{1B}[2J", "bell\\x07esc\\x1B[2J"),
            ("nul\u{0}del\u{7F}", "nul\\x00del\\x7F"),
            ("nel\u{85}csi\u{9B}", "nel\\x85csi\\x9B"),
            ("ls\u{2028}ps\u{2029}", "ls\\u{2028}ps\\u{2029}"),
            ("rlo\u{202E}gnp.exe", "rlo\\u{202E}gnp.exe"),
            ("isolate\u{2066}x\u{2069}", "isolate\\u{2066}x\\u{2069}"),
            ("tab\tkept, é, 北京, 🛰", "tab\tkept, é, 北京, 🛰"),
        ])
    func controlCharactersAreEscaped(value: String, written: String) {
        #expect(
            LogFormat.journal.line("receiver connected: \(value)", level: .info)
                == "<6>receiver connected: \(written)\n")
        #expect(LogFormat.plain(program: "p").line(value, level: .info) == "p: \(written)\n")
    }
}

@Suite("JOURNAL_STREAM: is stderr the journal", .tags(.unit))
struct JournalStreamTests {
    @Test func parsesDeviceAndInode() {
        let parsed = JournalStream.parse("8:1234567")
        #expect(parsed?.device == 8 && parsed?.inode == 1_234_567)
        #expect(JournalStream.matches("8:1234567", device: 8, inode: 1_234_567))
    }

    @Test func anotherStreamDoesNotMatch() {
        #expect(!JournalStream.matches("8:1234567", device: 8, inode: 1_234_568))
        #expect(!JournalStream.matches("9:1234567", device: 8, inode: 1_234_567))
        #expect(!JournalStream.matches(nil, device: 8, inode: 1_234_567), "unset")
    }

    @Test(arguments: [
        "", ":", "8", "8:", ":5", "8:5:1", " 8:5", "8:5 ", "-8:5", "+8:5", "0x8:5", "a:b", "99999999999999999999:5",
    ])
    func malformedValuesNeverMatch(_ value: String) {
        #expect(JournalStream.parse(value) == nil, "\(value)")
        #expect(!JournalStream.matches(value, device: 8, inode: 5))
    }

    @Test("a descriptor is the journal only when the variable names its st_dev:st_ino")
    func descriptorFormat() throws {
        var ends: [CInt] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        var status = stat()
        #expect(fstat(ends[1], &status) == 0)
        let named = "\(status.st_dev):\(status.st_ino)"
        #expect(Logger.format(of: ends[1], journalStream: named, program: "p") == .journal)
        #expect(
            Logger.format(of: ends[1], journalStream: "\(status.st_dev):\(status.st_ino + 1)", program: "p")
                == .plain(program: "p"))
        #expect(Logger.format(of: ends[1], journalStream: "garbage", program: "p") == .plain(program: "p"))
        #expect(Logger.format(of: ends[1], journalStream: nil, program: "p") == .plain(program: "p"))
        #expect(Logger.format(of: -1, journalStream: named, program: "p") == .plain(program: "p"), "a closed stderr")
    }
}

@Suite("repeated messages: suppressed, counted, summarised", .tags(.unit))
struct RepeatSuppressorTests {
    static let second: Int64 = 1_000_000_000
    let window = 10 * second

    @Test func copiesWithinTheWindowAreCountedAndSummarisedWhenItEnds() {
        var suppressor = RepeatSuppressor(.init(window: window, capacity: 8))
        var summaries: [RepeatSuppressor.Summary] = []
        #expect(suppressor.admit("gpsd gone", level: .warning, now: 0, summaries: &summaries))
        for t in 1...4 {
            #expect(!suppressor.admit("gpsd gone", level: .warning, now: Int64(t) * Self.second, summaries: &summaries))
        }
        #expect(summaries.isEmpty)
        #expect(suppressor.due(now: window - 1).isEmpty, "the window has not ended")
        #expect(
            suppressor.due(now: window) == [
                .init(level: .warning, text: "gpsd gone (repeated 4 times in the last 10 s)")
            ])
        #expect(suppressor.trackedCount == 0)
        #expect(suppressor.admit("gpsd gone", level: .warning, now: window + 1, summaries: &summaries), "a new window")
    }

    @Test func theNextMessageAfterTheWindowBringsTheSummaryFirst() {
        var suppressor = RepeatSuppressor(.init(window: window, capacity: 8))
        var summaries: [RepeatSuppressor.Summary] = []
        _ = suppressor.admit("a", level: .error, now: 0, summaries: &summaries)
        _ = suppressor.admit("a", level: .error, now: 2 * Self.second, summaries: &summaries)
        #expect(suppressor.admit("b", level: .warning, now: 12 * Self.second + 1, summaries: &summaries))
        #expect(summaries == [.init(level: .error, text: "a (repeated once in the last 13 s)")])
    }

    @Test func aWindowWithoutCopiesEndsSilently() {
        var suppressor = RepeatSuppressor(.init(window: window, capacity: 8))
        var summaries: [RepeatSuppressor.Summary] = []
        _ = suppressor.admit("once", level: .error, now: 0, summaries: &summaries)
        #expect(suppressor.due(now: 3 * window).isEmpty && suppressor.trackedCount == 0)
    }

    @Test("a call-site key makes texts with a running count one message; the summary quotes the latest")
    func keyedMessages() {
        var suppressor = RepeatSuppressor(.init(window: window, capacity: 8))
        var summaries: [RepeatSuppressor.Summary] = []
        #expect(suppressor.admit("TLS failed (1 so far)", key: "tls", level: .warning, now: 0, summaries: &summaries))
        #expect(!suppressor.admit("TLS failed (2 so far)", key: "tls", level: .warning, now: 1, summaries: &summaries))
        #expect(!suppressor.admit("TLS failed (3 so far)", key: "tls", level: .warning, now: 2, summaries: &summaries))
        #expect(
            suppressor.admit("TLS failed (1 so far)", level: .warning, now: 3, summaries: &summaries),
            "no key: the text is the key")
        #expect(
            suppressor.flushAll(now: Self.second) == [
                .init(level: .warning, text: "TLS failed (3 so far) (repeated 2 times in the last 1 s)")
            ])
    }

    @Test("the table is bounded: the oldest entry makes room and its summary is written then")
    func boundedTable() {
        var suppressor = RepeatSuppressor(.init(window: window, capacity: 3))
        var summaries: [RepeatSuppressor.Summary] = []
        _ = suppressor.admit("m0", level: .error, now: 0, summaries: &summaries)
        _ = suppressor.admit("m0", level: .error, now: 1, summaries: &summaries)
        for i in 1..<1000 {
            #expect(suppressor.admit("m\(i)", level: .error, now: Int64(i) + 1, summaries: &summaries))
            #expect(suppressor.trackedCount <= 3)
        }
        #expect(summaries == [.init(level: .error, text: "m0 (repeated once in the last 1 s)")])
        #expect(suppressor.trackedCount == 3)
    }
}

/// A logger writing into an array, on a clock the test moves.
private final class Capture: Sendable {
    let lines = Mutex<[String]>([])
    let now = Mutex<Int64>(0)

    func logger(_ format: LogFormat = .journal, level: LogLevel = .info) -> Logger {
        Logger(
            format: format, level: level, suppression: .init(window: 10_000_000_000, capacity: 4),
            clock: { [self] in now.withLock { $0 } }
        ) { [self] line in lines.withLock { $0.append(line) } }
    }

    var written: [String] { lines.withLock { $0 } }
    func advance(seconds: Int64) { now.withLock { $0 += seconds * 1_000_000_000 } }
}

@Suite("Logger: threshold, journald prefixes, repeat rule", .tags(.unit))
struct LoggerTests {
    @Test func levelsBelowTheThresholdAreDropped() {
        let capture = Capture()
        let log = capture.logger(level: .info)
        log.debug("chatty")
        log("default is info")
        log.notice("ready")
        log.error("broken")
        #expect(capture.written == ["<6>default is info\n", "<5>ready\n", "<3>broken\n"])
        log.level = .warning
        log.info("quiet now")
        log.warning("still shown")
        log.level = .debug
        log.debug("shown at debug")
        #expect(capture.written.suffix(2) == ["<4>still shown\n", "<7>shown at debug\n"])
    }

    @Test("a message below the threshold is never built")
    func lazyMessages() {
        let capture = Capture()
        let log = capture.logger(level: .info)
        let built = Mutex(0)
        func expensive() -> String {
            built.withLock { $0 += 1 }
            return "details"
        }
        log.debug(expensive())
        log(expensive(), level: .debug)
        #expect(built.withLock { $0 } == 0 && capture.written.isEmpty)
        log.level = .debug
        log.debug(expensive())
        #expect(built.withLock { $0 } == 1 && capture.written == ["<7>details\n"])
    }

    @Test func plainFormatForTerminals() {
        let capture = Capture()
        capture.logger(.plain(program: "tmm-bridge")).warning("port busy")
        #expect(capture.written == ["tmm-bridge: port busy\n"])
    }

    @Test("repeated warnings are held back and summarised on the next flush; info lines never are")
    func repeatedWarnings() {
        let capture = Capture()
        let log = capture.logger()
        for _ in 0..<5 { log.warning("gpsd unreachable") }
        for _ in 0..<2 { log.info("receiver connected") }
        #expect(capture.written == ["<4>gpsd unreachable\n", "<6>receiver connected\n", "<6>receiver connected\n"])
        capture.advance(seconds: 9)
        log.flush()
        #expect(capture.written.count == 3, "the window has not ended")
        capture.advance(seconds: 1)
        log.flush()
        #expect(capture.written.last == "<4>gpsd unreachable (repeated 4 times in the last 10 s)\n")
        log.warning("gpsd unreachable")
        #expect(capture.written.last == "<4>gpsd unreachable\n", "a new window writes the message again")
    }

    @Test func flushAllWritesPendingSummaries() {
        let capture = Capture()
        let log = capture.logger()
        log.error("x", key: "k")
        log.error("y", key: "k")
        log.flushAll()
        #expect(capture.written == ["<3>x\n", "<3>y (repeated once in the last 1 s)\n"])
    }

    @Test func dropsBelowThresholdAreNotCounted() {
        let capture = Capture()
        let log = capture.logger(level: .error)
        log.warning("w")
        log.warning("w")
        log.flushAll()
        #expect(capture.written.isEmpty)
    }
}
