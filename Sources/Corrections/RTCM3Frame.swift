// RTCM 3 transport frames (RTCM 10403.x §4): what an NTRIP caster streams and what the receiver
// takes. The bridge never decodes a message; it checks each frame's CRC so that a receiver is never
// handed a damaged one, and it reads the two numbers an operator wants to see (the message number,
// and the reference station from the messages that carry it: 1005/1006, observables, MSM).
//
//   byte 0      preamble 0xD3
//   bytes 1-2   6 reserved bits (0) and the 10-bit payload length, 0...1023
//   payload     `length` bytes; its first 12 bits are the message number
//   last 3      CRC-24Q over everything before it, big-endian

/// One RTCM 3 frame, exactly as received: preamble, header, payload and CRC (never changed).
public struct RTCM3Frame: Equatable, Sendable {
    /// The preamble byte every frame starts with.
    public static let preamble: UInt8 = 0xD3
    /// Preamble and the two header bytes.
    public static let headerBytes = 3
    /// The CRC-24Q after the payload.
    public static let crcBytes = 3
    /// The 10-bit length field's largest value.
    public static let maximumPayloadBytes = 1023
    /// The longest frame: header, 1023 payload bytes, CRC.
    public static let maximumFrameBytes = headerBytes + maximumPayloadBytes + crcBytes

    /// The whole frame.
    public let bytes: [UInt8]

    /// A frame the framer has checked (preamble, reserved bits, length and CRC).
    init(checked bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// `bytes` as a frame if it is exactly one well-formed frame: preamble, zero reserved bits, a
    /// length that matches the byte count, and a correct CRC-24Q.
    public init?(validating bytes: [UInt8]) {
        guard bytes.count >= Self.headerBytes + Self.crcBytes, bytes[0] == Self.preamble, bytes[1] & 0xFC == 0
        else { return nil }
        let length = Int(bytes[1] & 0x03) << 8 | Int(bytes[2])
        guard bytes.count == Self.headerBytes + length + Self.crcBytes else { return nil }
        let crcStart = bytes.count - Self.crcBytes
        guard RTCM3Framer.crc24q(bytes.span.extracting(0..<crcStart)) == Self.bigEndian24(bytes, at: crcStart) else {
            return nil
        }
        self.bytes = bytes
    }

    /// Bytes in the payload (the length field).
    public var payloadLength: Int { bytes.count - Self.headerBytes - Self.crcBytes }

    /// The message number: the payload's first 12 bits (DF002); 0 when the payload is shorter.
    public var messageNumber: Int {
        guard payloadLength >= 2 else { return 0 }
        return Int(bytes[3]) << 4 | Int(bytes[4]) >> 4
    }

    /// The reference station id (DF003: the 12 bits after the message number) of a message that
    /// carries it there: the station's ARP (1005, 1006), the RTK observables (1001-1004 GPS,
    /// 1009-1012 GLONASS), every MSM (1071-1137) and GLONASS biases (1230); else nil. Receivers
    /// report the station of the observations they use; taking it from the observations too
    /// names it within the first second, where 1005/1006 come only every 5-10 s.
    public var referenceStationID: Int? {
        guard Self.carriesStationFirst(messageNumber), payloadLength >= 3 else { return nil }
        return Int(bytes[4] & 0x0F) << 8 | Int(bytes[5])
    }

    /// Messages whose DF003 follows the message number (RTCM 10403.3, 3.5).
    static func carriesStationFirst(_ message: Int) -> Bool {
        switch message {
        case 1001...1006, 1009...1012, 1071...1137, 1230: true
        default: false
        }
    }

    /// The 24-bit big-endian number at `index`.
    static func bigEndian24(_ bytes: [UInt8], at index: Int) -> UInt32 {
        UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
    }
}
