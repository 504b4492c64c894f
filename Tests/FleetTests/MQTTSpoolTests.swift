import Glibc
import Posix
import TestSupport
import Testing

@testable import Fleet

/// A fresh private directory under /tmp with the spool's directory inside it, removed by `remove()`.
private struct SpoolDirectory {
    let parent: String
    var path: String { parent + "/spool" }

    init() throws {
        var template = Array("/tmp/tmm-spool-tests-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno.current }
        parent = String(cString: made)
    }

    func remove() { removeTree(parent) }

    func file(_ name: String) -> String { path + "/" + name }
}

/// Removes `path` and everything in it (the spool's directories are one level deep, plus links).
private func removeTree(_ path: String) {
    if let dir = opendir(path) {
        for name in entryNames(dir) where name != "." && name != ".." {
            let child = path + "/" + name
            if (try? PathStatus.of(child))?.isDirectory == true { removeTree(child) } else { unlink(child) }
        }
        closedir(dir)
    }
    rmdir(path)
}

private func entryNames(_ dir: OpaquePointer) -> [String] {
    var names: [String] = []
    while let entry = readdir(dir) {
        names.append(
            withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
    }
    return names
}

private func fileNames(in path: String) -> [String] {
    guard let dir = opendir(path) else { return [] }
    defer { closedir(dir) }
    return entryNames(dir).filter { $0 != "." && $0 != ".." }.sorted()
}

private func readFile(_ path: String) throws -> [UInt8] {
    try AtomicFile.read(path) ?? []
}

private func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    let fd = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
    try fd.writeAll(bytes)
}

/// Copies the spool's files as they are on disk now: the state a SIGKILL or a power cut after the
/// last sync leaves (the spool is still open, nothing more is written, no checkpoint).
private func copyDirectory(_ source: String, to target: String) throws {
    _ = mkdir(target, 0o700)
    for name in fileNames(in: source) { try writeFile(target + "/" + name, try readFile(source + "/" + name)) }
}

private func payload(_ sequence: Int, size: Int = 20) -> [UInt8] {
    (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ sequence &* 7) }
}

private func record(_ sequence: UInt64, payload: [UInt8] = [1, 2, 3], time: Int64 = 1_700_000_000_000) -> [UInt8] {
    SpoolCodec.encode(kind: 1, sequence: sequence, unixMilliseconds: time + Int64(sequence), payload: payload)
}

@Suite("MQTTSpool record codec", .tags(.unit))
struct MQTTSpoolCodecTests {
    @Test func crc32IsIEEE() {
        #expect(SpoolCodec.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(SpoolCodec.crc32([UInt8]()) == 0)
        let whole = Array("hello, world".utf8)
        #expect(SpoolCodec.crc32(whole[5...], startingWith: SpoolCodec.crc32(whole[..<5])) == SpoolCodec.crc32(whole))
    }

    @Test func aRecordReadsBack() throws {
        let bytes = SpoolCodec.encode(kind: 2, sequence: 0x0102_0304_0506_0708, unixMilliseconds: -5, payload: [9, 8])
        #expect(bytes.count == SpoolCodec.headerSize + 2)
        #expect(Array(bytes[2..<6]) == [2, 0, 0, 0], "length, little-endian")
        let header = try #require(SpoolCodec.record(in: bytes[...], at: 0, expectedSequence: 0x0102_0304_0506_0708))
        #expect(
            header
                == SpoolRecordHeader(kind: 2, payloadLength: 2, sequence: 0x0102_0304_0506_0708, unixMilliseconds: -5))
        #expect(SpoolCodec.record(in: bytes[...], at: 0, expectedSequence: 1) == nil)
    }

    @Test func segmentNamesSortAsSequences() {
        #expect(SpoolSegment.name(first: 0x1F) == "000000000000001f.spool")
        #expect(SpoolSegment.first(ofName: "000000000000001f.spool") == 0x1F)
        #expect(SpoolSegment.first(ofName: "cursor") == nil)
        #expect(SpoolSegment.first(ofName: "1f.spool") == nil)
        #expect(SpoolSegment.first(ofName: "000000000000001f.spool.tmp") == nil)
    }
}

