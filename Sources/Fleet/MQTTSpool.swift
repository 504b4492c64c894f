import Glibc
import Posix

// Store-and-forward for fleet publishing: while the broker cannot be reached, messages go to a
// spool in the state directory, and on reconnect they drain oldest first, each removed only after
// the broker's PUBACK.
//
// Layout of the directory (0700, this user's; a symbolic link or another owner's is refused):
//
// - Segment files `NNNNNNNNNNNNNNNN.spool`, named by the sequence of their first record in 16
//   zero-padded hex digits (so names sort as sequences do). Records (SpoolRecord.swift) are
//   appended to the newest; a new segment starts when it reaches the segment size (limit/16,
//   between 16 KiB and 16 MiB: small enough that dropping one loses a sixteenth of the spool,
//   large enough to keep file churn low, and bounded so the recovery scan reads at most one
//   segment into memory at a time). Sequences within a segment are consecutive.
// - `cursor`: the sequence of the first record not acknowledged, in decimal, replaced atomically
//   (AtomicFile: temporary file, fsync, rename, fsync of the directory).
//
// Durability. `append` leaves the bytes in the kernel; `sync()` fdatasyncs the segments written to
// (and the directory after a segment was made or removed). Whatever was synced survives a SIGKILL
// or a power cut: at open, each segment is scanned, and the first record that is torn, fails its
// CRC, carries the wrong sequence or is garbage (an ext4 zero-filled tail) ends its valid part: the
// file is truncated there and the tail counted once in `damaged`.
//
// At-least-once. The cursor is written at most once a second from `acknowledge` and `sync`, and by
// `checkpoint()`. After a crash the records acknowledged in the last second before it are handed
// out again: the broker may see a message twice, never lose one. Acknowledgements may arrive out
// of order; the cursor advances only over the contiguous acknowledged prefix, and records
// acknowledged beyond it are remembered (in memory) so that they are not handed out again while
// this process lives.
//
// Bounds. The spool's files never take more than `limitBytes`: before an append that would pass
// it, the oldest segments are deleted whole and their unacknowledged records counted in
// `dropped`. Dropping is per segment (up to a sixteenth of the spool at once), not per record. An
// acknowledgement of a record in flight that was dropped meanwhile is ignored. Memory: an index of
// 16 bytes per record on disk (SpoolIndexEntry), never the payloads, which are read back from the
// files when handed out; the sets of records in flight and acknowledged out of order are bounded by
// what the caller takes.
//
// Sequences continue across restarts: the next is one past the largest found, or the cursor if
// that is larger. The newest segment is never deleted while it is the only one (an empty one is
// made first), so its name keeps the largest sequence on disk even when everything was dropped.
//
// One thread (the mqtt thread) uses a spool: it is not Sendable and takes no locks. The directory
// itself is locked (flock) while a spool has it open, so a second daemon, or a second spool in this
// one, is refused instead of corrupting it.

/// A spool operation failed: names the path and the errno or the reason.
public struct SpoolError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    /// The system call's error, when one failed.
    public var errno: Errno?

    init(_ operation: String, _ path: String, _ errno: Errno) {
        description = "\(operation) \(path): \(errno)"
        self.errno = errno
    }

    init(_ operation: String, _ path: String, reason: String) {
        description = "\(operation) \(path): \(reason)"
        errno = nil
    }

    init(_ failure: AtomicFile.Failure) {
        description = failure.description
        errno = failure.errno
    }
}

public struct SpoolStatistics: Equatable, Sendable {
    /// Records appended since this process opened the spool.
    public var spooled = 0
    /// Records acknowledged (removed) since open.
    public var drained = 0
    /// Records discarded because the spool was full (oldest first), since open.
    public var dropped = 0
    /// Records found torn or corrupt when opened (discarded, counted), or when read back.
    public var damaged = 0
    /// Records found pending when opened (left by an earlier run).
    public var recovered = 0
    /// Records on disk not yet acknowledged.
    public var pendingRecords = 0
    /// Bytes the spool's files take on disk.
    public var pendingBytes = 0
    public var oldestPendingUnixMilliseconds: Int64?

