import Logging

/// When the daemon tells systemd its `STATUS=` line (`systemctl status` shows the latest): only
/// when the summary changed, and at most once per `minimumInterval`, so a flapping fix or a
/// client reconnecting in a loop cannot flood systemd's notification socket. A change that comes
/// too soon is not lost: the io loop asks again on its next timer and it goes out once the
/// interval has passed (the latest text then, not every intermediate one).
public struct StatusNotifications: Sendable {
    public let minimumInterval: Int64
    /// The text systemd has now.
    public private(set) var lastSent: String?
    private var lastSentAt: Int64?

    public init(minimumInterval: Int64 = 1_000_000_000) {
        self.minimumInterval = minimumInterval
    }

    /// Whether a notification may go out at `now` (checked before the summary is even built).
    public func isDue(now: Int64) -> Bool { lastSentAt.map { now - $0 >= minimumInterval } ?? true }

    /// `summary` was sent at `now` another way (READY's own STATUS= line): the interval starts.
    public mutating func sent(_ summary: String, now: Int64) {
        lastSent = summary
        lastSentAt = now
    }

    /// The `STATUS=` message to send for `summary` at `now`, or nil (unchanged, or too soon).
    public mutating func message(for summary: String, now: Int64) -> String? {
        guard isDue(now: now), summary != lastSent else { return nil }
        sent(summary, now: now)
        // One line: the summary carries strings a USB device chose (its product name), and a line
        // break there would start another assignment (`READY=1`, `WATCHDOG=1`) in the datagram;
        // `systemctl status` shows it on a terminal.
        return "STATUS=" + String(String.UnicodeScalarView(summary.unicodeScalars.map { $0.isTextControl ? " " : $0 }))
    }
}
