import BridgeCore
import Posix
import TMMProtocol

// TLS handshakes under load. A handshake is the one piece of a connection's work that is both
// expensive (a full one is an ECDHE key exchange and a signature: 0.5-0.8 ms of CPU) and free for
// anyone to start, so three rules keep a flood of them from reaching the other clients:
//
// - Time: reading a connection whose handshake is in progress takes at most
//   `handshakeWorkPerTurn` of each loop turn; handshakes ready beyond it are not read, and not
//   watched, but queued (`HandshakeSchedule`) and read in the next turns, in order. The other
//   descriptors (the input's positions for V2, plain REST) are therefore served every turn, a
//   few milliseconds apart, however many handshakes are ready; before, epoll's batches of 256
//   ready sockets each went through OpenSSL before the input's turn came round.
// - Memory: what one handshake may make OpenSSL hold is bounded in Sources/TLS
//   (`HandshakeInputLimit`), and how many handshakes are in progress by `ConnectionAdmission`
//   (the handshake memory over each one's most); past that, a new secure connection closes the
//   oldest handshake in progress.
// - Memory after a flood: freed buffers go back to the kernel once the connections that held
//   them are gone (`returnMemoryAfterFlood`).

/// The handshakes in progress and those waiting for a turn. Loop-confined.
struct HandshakeSchedule {
    /// Every TLS connection whose handshake is in progress (the admission counts them).
    var inProgress: [ObjectIdentifier: Connection] = [:]
    /// Connections whose handshake input waits for a turn, oldest first, from `head`; entries
    /// whose connection was read meanwhile are skipped (`awaitsHandshakeTurn` is false). Held
    /// weakly: a connection closed while it waits goes (and its descriptor with it) at once.
    var queue: [QueuedHandshake] = []
    var head = 0
    /// The loop turn the work below was done in, and how much of it (ns).
    var turn = -1
    var spent: Int64 = 0

    var hasQueued: Bool { head < queue.count }

    struct QueuedHandshake {
        weak var connection: Connection?
    }

    /// The next entry (nil: its connection is gone); the served part of the queue is dropped
    /// once it is the larger part, so a queue that never empties does not grow.
    mutating func next() -> Connection? {
        let connection = queue[head].connection
        head += 1
        if head == queue.count {
            queue.removeAll(keepingCapacity: queue.capacity <= 1024)
            head = 0
        } else if head >= 1024 && head * 2 >= queue.count {
            queue.removeFirst(head)
            head = 0
        }
        return connection
    }
}

extension ClientServers {
    /// How much of a loop turn the io thread may spend reading handshakes (2 ms: two or three
    /// full handshakes; at 10 Hz a V2 client's epochs are 100 ms apart).
    static let handshakeWorkPerTurn: Int64 = 2_000_000

    /// A secure connection was taken: its handshake is in progress.
    func handshakeStarted(_ connection: Connection) {
        connection.isHandshaking = true
        handshakes.inProgress[ObjectIdentifier(connection)] = connection
        admission.handshakeStarted()
    }

    /// Its handshake completed, or the connection is closing.
    func handshakeEnded(_ connection: Connection) {
        guard connection.isHandshaking else { return }
        connection.isHandshaking = false
        handshakes.inProgress[ObjectIdentifier(connection)] = nil
        admission.handshakeEnded()
    }

    /// The handshake memory is used up: the handshake in progress that started first is
    /// closed, so the new one fits (counted and logged, summarised when it repeats).
    func evictOldestHandshake() {
        guard let oldest = handshakes.inProgress.values.min(by: { $0.acceptedAt < $1.acceptedAt }) else { return }
        statistics.tlsHandshakesEvicted += 1
        log.warning(
            "TLS: \(admission.maxHandshakes) handshakes in progress, as many as their memory allows: "
                + "closing the oldest (\(statistics.tlsHandshakesEvicted) so far)",
            key: "TLS handshakes in progress: closing the oldest")
        drive(oldest) { $0.transportFailed(into: &$1) }
    }

