import BridgeCore
import Glibc
import Posix

/// Unbuffered writes to the standard streams (Swift 6 rejects the global `stdout` FILE*).
enum Output {
    static func standard(_ text: String) { write(text, to: STDOUT_FILENO) }
    static func error(_ text: String) { write(text, to: STDERR_FILENO) }

    /// Writes all of `bytes` (Posix's `writeAll`: short writes and EINTR retried); false if the
    /// stream is gone (or, non-blocking, full).
    @discardableResult
    static func write(_ bytes: Span<UInt8>, to fd: Int32) -> Bool {
        (try? writeAll(bytes, to: fd)) != nil
    }

    private static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { _ = write($0.span, to: fd) }
    }
}
