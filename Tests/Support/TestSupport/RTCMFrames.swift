// RTCM 3 frames for tests, made independently of the Corrections target's framer: the CRC a bit
// at a time, as RTCM 10403.x §4.2 describes it, where the framer uses a byte table. One home for
// the test side (the fuzzers keep their own oracle: they are built from sources alone).

/// CRC-24Q (polynomial 0x1864CFB) over `bytes`, computed a bit at a time.
public func bitwiseCRC24Q(_ bytes: some Sequence<UInt8>) -> UInt32 {
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

/// A frame around `payload` (at most 1023 bytes): preamble 0xD3, six zero bits and the 10-bit
/// length, the payload, and its `bitwiseCRC24Q`.
public func makeRTCMFrame(_ payload: [UInt8]) -> [UInt8] {
    precondition(payload.count <= 1023, "an RTCM 3 payload is at most 1023 bytes")
    var frame: [UInt8] = [0xD3, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload
    let crc = bitwiseCRC24Q(frame)
    frame += [UInt8(crc >> 16), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
    return frame
}
