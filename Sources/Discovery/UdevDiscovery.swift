import CLinux
import CUdev
import Glibc
import Posix
import Synchronization

/// Enumerates and monitors tty and gnss devices on a dedicated `udev` thread that owns the libudev
/// context for its whole life, and posts `DiscoveryEvent`s into the caller's inbox.
///
/// Order on the thread: make its `EventLoop`, create the monitor and start receiving, post
/// `.monitorStarted`, scan (`.enumerated(…, .startup)`), then run the loop, which hands the
/// monitor's readiness to the code that reads it, until `stop()` (the loop's stop handle), a
/// closed inbox or a broken monitor. Listening before scanning means a device plugged during the
/// scan is reported (possibly twice: consumers are idempotent) rather than missed.
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
        /// Stops the thread's event loop; made before the thread (which makes its loop with it),
        /// so `stop()` works from the moment `start()` returns.
        var stopHandle: EventLoop.StopHandle?
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
    /// handle cannot be created. Calling it while running does nothing.
    public func start() throws(Errno) {
        let result: Result<Void, Errno> = state.withLock { state in
            guard state.thread == nil else { return .success(()) }
            let inbox = self.inbox
            let options = self.options
            let end = threadEnd
            end.ended.store(false, ordering: .releasing)
            do throws(Errno) {
                let stop = try EventLoop.StopHandle()
                state.thread = try OSThread(name: "udev") {
                    UdevDiscovery.run(inbox: inbox, options: options, stopHandle: stop)
                    end.ended.store(true, ordering: .releasing)
                }
                state.stopHandle = stop
            } catch {
                return .failure(error)
            }
            return .success(())
        }
        try result.get()
    }

    /// Tells the thread to stop, waits for it (it wakes at once: its event loop waits on the stop
    /// handle with the monitor), and releases everything. Safe to call more than once.
    public func stop() {
        let (thread, stop) = state.withLock { state -> (OSThread?, EventLoop.StopHandle?) in
            defer { state.thread = nil; state.stopHandle = nil }
            return (state.thread, state.stopHandle)
        }
        guard let thread else { return }
        stop?.stop()
        thread.join()
    }

    // MARK: - The udev thread

    /// Receive failures in a row (with no device in between) after which the socket is deemed
    /// broken: enough to ride out a few malformed messages, few enough not to flood the log.
    static let maximumConsecutiveFailures = 64

    /// Devices read from the monitor per turn of the loop: a storm of uevents cannot keep the
    /// thread from seeing its stop handle (the socket is level-triggered, so the rest is read in
    /// the next turns).
    static let maximumDevicesPerTurn = 256

    private static func run(inbox: Inbox<DiscoveryEvent>, options: Options, stopHandle: EventLoop.StopHandle) {
        defer { inbox.post(.stopped) }
        do {
            try monitorLoop(inbox: inbox, options: options, stopHandle: stopHandle)
        } catch {
            inbox.post(.problem(error))
        }
    }

    /// Sets up the monitor, scans, and runs the thread's event loop until the stop handle, a
    /// closed inbox or a broken monitor ends it (the last one thrown).
    private static func monitorLoop(
        inbox: Inbox<DiscoveryEvent>, options: Options, stopHandle: EventLoop.StopHandle
    ) throws(DiscoveryError) {
        let loop: EventLoop
        do { loop = try EventLoop(maxEventsPerWait: 4, stopHandle: stopHandle) } catch {
            throw DiscoveryError(operation: "the udev thread's event loop (epoll, timerfd)", errno: error)
        }
        let reader = try MonitorReader(inbox: inbox, options: options)
        guard inbox.post(.monitorStarted(reader.source)) else { return }
        try reader.scan(reason: .startup)

        // A handler cannot throw: the monitor's failure is kept here and thrown once the loop
        // has returned (as `decode` keeps its outcome).
        var failure: DiscoveryError?
        let readable: EventLoop.Handler = { [unowned loop] event in
            do throws(DiscoveryError) {
                if try !reader.read(event) { loop.stop() }
            } catch {
                failure = error
                loop.stop()
            }
        }
        do { try loop.register(reader.monitor.descriptor, interest: .readable, handler: readable) } catch {
            throw DiscoveryError(operation: "epoll_ctl(udev monitor)", errno: error)
        }
        do { try loop.run() } catch {
            throw DiscoveryError(operation: "epoll_wait(udev monitor)", errno: error)
        }
        if let failure { throw failure }
    }
}

/// The udev thread's libudev objects (context and monitor, made and released on that thread) and
/// the reading of the monitor, one readiness report of the thread's event loop at a time.
private final class MonitorReader {
    let context: UdevContext
    let monitor: UdevMonitor
    let source: MonitorSource
    let inbox: Inbox<DiscoveryEvent>
    let options: UdevDiscovery.Options
    /// `.failed` receives since the last device (see `maximumConsecutiveFailures`).
    private var consecutiveFailures = 0

