import BridgeCore
import Posix
import Synchronization
import TLS
import TMMProtocol

// Access Code V1 checks in constant time in the number of registered applications.
//
// A code is SHA-256(id + second): it cannot be inverted, so the only way to find which
// application (if any) sent one is to know every application's code for the seconds that are
// accepted (now-1, now, now+1). Hashing them per request cost 3 × N digests on the io thread
// (138 ms with 20,000 ids, so eight clients sending wrong codes stalled every stream). Instead a
// worker thread computes, once per second, the digests of every allowed id for the second two
// ahead and publishes them as a dictionary; a check is then one Base64 decode and at most three
// dictionary lookups under a briefly held Mutex.
//
// The worker is always a second ahead (tables for now-1 ... now+2 exist), so a check never waits
// for it. A table can only be missing after the wall clock jumps (an NTP step); then the check
// computes that second itself when few ids are registered, and otherwise refuses until the worker
// catches up (within a second). A registration adds the new id's codes to every published table
// at once (four digests on the io thread), so a freshly registered app can authenticate in the
// very next request.
//
// Timing: a lookup's time depends on the presented code's hash bucket, which is keyed by the
// process's random SipHash seed, not on how close the code is to a valid one; the comparison of
// `AccessCodeV1.verify` (constant time per candidate) is not needed for that reason.

/// The digests of every allowed application for a few seconds around now, kept by a worker.
final class AccessCodeTable: Sendable {
    /// A digest as a dictionary key.
    struct Key: Hashable, Sendable {
        var a: UInt64, b: UInt64, c: UInt64, d: UInt64

        init(_ bytes: some Collection<UInt8>) {
            var words: [UInt64] = [0, 0, 0, 0]
            for (index, byte) in bytes.prefix(32).enumerated() {
                words[index / 8] = words[index / 8] << 8 | UInt64(byte)
            }
            (a, b, c, d) = (words[0], words[1], words[2], words[3])
        }

        init(_ digest: InlineArray<32, UInt8>) {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(32)
            for i in 0..<32 { bytes.append(digest[i]) }
            self.init(bytes)
        }
    }

    private struct State: Sendable {
        /// Allowed ids in registration order (append-only) and their UTF-8 bytes.
        var ids: [GUID] = []
        var idBytes: [[UInt8]] = []
        /// Second → digest → index in `ids`.
        var tables: [Int64: [Key: Int32]] = [:]
    }

    /// Seconds around now for which a check accepts a code.
    static let skew = AccessCodeV1.skewSeconds
    /// A missing table is computed inline for at most this many ids (see the file comment).
    static let inlineLimit = 64

    private let state: Mutex<State>
    private let commands: Inbox<Bool>
    private let clock: @Sendable () -> Int64
    private let thread = Mutex<OSThread?>(nil)
    /// Digests computed by the worker (tests and the log).
    let workerDigests = Atomic<Int>(0)

    /// A table for `ids`, with the current window computed before it returns (start-up, not the
    /// io loop), and a worker that keeps it a second ahead. `clock` gives Unix milliseconds.
    init(ids: [GUID], clock: @escaping @Sendable () -> Int64 = { wallClockMilliseconds() }) throws(Errno) {
        self.clock = clock
        commands = try Inbox(capacity: 4)
        var initial = State()
        initial.ids = ids
        initial.idBytes = ids.map { Array($0.canonical.utf8) }
        let now = clock() / 1000
        for second in (now - Self.skew)...(now + Self.skew + 1) {
            initial.tables[second] = Self.compute(initial.idBytes, second: second, into: [:])
        }
        state = Mutex(initial)
        let worker = try OSThread(name: "access-codes") { [self] in run() }
        thread.withLock { $0 = worker }
    }

    /// Stops the worker and waits for it (it finishes at most the table it is computing).
    func stop() {
        _ = commands.post(true)
        let worker = thread.withLock { current -> OSThread? in
            defer { current = nil }
            return current
        }
        worker?.join()
    }

