// libFuzzer target for the RTCM 3 framer (Sources/Corrections: RTCM3Frame.swift, RTCM3Framer.swift).
//
// Built by Fuzz/run-rtcm.sh into ONE module, named Corrections, from those two files and this
// harness (they import nothing):
//
//   swiftc -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
//       -module-name Corrections Sources/Corrections/RTCM3Frame.swift \
//       Sources/Corrections/RTCM3Framer.swift Fuzz/RTCMFuzz.swift -o Fuzz/build/rtcm-fuzz
//
// Per input, and again with every candidate frame's CRC repaired (`repairingCRCs`, so that
// mutations inside a frame reach the delivering paths instead of only failing the CRC):
// 1. The framer is fed the input whole (the reference), in two pieces split at a point derived
//    from the first byte, in pieces of sizes drawn from the input, and (inputs up to 1 KiB) one
//    byte at a time. All must deliver the same frames and end with the same statistics and the
//    same bytes held.
// 2. A byte-at-a-time reference framer written here from the standard (bitwise CRC-24Q, resync
//    at the byte after a failed preamble, reserved bits zero) must find the same frames, the same
//    damaged count and hold the same bytes.
// 3. Accounting and bounds: every byte is in a delivered frame, counted skipped, or held, and at
//    most one frame's worth (1029 bytes) is ever held; each frame is a contiguous run of the
//    input, in input order, validates with `RTCM3Frame(validating:)`, and its CRC-24Q over the
//    whole frame is 0; its message number and station id agree with the bits.
// 4. The byte table CRC agrees with the bitwise one on the input.
//
// Any Swift runtime trap, AddressSanitizer report or failed `check` is a crash for libFuzzer,
// which writes the reproducer to Fuzz/build/rtcm-crash-<sha1>.

@inline(never)
func violation(_ message: String, _ line: UInt = #line) -> Never {
    fatalError("RTCMFuzz invariant violated (RTCMFuzz.swift:\(line)): \(message)")
}

