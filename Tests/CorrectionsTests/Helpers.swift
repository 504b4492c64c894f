import Corrections
import TestSupport
import Testing

/// The UTF-8 bytes of `text`.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// The bytes spelled by hex pairs, spaces ignored ("D3 00 13 ...").
func hex(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }
    precondition(digits.count % 2 == 0, "odd hex digit count")
    var out: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        out.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return out
}

/// A frame around `payload` (at most 1023 bytes) with TestSupport's bit-at-a-time CRC.
func makeFrame(_ payload: [UInt8]) -> [UInt8] { makeRTCMFrame(payload) }

/// A payload whose first 12 bits are `messageNumber`, then `stationID` (12 bits), then `filler`
/// bytes up to `length`.
func payload(
    message messageNumber: Int, station stationID: Int = 0, length: Int = 19, filler: UInt8 = 0x5A
)
    -> [UInt8]
{
    precondition(length >= 3)
    var bytes = [
        UInt8(messageNumber >> 4), UInt8((messageNumber & 0xF) << 4 | stationID >> 8), UInt8(stationID & 0xFF),
    ]
    bytes += Array(repeating: filler, count: length - 3)
    return bytes
}

/// Known frames from public sources, with what they hold.
enum KnownFrames {
    /// RTCM 10403.2 §4.2's example: message 1005, reference station 2003 (as quoted by gnss-sdr's
    /// rtcm_printer tests and gps_pvt's rtcm3 spec).
    static let standard1005 = hex("D3 00 13 3E D7 D3 02 02 98 0E DE EF 34 B4 BD 62 AC 09 41 98 6F 33 36 0B 98")
    /// pyrtcm's README and test suite: message 1005, reference station 0.
    static let pyrtcm1005 = hex("D3 00 13 3E D0 00 03 8A 58 D9 49 3C 87 2F 34 10 9D 07 D6 AF 48 20 5A D7 F7")
    /// pyrtcm's stream test: message 1007 (antenna descriptor "ABC"), station 1234.
    static let pyrtcm1007 = hex("D3 00 08 3E F4 D2 03 41 42 43 EA 70 6F C7")
    /// pyrtcm's stream test: message 1065 (SSR GLONASS clock).
    static let pyrtcm1065 = hex("D3 00 12 42 91 81 C9 84 00 04 42 B8 88 00 38 80 09 D0 46 00 28 F0 6B 66")
}

/// Every frame `stream` yields when appended in pieces ending at `splits`.
func frames(
    of stream: [UInt8], splits: [Int] = []
) -> (frames: [RTCM3Frame], statistics: RTCM3Framer.Statistics, buffered: Int) {
    var framer = RTCM3Framer()
    var out: [RTCM3Frame] = []
    var start = 0
    for end in splits + [stream.count] where end >= start {
        let piece = Array(stream[start..<end])
        framer.append(piece.span, into: &out)
        start = end
    }
    return (out, framer.statistics, framer.bufferedCount)
}

let second: Int64 = 1_000_000_000