@Suite("MQTTSpool recovery of damaged segments", .tags(.unit))
struct MQTTSpoolRecoveryTests {
    struct Case: CustomStringConvertible, Sendable {
        let description: String
        let bytes: [UInt8]
        let recovered: Int
        let damaged: Int
    }

    static let good = record(1) + record(2) + record(3)
    static let fourth = record(4, payload: Array(repeating: 0x44, count: 40))

    static let cases: [Case] = [
        Case(description: "clean", bytes: good, recovered: 3, damaged: 0),
        Case(description: "torn header", bytes: good + fourth[..<10], recovered: 3, damaged: 1),
        Case(description: "torn payload", bytes: good + fourth.dropLast(), recovered: 3, damaged: 1),
        Case(
            description: "bad CRC (what follows is lost too)",
            bytes: record(1) + flipping(record(2), at: SpoolCodec.headerSize) + record(3), recovered: 1, damaged: 1),
        Case(description: "bad magic", bytes: good + flipping(fourth, at: 0), recovered: 3, damaged: 1),
        Case(description: "length over the maximum", bytes: good + overlong(), recovered: 3, damaged: 1),
        Case(
            description: "zero-filled tail (ext4 after a power cut)", bytes: good + zeros(4096), recovered: 3,
            damaged: 1),
        Case(
            description: "a later sequence out of order", bytes: record(1) + record(2) + record(7), recovered: 2,
            damaged: 1),
        Case(description: "an earlier sequence again", bytes: good + record(2), recovered: 3, damaged: 1),
        Case(description: "garbage from the start", bytes: Array("hello".utf8), recovered: 0, damaged: 1),
        Case(description: "empty", bytes: [], recovered: 0, damaged: 0),
    ]

    static func flipping(_ bytes: [UInt8], at index: Int) -> [UInt8] {
        var bytes = bytes
        bytes[index] ^= 0x5A
        return bytes
    }

    static func zeros(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }

    /// A header whose length is one past the maximum (refused before its CRC is looked at).
    static func overlong() -> [UInt8] {
        var bytes = record(4)
        let length = UInt32(SpoolCodec.maximumPayload + 1)
        for index in 0..<4 { bytes[2 + index] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(index))) }
        return Array(bytes[..<SpoolCodec.headerSize]) + zeros(64)
    }

    @Test(arguments: cases)
    func openRecoversTheValidPrefix(_ test: Case) throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        _ = mkdir(directory.path, 0o700)
        let segment = directory.file("0000000000000001.spool")
        try writeFile(segment, test.bytes)

        do {
            let spool = try MQTTSpool(directory: directory.path, limitBytes: 1 << 20)
            try check(spool, test, segment: segment)
        }
        // Nothing further is damaged at the next open.
        let again = try MQTTSpool(directory: directory.path, limitBytes: 1 << 20)
        #expect(again.statistics.damaged == 0)
        #expect(again.statistics.recovered == test.recovered + 1)
    }

    private func check(_ spool: MQTTSpool, _ test: Case, segment: String) throws {
        #expect(spool.statistics.recovered == test.recovered)
        #expect(spool.statistics.damaged == test.damaged)
        #expect(spool.statistics.pendingRecords == test.recovered)
        let valid = SpoolCodec.scan(test.bytes[...], firstSequence: 1).validLength
        #expect(try readFile(segment).count == valid, "truncated to the valid part")
        #expect(spool.statistics.pendingBytes == valid)
        let records = try spool.takeUnsent(max: 100)
        #expect(records.map(\.sequence) == (0..<test.recovered).map { UInt64($0) + 1 })
        #expect(records.allSatisfy { $0.payload == [1, 2, 3] && $0.kind == 1 })
        // The next sequence follows the valid ones.
        #expect(try spool.append(kind: 1, payload: [0], unixMilliseconds: 0) == UInt64(test.recovered) + 1)
        try spool.sync()
    }

    @Test func aDamagedMiddleSegmentLeavesAGapThatIsSkipped() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        _ = mkdir(directory.path, 0o700)
        try writeFile(directory.file(SpoolSegment.name(first: 1)), record(1) + record(2))
        try writeFile(directory.file(SpoolSegment.name(first: 3)), record(3) + Self.zeros(10))
        try writeFile(directory.file(SpoolSegment.name(first: 5)), record(5) + record(6))
        let spool = try MQTTSpool(directory: directory.path, limitBytes: 1 << 20)
        #expect(spool.statistics.damaged == 1)
        #expect(spool.statistics.recovered == 5)
        let records = try spool.takeUnsent(max: 10)
        #expect(records.map(\.sequence) == [1, 2, 3, 5, 6])
        for sequence in [6, 3, 1, 5, 2] as [UInt64] { spool.acknowledge(sequence) }
        #expect(spool.cursor == 7)
        #expect(spool.statistics.pendingRecords == 0)
        #expect(spool.statistics.oldestPendingUnixMilliseconds == nil)
        #expect(fileNames(in: directory.path) == [SpoolSegment.name(first: 5)], "acknowledged segments deleted")
    }

    @Test func aSegmentOverlappingTheOneBeforeIsDiscarded() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        _ = mkdir(directory.path, 0o700)
        try writeFile(directory.file(SpoolSegment.name(first: 1)), record(1) + record(2) + record(3))
        try writeFile(directory.file(SpoolSegment.name(first: 2)), record(2) + record(3))
        let spool = try MQTTSpool(directory: directory.path, limitBytes: 1 << 20)
        #expect(spool.statistics.recovered == 3)
        #expect(spool.statistics.damaged == 2)
        #expect(try spool.takeUnsent(max: 10).map(\.sequence) == [1, 2, 3])
    }

    @Test func aRecordChangedOnDiskAfterTheScanIsSkippedAndCounted() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        let spool = try MQTTSpool(directory: directory.path, limitBytes: 1 << 20)
        for index in 1...3 { try spool.append(kind: 1, payload: payload(index), unixMilliseconds: 0) }
        try spool.sync()
        // Flip a payload byte of record 2 behind the spool's back.
        let segment = directory.file(SpoolSegment.name(first: 1))
        var bytes = try readFile(segment)
        bytes[2 * (SpoolCodec.headerSize + 20) - 1] ^= 1
        let fd = try FileDescriptor.open(segment, O_WRONLY)
        _ = bytes.withUnsafeBytes { pwrite(fd.rawValue, $0.baseAddress, $0.count, 0) }
        #expect(try spool.takeUnsent(max: 10).map(\.sequence) == [1, 3])
        #expect(spool.statistics.damaged == 1)
        #expect(spool.statistics.pendingRecords == 2)
        spool.acknowledge(1)
        #expect(spool.cursor == 3, "the damaged record does not hold the cursor back")
    }
}