    /// The application whose code `headerValue` carries for now±1 s, or nil.
    func verify(headerValue: String) -> GUID? {
        guard let digest = AccessCodeV1.presentedDigest(headerValue: headerValue) else { return nil }
        let key = Key(digest)
        let now = clock() / 1000
        return state.withLock { state -> GUID? in
            var match: GUID?
            for second in (now - Self.skew)...(now + Self.skew) {
                if let table = state.tables[second] {
                    if let index = table[key], match == nil { match = state.ids[Int(index)] }
                } else if state.ids.count <= Self.inlineLimit {
                    // The clock jumped past the worker (see the file comment): few ids, compute now.
                    let table = Self.compute(state.idBytes, second: second, into: [:])
                    if let index = table[key], match == nil { match = state.ids[Int(index)] }
                }
            }
            return match
        }
    }

    /// Adds a newly registered id: from now on, and in every published table at once.
    func add(_ id: GUID) {
        let bytes = Array(id.canonical.utf8)
        state.withLock { state in
            state.ids.append(id)
            state.idBytes.append(bytes)
            let index = Int32(state.ids.count - 1)
            for second in Array(state.tables.keys) {
                let digest = AccessCodeV1.digest(
                    idBytes: bytes, timestamp: AccessCodeV1.timestampUTF8(unixSeconds: second),
                    sha256: Digest.sha256)
                state.tables[second]?[Key(digest)] = index
            }
        }
    }

    /// Seconds that have a table (tests).
    var publishedSeconds: [Int64] { state.withLock { $0.tables.keys.sorted() } }

    /// Adds the digests of `idBytes` at `second` to `table`; `idBytes[0]` is id number `firstIndex`.
    private static func compute(
        _ idBytes: [[UInt8]], firstIndex: Int = 0, second: Int64, into table: [Key: Int32]
    )
        -> [Key: Int32]
    {
        var table = table
        table.reserveCapacity(idBytes.count)
        let timestamp = AccessCodeV1.timestampUTF8(unixSeconds: second)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for (offset, bytes) in idBytes.enumerated() {
            text.removeAll(keepingCapacity: true)
            text.append(contentsOf: bytes)
            text.append(contentsOf: timestamp)
            table[Key(Digest.sha256(text.span))] = Int32(firstIndex + offset)
        }
        return table
    }

    /// The worker: keep tables for now-1 ... now+2, drop older ones, sleep to the next second.
    private func run() {
        while true {
            let now = clock() / 1000
            let wanted = (now - Self.skew)...(now + Self.skew + 1)
            let (missing, snapshot) = state.withLock { state -> ([Int64], [[UInt8]]) in
                for second in state.tables.keys where !wanted.contains(second) { state.tables[second] = nil }
                // Behind (the thread was starved, the clock stepped): the seconds checks need
                // soonest first (now, then the next one), not the oldest of the window.
                let priority = { (second: Int64) in abs(second - now) * 2 + (second < now ? 1 : 0) }
                let missing = wanted.filter { state.tables[$0] == nil }.sorted { priority($0) < priority($1) }
                return (missing, state.idBytes)
            }
            for second in missing {
                var table = Self.compute(snapshot, second: second, into: [:])
                workerDigests.add(snapshot.count, ordering: .relaxed)
                var done = snapshot.count
                // Ids registered meanwhile: compute them too, then publish with none left out.
                while true {
                    let extra = state.withLock { state -> [[UInt8]]? in
                        if state.idBytes.count == done {
                            state.tables[second] = table
                            return nil
                        }
                        return Array(state.idBytes[done...])
                    }
                    guard let extra else { break }
                    table = Self.compute(extra, firstIndex: done, second: second, into: table)
                    done += extra.count
                }
            }
            let untilNextSecond = 1000 - clock() % 1000
            if !commands.wait(milliseconds: Int32(clamping: max(1, untilNextSecond))).isEmpty { return }
        }
    }
}
