/// Why a client's bytes broke RFC 6455: each case is named after the rule, and maps to the status
/// code the server sends in its Close frame before closing the connection.
public enum WebSocketProtocolError: Error, Hashable, Sendable {
    /// RSV1-3 not zero (no extension is ever negotiated). The bits as they appeared (0x70 mask).
    case reservedBitsSet(UInt8)
    /// Opcode 0x3-0x7 or 0xB-0xF.
    case unknownOpcode(UInt8)
    /// MASK bit clear on a client frame.
    case unmaskedClientFrame
    /// A control frame (close, ping, pong) with FIN clear.
    case fragmentedControlFrame
    /// A control frame whose payload length field exceeds 125.
    case controlFrameTooLong
    /// A 16-bit length below 126, or a 64-bit length below 65 536.
    case nonMinimalLength
    /// A 64-bit length with its most significant bit set.
    case lengthHighBitSet
    /// A frame whose payload is longer than `Configuration.maxFrameSize` (the declared length).
    case frameTooLarge(UInt64)
    /// A continuation frame with no fragmented message in progress.
    case unexpectedContinuation
    /// A text or binary frame while a fragmented message is still waiting for its continuation.
    case expectedContinuation
    /// A message that would grow past `Configuration.maxMessageSize` (the size it would reach).
    case messageTooLarge(Int)
    /// A text message that is not valid UTF-8 (found as soon as the first bad byte arrives).
    case invalidUTF8
    /// A Close frame with a one-byte body (a status code needs two).
    case closePayloadTooShort
    /// A Close frame with a status code that may not be sent (see `WebSocketCloseCode.isValidOnWire`).
    case invalidCloseCode(UInt16)
    /// A Close frame whose reason is not valid UTF-8.
    case invalidCloseReason

    /// The status code to send in the Close frame that fails the connection.
    public var closeCode: WebSocketCloseCode {
        switch self {
        case .reservedBitsSet, .unknownOpcode, .unmaskedClientFrame, .fragmentedControlFrame, .controlFrameTooLong,
            .nonMinimalLength, .lengthHighBitSet, .unexpectedContinuation, .expectedContinuation,
            .closePayloadTooShort, .invalidCloseCode:
            .protocolError
        case .frameTooLarge, .messageTooLarge:
            .messageTooBig
        case .invalidUTF8, .invalidCloseReason:
            .invalidPayloadData
        }
    }

    /// A short ASCII reason for the Close frame and logs (well under the 123-byte limit).
    public var reason: String {
        switch self {
        case .reservedBitsSet: "reserved bits set"
        case .unknownOpcode(let opcode): "unknown opcode \(opcode)"
        case .unmaskedClientFrame: "client frame not masked"
        case .fragmentedControlFrame: "fragmented control frame"
        case .controlFrameTooLong: "control frame longer than 125 bytes"
        case .nonMinimalLength: "payload length not minimally encoded"
        case .lengthHighBitSet: "64-bit payload length has its high bit set"
        case .frameTooLarge(let length): "frame of \(length) bytes is too large"
        case .unexpectedContinuation: "continuation frame without a message"
        case .expectedContinuation: "new message inside a fragmented message"
        case .messageTooLarge(let size): "message of \(size) bytes is too large"
        case .invalidUTF8: "text message is not valid UTF-8"
        case .closePayloadTooShort: "close frame body of one byte"
        case .invalidCloseCode(let code): "invalid close code \(code)"
        case .invalidCloseReason: "close reason is not valid UTF-8"
        }
    }
}
