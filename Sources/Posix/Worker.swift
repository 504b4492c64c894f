import Synchronization

/// A thread that runs blocking jobs one after another, in the order they were submitted, so
/// that the io thread never waits on them: a gpsd control command (connect, write, read with a
/// timeout; gpsd takes 1-3 s to open and probe a tty), a registry write with its fsync. A job reports
/// back by posting to an `Inbox` the io loop watches.
///
/// The queue is bounded (`capacity`): `submit` refuses a job rather than dropping a queued one,
/// since every job is a request someone waits for; the caller answers it with an error.
public final class Worker: Sendable {
    public typealias Job = @Sendable () -> Void

    public let name: String
    public let capacity: Int
    private let state: Mutex<State>
    private let wakeUp: WakeUpEvent
    private let thread: Mutex<OSThread?> = Mutex(nil)

    private struct State {
        var jobs: [Job] = []
        var stopping = false
    }

    /// Starts the thread, named `name` (at most 15 bytes are shown by the kernel).
    public init(name: String, capacity: Int = 1024) throws(Errno) {
        precondition(capacity > 0, "a worker needs room for at least one job")
        self.name = name
        self.capacity = capacity
        state = Mutex(State())
        wakeUp = try WakeUpEvent()
        let started = try OSThread(name: name) { [self] in run() }
        thread.withLock { $0 = started }
    }

    /// Queues `job`. Returns false (the job will not run) when the queue is full or the worker
    /// is stopping.
    @discardableResult
    public func submit(_ job: @escaping Job) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping, state.jobs.count < capacity else { return false }
            state.jobs.append(job)
            return true
        }
        if accepted { wakeUp.signal() }
        return accepted
    }

    /// Jobs queued and not yet started.
    public var queued: Int { state.withLock { $0.jobs.count } }

    /// Runs the jobs already queued, refuses new ones, and waits for the thread to end. Safe to
    /// call more than once and from any thread but the worker's own.
    public func stop() {
        state.withLock { $0.stopping = true }
        wakeUp.signal()
        let running = thread.withLock { current -> OSThread? in
            defer { current = nil }
            return current
        }
        running?.join()
    }

    private func run() {
        while true {
            let (jobs, stopping) = state.withLock { state -> ([Job], Bool) in
                defer { state.jobs.removeAll(keepingCapacity: true) }
                return (state.jobs, state.stopping)
            }
            for job in jobs { job() }
            if jobs.isEmpty {
                if stopping { return }
                // Woken by `submit` or `stop`; the timeout only bounds a lost wake-up.
                _ = wakeUp.wait(milliseconds: 1000)
                _ = wakeUp.clear()
            }
        }
    }
}

/// A value kept on disk (or anywhere slow) that may change faster than it can be written: the
/// REST settings. Each `submit` is the whole latest state, so only the newest one matters: at
/// most one write waits, a newer value replaces the waiting one, and a write in progress is
/// followed by exactly one more, with the latest value. Nothing submitted is refused while the
/// writer runs, however slow the disk (a queue of every state, bounded, had to refuse the newest
/// states, which are the ones that count, while answering their clients as if they were kept).
///
/// It has its own thread, so these writes never hold up the jobs of another `Worker` (the
/// registry's): a registration waits for no settings write.
public final class LatestValueWriter<Value: Sendable>: Sendable {
    public typealias Write = @Sendable (Value) -> Void

    private let worker: Worker
    /// The newest value not yet taken by a write; a job is queued exactly when it is not nil.
    private let waiting = Mutex<Value?>(nil)
    private let write: Write

    /// Starts the thread, named `name`; `write` runs on it, one value at a time.
    public init(name: String, write: @escaping Write) throws(Errno) {
        worker = try Worker(name: name, capacity: 1)
        self.write = write
    }

    /// Makes `value` the next one written. Returns false (nothing will be written) only once
    /// `stop()` has begun.
    @discardableResult
    public func submit(_ value: Value) -> Bool {
        let needsJob = waiting.withLock { slot -> Bool in
            defer { slot = value }
            return slot == nil
        }
        guard needsJob else { return true }  // the queued job takes the newest value when it runs
        let queued = worker.submit { [self] in
            guard
                let latest = waiting.withLock({ slot -> Value? in
                    defer { slot = nil }
                    return slot
                })
            else { return }
            write(latest)
        }
        if !queued { waiting.withLock { $0 = nil } }
        return queued
    }

    /// Writes the value still waiting, if any, refuses new ones, and waits for the thread to end.
    public func stop() { worker.stop() }
}
