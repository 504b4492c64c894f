import CLinux
import CUdev
import Glibc
import Posix
import Synchronization

/// Enumerates and monitors tty and gnss devices on a dedicated `udev` thread that owns the libudev
/// context for its whole life, and posts `DiscoveryEvent`s into the caller's inbox.
///
/// Order on the thread: create the monitor and start receiving, post `.monitorStarted`, scan
/// (`.enumerated(…, .startup)`), then read the monitor until `stop()`. Listening before scanning
/// means a device plugged during the scan is reported (possibly twice: consumers are idempotent)
/// rather than missed.
public final class UdevDiscovery: Sendable {
    public struct Options: Sendable, Hashable {
        /// Which netlink group to listen to.
        public enum SourceChoice: Sendable, Hashable {
            /// `udev` when udevd runs (its control socket exists), else `kernel`.
            case automatic
            case fixed(MonitorSource)
        }

        public var source: SourceChoice
        /// Subsystems to enumerate and monitor (gpsd's rules handle the same two).
        public var subsystems: [String]
        /// Virtual ttys (consoles, `tty0`…`tty63`, `ptmx`) are never receivers; they are left out
        /// unless this is set. RFCOMM ttys are virtual too and are always kept.
        public var includeVirtualTTYs: Bool
        /// Requested netlink receive buffer: a hub with several receivers sends a burst of uevents,
        /// and an overflow loses events (then discovery re-scans, see `EnumerationReason`).
        public var receiveBufferBytes: Int
        /// udevd's control socket; its presence means udevd runs.
        public var udevControlPath: String

        public init(
            source: SourceChoice = .automatic, subsystems: [String] = ["tty", "gnss"],
            includeVirtualTTYs: Bool = false, receiveBufferBytes: Int = 1 << 20,
            udevControlPath: String = "/run/udev/control"
        ) {
            self.source = source
            self.subsystems = subsystems
            self.includeVirtualTTYs = includeVirtualTTYs
            self.receiveBufferBytes = receiveBufferBytes
            self.udevControlPath = udevControlPath
        }

        /// The source `.automatic` picks right now.
        public var resolvedSource: MonitorSource {
            switch source {
            case .fixed(let source): return source
            case .automatic: return access(udevControlPath, F_OK) == 0 ? .udev : .kernel
            }
        }

        /// Whether a device is worth posting.
        func wants(_ device: DeviceProperties) -> Bool {
            guard subsystems.contains(device.subsystem) else { return false }
            if device.subsystem != "tty" || includeVirtualTTYs || device.isRFCOMM { return true }
            return !device.devpath.hasPrefix("/devices/virtual/")
        }
    }

    public let options: Options
    private let inbox: Inbox<DiscoveryEvent>
    private let state = Mutex(State())
    private let threadEnd = ThreadEnd()

    /// Set by the udev thread as it returns (reset by `start()`).
    private final class ThreadEnd: Sendable {
        let ended = Atomic(false)
    }

    /// Whether the udev thread has returned: for tests, to see it end on its own (a closed
    /// inbox) without `stop()`, which would end it anyway.
    var threadHasEnded: Bool { threadEnd.ended.load(ordering: .acquiring) }

    private struct State {
        var thread: OSThread?
        /// Tells the thread to stop; released by `stop()` after the join.
        var stopEvent: WakeUpEvent?
    }

    /// Events go to `inbox`. Give it room for bursts: 256 is plenty for a few receivers (the
    /// start-up scan is a single value whatever the number of devices).
    public init(inbox: Inbox<DiscoveryEvent>, options: Options = Options()) {
        self.inbox = inbox
        self.options = options
    }

    deinit { stop() }

    /// Starts the udev thread. Failures inside the thread (no netlink, libudev errors) arrive as
    /// `.problem` events followed by `.stopped`; this only throws when the thread or its stop
    /// descriptor cannot be created. Calling it while running does nothing.
    public func start() throws(Errno) {
        let result: Result<Void, Errno> = state.withLock { state in
            guard state.thread == nil else { return .success(()) }
            let inbox = self.inbox
            let options = self.options
            let end = threadEnd
            end.ended.store(false, ordering: .releasing)
            do throws(Errno) {
                let stop = try WakeUpEvent()
                state.thread = try OSThread(name: "udev") {
                    UdevDiscovery.run(inbox: inbox, options: options, stopDescriptor: stop.descriptor)
                    end.ended.store(true, ordering: .releasing)
                }
                state.stopEvent = stop
            } catch {
                return .failure(error)
            }
            return .success(())
        }
        try result.get()
    }

    /// Tells the thread to stop, waits for it (it wakes at once: it polls the stop descriptor
    /// with the monitor), and releases everything. Safe to call more than once.
    public func stop() {
        let (thread, stop) = state.withLock { state -> (OSThread?, WakeUpEvent?) in
            defer { state.thread = nil; state.stopEvent = nil }
            return (state.thread, state.stopEvent)
        }
        guard let thread else { return }
        stop?.signal()
        thread.join()
        withExtendedLifetime(stop) {}  // the thread polled its descriptor until the join
    }

    // MARK: - The udev thread

