// The spool's on-disk record format and the recovery scan of a segment's bytes. Pure: this file
// imports nothing, so that Fuzz/run-spool.sh can build it alone with its harness.
//
// A record is a 26-byte header followed by the payload, all integers little-endian:
//
//   offset  size  field
//        0     1  magic 0xB5 (a zero-filled tail, as ext4 leaves after a power cut, never starts one)
//        1     1  kind (the caller's)
//        2     4  payload length (at most `SpoolCodec.maximumPayload`)
//        6     8  sequence
//       14     8  unixMilliseconds (signed)
//       22     4  CRC-32 (IEEE) of bytes 0..<22 and the payload
//       26     n  payload
//
// Within a segment the sequences are consecutive from the one in the file's name, so a record that
// passes its CRC but carries another sequence (a stale block, a file renamed by hand) ends the valid
// part as surely as a torn one: nothing after it can be trusted to be in order.

/// One stored message.
public struct SpoolRecord: Equatable, Sendable {
    /// Increasing across the spool's life; survives restarts.
    public let sequence: UInt64
    /// What it is (the caller's: 1 location, 2 event).
    public let kind: UInt8
    /// When it was made (for "oldest pending").
    public let unixMilliseconds: Int64
    public let payload: [UInt8]

    public init(sequence: UInt64, kind: UInt8, unixMilliseconds: Int64, payload: [UInt8]) {
        self.sequence = sequence
        self.kind = kind
        self.unixMilliseconds = unixMilliseconds
        self.payload = payload
    }
}

/// A record's header fields as read back (the payload stays where it is).
struct SpoolRecordHeader: Equatable {
    var kind: UInt8
    var payloadLength: Int
    var sequence: UInt64
    var unixMilliseconds: Int64
}

/// Where a record sits in a segment's bytes: what the spool keeps in memory per record (16 bytes),
/// instead of the payload.
struct SpoolIndexEntry: Equatable {
    /// Offset of the header in the segment (segments are far below 4 GiB).
    var offset: UInt32
    var payloadLength: UInt32
    var unixMilliseconds: Int64

    var recordLength: Int { SpoolCodec.headerSize + Int(payloadLength) }
}

/// What the recovery scan found in a segment's bytes.
struct SpoolScan: Equatable {
    /// The records of the valid part, in order; the i-th has sequence `firstSequence + i`.
    var entries: [SpoolIndexEntry] = []
    /// Bytes from the start that hold whole, checked records: the file is truncated to this.
    var validLength = 0
    /// The valid part ended before the bytes did (a torn or corrupt record, or garbage).
    var isDamaged: Bool = false
}

enum SpoolCodec {
    static let magic: UInt8 = 0xB5
    static let headerSize = 26
    /// The largest payload whatever the limit: one MQTT message of a fleet tracker is far smaller,
    /// and a corrupt length must not make the scan allocate or skip gigabytes.
    static let maximumPayload = 1 << 20

    /// The bytes of one record.
    static func encode(kind: UInt8, sequence: UInt64, unixMilliseconds: Int64, payload: [UInt8]) -> [UInt8] {
        precondition(payload.count <= maximumPayload, "payload over the maximum")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerSize + payload.count)
        bytes.append(magic)
        bytes.append(kind)
        appendLittleEndian(UInt64(payload.count), count: 4, to: &bytes)
        appendLittleEndian(sequence, count: 8, to: &bytes)
        appendLittleEndian(UInt64(bitPattern: unixMilliseconds), count: 8, to: &bytes)
        let crc = crc32(payload, startingWith: crc32(bytes[0..<22]))
        appendLittleEndian(UInt64(crc), count: 4, to: &bytes)
        bytes += payload
        return bytes
    }

    /// The header at `offset` if it is whole and plausible (magic, length within the maximum);
    /// the CRC is not checked here (it covers the payload).
    static func header(in bytes: ArraySlice<UInt8>, at offset: Int) -> SpoolRecordHeader? {
        guard offset >= bytes.startIndex, bytes.endIndex - offset >= headerSize else { return nil }
        guard bytes[offset] == magic else { return nil }
        let length = Int(littleEndian(bytes, at: offset + 2, count: 4))
        guard length <= maximumPayload else { return nil }
        return SpoolRecordHeader(
            kind: bytes[offset + 1], payloadLength: length, sequence: littleEndian(bytes, at: offset + 6, count: 8),
            unixMilliseconds: Int64(bitPattern: littleEndian(bytes, at: offset + 14, count: 8)))
    }

    /// The whole record at `offset` if its header is plausible, its payload is all there, its CRC
    /// matches and it carries `expectedSequence`.
    static func record(in bytes: ArraySlice<UInt8>, at offset: Int, expectedSequence: UInt64) -> SpoolRecordHeader? {
        guard let header = header(in: bytes, at: offset) else { return nil }
        let payloadStart = offset + headerSize
        guard bytes.endIndex - payloadStart >= header.payloadLength else { return nil }
        guard header.sequence == expectedSequence else { return nil }
        let stored = UInt32(littleEndian(bytes, at: offset + 22, count: 4))
        let computed = crc32(
            bytes[payloadStart..<(payloadStart + header.payloadLength)],
            startingWith: crc32(bytes[offset..<(offset + 22)]))
        guard stored == computed else { return nil }
        return header
    }

    /// The recovery scan: records from the start while each is whole and checked, and carries the
    /// next sequence from `firstSequence`. Never reads past `bytes`.
    static func scan(_ bytes: ArraySlice<UInt8>, firstSequence: UInt64) -> SpoolScan {
        var result = SpoolScan()
        var offset = bytes.startIndex
        var sequence = firstSequence
        // Offsets are stored as UInt32: a segment is never that long, but a file handed to the scan
        // might be.
        let end = min(bytes.endIndex, bytes.startIndex + Int(UInt32.max))
        while offset < end {
            guard let header = record(in: bytes[..<end], at: offset, expectedSequence: sequence) else { break }
            result.entries.append(
                SpoolIndexEntry(
                    offset: UInt32(offset - bytes.startIndex), payloadLength: UInt32(header.payloadLength),
                    unixMilliseconds: header.unixMilliseconds))
            offset += headerSize + header.payloadLength
            sequence &+= 1
        }
        result.validLength = offset - bytes.startIndex
        result.isDamaged = offset < bytes.endIndex
        return result
    }

    // MARK: - CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), the checksum of zlib and PNG

    static let crcTable: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        return crc
    }

    /// CRC-32 of `bytes`, continuing from `previous` (the CRC of what came before; 0 to start).
    static func crc32<Bytes: Collection<UInt8>>(_ bytes: Bytes, startingWith previous: UInt32 = 0) -> UInt32 {
        var crc = ~previous
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }

    // MARK: - Little-endian integers

    static func appendLittleEndian(_ value: UInt64, count: Int, to bytes: inout [UInt8]) {
        for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    static func littleEndian(_ bytes: ArraySlice<UInt8>, at offset: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<count { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        return value
    }
}