    /// Creates the context and the monitor, filtered to the subsystems, and starts receiving.
    init(inbox: Inbox<DiscoveryEvent>, options: UdevDiscovery.Options) throws(DiscoveryError) {
        let context = try UdevContext()
        let source = options.resolvedSource
        let monitor = try UdevMonitor(context: context, source: source)
        for subsystem in options.subsystems { try monitor.addMatch(subsystem: subsystem) }
        do {
            try monitor.setReceiveBufferSize(options.receiveBufferBytes)
        } catch {
            inbox.post(
                .problem(
                    DiscoveryError(
                        operation: error.operation, errno: error.errno,
                        hint: "continuing with the default buffer; a burst of uevents may overflow it")))
        }
        try monitor.enableReceiving()
        self.context = context
        self.monitor = monitor
        self.source = source
        self.inbox = inbox
        self.options = options
    }

    /// Handles one report of the monitor socket: reads what is queued (up to
    /// `maximumDevicesPerTurn`) and posts it. Returns false when the inbox is closed (nobody
    /// listens: discovery ends); throws when the socket is broken.
    func read(_ event: SelectorEvent) throws(DiscoveryError) -> Bool {
        if event.isHangUp && !event.isReadable {
            throw DiscoveryError(operation: "epoll_wait(udev monitor)", hint: "the netlink socket was closed")
        }
        if event.isError {
            // A pending socket error (ENOBUFS after an overflow) is read and cleared here, so a
            // queue that is already empty cannot make the level-triggered loop spin on EPOLLERR.
            switch pendingSocketError(monitor.descriptor) {
            case nil:
                break
            case let error? where error.rawValue == ENOBUFS:
                try resynchronize(error: error)
            case let error?:
                inbox.post(
                    .problem(
                        DiscoveryError(
                            operation: "udev monitor socket", errno: error, hint: "continuing")))
            }
        }
        for _ in 0..<UdevDiscovery.maximumDevicesPerTurn {
            switch monitor.receive() {
            case .device(let device):
                consecutiveFailures = 0
                let properties = device.properties
                if options.wants(properties), !inbox.post(.uevent(properties)) { return false }
            case .drained:
                return true
            case .failed(let error) where error.rawValue == ENOBUFS:
                try resynchronize(error: error)
                return true
            case .failed(let error):
                // One bad message must not end discovery: report it and keep reading (in the next
                // turn). A socket that fails every time would make the loop spin, so that ends
                // discovery.
                consecutiveFailures += 1
                guard consecutiveFailures < UdevDiscovery.maximumConsecutiveFailures else {
                    throw DiscoveryError(
                        operation: "udev_monitor_receive_device()", errno: error,
                        hint: "failed \(consecutiveFailures) times in a row; discovery stopped")
                }
                inbox.post(
                    .problem(
                        DiscoveryError(
                            operation: "udev_monitor_receive_device()", errno: error, hint: "event skipped")))
                return true
            }
        }
        return true
    }

    /// The kernel dropped uevents (netlink ENOBUFS): say so, and post a fresh scan that replaces
    /// what the lost events would have told.
    private func resynchronize(error: Errno) throws(DiscoveryError) {
        inbox.post(
            .problem(
                DiscoveryError(
                    operation: "udev_monitor_receive_device()", errno: error,
                    hint: "uevents were lost (socket buffer overflow); re-scanning devices")))
        try scan(reason: .resynchronization)
    }

    func scan(reason: EnumerationReason) throws(DiscoveryError) {
        let devices = try enumerateDevices(context: context, subsystems: options.subsystems, keep: options.wants)
        inbox.post(.enumerated(devices, reason))
    }
}

@available(*, unavailable, message: "libudev objects belong to the udev thread")
extension MonitorReader: Sendable {}

/// Reads and clears a socket's pending error (SO_ERROR); nil when there is none.
private func pendingSocketError(_ descriptor: CInt) -> Errno? {
    var error: CInt = 0
    var length = socklen_t(MemoryLayout<CInt>.size)
    do { _ = try valueOrErrno { getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length) } } catch {
        return error
    }
    return error == 0 ? nil : Errno(rawValue: error)
}

/// The devices discovery would find now (its start-up scan, on the calling thread, with a libudev
/// context of its own): what `tmm-bridge devices` classifies. Works without udevd: libudev reads
/// sysfs itself (udevd's database only adds `ID_*` properties when it runs).
public func scanDevices(
    options: UdevDiscovery.Options = UdevDiscovery.Options()
) throws(DiscoveryError) -> [DeviceProperties] {
    let context = try UdevContext()
    return try enumerateDevices(context: context, subsystems: options.subsystems, keep: options.wants)
}

/// The canonical path of a configured device (`/dev/gps0` → `/dev/ttyACM0`), so explicit devices
/// and udev's device nodes compare equal. Returns `path` unchanged when it cannot be resolved
/// (the device may simply not exist yet).
public func canonicalDevicePath(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
}