    /// Receive failures in a row (with no device in between) after which the socket is deemed
    /// broken: enough to ride out a few malformed messages, few enough not to flood the log.
    static let maximumConsecutiveFailures = 64

    private static func run(inbox: Inbox<DiscoveryEvent>, options: Options, stopDescriptor: CInt) {
        defer { inbox.post(.stopped) }
        do {
            let context = try UdevContext()
            try monitorLoop(context: context, inbox: inbox, options: options, stopDescriptor: stopDescriptor)
        } catch {
            inbox.post(.problem(error))
        }
    }

    private static func monitorLoop(
        context: borrowing UdevContext, inbox: Inbox<DiscoveryEvent>, options: Options, stopDescriptor: CInt
    ) throws(DiscoveryError) {
        let source = options.resolvedSource
        let monitor = try UdevMonitor(context: context, source: source)
        for subsystem in options.subsystems { try monitor.addMatch(subsystem: subsystem) }
        do {
            try monitor.setReceiveBufferSize(options.receiveBufferBytes)
        } catch {
            inbox.post(.problem(DiscoveryError(
                operation: error.operation, errno: error.errno,
                hint: "continuing with the default buffer; a burst of uevents may overflow it")))
        }
        try monitor.enableReceiving()
        guard inbox.post(.monitorStarted(source)) else { return }
        try scan(context: context, inbox: inbox, options: options, reason: .startup)

        var consecutiveFailures = 0
        var descriptors = [
            pollfd(fd: monitor.descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stopDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            do { _ = try valueOrErrno { poll(&descriptors, 2, -1) } } catch {
                throw DiscoveryError(operation: "poll(udev monitor)", errno: error)
            }
            if descriptors[1].revents != 0 { return }
            let events = descriptors[0].revents
            if events & Int16(POLLNVAL) != 0
                || (events & Int16(POLLHUP) != 0 && events & Int16(POLLIN) == 0) {
                throw DiscoveryError(operation: "poll(udev monitor)", hint: "the netlink socket was closed")
            }
            if events & Int16(POLLERR) != 0 {
                // A pending socket error (ENOBUFS after an overflow) is read and cleared here, so
                // a queue that is already empty cannot make poll spin on POLLERR.
                switch pendingSocketError(monitor.descriptor) {
                case nil:
                    break
                case let error? where error.rawValue == ENOBUFS:
                    try resynchronize(context: context, inbox: inbox, options: options, error: error)
                case let error?:
                    inbox.post(.problem(DiscoveryError(
                        operation: "udev monitor socket", errno: error, hint: "continuing")))
                }
            }
            // Drain everything that is queued, then poll again.
            drain: while true {
                switch monitor.receive() {
                case .device(let device):
                    consecutiveFailures = 0
                    let properties = device.properties
                    if options.wants(properties), !inbox.post(.uevent(properties)) { return }
                case .drained:
                    break drain
                case .failed(let error) where error.rawValue == ENOBUFS:
                    try resynchronize(context: context, inbox: inbox, options: options, error: error)
                    break drain
                case .failed(let error):
                    // One bad message must not end discovery: report it and keep reading. A socket
                    // that fails every time would make this loop spin, so that ends discovery.
                    consecutiveFailures += 1
                    guard consecutiveFailures < Self.maximumConsecutiveFailures else {
                        throw DiscoveryError(
                            operation: "udev_monitor_receive_device()", errno: error,
                            hint: "failed \(consecutiveFailures) times in a row; discovery stopped")
                    }
                    inbox.post(.problem(DiscoveryError(
                        operation: "udev_monitor_receive_device()", errno: error, hint: "event skipped")))
                    break drain
                }
            }
        }
    }

    /// The kernel dropped uevents (netlink ENOBUFS): say so, and post a fresh scan that replaces
    /// what the lost events would have told.
    private static func resynchronize(
        context: borrowing UdevContext, inbox: Inbox<DiscoveryEvent>, options: Options, error: Errno
    ) throws(DiscoveryError) {
        inbox.post(.problem(DiscoveryError(
            operation: "udev_monitor_receive_device()", errno: error,
            hint: "uevents were lost (socket buffer overflow); re-scanning devices")))
        try scan(context: context, inbox: inbox, options: options, reason: .resynchronization)
    }

    /// Reads and clears a socket's pending error (SO_ERROR); nil when there is none.
    private static func pendingSocketError(_ descriptor: CInt) -> Errno? {
        var error: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        do { _ = try valueOrErrno { getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length) } } catch {
            return error
        }
        return error == 0 ? nil : Errno(rawValue: error)
    }

    private static func scan(
        context: borrowing UdevContext, inbox: Inbox<DiscoveryEvent>, options: Options, reason: EnumerationReason
    ) throws(DiscoveryError) {
        let devices = try enumerateDevices(context: context, subsystems: options.subsystems, keep: options.wants)
        inbox.post(.enumerated(devices, reason))
    }
}

/// The canonical path of a configured device (`/dev/gps0` → `/dev/ttyACM0`), so explicit devices
/// and udev's device nodes compare equal. Returns `path` unchanged when it cannot be resolved
/// (the device may simply not exist yet).
public func canonicalDevicePath(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
}
