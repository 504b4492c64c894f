// Client-to-server frame header decoding (RFC 6455 §5.2), as a pure, restartable function.
//
//      0                   1                   2                   3
//      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//     +-+-+-+-+-------+-+-------------+-------------------------------+
//     |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
//     |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
//     |N|V|V|V|       |S|             |   (if payload len==126/127)   |
//     | |1|2|3|       |K|             |                               |
//     +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
//     |     Extended payload length continued, if payload len == 127  |
//     + - - - - - - - - - - - - - - - +-------------------------------+
//     |                               |Masking-key, if MASK set to 1  |
//     +-------------------------------+-------------------------------+
//
// Every rule a header alone can break is checked here, as early as the bytes allow: RSV bits,
// opcode and MASK from the first two bytes, control-frame FIN and length from the 7-bit field,
// then the extended length. Rules that need connection state (continuation, message size) are
// the connection's.

/// The 32-bit masking key of a client frame, in wire order (byte 0 is the most significant).
public struct WebSocketMaskingKey: Hashable, Sendable {
    /// The four key bytes as one big-endian integer: `0x37FA213D` for key bytes 37 fa 21 3d.
    public let rawValue: UInt32

    /// Wraps a key read from the wire.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Key byte `index & 3`: the byte that masks payload byte `index` (§5.3: `j = i MOD 4`).
    @inline(__always)
    public subscript(_ index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: rawValue >> (24 - 8 * UInt32(index & 3)))
    }

    /// XORs `source` with the key into the end of `output`, as if `source` started at payload
    /// offset `offset` (so a payload split across reads unmasks piece by piece).
    ///
    /// Unmasking and masking are the same operation. One byte at a time: a word-at-a-time loop
    /// would need `RawSpan.unsafeLoad`, which this pure, `unsafe`-free target does not use; the
    /// payloads clients send to this server are small (pings, closes, short texts).
    public func apply(_ source: Span<UInt8>, payloadOffset offset: Int, appendingTo output: inout [UInt8]) {
        let count = source.count
        guard count > 0 else { return }
        let k0 = self[offset], k1 = self[offset + 1], k2 = self[offset + 2], k3 = self[offset + 3]
        output.append(addingCapacity: count) { out in
            var i = 0
            while i + 4 <= count {
                out.append(source[i] ^ k0)
                out.append(source[i + 1] ^ k1)
                out.append(source[i + 2] ^ k2)
                out.append(source[i + 3] ^ k3)
                i += 4
            }
            while i < count {
                out.append(source[i] ^ self[offset + i])
                i += 1
            }
        }
    }
}

/// The fixed part of a client frame, decoded without touching the payload.
public struct WebSocketFrameHeader: Hashable, Sendable {
    /// The longest header: 2 bytes, 8 of extended length, 4 of masking key.
    public static let maxLength = 14

    /// FIN: this is the final fragment of its message (always true for control frames).
    public var fin: Bool
    /// The frame's opcode (always a defined one after decoding).
    public var opcode: WebSocketOpcode
    /// The key that unmasks the payload.
    public var maskingKey: WebSocketMaskingKey
    /// Payload bytes that follow the header (at most the `maxPayloadLength` decoding allowed).
    public var payloadLength: Int
    /// Header bytes before the payload: 6, 8 or 14.
    public var headerLength: Int

    /// Result of decoding from the front of a buffer.
    public enum Decoding: Hashable, Sendable {
        /// The buffer ends inside the header; nothing was consumed. Call again with more bytes.
        case needMoreBytes
        /// A whole valid header; the payload starts at `headerLength`.
        case complete(WebSocketFrameHeader)
    }

    /// Decodes a client-to-server frame header from the front of `bytes`.
    ///
    /// Pure and restartable: it reads but never consumes, so after the next read the caller calls
    /// it again with the same bytes plus whatever arrived. A broken rule is reported as soon as
    /// the bytes that break it are present, even if the rest of the header has not arrived.
    ///
    /// - Parameters:
    ///   - bytes: received bytes, starting at a frame boundary.
    ///   - maxPayloadLength: the largest payload accepted (`WebSocketConnection.Configuration`).
    /// - Throws: the rule the header breaks; `closeCode` says how to close.
    public static func decodeClientFrame(
        _ bytes: Span<UInt8>, maxPayloadLength: Int
    ) throws(WebSocketProtocolError) -> Decoding {
        guard bytes.count >= 1 else { return .needMoreBytes }
        let b0 = bytes[0]
        // §5.2: "RSV1, RSV2, RSV3: 1 bit each. MUST be 0 unless an extension is negotiated that
        // defines meanings for non-zero values." We negotiate none.
        guard b0 & 0x70 == 0 else { throw .reservedBitsSet(b0 & 0x70) }
        let opcode = WebSocketOpcode(rawValue: b0 & 0x0F)
        // §5.2: "If an unknown opcode is received, the receiving endpoint MUST _Fail the
        // WebSocket Connection_."
        guard opcode.isDefined else { throw .unknownOpcode(opcode.rawValue) }
        let fin = b0 & 0x80 != 0
        // §5.5: "All control frames MUST have a payload length of 125 bytes or less and MUST NOT
        // be fragmented."
        if opcode.isControl && !fin { throw .fragmentedControlFrame }

        guard bytes.count >= 2 else { return .needMoreBytes }
        let b1 = bytes[1]
        // §5.1: "The server MUST close the connection upon receiving a frame that is not masked."
        guard b1 & 0x80 != 0 else { throw .unmaskedClientFrame }
        let length7 = b1 & 0x7F
        if opcode.isControl && length7 > 125 { throw .controlFrameTooLong }

        var offset = 2
        var length = UInt64(length7)
        if length7 >= 126 {
            let width = length7 == 126 ? 2 : 8
            guard bytes.count >= offset + width else { return .needMoreBytes }
            length = 0
            for i in offset..<(offset + width) { length = length << 8 | UInt64(bytes[i]) }
            offset += width
            // §5.2: "the most significant bit MUST be 0" (64-bit form).
            if width == 8 && length >> 63 != 0 { throw .lengthHighBitSet }
            // §5.2: "in all cases, the minimal number of bytes MUST be used to encode the length".
            guard length >= (width == 2 ? 126 : 0x1_0000) else { throw .nonMinimalLength }
        }
        guard length <= UInt64(max(0, maxPayloadLength)) else { throw .frameTooLarge(length) }

        guard bytes.count >= offset + 4 else { return .needMoreBytes }
        var key: UInt32 = 0
        for i in offset..<(offset + 4) { key = key << 8 | UInt32(bytes[i]) }
        return .complete(
            WebSocketFrameHeader(
                fin: fin, opcode: opcode, maskingKey: WebSocketMaskingKey(rawValue: key),
                payloadLength: Int(length), headerLength: offset + 4))
    }
}
