// The framer: a byte stream in any chunking in, CRC-checked RTCM 3 frames out.
//
// A caster's stream may start in the middle of a frame, a caster or a link may insert garbage, and
// a 0xD3 byte is as common inside a payload as anywhere else, so a preamble is only a candidate
// until the frame's CRC agrees. On a CRC failure the search starts again at the byte after the
// failed preamble, as RTKLIB's input_rtcm3 and gpsd's packet.c do: the real next frame may begin
// inside the bytes the false candidate claimed. Like gpsd, a candidate whose 6 reserved bits are
// not zero is no frame at all (RTCM 10403.x: "reserved ... shall be set to 0"), which rejects most
// false preambles before any CRC is computed.
//
// Memory: bytes wait in `window` only while they may still be part of a frame, and the window is
// filled at most up to one whole frame (1029 bytes), so it never holds more than that, whatever the
// caller appends at once.

/// Splits a byte stream into CRC-checked RTCM 3 frames.
///
/// Restartable over any chunking: appending a stream in pieces gives the same frames, in order, as
/// appending it whole. Every byte appended ends up in exactly one delivered frame, is counted in
/// `statistics.skippedBytes`, or is still held for a frame not yet complete (`bufferedCount`).
public struct RTCM3Framer: Sendable {
    /// What the framer found, for health and logs. Never reset by the framer itself.
    public struct Statistics: Equatable, Sendable {
        /// Frames delivered (their CRC was correct).
        public var frames = 0
        /// Candidate frames whose CRC failed: dropped, and the search resumed after their preamble.
        public var damagedFrames = 0
        /// Bytes that are in no delivered frame (garbage, and the bytes of damaged frames).
        public var skippedBytes = 0

        public init(frames: Int = 0, damagedFrames: Int = 0, skippedBytes: Int = 0) {
            self.frames = frames
            self.damagedFrames = damagedFrames
            self.skippedBytes = skippedBytes
        }
    }

    public private(set) var statistics = Statistics()

    /// Bytes that may still belong to a frame: empty, or a preamble and what followed it so far.
    private var window: [UInt8] = []

    public init() {
        window.reserveCapacity(RTCM3Frame.maximumFrameBytes)
    }

    /// Bytes held for a frame that has not been completed yet (at most one frame's worth).
    public var bufferedCount: Int { window.count }

    /// Frames `bytes`, appending each complete frame with a correct CRC to `frames`, in order.
    public mutating func append(_ bytes: Span<UInt8>, into frames: inout [RTCM3Frame]) {
        var next = 0
        while next < bytes.count {
            if window.isEmpty {
                // Outside any candidate: skip to the next preamble without copying.
                let start = next
                while next < bytes.count && bytes[next] != RTCM3Frame.preamble { next += 1 }
                statistics.skippedBytes += next - start
                if next == bytes.count { return }
            }
            // Top the window up to one whole frame at most, then take every frame out of it.
            let room = RTCM3Frame.maximumFrameBytes - window.count
            let end = min(bytes.count, next + room)
            for i in next..<end { window.append(bytes[i]) }
            next = end
            extractFrames(into: &frames)
        }
    }

    /// Delivers and drops every decided candidate at the front of the window; what is left is empty
    /// or one undecided candidate (a preamble and fewer bytes than its frame needs).
    private mutating func extractFrames(into frames: inout [RTCM3Frame]) {
        var start = 0
        while true {
            while start < window.count && window[start] != RTCM3Frame.preamble {
                start += 1
                statistics.skippedBytes += 1
            }
            let available = window.count - start
            if available < RTCM3Frame.headerBytes { break }
            if window[start + 1] & 0xFC != 0 {
                // Reserved bits set: this 0xD3 is no preamble.
                start += 1
                statistics.skippedBytes += 1
                continue
            }
            let length = Int(window[start + 1] & 0x03) << 8 | Int(window[start + 2])
            let total = RTCM3Frame.headerBytes + length + RTCM3Frame.crcBytes
            if available < total { break }
            let crcStart = start + total - RTCM3Frame.crcBytes
            if Self.crc24q(window.span.extracting(start..<crcStart)) == RTCM3Frame.bigEndian24(window, at: crcStart) {
                frames.append(RTCM3Frame(checked: Array(window[start..<(start + total)])))
                statistics.frames += 1
                start += total
            } else {
                statistics.damagedFrames += 1
                statistics.skippedBytes += 1
                start += 1
            }
        }
        window.removeFirst(start)
    }

    // MARK: CRC-24Q

    /// CRC-24Q (Qualcomm; RTCM 10403.x §4.2): polynomial 0x1864CFB, initial value 0, no reflection,
    /// no final XOR. Over a whole frame including its CRC the result is 0.
    public static func crc24q(_ bytes: Span<UInt8>) -> UInt32 {
        var crc: UInt32 = 0
        for i in bytes.indices {
            let index = Int((crc >> 16 ^ UInt32(bytes[i])) & 0xFF)
            crc = (crc << 8 ^ crc24qTable[index]) & 0xFF_FFFF
        }
        return crc
    }

    /// CRC-24Q of `bytes`.
    public static func crc24q(_ bytes: [UInt8]) -> UInt32 {
        crc24q(bytes.span)
    }

    /// The CRC-24Q of each byte value in the top position: a byte at a time instead of a bit.
    private static let crc24qTable: [UInt32] = (0..<256).map { (value: UInt32) in
        var crc = value << 16
        for _ in 0..<8 {
            crc = crc & 0x80_0000 != 0 ? crc << 1 ^ 0x86_4CFB : crc << 1
        }
        return crc & 0xFF_FFFF
    }
}