    /// Whether `connection`'s handshake input may be read now: this turn's handshake time is not
    /// used up and none waits before it. Otherwise it joins the queue (not watched for reading
    /// meanwhile) and false is returned.
    func takeHandshakeTurn(_ connection: Connection) -> Bool {
        if connection.awaitsHandshakeTurn { return false }
        if !handshakes.hasQueued && hasHandshakeTimeLeft() { return true }
        connection.awaitsHandshakeTurn = true
        handshakes.queue.append(HandshakeSchedule.QueuedHandshake(connection: connection))
        if !updateSelectorInterest(connection) { close(connection) }
        if !handshakeQueueTimer.isArmed { handshakeQueueTimer.arm(afterNanoseconds: 1) }
        return false
    }

    /// Reads a handshake's input, charged to this turn.
    func readHandshake(_ connection: Connection) {
        connection.awaitsHandshakeTurn = false
        let start = monotonicNanoseconds()
        readAvailable(connection)
        handshakes.spent += monotonicNanoseconds() - start
    }

    private func hasHandshakeTimeLeft() -> Bool {
        if handshakes.turn != loop.turns {
            handshakes.turn = loop.turns
            handshakes.spent = 0
        }
        return handshakes.spent < Self.handshakeWorkPerTurn
    }

    /// The queue's timer, due at the end of every turn while handshakes wait: reads them in
    /// order while this turn's handshake time lasts, and comes back next turn for the rest.
    func serveHandshakeQueue() {
        while handshakes.hasQueued, hasHandshakeTimeLeft() {
            guard let connection = handshakes.next(), connection.awaitsHandshakeTurn else { continue }
            connection.awaitsHandshakeTurn = false
            guard !connection.machine.isClosed else { continue }
            if connection.machine.isReading { readHandshake(connection) }
            if !connection.machine.isClosed, !updateSelectorInterest(connection) { close(connection) }
        }
        if handshakes.hasQueued { handshakeQueueTimer.arm(afterNanoseconds: 1) }
    }

    /// Closes TLS connections whose handshake has not finished in `tls-handshake-timeout`
    /// (default 10 s: a handshake is a few round trips on any network a TMM client uses) — a
    /// client that opens the port and says nothing, or stalls mid-handshake.
    func closeStalledHandshakes(now: Int64) {
        let limit = limits.tlsHandshakeTimeout
        for connection in Array(handshakes.inProgress.values) where now - connection.acceptedAt > limit {
            statistics.tlsHandshakesTimedOut += 1
            drive(connection) { $0.transportFailed(into: &$1) }
        }
    }

    /// Connections closed since the peak, past which freed memory is given back once they are
    /// gone; after that, each further halving gives it back again.
    static let connectionsClosedBeforeTrim = 256

    /// Each tick: once a flood of connections is over (at least `connectionsClosedBeforeTrim`
    /// fewer than at the peak, at most half the peak left, none closed since the last tick), the
    /// memory malloc keeps free is given back to the kernel; while the rest of the flood goes
    /// too, again at each halving of what was left. On the worker: malloc_trim locks malloc's
    /// arenas while it walks them.
    func returnMemoryAfterFlood() {
        let open = admission.open
        defer { connectionsAtLastTick = open }
        if let left = memoryWatch.trimmedWith, open > left {
            memoryWatch = (peak: open, trimmedWith: nil)  // growing again: a new flood, maybe
        }
        memoryWatch.peak = max(memoryWatch.peak, open)
        let reference = memoryWatch.trimmedWith ?? memoryWatch.peak
        let drop = memoryWatch.trimmedWith == nil ? Self.connectionsClosedBeforeTrim : 1
        guard reference - open >= drop, open <= reference / 2, open >= connectionsAtLastTick else { return }
        memoryWatch.trimmedWith = open
        let closed = reference - open
        let log = self.log
        _ = parts.worker.submit {
            let before = CurrentProcess.residentBytes() ?? 0
            CurrentProcess.returnFreedMemory()
            let after = CurrentProcess.residentBytes() ?? 0
            log.info(
                "gave freed memory back after \(closed) connections closed: "
                    + "resident \(before >> 20) MiB, now \(after >> 20) MiB"
            )
        }
    }
}