    public init() {}
}

/// One segment file and the index of its records.
final class SpoolSegment {
    let first: UInt64
    let name: String
    let descriptor: FileDescriptor
    var entries: [SpoolIndexEntry]
    /// The file's length: where the next record goes.
    var size: Int
    /// Written to since its last fdatasync.
    var needsSync = false

    init(first: UInt64, name: String, descriptor: consuming FileDescriptor, entries: [SpoolIndexEntry], size: Int) {
        self.first = first
        self.name = name
        self.descriptor = descriptor
        self.entries = entries
        self.size = size
    }

    /// One past the sequence of its last record.
    var end: UInt64 { first + UInt64(entries.count) }

    static func name(first: UInt64) -> String {
        let hex = String(first, radix: 16)
        return String(repeating: "0", count: max(0, 16 - hex.count)) + hex + ".spool"
    }

    /// The first sequence of a segment file's name, or nil for any other name.
    static func first(ofName name: String) -> UInt64? {
        guard name.hasSuffix(".spool") else { return nil }
        let hex = name.dropLast(6)
        guard hex.count == 16, hex.allSatisfy(\.isHexDigit) else { return nil }
        return UInt64(hex, radix: 16)
    }
}

public final class MQTTSpool {
    /// The smallest limit: 16 segments of the smallest size, so that dropping one is a small part.
    public static let minimumLimit = 64 << 10
    public static let defaultLimit = 64 << 20
    static let minimumSegmentSize = 16 << 10
    static let maximumSegmentSize = 16 << 20
    static let cursorFileName = "cursor"

    let directory: String
    private let directoryDescriptor: FileDescriptor
    public private(set) var limitBytes: Int

    /// Oldest first; the last is the one appended to.
    private(set) var segments: [SpoolSegment] = []
    /// The sequence the next append gets.
    private(set) var nextSequence: UInt64
    /// The first record not acknowledged (an existing one, or `nextSequence` when none is pending).
    private(set) var cursor: UInt64
    /// The cursor as the file has it.
    private(set) var persistedCursor: UInt64
    /// Where `takeUnsent` continues.
    private var nextUnsent: UInt64
    private var inFlight: Set<UInt64> = []
    /// Acknowledged beyond the cursor (PUBACKs out of order).
    private(set) var acknowledgedAhead: Set<UInt64> = []
    private var counters = SpoolStatistics()
    private var pendingCount = 0
    private var totalBytes = 0
    private var directoryNeedsSync = false
    private var lastCursorWrite: Int64
    /// Milliseconds of a monotonic clock, for throttling cursor writes (replaced by tests).
    var monotonicMilliseconds: () -> Int64 = { monotonicNanoseconds() / 1_000_000 } {
        didSet { lastCursorWrite = monotonicMilliseconds() }
    }

