import Synchronization

/// The one way values cross from the C-library threads to the io thread: a bounded,
/// Mutex-guarded queue plus an eventfd that the io loop polls (NIO's wake-up pattern).
///
/// Bounded because a stalled consumer must not grow memory without limit: past `capacity` the
/// oldest undelivered value is dropped and counted (GNSS data has a short shelf life).
public final class Inbox<Value: Sendable>: Sendable {
    public let capacity: Int
    private let state: Mutex<State>
    private let wakeUp: WakeUpEvent
    /// Readable whenever values are waiting; owned by the inbox.
    public var eventDescriptor: CInt { wakeUp.descriptor }

    private struct State {
        var values: [Value] = []
        var dropped = 0
        var closed = false
    }

    public init(capacity: Int) throws(Errno) {
        precondition(capacity > 0, "an inbox needs room for at least one value")
        self.capacity = capacity
        state = Mutex(State())
        wakeUp = try WakeUpEvent()
    }

    /// Queues `value` and wakes the consumer. Returns false once the inbox is closed.
    @discardableResult
    public func post(_ value: Value) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            if state.values.count >= capacity {
                state.values.removeFirst()
                state.dropped += 1
            }
            state.values.append(value)
            return true
        }
        if accepted { wakeUp.signal() }
        return accepted
    }

    /// Takes every waiting value (and clears the wake-up).
    public func drain() -> [Value] {
        wakeUp.clear()
        return state.withLock { state in
            defer { state.values.removeAll(keepingCapacity: true) }
            return state.values
        }
    }

    /// Blocks up to `milliseconds` for values (for tests and simple consumers).
    public func wait(milliseconds: Int32) -> [Value] {
        _ = wakeUp.wait(milliseconds: milliseconds)
        return drain()
    }

    /// Values dropped because the consumer fell `capacity` behind.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// Refuses further values (producers see `post` return false and stop).
    public func close() { state.withLock { $0.closed = true } }
}
