import CLinux
import Glibc
import Synchronization

// The one event loop of the package (NIO's SelectableEventLoop, reduced to one thread's needs):
// the daemon's io thread, `watch`, `decode` and discovery's udev thread run on it instead of each
// writing its own poll loop with its own dispatch, stop and time-out rules.
//
// A turn: wait (epoll), hand each event of the batch to its descriptor's handler, hand the
// always-ready descriptors (see below) to theirs, run the timers that are due, re-arm the timer
// descriptor for the next deadline. The rules that used to be re-derived at every call site:
//
// - A batch is collected before any handler runs, so a handler may deregister (and close) another
//   descriptor of the same batch, or even register a new one that reuses the number: each event
//   carries its registration's id, and an event whose registration is no longer current is
//   dropped, not delivered to whoever holds the number now.
// - Timers share one timerfd, armed for the earliest deadline: they cost no descriptor each (so
//   arming one cannot fail for a full table, which is when the spare-descriptor retry needs one),
//   and due timers run in deadline order within a turn, which separate timerfds reported in one
//   batch would not promise.
// - epoll refuses regular files (and /dev/null) with EPERM because they are always ready: such a
//   descriptor is kept as "always ready" and handed to its handler every turn (the loop then
//   waits with a zero timeout), so `decode FILE` and `decode < FILE` read through the same loop as
//   a pipe does.
// - Signals come from a signalfd (blocked first in the calling thread: see SignalDescriptor), and
//   `stop` from any thread is an eventfd; both end `run()` at the end of the turn.

/// Why `EventLoop.run()` returned.
public enum EventLoopStop: Sendable, Hashable {
    /// `EventLoop.StopHandle.stop()` was called (from any thread).
    case stopHandle
    /// `EventLoop.stop()` was called by a handler on the loop's thread.
    case requested
}

/// A one-shot or periodic timer of an `EventLoop` (no descriptor of its own; see the loop).
/// Confined to the loop's thread.
public final class EventLoopTimer {
    /// Runs on the loop's thread when the timer expires, with the number of expirations since it
    /// last ran (more than 1 when a periodic timer's handler was late by whole periods).
    public var handler: (UInt64) -> Void
    /// The monotonic instant of the next expiry; nil while disarmed.
    public private(set) var deadline: Int64?
    /// 0: one-shot.
    public private(set) var period: Int64 = 0
    weak var loop: EventLoop?
    /// Arming order: equal deadlines run in the order they were armed.
    var sequence: UInt64 = 0

    init(loop: EventLoop, handler: @escaping (UInt64) -> Void) {
        self.loop = loop
        self.handler = handler
    }

    /// Whether the timer will expire (one-shot timers disarm themselves when they run).
    public var isArmed: Bool { deadline != nil }

    /// First expiry after `nanoseconds` (> 0), then every `periodNanoseconds` (0: one-shot).
    /// Re-arming replaces the previous setting. Never fails: the loop re-arms its timerfd before
    /// it next waits.
    public func arm(afterNanoseconds nanoseconds: Int64, periodNanoseconds: Int64 = 0) {
        precondition(nanoseconds > 0, "a timer must expire in the future; call the handler directly for now")
        precondition(periodNanoseconds >= 0, "a negative period is meaningless")
        guard let loop else { return }
        loop.unschedule(self)
        deadline = monotonicNanoseconds() + nanoseconds
        period = periodNanoseconds
        loop.schedule(self)
    }

    /// Stops the timer: its handler does not run again until it is re-armed (also when it was due
    /// in the turn that is running).
    public func disarm() {
        guard deadline != nil else { return }
        loop?.unschedule(self)
        deadline = nil
        period = 0
    }

    /// From the loop: the timer is due at `now`. Returns the expirations to report and moves the
    /// deadline on (periodic) or clears it (one-shot).
    func expire(now: Int64) -> UInt64 {
        guard let due = deadline else { return 0 }
        guard period > 0 else {
            deadline = nil
            return 1
        }
        let missed = (now - due) / period
        deadline = due + (missed + 1) * period
        return UInt64(missed + 1)
    }
}

