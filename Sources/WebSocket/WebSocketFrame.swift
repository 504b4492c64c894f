// Server-to-client frame encoding (RFC 6455 §5.2): never masked, never with RSV bits, the length in
// its minimal form. Positions go out as one unfragmented text frame each, encoded once and shared
// by every client (the hub queues the same array to all of them).

/// Encodes server-to-client frames.
public enum WebSocketFrame {
    /// The longest payload a control frame may carry (§5.5).
    public static let maxControlPayload = 125
    /// The longest reason a Close frame can carry: the control limit minus the 2-byte code.
    public static let maxCloseReason = maxControlPayload - 2

    /// Header bytes for a server frame with `payloadLength` bytes: 2, 4 or 10.
    public static func headerLength(payloadLength: Int) -> Int {
        payloadLength < 126 ? 2 : payloadLength <= 0xFFFF ? 4 : 10
    }

    /// Appends the header of an unmasked frame to `buffer`.
    ///
    /// - Precondition: `payloadLength >= 0`; control frames are final and at most 125 bytes.
    public static func appendHeader(
        opcode: WebSocketOpcode, payloadLength: Int, fin: Bool = true, to buffer: inout [UInt8]
    ) {
        precondition(payloadLength >= 0, "negative payload length")
        precondition(
            !opcode.isControl || (fin && payloadLength <= maxControlPayload),
            "control frames are final and carry at most 125 bytes (RFC 6455 §5.5)")
        precondition(opcode.isDefined, "reserved opcode \(opcode)")
        buffer.append((fin ? 0x80 : 0) | opcode.rawValue)
        // §5.1: "A server MUST NOT mask any frames that it sends to the client." MASK stays 0.
        if payloadLength < 126 {
            buffer.append(UInt8(payloadLength))
        } else if payloadLength <= 0xFFFF {
            buffer.append(126)
            buffer.append(UInt8(truncatingIfNeeded: payloadLength >> 8))
            buffer.append(UInt8(truncatingIfNeeded: payloadLength))
        } else {
            buffer.append(127)
            let length = UInt64(payloadLength)  // Int is 64-bit here, so the top bit is 0
            for shift in stride(from: 56, through: 0, by: -8) {
                buffer.append(UInt8(truncatingIfNeeded: length >> UInt64(shift)))
            }
        }
    }

    /// One whole frame: header plus `payload`, in a single array sized exactly.
    public static func encode(opcode: WebSocketOpcode, payload: Span<UInt8>, fin: Bool = true) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(headerLength(payloadLength: payload.count) + payload.count)
        appendHeader(opcode: opcode, payloadLength: payload.count, fin: fin, to: &frame)
        frame.append(addingCapacity: payload.count) { out in
            for i in payload.indices { out.append(payload[i]) }
        }
        return frame
    }

    /// A single, final text frame. The caller guarantees `utf8` is valid UTF-8 (§5.6).
    public static func text(_ utf8: Span<UInt8>) -> [UInt8] {
        encode(opcode: .text, payload: utf8)
    }

    /// A single, final text frame holding `string`.
    public static func text(_ string: String) -> [UInt8] {
        let bytes = Array(string.utf8)
        return encode(opcode: .text, payload: bytes.span)
    }

    /// A single, final binary frame.
    public static func binary(_ payload: Span<UInt8>) -> [UInt8] {
        encode(opcode: .binary, payload: payload)
    }

    /// A ping. - Precondition: at most 125 bytes.
    public static func ping(_ payload: Span<UInt8>) -> [UInt8] {
        encode(opcode: .ping, payload: payload)
    }

    /// A pong. - Precondition: at most 125 bytes.
    public static func pong(_ payload: Span<UInt8>) -> [UInt8] {
        encode(opcode: .pong, payload: payload)
    }

    /// A Close frame: no body when `code` is nil, else the 2-byte code and `reason`, cut at a
    /// character boundary to fit 123 bytes.
    ///
    /// - Precondition: `code` may be sent (`isValidOnWire`); 1005, 1006 and 1015 may not.
    public static func close(code: WebSocketCloseCode?, reason: String = "") -> [UInt8] {
        guard let code else { return [0x88, 0x00] }
        // §7.4.1: 1005, 1006 and 1015 "MUST NOT be set as a status code in a Close control frame".
        precondition(code.isValidOnWire, "close code \(code) may not be sent (RFC 6455 §7.4)")
        var payload: [UInt8] = [
            UInt8(truncatingIfNeeded: code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue),
        ]
        var reasonBytes = 0
        for scalar in reason.unicodeScalars {
            let width = UTF8.width(scalar)
            guard reasonBytes + width <= maxCloseReason else { break }
            payload.append(contentsOf: String(scalar).utf8)
            reasonBytes += width
        }
        return encode(opcode: .close, payload: payload.span)
    }
}