    /// Opens (creating it 0700 if missing, refusing a symlink or a directory not owned by this uid)
    /// the spool directory, scans what an earlier run left (torn tail after a crash: truncated and
    /// counted in `damaged`; records before the persisted acknowledgement cursor: skipped), and
    /// is ready to append. `limitBytes` >= 64 KiB (SpoolError for smaller).
    public init(directory: String, limitBytes: Int) throws(SpoolError) {
        guard limitBytes >= Self.minimumLimit else {
            throw SpoolError(
                "open spool", directory,
                reason: "limit of \(limitBytes) bytes is below the minimum \(Self.minimumLimit)")
        }
        do {
            try makeDirectories(directory, mode: 0o700)
        } catch {
            throw SpoolError(error)
        }
        let directoryFD: CInt
        do {
            directoryFD = try valueOrErrno { open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        } catch {
            throw SpoolError("open", directory, error)
        }
        directoryDescriptor = FileDescriptor(adopting: directoryFD)
        // One user of a directory at a time: two would interleave appends and delete each other's
        // segments. The lock goes with the descriptor (and with the process, however it ends).
        do {
            _ = try valueOrErrno { flock(directoryFD, LOCK_EX | LOCK_NB) }
        } catch {
            if error == .wouldBlock { throw SpoolError("open", directory, reason: "another spool has it open") }
            throw SpoolError("lock", directory, error)
        }
        self.directory = directory
        self.limitBytes = limitBytes
        let storedCursor = try Self.readCursor(directory + "/" + Self.cursorFileName)
        persistedCursor = storedCursor
        nextSequence = 1
        cursor = 0
        nextUnsent = 0
        lastCursorWrite = 0
        lastCursorWrite = monotonicMilliseconds()

        try recover(storedCursor: storedCursor)
    }

    // MARK: - Opening

    private static func readCursor(_ path: String) throws(SpoolError) -> UInt64 {
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, limit: 64, trusting: .ours(mode: 0o600))
        } catch {
            throw SpoolError(error)
        }
        guard let bytes else { return 0 }
        // An unreadable cursor means "nothing acknowledged": everything is sent again, nothing lost.
        let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        return UInt64(text) ?? 0
    }

    private func recover(storedCursor: UInt64) throws(SpoolError) {
        var found: [SpoolSegment] = []
        for (first, name) in try segmentFiles() {
            let segment = try scanSegment(first: first, name: name)
            // Sequences overlapping the previous segment's cannot both be right; the older
            // segment's are kept (only a hand-made file can do this).
            if let previous = found.last, segment.first < previous.end {
                counters.damaged += max(1, segment.entries.count)
                removeFile(segment.name)
                continue
            }
            // An empty segment is kept only as the newest (its name is the largest sequence).
            if let previous = found.last, previous.entries.isEmpty {
                found.removeLast()
                removeFile(previous.name)
            }
            found.append(segment)
        }
        segments = found
        totalBytes = found.reduce(0) { $0 + $1.size }
        nextSequence = max(found.last?.end ?? 1, storedCursor, 1)
        cursor = firstExisting(atOrAfter: storedCursor)
        nextUnsent = cursor
        removeAcknowledgedSegments()
        for segment in segments where segment.end > cursor {
            pendingCount += Int(segment.end - max(segment.first, cursor))
        }
        counters.recovered = pendingCount
        // The limit may have been lowered since the files were written.
        try makeRoom(for: 0)
        if directoryNeedsSync { try syncDirectory() }
    }

    /// The segment files in the directory, by first sequence.
    private func segmentFiles() throws(SpoolError) -> [(UInt64, String)] {
        // The directory opened (and locked), not whatever its name leads to now.
        let copy = fcntl(directoryDescriptor.rawValue, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw SpoolError("list", directory, Errno.current) }
        guard let dir = fdopendir(copy) else {
            let error = Errno.current
            close(copy)
            throw SpoolError("list", directory, error)
        }
        defer { closedir(dir) }
        var files: [(UInt64, String)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let first = SpoolSegment.first(ofName: name) { files.append((first, name)) }
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// Opens and scans one segment; truncates a damaged tail.
    private func scanSegment(first: UInt64, name: String) throws(SpoolError) -> SpoolSegment {
        let path = directory + "/" + name
        let raw: CInt
        do {
            raw = try valueOrErrno {
                openat(directoryDescriptor.rawValue, name, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
            }
        } catch {
            throw SpoolError("open", path, error)
        }
        let descriptor = FileDescriptor(adopting: raw)
        var info = stat()
        do { _ = try valueOrErrno { fstat(descriptor.rawValue, &info) } } catch {
            throw SpoolError("stat", path, error)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw SpoolError("open", path, reason: "not a regular file; remove it")
        }
        // A file longer than any segment can be (a segment plus one record) is scanned only that far.
        let readable = min(
            Int(info.st_size), Self.maximumSegmentSize + SpoolCodec.headerSize + SpoolCodec.maximumPayload)
        let bytes = try readFully(descriptor, count: readable, path: path)
        let scan = SpoolCodec.scan(bytes[...], firstSequence: first)
        if scan.validLength < Int(info.st_size) {
            counters.damaged += 1
            do {
                _ = try valueOrErrno { ftruncate(descriptor.rawValue, off_t(scan.validLength)) }
                _ = try valueOrErrno { fdatasync(descriptor.rawValue) }
            } catch {
                throw SpoolError("truncate", path, error)
            }
        }
        return SpoolSegment(
            first: first, name: name, descriptor: descriptor, entries: scan.entries, size: scan.validLength)
    }

    private func readFully(
        _ descriptor: borrowing FileDescriptor, count: Int, path: String
    ) throws(SpoolError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let fd = descriptor.rawValue
            let result: Result<Int, Errno> = bytes.withUnsafeMutableBytes { buffer in
                do throws(Errno) {
                    return .success(
                        try valueOrErrno { pread(fd, buffer.baseAddress! + done, count - done, off_t(done)) })
                } catch {
                    return .failure(error)
                }
            }
            let read: Int
            do { read = try result.get() } catch { throw SpoolError("read", path, error) }
            if read == 0 { break }  // shorter than it was a moment ago
            done += read
        }
        return Array(bytes[0..<done])
    }

    // MARK: - Limits

    /// A reload; shrinking drops the oldest at once (counted). Below 64 KiB counts as 64 KiB.
    public func setLimit(_ bytes: Int) {
        limitBytes = max(bytes, Self.minimumLimit)
        // A failure (no new segment could be made) leaves the excess for the next append to retry.
        try? makeRoom(for: 0)
    }

    var segmentSize: Int { min(max(limitBytes / 16, Self.minimumSegmentSize), Self.maximumSegmentSize) }

    /// The largest payload `append` takes under the current limit.
    public var maximumPayload: Int { min(limitBytes / 16, SpoolCodec.maximumPayload) }

    /// Deletes the oldest segments until `recordSize` more bytes fit under the limit.
    private func makeRoom(for recordSize: Int) throws(SpoolError) {
        while totalBytes + recordSize > limitBytes, let oldest = segments.first {
            if segments.count == 1 {
                // The only segment keeps the largest sequence on disk: its successor comes first.
                guard oldest.size > 0 else { return }
                try startSegment()
            }
            dropOldestSegment()
        }
    }

    private func dropOldestSegment() {
        let segment = segments.removeFirst()
        for index in segment.entries.indices {
            let sequence = segment.first + UInt64(index)
            guard sequence >= cursor else { continue }
            if acknowledgedAhead.remove(sequence) == nil {
                counters.dropped += 1
                pendingCount -= 1
                inFlight.remove(sequence)
            }
        }
        totalBytes -= segment.size
        removeFile(segment.name)
        if cursor < segment.end { cursor = segment.end }
        settleCursor()
        nextUnsent = max(nextUnsent, cursor)
    }

    // MARK: - Appending

    /// Appends (buffered in the kernel: call `sync()` after a batch). When the spool would exceed
    /// its limit the oldest records are dropped first (counted in `dropped`). A payload bigger
    /// than the limit/16 is refused with SpoolError (the caller counts it).
    @discardableResult
    public func append(kind: UInt8, payload: [UInt8], unixMilliseconds: Int64) throws(SpoolError) -> UInt64 {
        guard payload.count <= maximumPayload else {
            throw SpoolError(
                "append to", directory,
                reason: "a message of \(payload.count) bytes is over the \(maximumPayload)-byte maximum")
        }
        let sequence = nextSequence
        let bytes = SpoolCodec.encode(
            kind: kind, sequence: sequence, unixMilliseconds: unixMilliseconds, payload: payload)
        try makeRoom(for: bytes.count)
        if let active = segments.last, active.size < segmentSize, active.end == sequence {
            // Appends continue in it.
        } else {
            try startSegment()
        }
        let active = segments[segments.count - 1]
        do {
            try active.descriptor.writeAll(bytes)
        } catch {
            // A short write (a full disk) must not leave a torn record in front of the next one.
            _ = ftruncate(active.descriptor.rawValue, off_t(active.size))
            throw SpoolError("write", directory + "/" + active.name, error)
        }
        active.entries.append(
            SpoolIndexEntry(
                offset: UInt32(active.size), payloadLength: UInt32(payload.count), unixMilliseconds: unixMilliseconds))
        active.size += bytes.count
        active.needsSync = true
        totalBytes += bytes.count
        nextSequence += 1
        pendingCount += 1
        counters.spooled += 1
        return sequence
    }

    /// A new, empty segment for `nextSequence`, appended to. An empty segment it replaces as the
    /// newest (left by a start whose cursor was ahead of the files) is removed.
    private func startSegment() throws(SpoolError) {
        let name = SpoolSegment.name(first: nextSequence)
        let flags = O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        let raw: CInt
        do {
            raw = try valueOrErrno { openat(directoryDescriptor.rawValue, name, flags, 0o600) }
        } catch {
            guard error == .fileExists else { throw SpoolError("create", directory + "/" + name, error) }
            // Not one of ours (all were scanned at open): a removal that failed earlier. Replaced.
            removeFile(name)
            do {
                raw = try valueOrErrno { openat(directoryDescriptor.rawValue, name, flags, 0o600) }
            } catch {
                throw SpoolError("create", directory + "/" + name, error)
            }
        }
        let segment = SpoolSegment(
            first: nextSequence, name: name, descriptor: FileDescriptor(adopting: raw), entries: [], size: 0)
        if let previous = segments.last, previous.entries.isEmpty {
            segments.removeLast()
            removeFile(previous.name)
        }
        segments.append(segment)
        directoryNeedsSync = true
    }

    /// fdatasync the segments written to (and the directory after a segment was made or removed);
    /// then the cursor, if a second has passed since it was last written.
    public func sync() throws(SpoolError) {
        for segment in segments where segment.needsSync {
            do {
                _ = try valueOrErrno { fdatasync(segment.descriptor.rawValue) }
            } catch {
                throw SpoolError("fdatasync", directory + "/" + segment.name, error)
            }
            segment.needsSync = false
        }
        if directoryNeedsSync { try syncDirectory() }
        writeCursorIfDue()
    }

    private func syncDirectory() throws(SpoolError) {
        do {
            _ = try valueOrErrno { fsync(directoryDescriptor.rawValue) }
        } catch {
            throw SpoolError("fsync", directory, error)
        }
        directoryNeedsSync = false
    }

    // MARK: - Draining

    /// Up to `max` records not yet handed out, oldest first; they become "in flight".
    public func takeUnsent(max: Int) throws(SpoolError) -> [SpoolRecord] {
        var records: [SpoolRecord] = []
        var sequence = firstExisting(atOrAfter: nextUnsent)
        while records.count < max, sequence < nextSequence {
            if !acknowledgedAhead.contains(sequence) {
                let record: SpoolRecord?
                do {
                    record = try read(sequence)
                } catch {
                    // What was read is handed out; the failing read is retried by the next call.
                    if records.isEmpty { throw error }
                    break
                }
                if let record {
                    records.append(record)
                    inFlight.insert(sequence)
                } else {
                    // Changed on disk since it was written or scanned: it cannot be sent, and must
                    // not stop the ones after it.
                    counters.damaged += 1
                    pendingCount -= 1
                    acknowledgedAhead.insert(sequence)
                    settleCursor()
                }
            }
            sequence = firstExisting(atOrAfter: sequence + 1)
        }
        nextUnsent = sequence
        return records
    }

    /// The record `sequence` read back from its segment; nil when it no longer checks.
    private func read(_ sequence: UInt64) throws(SpoolError) -> SpoolRecord? {
        guard let (segment, index) = locate(sequence) else { return nil }
        let entry = segment.entries[index]
        var bytes = [UInt8](repeating: 0, count: entry.recordLength)
        let fd = segment.descriptor.rawValue
        let count = bytes.count
        let result: Result<Int, Errno> = bytes.withUnsafeMutableBytes { buffer in
            do throws(Errno) {
                return .success(try valueOrErrno { pread(fd, buffer.baseAddress, count, off_t(entry.offset)) })
            } catch {
                return .failure(error)
            }
        }
        do {
            guard try result.get() == count else { return nil }
        } catch {
            throw SpoolError("read", directory + "/" + segment.name, error)
        }
        guard let header = SpoolCodec.record(in: bytes[...], at: 0, expectedSequence: sequence),
            header.payloadLength == Int(entry.payloadLength)
        else { return nil }
        return SpoolRecord(
            sequence: sequence, kind: header.kind, unixMilliseconds: header.unixMilliseconds,
            payload: Array(bytes[SpoolCodec.headerSize...]))
    }

    /// The broker acknowledged `sequence` (PUBACK; may arrive out of order). Removed for good;
    /// the durable cursor advances over the contiguous acknowledged prefix. An acknowledgement of
    /// a record not in flight (dropped meanwhile, or a duplicate) is ignored.
    public func acknowledge(_ sequence: UInt64) {
        guard inFlight.remove(sequence) != nil else { return }
        pendingCount -= 1
        counters.drained += 1
        acknowledgedAhead.insert(sequence)
        settleCursor()
        writeCursorIfDue()
    }

    /// The connection was lost: in-flight records become unsent again (handed out again, in order).
    public func returnInFlight() {
        inFlight.removeAll()
        nextUnsent = cursor
    }

    public var hasUnsent: Bool { pendingCount > inFlight.count }
    public var inFlightCount: Int { inFlight.count }

    public var statistics: SpoolStatistics {
        var statistics = counters
        statistics.pendingRecords = pendingCount
        statistics.pendingBytes = totalBytes
        if let (segment, index) = locate(cursor) {
            statistics.oldestPendingUnixMilliseconds = segment.entries[index].unixMilliseconds
        }
        return statistics
    }

    /// Records in the in-memory index (acknowledged ones of the newest segment included): what
    /// memory is proportional to.
    var indexedRecordCount: Int { segments.reduce(0) { $0 + $1.entries.count } }

    // MARK: - The cursor

    /// Persists the cursor now, after syncing what was appended. Call before a clean exit.
    public func checkpoint() throws(SpoolError) {
        try sync()
        try writeCursor()
    }

    private func writeCursorIfDue() {
        guard cursor != persistedCursor, monotonicMilliseconds() - lastCursorWrite >= 1000 else { return }
        // A failure is retried at the next chance; meanwhile more is sent again after a crash.
        try? writeCursor()
    }

    private func writeCursor() throws(SpoolError) {
        guard cursor != persistedCursor else { return }
        lastCursorWrite = monotonicMilliseconds()
        let path = directory + "/" + Self.cursorFileName
        do {
            try AtomicFile.write(Array("\(cursor)\n".utf8), to: path, mode: 0o600)
        } catch {
            throw SpoolError(error)
        }
        persistedCursor = cursor
    }

    /// Moves the cursor over records acknowledged ahead of it, and deletes the segments it passed.
    private func settleCursor() {
        cursor = firstExisting(atOrAfter: cursor)
        while acknowledgedAhead.remove(cursor) != nil {
            cursor = firstExisting(atOrAfter: cursor + 1)
        }
        removeAcknowledgedSegments()
    }

    /// Deletes the segments whose records are all acknowledged, except the newest (appended to, and
    /// the keeper of the largest sequence).
    private func removeAcknowledgedSegments() {
        while segments.count > 1, segments[0].end <= cursor {
            let segment = segments.removeFirst()
            totalBytes -= segment.size
            removeFile(segment.name)
        }
    }

    // MARK: - Finding records

    /// The first record on disk with a sequence >= `sequence`, or `nextSequence` if none.
    private func firstExisting(atOrAfter sequence: UInt64) -> UInt64 {
        for segment in segments where segment.end > sequence && !segment.entries.isEmpty {
            return max(segment.first, sequence)
        }
        return nextSequence
    }

    private func locate(_ sequence: UInt64) -> (SpoolSegment, Int)? {
        // Binary search for the last segment starting at or before `sequence`.
        var low = 0
        var high = segments.count
        while low < high {
            let middle = (low + high) / 2
            if segments[middle].first <= sequence { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let segment = segments[low - 1]
        guard sequence < segment.end else { return nil }
        return (segment, Int(sequence - segment.first))
    }

    private func removeFile(_ name: String) {
        // A failure leaves a file that the next open scans again (and `startSegment` replaces): a
        // record might be sent twice, none is lost.
        _ = unlinkat(directoryDescriptor.rawValue, name, 0)
        directoryNeedsSync = true
    }
}
