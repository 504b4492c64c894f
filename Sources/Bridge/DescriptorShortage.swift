import Posix

/// What the servers do when accept fails for want of a descriptor (EMFILE, ENFILE): a
/// level-triggered listener would spin, so the loop refuses the pending connection with its
/// spare descriptor or pauses the listener until a descriptor is free (EventLoop.acceptFailed).
/// One count and one log rule for every listener (the TCP ports and the control socket).
final class DescriptorShortage {
    private unowned let loop: EventLoop
    private let log: Logger
    /// Connections refused, or listeners paused, for want of a descriptor.
    private(set) var refused = 0

    init(loop: EventLoop, log: Logger) {
        self.loop = loop
        self.log = log
    }

    /// After accept failed on `listener`. Returns true when a connection was refused (try the
    /// next one).
    func acceptFailed(_ error: Errno, listener fd: CInt) -> Bool {
        let outcome = loop.acceptFailed(error, listener: fd)
        guard outcome != .otherError else {
            log.error("accept failed: \(error)")
            return false
        }
        refused += 1
        if refused == 1 || refused % 1000 == 0 {
            log.warning("out of file descriptors (\(error)): refusing connections (\(refused) so far)")
        }
        if outcome == .refusedOne { return true }
        log.warning("out of file descriptors: not accepting until one is free")
        return false
    }
}

@available(*, unavailable, message: "it belongs to the io thread")
extension DescriptorShortage: Sendable {}
