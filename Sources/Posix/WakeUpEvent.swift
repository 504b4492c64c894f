import CLinux
import Glibc

/// An eventfd used as a wake-up: any thread signals it, the thread that polls `descriptor` sees
/// it readable and clears it (NIO's wake-up pattern). The one eventfd wrapper of the package: the
/// inbox's and the worker's wake-ups and every event loop's stop handle are each one of these.
public final class WakeUpEvent: Sendable {
    /// Readable while signalled; non-blocking and close-on-exec; closed with the object.
    public let descriptor: CInt

    public init() throws(Errno) {
        descriptor = try valueOrErrno { eventfd(0, CInt(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    deinit { _ = Glibc.close(descriptor) }

    /// Makes `descriptor` readable (signals add up until `clear`; the counter cannot overflow in
    /// practice, and a full counter is still readable, so a failed write loses nothing).
    public func signal() {
        var one: UInt64 = 1
        _ = try? valueOrErrno { Glibc.write(descriptor, &one, 8) }
    }

    /// Makes `descriptor` unreadable again; returns how many signals there were since the last
    /// clear (0 when none: the read would block).
    @discardableResult
    public func clear() -> UInt64 {
        var counter: UInt64 = 0
        guard (try? valueOrNilIfWouldBlock({ Glibc.read(descriptor, &counter, 8) })) != nil else { return 0 }
        return counter
    }

    /// Blocks up to `milliseconds` (-1: forever) until signalled; true if it was. Does not clear.
    public func wait(milliseconds: Int32) -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return ((try? valueOrErrno { poll(&poller, 1, milliseconds) }) ?? 0) > 0
    }
}
