// Shared helpers: a reference SHA-1 (tests only; production hashes with OpenSSL), a client frame
// builder that can also break every rule on purpose, and a driver that feeds a connection in any
// chunking and collects its actions.
import TestSupport
import WebSocket

/// Bytes from a hex string such as "81 85 37 fa" (spaces optional).
func hex(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }
    precondition(digits.count % 2 == 0, "odd hex string")
    var bytes: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        bytes.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

/// `UTF8Validator.isValid` over an array (`#expect` cannot capture a `Span` argument).
func isValidUTF8(_ bytes: [UInt8]) -> Bool {
    UTF8Validator.isValid(bytes.span)
}

/// Lower-case hex of `bytes`, for readable failures.
func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
}

// MARK: - SHA-1 (FIPS 180-4), straightforward and slow, for the handshake tests only

func referenceSHA1(_ message: [UInt8]) -> [UInt8] {
    var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
    var data = message
    let bitLength = UInt64(message.count) * 8
    data.append(0x80)
    while data.count % 64 != 56 { data.append(0) }
    for shift in stride(from: 56, through: 0, by: -8) {
        data.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
    }
    var w = [UInt32](repeating: 0, count: 80)
    for block in stride(from: 0, to: data.count, by: 64) {
        for t in 0..<16 {
            let i = block + 4 * t
            w[t] = UInt32(data[i]) << 24 | UInt32(data[i + 1]) << 16 | UInt32(data[i + 2]) << 8 | UInt32(data[i + 3])
        }
        for t in 16..<80 {
            let x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]
            w[t] = x << 1 | x >> 31
        }
        var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
        for t in 0..<80 {
            let f: UInt32, k: UInt32
            switch t {
            case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
            case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
            case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
            default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
            }
            let temp = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[t]
            (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, temp)
        }
        h[0] &+= a
        h[1] &+= b
        h[2] &+= c
        h[3] &+= d
        h[4] &+= e
    }
    return h.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * UInt32($0))) } }
}

/// `referenceSHA1` in the shape `WebSocketHandshake` asks for.
func testSHA1(_ bytes: Span<UInt8>) -> WebSocketHandshake.SHA1Digest {
    var copy: [UInt8] = []
    for i in bytes.indices { copy.append(bytes[i]) }
    let digest = referenceSHA1(copy)
    var out = WebSocketHandshake.SHA1Digest(repeating: 0)
    for i in 0..<20 { out[i] = digest[i] }
    return out
}

// MARK: - Client frames

/// How to write the payload length of a test frame.
enum LengthForm {
    /// The RFC's required minimal form.
    case minimal
    /// Always the 16-bit form (non-minimal below 126).
    case sixteen
    /// Always the 64-bit form (non-minimal below 65 536).
    case sixtyFour
}

/// The RFC 6455 §5.7 example key.
let exampleKey: UInt32 = 0x37FA_213D

/// A client-to-server frame: masked with `key` unless `masked` is false.
func clientFrame(
    _ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, masked: Bool = true,
    key: UInt32 = exampleKey, length: LengthForm = .minimal, declaredLength: UInt64? = nil
) -> [UInt8] {
    var frame: [UInt8] = [(fin ? 0x80 : 0) | rsv | opcode]
    let maskBit: UInt8 = masked ? 0x80 : 0
    let n = declaredLength ?? UInt64(payload.count)
    switch length {
    case .minimal where n < 126:
        frame.append(maskBit | UInt8(n))
    case .sixteen:
        frame.append(maskBit | 126)
        frame += [UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
    case .minimal where n <= 0xFFFF:
        frame.append(maskBit | 126)
        frame += [UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
    default:
        frame.append(maskBit | 127)
        for shift in stride(from: 56, through: 0, by: -8) {
            frame.append(UInt8(truncatingIfNeeded: n >> UInt64(shift)))
        }
    }
    guard masked else { return frame + payload }
    let keyBytes = (0..<4).map { UInt8(truncatingIfNeeded: key >> (24 - 8 * UInt32($0))) }
    frame += keyBytes
    for (i, byte) in payload.enumerated() { frame.append(byte ^ keyBytes[i & 3]) }
    return frame
}

func clientText(_ text: String, fin: Bool = true, key: UInt32 = exampleKey) -> [UInt8] {
    clientFrame(0x1, Array(text.utf8), fin: fin, key: key)
}

/// A client Close frame: code (if any) then reason bytes.
func clientClose(_ code: UInt16?, reason: [UInt8] = []) -> [UInt8] {
    guard let code else { return clientFrame(0x8, reason) }
    return clientFrame(0x8, [UInt8(code >> 8), UInt8(code & 0xFF)] + reason)
}

// MARK: - Driving a connection

/// Feeds `bytes` to `connection` as chunks ending at `cuts` (ascending), calling `receive` until
/// each chunk is used up, and returns every action in order. Checks the progress contract.
func feed(_ connection: inout WebSocketConnection, _ bytes: [UInt8], cuts: [Int] = []) -> [WebSocketAction] {
    var actions: [WebSocketAction] = []
    var start = 0
    for end in cuts + [bytes.count] where end >= start {
        let chunk = Array(bytes[start..<end])
        var offset = 0
        while offset < chunk.count {
            let step = connection.receive(chunk.span.extracting(offset..<chunk.count))
            precondition(step.consumed > 0 && step.consumed <= chunk.count - offset, "receive made no progress")
            offset += step.consumed
            if let action = step.action { actions.append(action) }
        }
        start = end
    }
    return actions
}

/// A fresh connection fed `bytes` in one chunk.
func run(
    _ bytes: [UInt8], configuration: WebSocketConnection.Configuration = .init(), cuts: [Int] = []
)
    -> (actions: [WebSocketAction], connection: WebSocketConnection)
{
    var connection = WebSocketConnection(configuration: configuration)
    let actions = feed(&connection, bytes, cuts: cuts)
    return (actions, connection)
}

/// The status code in a server Close frame (nil for an empty body or another kind of frame).
func closeCode(of frame: [UInt8]) -> UInt16? {
    guard frame.count >= 4, frame[0] == 0x88 else { return nil }
    return UInt16(frame[2]) << 8 | UInt16(frame[3])
}

func text(_ action: WebSocketAction) -> String? {
    if case .deliver(let message) = action { return message.text }
    return nil
}
