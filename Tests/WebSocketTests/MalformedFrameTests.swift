// One row per broken rule of RFC 6455, with the close code the server must answer with, plus the
// table of close codes a client may and may not send.
import TestSupport
import Testing
import WebSocket

@Suite("Malformed frames", .tags(.unit))
struct MalformedFrameTests {
    static let small = WebSocketConnection.Configuration(maxFrameSize: 1_000, maxMessageSize: 1_500)

    /// (rule broken, client bytes, expected error). Every row is run with `small` limits.
    static let rows: [(String, [UInt8], WebSocketProtocolError)] = [
        ("§5.2 RSV1 set", clientFrame(0x1, [0x61], rsv: 0x40), .reservedBitsSet(0x40)),
        ("§5.2 RSV2 set", clientFrame(0x1, [0x61], rsv: 0x20), .reservedBitsSet(0x20)),
        ("§5.2 RSV3 set", clientFrame(0x1, [0x61], rsv: 0x10), .reservedBitsSet(0x10)),
        ("§5.2 RSV1 on a control frame", clientFrame(0x9, [], rsv: 0x40), .reservedBitsSet(0x40)),
        ("§5.2 reserved data opcode 0x3", clientFrame(0x3, []), .unknownOpcode(0x3)),
        ("§5.2 reserved data opcode 0x7", clientFrame(0x7, []), .unknownOpcode(0x7)),
        ("§5.2 reserved control opcode 0xB", clientFrame(0xB, []), .unknownOpcode(0xB)),
        ("§5.2 reserved control opcode 0xF", clientFrame(0xF, []), .unknownOpcode(0xF)),
        ("§5.1 unmasked text frame", clientFrame(0x1, Array("Hello".utf8), masked: false), .unmaskedClientFrame),
        ("§5.1 unmasked close frame", clientFrame(0x8, [0x03, 0xE8], masked: false), .unmaskedClientFrame),
        ("§5.5 fragmented ping", clientFrame(0x9, [], fin: false), .fragmentedControlFrame),
        ("§5.5 fragmented close", clientFrame(0x8, [0x03, 0xE8], fin: false), .fragmentedControlFrame),
        ("§5.5 ping of 126 bytes", clientFrame(0x9, [UInt8](repeating: 0, count: 126)), .controlFrameTooLong),
        ("§5.5 close with 64-bit length", clientFrame(0x8, [0x03, 0xE8], length: .sixtyFour), .controlFrameTooLong),
        (
            "§5.2 16-bit length for 125 bytes", clientFrame(0x2, [UInt8](repeating: 0, count: 125), length: .sixteen),
            .nonMinimalLength
        ),
        ("§5.2 16-bit length for 0 bytes", clientFrame(0x2, [], length: .sixteen), .nonMinimalLength),
        (
            "§5.2 64-bit length for 300 bytes", clientFrame(0x2, [UInt8](repeating: 0, count: 300), length: .sixtyFour),
            .nonMinimalLength
        ),
        (
            "§5.2 64-bit length for 65 535 bytes", clientFrame(0x2, [], length: .sixtyFour, declaredLength: 65_535),
            .nonMinimalLength
        ),
        ("§5.2 64-bit length with the top bit set", clientFrame(0x2, [], declaredLength: 1 << 63), .lengthHighBitSet),
        ("§5.2 64-bit length of all ones", clientFrame(0x2, [], declaredLength: .max), .lengthHighBitSet),
        ("frame over maxFrameSize", clientFrame(0x2, [UInt8](repeating: 0, count: 1_001)), .frameTooLarge(1_001)),
        ("frame of 2^62 bytes", clientFrame(0x2, [], declaredLength: 1 << 62), .frameTooLarge(1 << 62)),
        ("§5.4 continuation with no message", clientFrame(0x0, Array("lo".utf8)), .unexpectedContinuation),
        (
            "§5.4 continuation after a complete message", clientText("Hello") + clientFrame(0x0, []),
            .unexpectedContinuation
        ),
        ("§5.4 text inside a fragmented text", clientText("Hel", fin: false) + clientText("lo"), .expectedContinuation),
        (
            "§5.4 binary inside a fragmented text", clientText("Hel", fin: false) + clientFrame(0x2, []),
            .expectedContinuation
        ),
        (
            "§5.4 text inside a fragmented binary", clientFrame(0x2, [1], fin: false) + clientText("x", fin: false),
            .expectedContinuation
        ),
        (
            "message over maxMessageSize across fragments",
            clientFrame(0x2, [UInt8](repeating: 0, count: 1_000), fin: false)
                + clientFrame(0x0, [UInt8](repeating: 0, count: 501)),
            .messageTooLarge(1_501)
        ),
        ("§8.1 invalid UTF-8 in a text frame", clientFrame(0x1, [0x61, 0xFF]), .invalidUTF8),
        (
            "§8.1 invalid UTF-8 in a continuation", clientText("a", fin: false) + clientFrame(0x0, [0xC0, 0xAF]),
            .invalidUTF8
        ),
        ("§5.6 text message ending inside a character", clientFrame(0x1, [0xE2, 0x82]), .invalidUTF8),
        ("§5.5.1 close body of one byte", clientFrame(0x8, [0x03]), .closePayloadTooShort),
        ("§7.4 close code 1005", clientClose(1005), .invalidCloseCode(1005)),
        ("§5.5.1 close reason not UTF-8", clientClose(1000, reason: [0xFF]), .invalidCloseReason),
        (
            "§5.5.1 close reason ending inside a character", clientClose(1000, reason: [0xF0, 0x9F]),
            .invalidCloseReason
        ),
    ]