@inline(__always)
func check(_ condition: Bool, _ message: @autoclosure () -> String, _ line: UInt = #line) {
    if !condition { violation(message(), line) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    fuzzFramer(input)
    let repaired = repairingCRCs(input)
    if repaired != input { fuzzFramer(repaired) }
    check(RTCM3Framer.crc24q(input.span) == bitwiseCRC24Q(input[...]), "table and bitwise CRC differ")
    return 0
}

/// What a framer run gives.
struct Run: Equatable {
    var frames: [[UInt8]] = []
    var statistics = RTCM3Framer.Statistics()
    var buffered = 0
}

/// The framer fed `input` in pieces ending at `splits`.
func run(_ input: [UInt8], splits: [Int]) -> Run {
    var framer = RTCM3Framer()
    var frames: [RTCM3Frame] = []
    var start = 0
    for end in splits + [input.count] where end >= start {
        let piece = Array(input[start..<end])
        framer.append(piece.span, into: &frames)
        check(framer.bufferedCount <= RTCM3Frame.maximumFrameBytes, "\(framer.bufferedCount) bytes held")
        start = end
    }
    return Run(frames: frames.map(\.bytes), statistics: framer.statistics, buffered: framer.bufferedCount)
}

func fuzzFramer(_ input: [UInt8]) {
    let whole = run(input, splits: [])
    let split = input.isEmpty ? 0 : Int(input[0]) * (input.count + 1) / 256
    let halves = run(input, splits: [split])
    check(halves == whole, "split at \(split): \(halves.frames.count) frames, whole: \(whole.frames.count)")
    var splits: [Int] = []
    var position = 0
    var k = 0
    while position < input.count {
        position += 1 + Int(input[k % input.count]) % 97
        splits.append(min(position, input.count))
        k += 1
    }
    check(run(input, splits: splits) == whole, "pieces from the input's bytes differ")
    if input.count <= 1024 {
        check(run(input, splits: Array(0..<input.count)) == whole, "one byte at a time differs")
    }

    let reference = referenceFrames(input)
    check(
        reference.frames == whole.frames,
        "the reference found \(reference.frames.count), the framer \(whole.frames.count)")
    check(
        reference.damaged == whole.statistics.damagedFrames,
        "damaged: \(reference.damaged) vs \(whole.statistics.damagedFrames)")
    check(reference.held == whole.buffered, "held: \(reference.held) vs \(whole.buffered)")

    let framed = whole.frames.reduce(0) { $0 + $1.count }
    check(framed + whole.statistics.skippedBytes + whole.buffered == input.count, "bytes unaccounted for")
    check(whole.statistics.frames == whole.frames.count, "frame count")
    var searchFrom = 0
    for bytes in whole.frames {
        guard let at = find(bytes, in: input, from: searchFrom) else { violation("a frame is not a run of the input") }
        searchFrom = at + bytes.count
        guard let frame = RTCM3Frame(validating: bytes) else { violation("a delivered frame does not validate") }
        check(RTCM3Framer.crc24q(bytes) == 0, "CRC over a whole frame is not 0")
        check(bytes.count >= 6 && bytes.count <= RTCM3Frame.maximumFrameBytes, "frame of \(bytes.count) bytes")
        let number = bytes.count >= 8 ? Int(bytes[3]) << 4 | Int(bytes[4]) >> 4 : 0
        check(frame.messageNumber == number, "message number")
        if let station = frame.referenceStationID {
            check(number == 1005 || number == 1006, "station id of a \(number)")
            check(station == Int(bytes[4] & 0x0F) << 8 | Int(bytes[5]), "station id bits")
        }
    }
}

/// The standard's framing, a byte at a time, with the bitwise CRC.
func referenceFrames(_ input: [UInt8]) -> (frames: [[UInt8]], damaged: Int, held: Int) {
    var frames: [[UInt8]] = []
    var damaged = 0
    var i = 0
    while i < input.count {
        guard input[i] == 0xD3 else {
            i += 1
            continue
        }
        guard i + 3 <= input.count else { return (frames, damaged, input.count - i) }
        guard input[i + 1] & 0xFC == 0 else {
            i += 1
            continue
        }
        let total = (Int(input[i + 1] & 0x03) << 8 | Int(input[i + 2])) + 6
        guard i + total <= input.count else { return (frames, damaged, input.count - i) }
        let crc = UInt32(input[i + total - 3]) << 16 | UInt32(input[i + total - 2]) << 8 | UInt32(input[i + total - 1])
        if bitwiseCRC24Q(input[i..<(i + total - 3)]) == crc {
            frames.append(Array(input[i..<(i + total)]))
            i += total
        } else {
            damaged += 1
            i += 1
        }
    }
    return (frames, damaged, 0)
}

/// `input` with the CRC of every candidate frame (found as the reference scans) set right.
func repairingCRCs(_ input: [UInt8]) -> [UInt8] {
    var out = input
    var i = 0
    while i + 3 <= out.count {
        guard out[i] == 0xD3, out[i + 1] & 0xFC == 0 else {
            i += 1
            continue
        }
        let total = (Int(out[i + 1] & 0x03) << 8 | Int(out[i + 2])) + 6
        guard i + total <= out.count else { break }
        let crc = bitwiseCRC24Q(out[i..<(i + total - 3)])
        out[i + total - 3] = UInt8(truncatingIfNeeded: crc >> 16)
        out[i + total - 2] = UInt8(truncatingIfNeeded: crc >> 8)
        out[i + total - 1] = UInt8(truncatingIfNeeded: crc)
        i += total
    }
    return out
}

func bitwiseCRC24Q(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    var crc: UInt32 = 0
    for byte in bytes {
        crc ^= UInt32(byte) << 16
        for _ in 0..<8 {
            crc <<= 1
            if crc & 0x100_0000 != 0 { crc ^= 0x186_4CFB }
        }
    }
    return crc & 0xFF_FFFF
}

func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard needle.count <= haystack.count else { return nil }
    var i = start
    while i + needle.count <= haystack.count {
        if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        i += 1
    }
    return nil
}
