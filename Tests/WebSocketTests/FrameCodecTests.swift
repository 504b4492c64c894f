// Frame header decoding (client to server) and frame encoding (server to client), against the
// RFC 6455 §5.7 examples and the length-encoding boundaries.
import TestSupport
import Testing
import WebSocket

@Suite("Frame header decoding", .tags(.unit))
struct FrameHeaderTests {
    static func decode(
        _ bytes: [UInt8], max: Int = 1 << 20
    ) throws(WebSocketProtocolError) -> WebSocketFrameHeader.Decoding {
        try WebSocketFrameHeader.decodeClientFrame(bytes.span, maxPayloadLength: max)
    }

    @Test func rfcMaskedHello() throws {
        // §5.7: "A single-frame masked text message": 0x81 0x85 0x37 0xfa 0x21 0x3d 0x7f 0x9f 0x4d 0x51 0x58.
        let frame = hex("81 85 37 fa 21 3d 7f 9f 4d 51 58")
        guard case .complete(let header) = try Self.decode(frame) else {
            Issue.record("not complete")
            return
        }
        #expect(header.fin && header.opcode == .text && header.payloadLength == 5 && header.headerLength == 6)
        #expect(header.maskingKey.rawValue == 0x37FA_213D)
        var payload: [UInt8] = []
        header.maskingKey.apply(frame.span.extracting(6..<11), payloadOffset: 0, appendingTo: &payload)
        #expect(payload == Array("Hello".utf8))
        // Every proper prefix of the header is "need more", never an error or a guess.
        for n in 0..<6 { #expect(try Self.decode(Array(frame.prefix(n))) == .needMoreBytes, "prefix \(n)") }
    }

    @Test(arguments: [(0, 2 + 4), (125, 2 + 4), (126, 4 + 4), (256, 4 + 4), (65_535, 4 + 4), (65_536, 10 + 4)])
    func lengthForms(length: Int, headerLength: Int) throws {
        // §5.7 "256 bytes binary message" (0x7E 0x0100) and "64KiB binary message"
        // (0x7F 0x0000000000010000), here masked as a client must send them.
        let frame = clientFrame(0x2, [UInt8](repeating: 0xAB, count: length))
        guard case .complete(let header) = try Self.decode(frame) else {
            Issue.record("not complete")
            return
        }
        #expect(header.payloadLength == length && header.headerLength == headerLength)
        for n in 0..<headerLength { #expect(try Self.decode(Array(frame.prefix(n))) == .needMoreBytes) }
        if length == 256 { #expect(Array(frame.prefix(4)) == hex("82 fe 01 00")) }
        if length == 65_536 { #expect(Array(frame.prefix(10)) == hex("82 ff 00 00 00 00 00 01 00 00")) }
    }

    @Test func errorsAreReportedAsSoonAsTheBytesShowThem() {
        // RSV and opcode from byte 0 alone; MASK and control length from byte 1.
        #expect(throws: WebSocketProtocolError.reservedBitsSet(0x40)) { try Self.decode([0xC1]) }
        #expect(throws: WebSocketProtocolError.unknownOpcode(3)) { try Self.decode([0x83]) }
        #expect(throws: WebSocketProtocolError.fragmentedControlFrame) { try Self.decode([0x09]) }
        #expect(throws: WebSocketProtocolError.unmaskedClientFrame) { try Self.decode([0x81, 0x05]) }
        #expect(throws: WebSocketProtocolError.controlFrameTooLong) { try Self.decode([0x89, 0xFE]) }
        #expect(throws: WebSocketProtocolError.nonMinimalLength) { try Self.decode([0x82, 0xFE, 0x00, 0x7D]) }
        #expect(throws: WebSocketProtocolError.frameTooLarge(1000)) {
            try Self.decode([0x82, 0xFE, 0x03, 0xE8], max: 999)
        }
    }

    @Test func maskingKeyAppliesAtAnyOffset() {
        let key = WebSocketMaskingKey(rawValue: 0x0102_0304)
        let plain = (0..<37).map { UInt8($0 * 7 & 0xFF) }
        var masked: [UInt8] = []
        key.apply(plain.span, payloadOffset: 0, appendingTo: &masked)
        // Unmasking in pieces of every size, each continuing at its payload offset, restores the text.
        for size in 1...9 {
            var restored: [UInt8] = []
            var offset = 0
            while offset < masked.count {
                let end = min(offset + size, masked.count)
                key.apply(masked.span.extracting(offset..<end), payloadOffset: offset, appendingTo: &restored)
                offset = end
            }
            #expect(restored == plain, "pieces of \(size)")
        }
    }
}

@Suite("Frame encoding", .tags(.unit))
struct FrameEncoderTests {
    @Test func rfcUnmaskedExamples() {
        // §5.7: "A single-frame unmasked text message": 0x81 0x05 0x48 0x65 0x6c 0x6c 0x6f.
        #expect(WebSocketFrame.text("Hello") == hex("81 05 48 65 6c 6c 6f"))
        // §5.7: "Unmasked Ping request": 0x89 0x05 0x48 0x65 0x6c 0x6c 0x6f.
        #expect(WebSocketFrame.ping(Array("Hello".utf8).span) == hex("89 05 48 65 6c 6c 6f"))
        #expect(WebSocketFrame.pong(Array("Hello".utf8).span) == hex("8a 05 48 65 6c 6c 6f"))
        // §5.7: the two fragments of "Hello" ("Hel" then "lo").
        #expect(
            WebSocketFrame.encode(opcode: .text, payload: Array("Hel".utf8).span, fin: false) == hex("01 03 48 65 6c"))
        #expect(WebSocketFrame.encode(opcode: .continuation, payload: Array("lo".utf8).span) == hex("80 02 6c 6f"))
    }

    @Test(arguments: [
        (0, "82 00"), (125, "82 7d"), (126, "82 7e 00 7e"), (256, "82 7e 01 00"), (65_535, "82 7e ff ff"),
        (65_536, "82 7f 00 00 00 00 00 01 00 00"), (1 << 20, "82 7f 00 00 00 00 00 10 00 00"),
    ])
    func binaryLengthEncodings(length: Int, header: String) {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
        let frame = WebSocketFrame.binary(payload.span)
        let headerBytes = hex(header)
        #expect(Array(frame.prefix(headerBytes.count)) == headerBytes)
        #expect(frame.count == headerBytes.count + length)
        #expect(Array(frame.dropFirst(headerBytes.count)) == payload)
        #expect(WebSocketFrame.headerLength(payloadLength: length) == headerBytes.count)
    }

    @Test func closeFrames() {
        #expect(WebSocketFrame.close(code: nil) == hex("88 00"))
        #expect(WebSocketFrame.close(code: .normalClosure) == hex("88 02 03 e8"))
        #expect(WebSocketFrame.close(code: .policyViolation, reason: "slow") == hex("88 06 03 f0 73 6c 6f 77"))
        #expect(WebSocketFrame.close(code: WebSocketCloseCode(rawValue: 4999)) == hex("88 02 13 87"))
        // The reason is cut to fit 125 bytes, at a character boundary.
        let long = WebSocketFrame.close(code: .goingAway, reason: String(repeating: "x", count: 300))
        #expect(long.count == 2 + 125 && long[1] == 125)
        let accents = WebSocketFrame.close(code: .goingAway, reason: String(repeating: "\u{e9}", count: 100))
        #expect(accents[1] == 2 + 122)  // 61 two-byte characters; a 62nd would make 124
        #expect(String(validating: accents.dropFirst(4), as: UTF8.self) == String(repeating: "\u{e9}", count: 61))
    }

    @Test func appendHeaderLetsAPayloadBeWrittenInPlace() {
        var frame: [UInt8] = []
        WebSocketFrame.appendHeader(opcode: .text, payloadLength: 300, to: &frame)
        #expect(frame == hex("81 7e 01 2c"))
    }
}
