import CLinux
import Glibc

// The io thread's epoll selector (NIO's SelectorEpoll, reduced to what the loop needs).
//
// Every registration gets a fresh 32-bit id; the 64-bit epoll data carries (id << 32 | fd). A
// batch of events is collected before any is handled, so handling one event may close a
// descriptor and open another that reuses the same number: a later event in the same batch for
// the old registration then carries the old id, and `isCurrent(_:)` tells the loop to drop it.

/// What a registration waits for. Hang-up and error are always reported (EPOLLHUP/EPOLLERR are
/// always requested: the kernel reports them anyway, and asking makes that explicit, as NIO does).
/// The peer closing its sending side (EPOLLRDHUP) is asked for only with `.readable`: a
/// registration that does not read (an owner pausing input) is not woken, level-triggered, by a
/// half-close it cannot act on.
public struct SelectorInterest: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Data (or a connection, or end of file) can be read.
    public static let readable = SelectorInterest(rawValue: 1 << 0)
    /// The send buffer has room.
    public static let writable = SelectorInterest(rawValue: 1 << 1)

    /// The epoll mask for this interest; the only place raw EPOLL* bits are built.
    var epollMask: UInt32 {
        var mask = EPOLLHUP.rawValue | EPOLLERR.rawValue
        if contains(.readable) { mask |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if contains(.writable) { mask |= EPOLLOUT.rawValue }
        return mask
    }
}

/// One readiness report from `Selector.wait`.
public struct SelectorEvent: Sendable, Hashable {
    /// The id `Selector.register` returned for the registration this event belongs to.
    public let registrationID: UInt32
    /// The descriptor as registered (it may since have been closed and reused: see `Selector.isCurrent`).
    public let descriptor: CInt
    /// Readable (EPOLLIN).
    public let isReadable: Bool
    /// Writable (EPOLLOUT).
    public let isWritable: Bool
    /// The peer hung up (EPOLLHUP or EPOLLRDHUP): reading will reach end of file.
    public let isHangUp: Bool
    /// An error is pending on the descriptor (EPOLLERR).
    public let isError: Bool

    public init(
        registrationID: UInt32, descriptor: CInt, isReadable: Bool, isWritable: Bool, isHangUp: Bool,
        isError: Bool
    ) {
        self.registrationID = registrationID
        self.descriptor = descriptor
        self.isReadable = isReadable
        self.isWritable = isWritable
        self.isHangUp = isHangUp
        self.isError = isError
    }

    init(epoll event: epoll_event) {
        let data = event.data.u64
        let mask = event.events
        self.init(
            registrationID: UInt32(truncatingIfNeeded: data >> 32),
            descriptor: CInt(bitPattern: UInt32(truncatingIfNeeded: data)),
            isReadable: mask & EPOLLIN.rawValue != 0,
            isWritable: mask & EPOLLOUT.rawValue != 0,
            isHangUp: mask & (EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0,
            isError: mask & EPOLLERR.rawValue != 0)
    }
}

/// An epoll instance, confined to the thread that runs the loop (not Sendable).
///
/// The selector does not own the registered descriptors; their owners must `deregister` before
/// closing them (closing first is tolerated: the kernel drops the registration, and
/// `deregister` ignores ENOENT/EBADF for that case).
public final class Selector {
    private let epoll: FileDescriptor
    /// Current registration id per descriptor number.
    private var registrations: [CInt: UInt32] = [:]
    private var nextID: UInt32 = 1
    /// Reused kernel-side buffer, so `wait` does not allocate per call.
    private var buffer: [epoll_event]

    /// Creates an epoll instance that reports at most `maxEventsPerWait` events per `wait`.
    public init(maxEventsPerWait: Int = 256) throws(Errno) {
        precondition(maxEventsPerWait > 0, "a selector must be able to report at least one event")
        let fd = try valueOrErrno { epoll_create1(CInt(EPOLL_CLOEXEC)) }
        epoll = FileDescriptor(adopting: fd)
        buffer = Array(repeating: epoll_event(), count: maxEventsPerWait)
    }

    /// The epoll descriptor itself (for diagnostics).
    public var descriptor: CInt { epoll.rawValue }

    /// Number of live registrations.
    public var registrationCount: Int { registrations.count }

    /// Starts watching `descriptor`. Returns the registration id its events will carry.
    @discardableResult
    public func register(_ descriptor: CInt, interest: SelectorInterest) throws(Errno) -> UInt32 {
        precondition(registrations[descriptor] == nil, "descriptor \(descriptor) is already registered")
        let id = nextID
        nextID = nextID == UInt32.max ? 1 : nextID + 1
        try control(EPOLL_CTL_ADD, descriptor, id: id, interest: interest)
        registrations[descriptor] = id
        return id
    }

    /// Changes what a registered descriptor waits for (its registration id is kept).
    public func modify(_ descriptor: CInt, interest: SelectorInterest) throws(Errno) {
        guard let id = registrations[descriptor] else {
            preconditionFailure("descriptor \(descriptor) is not registered")
        }
        try control(EPOLL_CTL_MOD, descriptor, id: id, interest: interest)
    }

    /// Stops watching `descriptor`. Call before closing it.
    public func deregister(_ descriptor: CInt) throws(Errno) {
        guard registrations.removeValue(forKey: descriptor) != nil else { return }
        var unused = epoll_event()
        do { _ = try valueOrErrno { epoll_ctl(epoll.rawValue, EPOLL_CTL_DEL, descriptor, &unused) } } catch {
            // Already closed by its owner: the kernel dropped the registration with it.
            if error != .noSuchFileOrDirectory && error != .badFileDescriptor { throw error }
        }
    }

    /// True when `event` belongs to the registration currently held for its descriptor, false
    /// for a stale event (descriptor deregistered, or closed and its number reused).
    public func isCurrent(_ event: SelectorEvent) -> Bool {
        registrations[event.descriptor] == event.registrationID
    }

    /// The registration id currently held for `descriptor`, if any.
    public func registrationID(of descriptor: CInt) -> UInt32? { registrations[descriptor] }

    /// Waits up to `timeoutMilliseconds` (-1: forever, 0: poll) and replaces the contents of
    /// `events` with what is ready (keeping its capacity). Returns the number of events;
    /// 0 on timeout. EINTR is retried with the same timeout.
    @discardableResult
    public func wait(timeoutMilliseconds: Int32, into events: inout [SelectorEvent]) throws(Errno) -> Int {
        events.removeAll(keepingCapacity: true)
        let capacity = CInt(buffer.count)
        let epollFD = epoll.rawValue
        let count = try buffer.withUnsafeMutableBufferPointer { raw throws(Errno) -> CInt in
            let base = raw.baseAddress
            return try valueOrErrno { epoll_wait(epollFD, base, capacity, timeoutMilliseconds) }
        }
        for index in 0..<Int(count) {
            events.append(SelectorEvent(epoll: buffer[index]))
        }
        return Int(count)
    }

    private func control(_ operation: CInt, _ descriptor: CInt, id: UInt32, interest: SelectorInterest) throws(Errno) {
        var event = epoll_event()
        event.events = interest.epollMask
        event.data.u64 = UInt64(id) << 32 | UInt64(UInt32(bitPattern: descriptor))
        _ = try valueOrErrno { epoll_ctl(epoll.rawValue, operation, descriptor, &event) }
    }
}

@available(*, unavailable, message: "a Selector belongs to the io thread")
extension Selector: Sendable {}
