// RFC 6455 §5.2 opcodes: a struct over the 4-bit wire value, not an enum, so every one of the
// 16 values can be represented (and rejected by name) while the six defined ones read well.

/// The 4-bit opcode of a WebSocket frame (RFC 6455 §5.2).
public struct WebSocketOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The wire value, 0x0...0xF.
    public let rawValue: UInt8

    /// Wraps a wire value; only the low four bits are kept.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue & 0x0F
    }

    /// 0x0: a continuation frame of a fragmented message.
    public static let continuation = WebSocketOpcode(rawValue: 0x0)
    /// 0x1: the first (or only) frame of a text message.
    public static let text = WebSocketOpcode(rawValue: 0x1)
    /// 0x2: the first (or only) frame of a binary message.
    public static let binary = WebSocketOpcode(rawValue: 0x2)
    /// 0x8: connection close.
    public static let close = WebSocketOpcode(rawValue: 0x8)
    /// 0x9: ping.
    public static let ping = WebSocketOpcode(rawValue: 0x9)
    /// 0xA: pong.
    public static let pong = WebSocketOpcode(rawValue: 0xA)

    /// Control frames are those with the high bit of the opcode set (0x8...0xF, §5.5).
    public var isControl: Bool { rawValue & 0x8 != 0 }

    /// Whether RFC 6455 defines this opcode (0x3-0x7 and 0xB-0xF are reserved).
    public var isDefined: Bool {
        switch rawValue {
        case 0x0...0x2, 0x8...0xA: true
        default: false
        }
    }

    public var description: String {
        switch rawValue {
        case 0x0: "continuation"
        case 0x1: "text"
        case 0x2: "binary"
        case 0x8: "close"
        case 0x9: "ping"
        case 0xA: "pong"
        default: "reserved(0x\(String(rawValue, radix: 16)))"
        }
    }
}