@Suite("MQTTSpool appending and draining", .tags(.unit))
struct MQTTSpoolTests {
    @Test func appendedRecordsComeBackInOrderAfterReopening() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        do {
            let spool = try MQTTSpool(directory: directory.path, limitBytes: 1 << 20)
            for index in 1...50 {
                let sequence = try spool.append(
                    kind: UInt8(index % 2 + 1), payload: payload(index, size: index * 3), unixMilliseconds: Int64(index)
                )
                #expect(sequence == UInt64(index))
            }
            try spool.sync()
            #expect(spool.statistics.spooled == 50)
            #expect(spool.statistics.oldestPendingUnixMilliseconds == 1)
        }
        let spool = try MQTTSpool(directory: directory.path, limitBytes: 1 << 20)
        #expect(spool.statistics.recovered == 50)
        #expect(spool.statistics.spooled == 0)
        #expect(spool.statistics.oldestPendingUnixMilliseconds == 1)
        var records: [SpoolRecord] = []
        while spool.hasUnsent { records += try spool.takeUnsent(max: 7) }
        #expect(records.count == 50)
        for (index, record) in zip(1..., records) {
            #expect(
                record
                    == SpoolRecord(
                        sequence: UInt64(index), kind: UInt8(index % 2 + 1), unixMilliseconds: Int64(index),
                        payload: payload(index, size: index * 3)))
        }
        #expect(spool.inFlightCount == 50)
        #expect(try spool.takeUnsent(max: 7).isEmpty)
        #expect(try spool.append(kind: 1, payload: [], unixMilliseconds: 0) == 51)
    }

    @Test func theCursorAdvancesOnlyOverTheAcknowledgedPrefix() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        let spool = try MQTTSpool(directory: directory.path, limitBytes: 1 << 20)
        for index in 1...5 { try spool.append(kind: 1, payload: payload(index), unixMilliseconds: Int64(index * 10)) }
        _ = try spool.takeUnsent(max: 5)
        spool.acknowledge(3)
        spool.acknowledge(2)
        #expect(spool.cursor == 1)
        #expect(spool.statistics.pendingRecords == 3)
        #expect(spool.statistics.drained == 2)
        #expect(spool.statistics.oldestPendingUnixMilliseconds == 10)
        spool.acknowledge(1)
        #expect(spool.cursor == 4)
        #expect(spool.statistics.oldestPendingUnixMilliseconds == 40)
        spool.acknowledge(5)
        #expect(spool.cursor == 4)
        spool.acknowledge(5)  // a duplicate PUBACK
        spool.acknowledge(99)  // never handed out
        #expect(spool.statistics.drained == 4)
        spool.acknowledge(4)
        #expect(spool.cursor == 6)
        #expect(spool.acknowledgedAhead.isEmpty)
        #expect(spool.statistics.pendingRecords == 0)
        #expect(spool.inFlightCount == 0)
        #expect(!spool.hasUnsent)
    }

    @Test func reopeningAfterACheckpointSkipsTheAcknowledged() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        do {
            let spool = try MQTTSpool(directory: directory.path, limitBytes: 1 << 20)
            for index in 1...10 { try spool.append(kind: 1, payload: payload(index), unixMilliseconds: 0) }
            _ = try spool.takeUnsent(max: 10)
            for sequence in [4, 2, 1, 3, 6] as [UInt64] { spool.acknowledge(sequence) }
            try spool.checkpoint()
            #expect(try readFile(directory.file("cursor")) == Array("5\n".utf8))
        }
        let spool = try MQTTSpool(directory: directory.path, limitBytes: 1 << 20)
        #expect(spool.statistics.recovered == 6, "6 was acknowledged beyond the cursor: sent again")
        #expect(try spool.takeUnsent(max: 10).map(\.sequence) == [5, 6, 7, 8, 9, 10])
    }

    @Test func theCursorIsWrittenAtMostOnceASecond() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        let spool = try MQTTSpool(directory: directory.path, limitBytes: 1 << 20)
        var now: Int64 = 1_000_000
        spool.monotonicMilliseconds = { now }
        for index in 1...4 { try spool.append(kind: 1, payload: payload(index), unixMilliseconds: 0) }
        _ = try spool.takeUnsent(max: 4)
        spool.acknowledge(1)
        #expect(spool.persistedCursor == 0, "not yet: the spool was opened less than a second ago")
        now += 999
        spool.acknowledge(2)
        #expect(spool.persistedCursor == 0)
        now += 1
        spool.acknowledge(3)
        #expect(spool.persistedCursor == 4)
        #expect(try readFile(directory.file("cursor")) == Array("4\n".utf8))
        spool.acknowledge(4)
        #expect(spool.persistedCursor == 4)
        now += 1000
        try spool.sync()
        #expect(spool.persistedCursor == 5, "sync writes a cursor that is due")
    }

    @Test func returnedRecordsAreHandedOutAgainInOrder() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        let spool = try MQTTSpool(directory: directory.path, limitBytes: 1 << 20)
        for index in 1...5 { try spool.append(kind: 1, payload: payload(index), unixMilliseconds: 0) }
        #expect(try spool.takeUnsent(max: 3).map(\.sequence) == [1, 2, 3])
        spool.acknowledge(2)
        #expect(spool.inFlightCount == 2)
        spool.returnInFlight()
        #expect(spool.inFlightCount == 0)
        spool.acknowledge(1)  // a PUBACK of the lost connection: too late
        #expect(spool.cursor == 1)
        #expect(spool.hasUnsent)
        let again = try spool.takeUnsent(max: 10)
        #expect(again.map(\.sequence) == [1, 3, 4, 5])
        #expect(again.map(\.payload) == [1, 3, 4, 5].map { payload($0) })
    }

    @Test func aFullSpoolDropsTheOldestSegmentAndCountsExactly() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        let limit = MQTTSpool.minimumLimit
        let spool = try MQTTSpool(directory: directory.path, limitBytes: limit)
        let recordSize = SpoolCodec.headerSize + 100
        let perSegment = (spool.segmentSize + recordSize - 1) / recordSize
        _ = try spool.takeUnsent(max: 0)
        var firstDropAt = 0
        for index in 1...2000 {
            try spool.append(kind: 1, payload: payload(index, size: 100), unixMilliseconds: Int64(index))
            #expect(spool.statistics.pendingBytes <= limit)
            if firstDropAt == 0, spool.statistics.dropped > 0 { firstDropAt = index }
            if index == 5 { #expect(try spool.takeUnsent(max: 2).map(\.sequence) == [1, 2]) }
        }
        let statistics = spool.statistics
        #expect(statistics.dropped % perSegment == 0, "whole segments: \(statistics.dropped) of \(perSegment)")
        #expect(statistics.dropped == statistics.spooled - statistics.pendingRecords)
        #expect(firstDropAt == limit / recordSize + 1, "the first append that would pass the limit")
        spool.acknowledge(1)  // dropped while in flight: ignored
        #expect(spool.statistics.drained == 0)
        #expect(spool.inFlightCount == 0)
        let next = try spool.takeUnsent(max: 1)
        #expect(next.map(\.sequence) == [UInt64(statistics.dropped) + 1])
        #expect(statistics.oldestPendingUnixMilliseconds == Int64(statistics.dropped) + 1)
    }

    @Test func shrinkingTheLimitDropsAtOnceAndSequencesContinue() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        do {
            let spool = try MQTTSpool(directory: directory.path, limitBytes: 4 << 20)
            for index in 1...3000 { try spool.append(kind: 1, payload: payload(index, size: 200), unixMilliseconds: 0) }
            #expect(spool.statistics.dropped == 0)
            spool.setLimit(MQTTSpool.minimumLimit)
            let statistics = spool.statistics
            #expect(statistics.pendingBytes <= MQTTSpool.minimumLimit)
            // The segments were 256 KiB: even the newest had to go.
            #expect(statistics.dropped == 3000)
            #expect(statistics.pendingRecords == 0)
            #expect(try spool.append(kind: 1, payload: [1], unixMilliseconds: 0) == 3001)
            #expect(try spool.takeUnsent(max: 10).map(\.sequence) == [3001])
            spool.setLimit(1)
            #expect(spool.limitBytes == MQTTSpool.minimumLimit)
            try spool.sync()
        }
        let spool = try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit)
        #expect(spool.statistics.recovered == 1)
        #expect(try spool.append(kind: 1, payload: [2], unixMilliseconds: 0) == 3002)
    }

    @Test func aLowerLimitAtOpenDropsTheOldest() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        do {
            let spool = try MQTTSpool(directory: directory.path, limitBytes: 1 << 20)
            for index in 1...5000 { try spool.append(kind: 1, payload: payload(index, size: 74), unixMilliseconds: 0) }
            try spool.sync()
            #expect(spool.statistics.pendingBytes == 500_000)
        }
        let spool = try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit)
        let statistics = spool.statistics
        #expect(statistics.pendingBytes <= MQTTSpool.minimumLimit)
        #expect(statistics.pendingRecords > 0)
        #expect(statistics.dropped == 5000 - statistics.pendingRecords)
        #expect(statistics.recovered == 5000, "counted as found, then dropped")
        let records = try spool.takeUnsent(max: 10_000)
        #expect(records.first?.sequence == UInt64(statistics.dropped) + 1)
        #expect(records.last?.sequence == 5000)
        #expect(try spool.append(kind: 1, payload: [], unixMilliseconds: 0) == 5001)
    }

    @Test func sequencesContinueAfterEverythingWasAcknowledged() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        for round in 0..<3 {
            let spool = try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit)
            #expect(spool.statistics.recovered == 0)
            for index in 1...1000 {
                let sequence = try spool.append(kind: 1, payload: payload(index), unixMilliseconds: 0)
                #expect(sequence == UInt64(round * 1000 + index))
            }
            for record in try spool.takeUnsent(max: 1000) { spool.acknowledge(record.sequence) }
            try spool.checkpoint()
            #expect(spool.segments.count == 1, "only the newest segment is kept")
        }
        // Without the cursor file the newest segment's records come back (at least once), and the
        // sequences still continue.
        unlink(directory.file("cursor"))
        let spool = try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit)
        #expect(spool.statistics.recovered > 0)
        #expect(try spool.append(kind: 1, payload: [], unixMilliseconds: 0) == 3001)
    }

    @Test func whatWasSyncedSurvivesACrash() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        let spool = try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit)
        let now: Int64 = 0
        spool.monotonicMilliseconds = { now }
        for index in 1...1000 { try spool.append(kind: 2, payload: payload(index), unixMilliseconds: Int64(index)) }
        _ = try spool.takeUnsent(max: 10)
        for sequence in 1...10 { spool.acknowledge(UInt64(sequence)) }
        try spool.sync()
        #expect(spool.segments.count > 1)
        // The crash: the files as they are, no checkpoint; one more record half written.
        let copy = directory.parent + "/crashed"
        try copyDirectory(directory.path, to: copy)
        let newest = copy + "/" + spool.segments[spool.segments.count - 1].name
        try writeFile(newest, try readFile(newest) + Array(record(1001)[..<20]))

        let recovered = try MQTTSpool(directory: copy, limitBytes: MQTTSpool.minimumLimit)
        #expect(recovered.statistics.recovered == 1000, "the cursor was not written: sent again")
        #expect(recovered.statistics.damaged == 1)
        var records: [SpoolRecord] = []
        while recovered.hasUnsent { records += try recovered.takeUnsent(max: 100) }
        #expect(records.map(\.sequence) == (1...1000).map { UInt64($0) })
        #expect(records.allSatisfy { $0.payload == payload(Int($0.sequence)) && $0.kind == 2 })
        #expect(try recovered.append(kind: 1, payload: [], unixMilliseconds: 0) == 1001)
    }

    @Test func filesAreTheOwnersOnly() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        let spool = try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit)
        try spool.append(kind: 1, payload: [1], unixMilliseconds: 0)
        try spool.append(kind: 1, payload: [1], unixMilliseconds: 0)
        _ = try spool.takeUnsent(max: 1)
        spool.acknowledge(1)
        try spool.checkpoint()
        #expect(try PathStatus.of(directory.path).mode & 0o777 == 0o700)
        for name in fileNames(in: directory.path) {
            #expect(try PathStatus.of(directory.file(name)).mode & 0o777 == 0o600, "\(name)")
        }
        #expect(fileNames(in: directory.path) == ["0000000000000001.spool", "cursor"])
    }

    @Test func limitsAreEnforced() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        #expect(throws: SpoolError.self) { try MQTTSpool(directory: directory.path, limitBytes: (64 << 10) - 1) }
        let spool = try MQTTSpool(directory: directory.path, limitBytes: 64 << 10)
        #expect(spool.maximumPayload == 4096)
        try spool.append(kind: 1, payload: [UInt8](repeating: 1, count: 4096), unixMilliseconds: 0)
        let error = #expect(throws: SpoolError.self) {
            try spool.append(kind: 1, payload: [UInt8](repeating: 1, count: 4097), unixMilliseconds: 0)
        }
        #expect(error?.description.contains("4097") == true)
        #expect(spool.statistics.spooled == 1)
    }

    @Test func aSymbolicLinkIsRefused() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        let target = directory.parent + "/elsewhere"
        _ = mkdir(target, 0o700)
        _ = symlink(target, directory.path)
        let error = #expect(throws: SpoolError.self) {
            try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit)
        }
        #expect(error?.description.contains("symbolic link") == true, "\(String(describing: error))")
        #expect(fileNames(in: target).isEmpty)
    }

    @Test func anotherUsersDirectoryIsRefused() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        _ = mkdir(directory.path, 0o700)
        try #require(getuid() == 0, "needs root to give the directory away")
        let nobody = uid_t(65534)
        _ = try valueOrErrno { chown(directory.path, nobody, gid_t(65534)) }
        let error = #expect(throws: SpoolError.self) {
            try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit)
        }
        #expect(error?.description.contains("belongs to uid \(nobody)") == true, "\(String(describing: error))")
        #expect(fileNames(in: directory.path).isEmpty)
    }

    @Test func aDirectoryIsOpenedByOneSpoolAtATime() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        do {
            let spool = try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit)
            let error = #expect(throws: SpoolError.self) {
                try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit)
            }
            #expect(error?.description.contains("another spool") == true, "\(String(describing: error))")
            try spool.append(kind: 1, payload: [1], unixMilliseconds: 0)
            try spool.sync()
        }
        // Closed (the last reference gone): free again.
        #expect(try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit).statistics.recovered == 1)
    }

    @Test func aCorruptCursorFileMeansEverythingIsSentAgain() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        do {
            let spool = try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit)
            for index in 1...3 { try spool.append(kind: 1, payload: payload(index), unixMilliseconds: 0) }
            try spool.sync()
        }
        try writeFile(directory.file("cursor"), Array("garbage".utf8))
        let spool = try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit)
        #expect(spool.statistics.recovered == 3)
    }
}

