/// The kernel calls that keeping rfcomm ttys bound makes: the system's (`SystemRFCOMMControl`) in
/// the daemon, a fake in tests (this machine, like CI, has no Bluetooth in its kernel).
public protocol RFCOMMControl: Sendable {
    /// `/dev/rfcomm<device>` as sysfs shows it; nil when it is not bound.
    func tty(device: Int16) -> RFCOMMTTY?
    /// Binds the tty (`RFCOMMCREATEDEV`: local, no radio traffic; needs CAP_NET_ADMIN).
    func bind(_ binding: RFCOMMBinding) throws(RFCOMMError)
    /// The tty's link state (`RFCOMMGETDEVINFO`), nil when it cannot be asked.
    func linkState(device: Int16) -> RFCOMMState?
}

/// The real kernel: sysfs for presence, the RFCOMM ioctls for the rest.
public struct SystemRFCOMMControl: RFCOMMControl {
    public var sysfs = RFCOMMSysfs()

    public init() {}

    public func tty(device: Int16) -> RFCOMMTTY? { (try? sysfs.tty(device: device)) ?? nil }

    public func bind(_ binding: RFCOMMBinding) throws(RFCOMMError) {
        _ = try RFCOMM.bind(device: binding.device, address: binding.address, channel: binding.channel)
    }

    public func linkState(device: Int16) -> RFCOMMState? { try? RFCOMM.info(device: device).state }
}

/// One configured Bluetooth receiver's binding as `status` shows it (read-only).
public struct RFCOMMBindingStatus: Sendable, Equatable {
    public var binding: RFCOMMBinding
    /// `/dev/rfcommN`.
    public var devicePath: String { "/dev/rfcomm\(binding.device)" }
    /// The tty exists and is this binding.
    public var isBound: Bool
    /// The link's state when last asked (`connected` while gpsd reads the receiver; `clean` or
    /// `closed` when bound but not connected); nil when the kernel could not be asked.
    public var link: RFCOMMState?
    /// The last bind failure, until a bind succeeds.
    public var lastError: RFCOMMError?
    /// Bind attempts that failed since the tty was last bound.
    public var failures: Int
    /// Binds made since start (1 after the start-up bind; more after each re-bind).
    public var binds: Int
}

/// Keeps every configured rfcomm binding in place: one `RFCOMMRebinder` each, checked and driven
/// by `tick(now:)`, which the daemon's io loop calls from a timer (at the time `tick` asks for).
/// Each call is a sysfs read and at most one non-blocking ioctl per binding: nothing waits.
///
/// What it sees: the tty gone (someone released it, the module was reloaded) → re-bound after the
/// rebinder's backoff; a tty bound to another address under that number → not ours, retried at
/// the backoff's pace (the bind fails "already bound" until it is released).
public struct RFCOMMKeeper {
    /// While everything is bound, how often the ttys are checked (a released tty is noticed
    /// within this, then re-bound after the rebinder's first delay).
    public static let checkInterval: Int64 = 2_000_000_000

    public private(set) var rebinders: [RFCOMMRebinder]
    private var links: [RFCOMMState?]
    private var binds: [Int]
    private let control: any RFCOMMControl

    /// What one tick did.
    public struct Tick: Equatable {
        /// Lines for the log (binds, losses, failures: a failure only when it differs from the
        /// binding's last one, not once per retry).
        public var log: [String] = []
        /// ttys that became bound this tick (hand them to gpsd).
        public var bound: [String] = []
        /// ttys that went away this tick (take them from gpsd).
        public var gone: [String] = []
        /// When to call `tick` again, in nanoseconds from now.
        public var next: Int64 = RFCOMMKeeper.checkInterval

        public init() {}
    }

    public init(
        bindings: [RFCOMMBinding], control: any RFCOMMControl, backoff: RFCOMMBackoff = RFCOMMBackoff(),
        now: Int64
    ) {
        self.control = control
        rebinders = bindings.map { binding in
            let present = control.tty(device: binding.device).map(binding.matches) ?? false
            return RFCOMMRebinder(binding: binding, backoff: backoff, ttyPresent: present, now: now)
        }
        links = Array(repeating: nil, count: bindings.count)
        binds = Array(repeating: 0, count: bindings.count)
    }

    /// The bindings' state now.
    public var status: [RFCOMMBindingStatus] {
        rebinders.indices.map { index in
            let rebinder = rebinders[index]
            let failures: Int
            if case .unbound(_, let count) = rebinder.state { failures = count } else { failures = 0 }
            return RFCOMMBindingStatus(
                binding: rebinder.binding, isBound: rebinder.state == .bound, link: links[index],
                lastError: rebinder.lastError, failures: failures, binds: binds[index])
        }
    }

    /// The ttys bound now (to hand to gpsd at start).
    public var boundPaths: [String] { status.filter(\.isBound).map(\.devicePath) }

    /// Checks every binding and does what is due.
    public mutating func tick(now: Int64) -> Tick {
        var tick = Tick()
        for index in rebinders.indices {
            let binding = rebinders[index].binding
            let path = "/dev/rfcomm\(binding.device)"
            let present = control.tty(device: binding.device).map(binding.matches) ?? false
            switch (rebinders[index].state, present) {
            case (.bound, false):
                rebinders[index].ttyDisappeared(now: now)
                links[index] = nil
                tick.gone.append(path)
                tick.log.append(
                    "bluetooth: \(path) is gone (released, or the rfcomm module reloaded): binding \(binding) again")
            case (.unbound, true):
                rebinders[index].ttyAppeared(now: now)
                tick.bound.append(path)
                tick.log.append("bluetooth: \(binding) is bound (by someone else): reading it")
            default:
                break
            }
            if rebinders[index].next(now: now) == .bind {
                let previous = rebinders[index].lastError
                do throws(RFCOMMError) {
                    try control.bind(binding)
                    rebinders[index].bindSucceeded(now: now)
                    binds[index] += 1
                    tick.bound.append(path)
                    tick.log.append("bluetooth: bound \(binding)")
                } catch {
                    rebinders[index].bindFailed(error, now: now)
                    if error != previous {
                        let wait = rebinders[index].next(now: now)
                        let retry =
                            if case .wait(let nanoseconds) = wait {
                                "; next attempt in \(Double(nanoseconds) / 1e9) s"
                            } else { "" }
                        tick.log.append("bluetooth: cannot bind \(binding): \(error)\(retry)")
                    }
                }
            }
            if rebinders[index].state == .bound { links[index] = control.linkState(device: binding.device) }
            if case .wait(let nanoseconds) = rebinders[index].next(now: now) { tick.next = min(tick.next, nanoseconds) }
        }
        return tick
    }
}