@available(*, unavailable, message: "a timer belongs to its loop's thread")
extension EventLoopTimer: Sendable {}

/// An epoll event loop that runs on the thread that calls `run()`: descriptors with handlers,
/// timers, signals, a stop handle usable from any thread, and the spare descriptor that keeps a
/// listener from spinning when the process runs out of descriptors. Loop-confined (not Sendable):
/// every method but `stopHandle.stop()` is for the loop's thread.
public final class EventLoop {
    /// Called with each event of a registered descriptor. It may register, modify and deregister
    /// any descriptor, arm timers, and call `stop()`.
    public typealias Handler = (SelectorEvent) -> Void

    /// Stops a loop from any thread.
    ///
    /// A loop makes its own unless it is given one: a thread that creates and runs its own loop
    /// (the udev thread: libudev objects stay on the thread that made them) is started with a
    /// handle made beforehand, so it can be stopped from the moment it exists, before its loop
    /// does. A handle serves one loop (its eventfd is read by that loop's epoll).
    public final class StopHandle: Sendable {
        let event: WakeUpEvent
        /// Set by the loop that takes the handle.
        private let isTaken = Atomic(false)

        /// A handle for a loop yet to be made (`EventLoop(stopHandle:)`).
        public init() throws(Errno) { event = try WakeUpEvent() }

        /// Makes `run()` return at the end of its current turn (or at once if it is waiting; at
        /// the first turn if it has not started yet, or if its loop has not been made yet).
        public func stop() { event.signal() }

        /// From a loop's initializer: true the first time only.
        func take() -> Bool {
            isTaken.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
        }
    }

    /// What a registration asked for and how it is watched.
    private struct Registration {
        /// The selector's registration id; for an always-ready descriptor, the loop's own.
        var id: UInt32
        /// What the owner asked for (a paused listener keeps it here while epoll watches nothing).
        var interest: SelectorInterest
        /// epoll refused the descriptor (regular file, /dev/null): it is ready every turn.
        let isAlwaysReady: Bool
        /// Not watched until a descriptor is free again (see `acceptFailed`).
        var isPaused = false
        let handler: Handler
    }

    private let selector: Selector
    public let stopHandle: StopHandle
    private var registrations: [CInt: Registration] = [:]
    /// Always-ready descriptors, in registration order (handed to their handlers every turn).
    private var alwaysReady: [CInt] = []
    private var nextAlwaysReadyID: UInt32 = 1

    /// Armed timers, by (deadline, sequence); a handful in practice, so a sorted array.
    private var timers: [EventLoopTimer] = []
    private var nextTimerSequence: UInt64 = 0
    private let timerDescriptor: MonotonicTimer
    /// The deadline the timerfd is armed for (nil: disarmed or already expired).
    private var timerDescriptorDeadline: Int64?

    /// The signalfd and its handler (a class: the descriptor is ~Copyable, the loop's slot optional).
    private final class Signals {
        let descriptor: SignalDescriptor
        let handler: (CInt) -> Void
        init(_ descriptor: consuming SignalDescriptor, _ handler: @escaping (CInt) -> Void) {
            self.descriptor = descriptor
            self.handler = handler
        }
    }
    private var signals: Signals?

    /// Held only between `keepSpareDescriptor` and `releaseSpareDescriptor`.
    private let spare = SpareDescriptor()
    private var keepsSpare = false
    private lazy var spareRetry = makeTimer()
    private var spareRetryInterval: Int64 = 250_000_000
    private var pausedListeners: Set<CInt> = []

    private var stopReason: EventLoopStop?
    private var isRunning = false
    /// Turns taken (waits that returned): a loop that spins shows here (tests, diagnostics).
    public private(set) var turns = 0

