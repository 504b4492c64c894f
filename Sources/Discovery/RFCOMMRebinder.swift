import Input

/// One rfcomm binding the bridge keeps in place (from the configuration or `bluetooth bind`).
public struct RFCOMMBinding: Hashable, Sendable, CustomStringConvertible {
    public var device: Int16
    public var address: BluetoothAddress
    public var channel: UInt8

    public init(device: Int16, address: BluetoothAddress, channel: UInt8 = 1) {
        self.device = device
        self.address = address
        self.channel = channel
    }

    /// True when `tty` is this binding (same device number, address and channel).
    public func matches(_ tty: RFCOMMTTY) -> Bool {
        tty.device == device && tty.address == address && tty.channel == channel
    }

    /// `rfcomm0 -> AA:BB:CC:DD:EE:FF channel 1`.
    public var description: String { "rfcomm\(device) -> \(address) channel \(channel)" }
}

/// Capped exponential backoff for rebinding.
///
/// Defaults, and why: the first retry comes 0.5 s after the tty disappears (as the gpsd session's
/// first reconnect; long enough not to race a person who is deliberately re-binding by hand, short
/// enough that gpsd sees the receiver back within a second), then each failure doubles the wait
/// (1, 2, 4, 8, 16 s) up to 30 s. A bind is local (the kernel only creates a tty; no radio traffic
/// until the tty is opened), so retries cost nothing on the air; the cap only bounds log noise while
/// something needs fixing (module not loaded, device number taken) and still recovers within 30 s
/// once it is fixed.
public struct RFCOMMBackoff: Equatable, Sendable {
    /// Wait between the tty disappearing and the first bind attempt, in nanoseconds.
    public var first: Int64
    /// Longest wait between attempts, in nanoseconds.
    public var cap: Int64

    public init(first: Int64 = 500_000_000, cap: Int64 = 30_000_000_000) {
        precondition(first > 0 && cap >= first, "backoff needs 0 < first <= cap")
        self.first = first
        self.cap = cap
    }

    /// The wait after `failures` consecutive failed attempts: `first` for none, then
    /// `first * 2^failures`, never more than `cap`.
    public func delay(afterFailures failures: Int) -> Int64 {
        var delay = first
        for _ in 0..<max(0, failures) {
            if delay >= cap / 2 { return cap }
            delay *= 2
        }
        return min(delay, cap)
    }
}

/// Keeps one rfcomm binding in place: a pure state machine (no clock, no I/O) that the daemon's
/// loop drives with monotonic nanoseconds.
///
/// The loop tells it what it observes (`ttyAppeared`, `ttyDisappeared` from udev add/remove of
/// `rfcommN` or a sysfs check) and what its bind attempts did (`bindSucceeded`, `bindFailed`), and
/// asks `next(now:)` what to do:
///
///     switch rebinder.next(now: monotonicNanoseconds()) {
///     case .idle: break                                  // bound; wait for a udev event
///     case .wait(let nanoseconds): armTimer(nanoseconds) // then ask again
///     case .bind:
///         do throws(RFCOMMError) {
///             try RFCOMM.bind(device: b.device, address: b.address, channel: b.channel)
///             rebinder.bindSucceeded(now: monotonicNanoseconds())
///         } catch {
///             log(error); rebinder.bindFailed(error, now: monotonicNanoseconds())
///         }
///     }
///
/// A receiver powering off does not remove a bound tty (the kernel hangs it up and gpsd reopens
/// it); the tty disappears when someone releases it (`rfcomm release`, `tmm-bridge bluetooth
/// unbind`) or the rfcomm module is reloaded, and that is what this puts back. Report
/// `ttyAppeared` only for a tty that `binding.matches`: one bound to another address is not ours,
/// and binding over it fails with "already bound" (retried at the backoff's pace).
public struct RFCOMMRebinder: Sendable {
    public enum State: Equatable, Sendable {
        /// The tty exists: nothing to do.
        case bound
        /// Not bound: the next attempt is due at `due` (monotonic ns); `failures` attempts have
        /// failed since the tty was last bound.
        case unbound(due: Int64, failures: Int)
    }

    public enum Action: Equatable, Sendable {
        /// Bound: nothing to do until the tty disappears.
        case idle
        /// Call `next(now:)` again after this many nanoseconds (or on the next tty event).
        case wait(nanoseconds: Int64)
        /// Call `RFCOMM.bind` now and report the result with `bindSucceeded` or `bindFailed`.
        case bind
    }

    public let binding: RFCOMMBinding
    public let backoff: RFCOMMBackoff
    public private(set) var state: State
    /// The most recent failure, until a bind succeeds or the tty appears.
    public private(set) var lastError: RFCOMMError?

    /// `ttyPresent`: whether `rfcomm<binding.device>` exists now. When it does not, the first
    /// attempt is due at once (start-up binds without waiting).
    public init(binding: RFCOMMBinding, backoff: RFCOMMBackoff = RFCOMMBackoff(), ttyPresent: Bool, now: Int64) {
        self.binding = binding
        self.backoff = backoff
        self.state = ttyPresent ? .bound : .unbound(due: now, failures: 0)
    }

    /// What to do at `now`. Does not change the state: `.bind` stays the answer until a result
    /// is reported.
    public func next(now: Int64) -> Action {
        switch state {
        case .bound:
            return .idle
        case .unbound(let due, _):
            return now >= due ? .bind : .wait(nanoseconds: due - now)
        }
    }

    /// The tty is gone while the binding is configured: first attempt after `backoff.first`.
    /// Ignored when already unbound (the schedule in progress stands).
    public mutating func ttyDisappeared(now: Int64) {
        guard state == .bound else { return }
        state = .unbound(due: now + backoff.first, failures: 0)
    }

    /// The tty (matching `binding`) exists: bound, backoff reset.
    public mutating func ttyAppeared(now: Int64) {
        state = .bound
        lastError = nil
    }

    /// `RFCOMM.bind` succeeded.
    public mutating func bindSucceeded(now: Int64) {
        ttyAppeared(now: now)
    }

    /// `RFCOMM.bind` failed: the next attempt waits twice as long as the last (up to the cap), or
    /// the cap at once when retrying cannot help until someone changes the system
    /// (`RFCOMMError.isRetryable`: no Bluetooth in the kernel, no CAP_NET_ADMIN).
    public mutating func bindFailed(_ error: RFCOMMError, now: Int64) {
        let failures: Int
        if case .unbound(_, let previous) = state { failures = previous + 1 } else { failures = 1 }
        let delay = error.isRetryable ? backoff.delay(afterFailures: failures) : backoff.cap
        state = .unbound(due: now + delay, failures: failures)
        lastError = error
    }
}
