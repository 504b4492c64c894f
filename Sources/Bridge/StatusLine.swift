import BridgeCore
import Posix
import Synchronization

/// The live status line of `tmm-bridge run` on a terminal (`make run`): one line at the bottom of
/// the terminal, redrawn in place (carriage return, the text, erase to the end of the line) by
/// the io loop at most four times a second (BridgeServer+Status.swift), with
/// `DaemonStatus.statusLine` as the text.
///
/// Log lines go to standard error, which is the same terminal: a log line written over the status
/// line would be glued to it. Whoever writes a line to that terminal calls `printing { … }`
/// (or `clear()` before and `redraw()` after), which erases the status line, lets the line be
/// written, and draws the status line again below it. Every thread logs, so the line's state is
/// behind a mutex, held across the whole clear–write–redraw so that no other thread's update
/// lands between them.
public final class StatusLine: Sendable {
    private struct State {
        /// What the line shows (or will show once redrawn); empty before the first update.
        var text = ""
        /// The text is on the terminal now (not cleared).
        var isShown = false
        /// After `finish()`: nothing is drawn any more.
        var isFinished = false
    }

    /// The terminal's descriptor (standard output).
    public let descriptor: CInt
    private let state = Mutex(State())

    /// A status line on `descriptor`, or nil when it is not a terminal (then nothing changes:
    /// output read by a program or a file never gets control sequences).
    public init?(descriptor: CInt = Terminal.standardOutput) {
        guard Terminal.isTerminal(descriptor) else { return nil }
        self.descriptor = descriptor
    }

    /// The terminal's width in columns (asked each time: the window may have been resized); 80
    /// when the terminal does not say.
    public var columns: Int { Terminal.columns(of: descriptor) ?? 80 }

    /// Shows `text` in place of the line's current text (unchanged text is not written again).
    public func update(_ text: String) {
        state.withLock { state in
            guard !state.isFinished, !(state.isShown && state.text == text) else { return }
            state.text = text
            state.isShown = true
            write(Self.redrawSequence(text))
        }
    }

    /// Erases the line (before something else is written to the terminal).
    public func clear() {
        state.withLock { state in
            guard state.isShown else { return }
            state.isShown = false
            write(Self.clearSequence)
        }
    }

    /// Draws the line again after `clear()`.
    public func redraw() {
        state.withLock { state in
            guard !state.isFinished, !state.isShown, !state.text.isEmpty else { return }
            state.isShown = true
            write(Self.redrawSequence(state.text))
        }
    }

    /// Runs `body` (which writes whole lines to the terminal) with the line erased, then draws it
    /// again; no update can come in between. The log sink's hook.
    public func printing(_ body: () -> Void) {
        state.withLock { state in
            if state.isShown { write(Self.clearSequence) }
            body()
            if state.isShown { write(Self.redrawSequence(state.text)) }
        }
    }

    /// Erases the line for good (the daemon is stopping; its last log lines follow).
    public func finish() {
        state.withLock { state in
            if state.isShown { write(Self.clearSequence) }
            state.isShown = false
            state.isFinished = true
        }
    }

    /// Carriage return and erase-line (ECMA-48 EL 0: from the cursor to the end of the line).
    public static let clearSequence = "\r\u{1B}[K"

    /// The line drawn over whatever the current line shows: to the line's start, the text, then
    /// erased to the end (a shorter text leaves nothing of a longer one behind).
    public static func redrawSequence(_ text: String) -> String { "\r" + text + "\u{1B}[K" }

    private func write(_ text: String) {
        var text = text
        // A terminal that is gone (hung up) or full cannot show a status line; the daemon goes on.
        text.withUTF8 { _ = try? writeAll($0.span, to: descriptor) }
    }
}