    /// Creates the epoll instance, the timerfd and the stop event (`stopHandle`'s, when one is
    /// given: see StopHandle); handles at most `maxEventsPerWait` events per turn (a bound that
    /// keeps one turn short).
    public init(maxEventsPerWait: Int = 256, stopHandle: StopHandle? = nil) throws(Errno) {
        selector = try Selector(maxEventsPerWait: maxEventsPerWait)
        if let stopHandle {
            precondition(stopHandle.take(), "a stop handle serves one loop")
            self.stopHandle = stopHandle
        } else {
            self.stopHandle = try StopHandle()
            _ = self.stopHandle.take()
        }
        timerDescriptor = try MonotonicTimer()
        try selector.register(self.stopHandle.event.descriptor, interest: .readable)
        try selector.register(timerDescriptor.descriptor.rawValue, interest: .readable)
    }

    /// Descriptors registered by owners (the loop's own are not counted).
    public var registrationCount: Int { registrations.count }

    /// Whether `descriptor` is registered.
    public func isRegistered(_ descriptor: CInt) -> Bool { registrations[descriptor] != nil }

    // MARK: - Descriptors

    /// How the loop learns that a registered descriptor is ready.
    public enum Readiness: Sendable, Hashable {
        /// epoll reports it.
        case whenReported
        /// epoll refused it (EPERM: a regular file, /dev/null): it never blocks, so its handler
        /// runs every turn while its interest is not empty.
        case always
    }

    /// Starts watching `descriptor` (not owned: deregister it before closing it). Returns how its
    /// readiness is known (a caller that only needs a time-out while input can stall, as `decode`,
    /// needs none for `.always`).
    @discardableResult
    public func register(
        _ descriptor: CInt, interest: SelectorInterest, handler: @escaping Handler
    )
        throws(Errno) -> Readiness
    {
        precondition(registrations[descriptor] == nil, "descriptor \(descriptor) is already registered")
        do {
            let id = try selector.register(descriptor, interest: interest)
            registrations[descriptor] = Registration(id: id, interest: interest, isAlwaysReady: false, handler: handler)
            return .whenReported
        } catch let error where error == .operationNotPermitted {
            let id = nextAlwaysReadyID
            nextAlwaysReadyID = nextAlwaysReadyID == UInt32.max ? 1 : nextAlwaysReadyID + 1
            registrations[descriptor] = Registration(id: id, interest: interest, isAlwaysReady: true, handler: handler)
            alwaysReady.append(descriptor)
            return .always
        }
    }

    /// Changes what a registered descriptor waits for (a paused listener gets it when resumed).
    public func modify(_ descriptor: CInt, interest: SelectorInterest) throws(Errno) {
        guard var registration = registrations[descriptor] else {
            preconditionFailure("descriptor \(descriptor) is not registered")
        }
        guard registration.interest != interest else { return }
        registration.interest = interest
        registrations[descriptor] = registration
        if !registration.isAlwaysReady && !registration.isPaused {
            try selector.modify(descriptor, interest: interest)
        }
    }

    /// Stops watching `descriptor` (a no-op when it is not registered): no event of it is handed
    /// out afterwards, not even one already collected in the running turn. Call before closing it.
    public func deregister(_ descriptor: CInt) throws(Errno) {
        guard let registration = registrations.removeValue(forKey: descriptor) else { return }
        pausedListeners.remove(descriptor)
        if registration.isAlwaysReady {
            alwaysReady.removeAll { $0 == descriptor }
        } else {
            try selector.deregister(descriptor)
        }
    }

    // MARK: - Timers

    /// A disarmed timer; `arm` it (its handler can be set later, before it first expires).
    public func makeTimer(_ handler: @escaping (UInt64) -> Void = { _ in }) -> EventLoopTimer {
        EventLoopTimer(loop: self, handler: handler)
    }

    /// A timer armed to expire after `nanoseconds`, then every `periodNanoseconds` (0: once).
    @discardableResult
    public func schedule(
        afterNanoseconds nanoseconds: Int64, periodNanoseconds: Int64 = 0,
        _ handler: @escaping (UInt64) -> Void
    ) -> EventLoopTimer {
        let timer = makeTimer(handler)
        timer.arm(afterNanoseconds: nanoseconds, periodNanoseconds: periodNanoseconds)
        return timer
    }