@Suite("MQTTSpool bounded memory", .tags(.integration))
struct MQTTSpoolBoundedMemoryTests {
    /// 200 000 small records through a 64 KiB spool while acknowledged in batches (out of order):
    /// the index holds at most about two segments' records, nothing piles up in the sets.
    @Test func theIndexStaysBounded() throws {
        let directory = try SpoolDirectory()
        defer { directory.remove() }
        let spool = try MQTTSpool(directory: directory.path, limitBytes: MQTTSpool.minimumLimit)
        let recordSize = SpoolCodec.headerSize + 8
        let perSegment = spool.segmentSize / recordSize + 1
        var largestIndex = 0
        for index in 1...200_000 {
            try spool.append(kind: 1, payload: payload(index, size: 8), unixMilliseconds: Int64(index))
            if index % 100 == 0 {
                let records = try spool.takeUnsent(max: 1000)
                #expect(records.count == 100)
                for record in records.reversed() { spool.acknowledge(record.sequence) }
                largestIndex = max(largestIndex, spool.indexedRecordCount)
                #expect(spool.acknowledgedAhead.isEmpty)
                #expect(spool.inFlightCount == 0)
                #expect(spool.segments.count <= 2)
            }
        }
        #expect(largestIndex <= 2 * perSegment, "\(largestIndex) indexed, segments of \(perSegment)")
        let statistics = spool.statistics
        #expect(statistics.drained == 200_000)
        #expect(statistics.dropped == 0)
        #expect(statistics.pendingRecords == 0)
        #expect(statistics.pendingBytes <= spool.segmentSize + recordSize)
    }
}
