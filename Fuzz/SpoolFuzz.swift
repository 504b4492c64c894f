// libFuzzer target for the MQTT spool's recovery scan (Sources/Fleet/SpoolRecord.swift): the bytes
// of an arbitrary segment file, as a crash, a power cut or a bad disk may leave them.
//
// Built by Fuzz/run-spool.sh into ONE module, named Fleet, from that file and this harness (it
// imports nothing):
//
//   swiftc -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
//       -module-name Fleet Sources/Fleet/SpoolRecord.swift Fuzz/SpoolFuzz.swift -o Fuzz/build/spool-fuzz
//
// Per input (the segment's first sequence is taken from the first header's sequence field, so that
// the first record can pass), and again with every candidate record's sequence and CRC repaired
// (`repairing`, so that mutations reach the records after the first instead of only failing CRCs):
// 1. The scan never traps and never reads past the input (AddressSanitizer and Swift's bounds
//    checks); its valid part is a prefix of the input, and it is damaged exactly when shorter.
// 2. The records it found tile the valid part: the first at 0, each where the one before ended;
//    each one, encoded again from its decoded fields and payload, is the very bytes of the input;
//    their sequences are consecutive from the first.
// 3. Scanning only the valid part finds the same records, undamaged; scanning the input as a slice
//    of a bigger array (a start index other than 0) finds the same.
// 4. A byte-at-a-time reference scan written here (bitwise CRC-32) finds the same valid length.
// 5. The table CRC agrees with the bitwise one on the input.
//
// Any Swift runtime trap, AddressSanitizer report or failed `check` is a crash for libFuzzer, which
// writes the reproducer to Fuzz/build/spool-crash-<sha1>.

@inline(never)
func violation(_ message: String, _ line: UInt = #line) -> Never {
    fatalError("SpoolFuzz invariant violated (SpoolFuzz.swift:\(line)): \(message)")
}

@inline(__always)
func check(_ condition: Bool, _ message: @autoclosure () -> String, _ line: UInt = #line) {
    if !condition { violation(message(), line) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let first = firstSequence(input)
    fuzzScan(input, first: first)
    let repaired = repairing(input, first: first)
    if repaired != input { fuzzScan(repaired, first: first) }
    check(SpoolCodec.crc32(input) == bitwiseCRC32(input[...]), "table and bitwise CRC differ")
    return 0
}

/// The sequence field of the first header (wherever it is plausible or not), else 1.
func firstSequence(_ input: [UInt8]) -> UInt64 {
    guard input.count >= 14 else { return 1 }
    return readLittleEndian(input[...], at: 6, count: 8)
}

func fuzzScan(_ input: [UInt8], first: UInt64) {
    let scan = SpoolCodec.scan(input[...], firstSequence: first)
    check(scan.validLength >= 0 && scan.validLength <= input.count, "valid length \(scan.validLength)")
    check(scan.isDamaged == (scan.validLength < input.count), "damaged flag")

    var expectedOffset = 0
    for (index, entry) in scan.entries.enumerated() {
        let offset = Int(entry.offset)
        check(offset == expectedOffset, "record \(index) at \(offset), expected \(expectedOffset)")
        let end = offset + entry.recordLength
        check(end <= scan.validLength, "record \(index) ends past the valid part")
        check(Int(entry.payloadLength) <= SpoolCodec.maximumPayload, "payload over the maximum")
        guard let header = SpoolCodec.header(in: input[...], at: offset) else { violation("no header at \(offset)") }
        let sequence = first &+ UInt64(index)
        check(header.sequence == sequence, "sequence \(header.sequence), expected \(sequence)")
        check(header.unixMilliseconds == entry.unixMilliseconds, "time")
        let encoded = SpoolCodec.encode(
            kind: header.kind, sequence: sequence, unixMilliseconds: header.unixMilliseconds,
            payload: Array(input[(offset + SpoolCodec.headerSize)..<end]))
        check(encoded[...] == input[offset..<end], "record \(index) does not encode to its bytes")
        expectedOffset = end
    }
    check(expectedOffset == scan.validLength, "the records do not end at the valid length")

    let prefix = SpoolCodec.scan(input[..<scan.validLength], firstSequence: first)
    check(prefix.entries == scan.entries && !prefix.isDamaged, "the valid part alone scans differently")
    let padded = [0xEE, 0xB5, 0x00] + input
    check(SpoolCodec.scan(padded[3...], firstSequence: first) == scan, "a slice not at 0 scans differently")

    check(referenceValidLength(input, first: first) == scan.validLength, "the reference scan differs")
}

/// The format, a byte at a time, from its description (SpoolRecord.swift's header comment).
func referenceValidLength(_ input: [UInt8], first: UInt64) -> Int {
    var offset = 0
    var sequence = first
    while input.count - offset >= 26 {
        guard input[offset] == 0xB5 else { break }
        let length = Int(readLittleEndian(input[...], at: offset + 2, count: 4))
        guard length <= 1 << 20, input.count - offset - 26 >= length else { break }
        guard readLittleEndian(input[...], at: offset + 6, count: 8) == sequence else { break }
        let covered = input[offset..<(offset + 22)] + input[(offset + 26)..<(offset + 26 + length)]
        guard UInt32(readLittleEndian(input[...], at: offset + 22, count: 4)) == bitwiseCRC32(covered[...]) else {
            break
        }
        offset += 26 + length
        sequence &+= 1
    }
    return offset
}

/// `input` with the sequence and CRC of each plausible record (found as the reference walks) set
/// right, until the first that is not.
func repairing(_ input: [UInt8], first: UInt64) -> [UInt8] {
    var out = input
    var offset = 0
    var sequence = first
    while out.count - offset >= 26, out[offset] == 0xB5 {
        let length = Int(readLittleEndian(out[...], at: offset + 2, count: 4))
        guard length <= 1 << 20, out.count - offset - 26 >= length else { break }
        for index in 0..<8 { out[offset + 6 + index] = UInt8(truncatingIfNeeded: sequence >> (8 * UInt64(index))) }
        let covered = out[offset..<(offset + 22)] + out[(offset + 26)..<(offset + 26 + length)]
        let crc = bitwiseCRC32(covered[...])
        for index in 0..<4 { out[offset + 22 + index] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(index))) }
        offset += 26 + length
        sequence &+= 1
    }
    return out
}

func bitwiseCRC32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}

func readLittleEndian(_ bytes: ArraySlice<UInt8>, at offset: Int, count: Int) -> UInt64 {
    var value: UInt64 = 0
    for index in 0..<count { value |= UInt64(bytes[bytes.startIndex + offset + index]) << (8 * UInt64(index)) }
    return value
}