    fileprivate func schedule(_ timer: EventLoopTimer) {
        guard let deadline = timer.deadline else { return }
        nextTimerSequence += 1
        timer.sequence = nextTimerSequence
        let index = timers.firstIndex { ($0.deadline ?? .max, $0.sequence) > (deadline, timer.sequence) }
        timers.insert(timer, at: index ?? timers.endIndex)
    }

    fileprivate func unschedule(_ timer: EventLoopTimer) {
        guard timer.deadline != nil, let index = timers.firstIndex(where: { $0 === timer }) else { return }
        timers.remove(at: index)
    }

    /// Runs every timer due at the start of this call, earliest first. A timer re-armed by a
    /// handler is in the future, so this ends even if every handler re-arms.
    private func runDueTimers() {
        guard let first = timers.first?.deadline else { return }
        let now = monotonicNanoseconds()
        guard first <= now else { return }
        while let timer = timers.first, let deadline = timer.deadline, deadline <= now {
            timers.removeFirst()
            let expirations = timer.expire(now: now)
            if timer.deadline != nil { schedule(timer) }
            timer.handler(expirations)
        }
    }

    /// Arms the timerfd for the earliest deadline when that changed.
    private func armTimerDescriptor() throws(Errno) {
        let next = timers.first?.deadline
        guard next != timerDescriptorDeadline else { return }
        if let next {
            try timerDescriptor.arm(afterNanoseconds: max(1, next - monotonicNanoseconds()))
        } else {
            try timerDescriptor.disarm()
        }
        timerDescriptorDeadline = next
    }

    // MARK: - Signals

    /// Blocks `signals` in the calling thread and hands each one delivered to `handler` (the
    /// process's other threads must block them too: create the loop's signals in `main` before
    /// any thread starts, as SignalDescriptor explains). Once per loop.
    public func handleSignals(_ signals: [CInt], _ handler: @escaping (CInt) -> Void) throws(Errno) {
        precondition(self.signals == nil, "a loop reads one signalfd")
        let source = Signals(try SignalDescriptor(signals: signals), handler)
        try selector.register(source.descriptor.descriptor.rawValue, interest: .readable)
        self.signals = source
    }

    // MARK: - Running

    /// Makes `run()` return at the end of the current turn (for handlers; other threads use
    /// `stopHandle`).
    public func stop() {
        if stopReason == nil { stopReason = .requested }
    }

    /// Runs turns on the calling thread until `stop()` or `stopHandle.stop()`. Throws only when
    /// epoll itself fails (or the timerfd cannot be armed), which leaves nothing to retry.
    @discardableResult
    public func run() throws(Errno) -> EventLoopStop {
        precondition(!isRunning, "run() is not re-entrant")
        isRunning = true
        defer { isRunning = false }
        stopReason = nil
        var events: [SelectorEvent] = []
        events.reserveCapacity(256)
        var ready: [(descriptor: CInt, id: UInt32)] = []
        while true {
            try armTimerDescriptor()
            let waitsForEvents = alwaysReady.allSatisfy { registrations[$0]?.interest.isEmpty ?? true }
            try selector.wait(timeoutMilliseconds: waitsForEvents ? -1 : 0, into: &events)
            turns += 1
            ready.removeAll(keepingCapacity: true)
            for fd in alwaysReady {
                if let registration = registrations[fd] { ready.append((fd, registration.id)) }
            }
            for event in events { dispatch(event) }
            for (fd, id) in ready {
                // Looked up again: an earlier handler of this turn may have changed or removed it.
                guard let registration = registrations[fd], registration.id == id,
                    !registration.interest.isEmpty
                else { continue }
                registration.handler(
                    SelectorEvent(
                        registrationID: id, descriptor: fd, isReadable: registration.interest.contains(.readable),
                        isWritable: registration.interest.contains(.writable), isHangUp: false, isError: false))
            }
            runDueTimers()
            if let stopReason { return stopReason }
        }
    }

