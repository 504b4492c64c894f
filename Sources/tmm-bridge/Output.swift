import Glibc

/// Unbuffered writes to the standard streams (Swift 6 rejects the global `stdout` FILE*).
enum Output {
    static func standard(_ text: String) { write(text, to: STDOUT_FILENO) }
    static func error(_ text: String) { write(text, to: STDERR_FILENO) }

    /// Writes all of `bytes`, retrying short writes and EINTR; false if the stream is gone.
    @discardableResult
    static func write(_ bytes: Span<UInt8>, to fd: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.extracting(offset..<bytes.count).withUnsafeBufferPointer { buffer in
                Glibc.write(fd, buffer.baseAddress, buffer.count)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    private static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { _ = write($0.span, to: fd) }
    }
}

/// The monotonic clock in nanoseconds, for the epoch assembler's stale-cycle timeout.
func monotonicNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}