    /// A table row, shown in test output by its rule only.
    struct Row: CustomTestStringConvertible, Sendable {
        var rule: String
        var bytes: [UInt8]
        var error: WebSocketProtocolError
        var testDescription: String { rule }
    }

    @Test(arguments: rows.map { Row(rule: $0.0, bytes: $0.1, error: $0.2) })
    func eachBrokenRuleClosesWithItsCode(row: Row) {
        let (rule, bytes, error) = (row.rule, row.bytes, row.error)
        let (actions, connection) = run(bytes, configuration: Self.small)
        let expected = WebSocketFrame.close(code: error.closeCode, reason: error.reason)
        // The failure is the last action (a complete message before the broken frame is delivered).
        #expect(actions.last == .writeAndClose(expected), "\(rule)")
        #expect(actions.dropLast().allSatisfy { if case .deliver = $0 { true } else { false } }, "\(rule)")
        #expect(connection.termination == .protocolError(error), "\(rule)")
        #expect(connection.state == .closed)
        // The same when the bytes arrive one at a time.
        let (dripped, _) = run(bytes, configuration: Self.small, cuts: Array(0...bytes.count))
        #expect(dripped == actions, "\(rule), byte by byte")
    }

    @Test func closeCodesByError() {
        let codes = Self.rows.map { ($0.0, $0.2.closeCode.rawValue) }
        for (rule, code) in codes {
            switch code {
            case 1002, 1007, 1009: break
            default: Issue.record("\(rule): unexpected code \(code)")
            }
        }
        #expect(WebSocketProtocolError.invalidUTF8.closeCode == .invalidPayloadData)
        #expect(WebSocketProtocolError.frameTooLarge(1).closeCode == .messageTooBig)
        #expect(WebSocketProtocolError.unknownOpcode(3).closeCode == .protocolError)
    }

    @Test func everyReservedOpcodeIsRejected() {
        for opcode in UInt8(0)...15 where ![0, 1, 2, 8, 9, 10].contains(opcode) {
            let (_, connection) = run(clientFrame(opcode, []))
            #expect(connection.termination == .protocolError(.unknownOpcode(opcode)))
        }
    }

    @Test func restOfTheInputIsDroppedAfterAFailure() {
        var connection = WebSocketConnection()
        let wire = clientFrame(0x1, [0xFF]) + clientText("never delivered")
        let step = connection.receive(wire.span)
        #expect(step.consumed == wire.count)
        #expect(feed(&connection, clientText("nor this")).isEmpty)
    }
}

@Suite("Close codes", .tags(.unit))
struct CloseCodeTests {
    /// (code received, accepted and echoed?)
    static let codes: [(UInt16, Bool)] = [
        (0, false), (999, false), (1000, true), (1001, true), (1002, true), (1003, true), (1004, false), (1005, false),
        (1006, false), (1007, true), (1008, true), (1009, true), (1010, true), (1011, true), (1012, true), (1013, true),
        (1014, true), (1015, false), (1016, false), (1100, false), (2000, false), (2999, false), (3000, true),
        (3999, true), (4000, true), (4999, true), (5000, false), (65_535, false),
    ]

    @Test(arguments: codes)
    func receivedCloseCode(code: UInt16, valid: Bool) {
        #expect(WebSocketCloseCode(rawValue: code).isValidOnWire == valid)
        let (actions, connection) = run(clientClose(code, reason: Array("r\u{e9}ason".utf8)))
        if valid {
            #expect(
                actions == [.writeAndClose(WebSocketFrame.close(code: WebSocketCloseCode(rawValue: code)))],
                "echo \(code)")
            #expect(
                connection.termination == .closedByPeer(code: WebSocketCloseCode(rawValue: code), reason: "r\u{e9}ason")
            )
        } else {
            #expect(
                actions == [
                    .writeAndClose(WebSocketFrame.close(code: .protocolError, reason: "invalid close code \(code)"))
                ])
            #expect(connection.termination == .protocolError(.invalidCloseCode(code)))
        }
    }

    @Test func longestReasonIsAccepted() {
        let reason = [UInt8](repeating: 0x7A, count: 123)
        let (actions, connection) = run(clientClose(4000, reason: reason))
        #expect(actions == [.writeAndClose(hex("88 02 0f a0"))])
        #expect(
            connection.termination
                == .closedByPeer(code: WebSocketCloseCode(rawValue: 4000), reason: String(repeating: "z", count: 123)))
    }
}