    private func dispatch(_ event: SelectorEvent) {
        let fd = event.descriptor
        if let registration = registrations[fd] {
            // Same number, other registration: the one this event was for is gone.
            guard registration.id == event.registrationID, !registration.isAlwaysReady else { return }
            registration.handler(event)
        } else if fd == timerDescriptor.descriptor.rawValue {
            if (try? timerDescriptor.readExpirations()) ?? 0 > 0 { timerDescriptorDeadline = nil }
        } else if fd == stopHandle.event.descriptor {
            stopHandle.event.clear()
            stopReason = .stopHandle
        } else if let signals, fd == signals.descriptor.descriptor.rawValue {
            while let number = try? signals.descriptor.read() { signals.handler(number) }
        }
    }

    // MARK: - Running out of descriptors

    /// What `acceptFailed` did.
    public enum AcceptFailure: Sendable, Hashable {
        /// Not a full descriptor table: the caller reports the error.
        case otherError
        /// One pending connection was taken off the queue with the spare and closed: accept again.
        case refusedOne
        /// No spare to refuse with: the listener is not watched until a descriptor is free again
        /// (the loop retries every `retryNanoseconds` of `keepSpareDescriptor`).
        case paused
    }

    /// Holds a spare descriptor (on /dev/null) for `acceptFailed` until `releaseSpareDescriptor`;
    /// a listener paused for want of descriptors is retried every `retryNanoseconds`.
    public func keepSpareDescriptor(retryNanoseconds: Int64 = 250_000_000) {
        precondition(retryNanoseconds > 0, "the retry needs a period")
        keepsSpare = true
        spare.reserve()
        spareRetryInterval = retryNanoseconds
    }

    /// The spare is held now (`keepSpareDescriptor`, and taken back after each refusal).
    public var holdsSpareDescriptor: Bool { spare.isHeld }

    /// Gives the spare up (paused listeners are still retried, with a descriptor opened and closed
    /// again each time).
    public func releaseSpareDescriptor() {
        keepsSpare = false
        spare.release()
    }

    /// After accept on the registered `listener` failed with `error`: when the descriptor table is
    /// full (EMFILE, ENFILE) the connection stays queued and a level-triggered epoll reports the
    /// listener again at once, forever (a 100% CPU loop). The spare is given up to take the
    /// connection off the queue and close it; without a spare (it could not be taken back), the
    /// listener is paused until the spare can be reopened, which means a descriptor is free.
    public func acceptFailed(_ error: Errno, listener: CInt) -> AcceptFailure {
        guard error == .tooManyOpenFiles || error == .tooManyOpenFilesInSystem else { return .otherError }
        if spare.refuseOne(on: listener) { return .refusedOne }
        guard registrations[listener] != nil else { return .paused }
        if pausedListeners.insert(listener).inserted {
            registrations[listener]?.isPaused = true
            try? selector.modify(listener, interest: [])
            if !spareRetry.isArmed {
                spareRetry.handler = { [unowned self] _ in resumePausedListeners() }
                spareRetry.arm(afterNanoseconds: spareRetryInterval, periodNanoseconds: spareRetryInterval)
            }
        }
        return .paused
    }

    /// Listeners paused by `acceptFailed` (tests, diagnostics).
    public var pausedListenerCount: Int { pausedListeners.count }

    /// From the retry timer: a spare that can be opened means a descriptor is free again.
    private func resumePausedListeners() {
        spare.reserve()
        guard spare.isHeld else { return }
        if !keepsSpare { spare.release() }
        for fd in pausedListeners { resume(fd) }
        pausedListeners.removeAll()
        spareRetry.disarm()
    }

    private func resume(_ fd: CInt) {
        guard var registration = registrations[fd], registration.isPaused else { return }
        registration.isPaused = false
        registrations[fd] = registration
        try? selector.modify(fd, interest: registration.interest)
    }
}

@available(*, unavailable, message: "an event loop belongs to the thread that runs it")
extension EventLoop: Sendable {}
