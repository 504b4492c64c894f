// Restartability: the same client bytes must produce the same actions however reads split them,
// at every byte for a mixed script, one byte at a time, and in random chunk sizes.
import TestSupport
import Testing
import WebSocket

@Suite("Chunking", .tags(.unit))
struct ChunkingTests {
    /// A conversation touching every reader path: short, 16-bit and 64-bit lengths, fragments with
    /// control frames between them, multi-byte UTF-8 split across fragments, a ping, a pong, and
    /// the client's Close, followed by bytes that must be ignored.
    static func script(big: Bool) -> [UInt8] {
        var wire = hex("81 85 37 fa 21 3d 7f 9f 4d 51 58")
        wire += clientFrame(0x1, Array("Hel".utf8), fin: false, key: 0x0102_0304)
        wire += clientFrame(0x9, Array("ping".utf8), key: 0xA5A5_5A5A)
        wire += clientFrame(0x0, [0xC3], fin: false, key: 0)  // first byte of "é"
        wire += clientFrame(0xA, [])
        wire += clientFrame(0x0, [0xA9] + Array("lo \u{1F6F0}".utf8), key: 0xFFFF_FFFF)
        wire += clientFrame(0x2, (0..<(big ? 65_536 : 200)).map { UInt8(truncatingIfNeeded: $0) })
        wire += clientFrame(0x1, [])
        wire += clientClose(1000, reason: Array("done".utf8))
        wire += clientText("ignored after the Close") + [0xFF]
        return wire
    }

    static func expected(big: Bool) -> [WebSocketAction] {
        [
            .deliver(WebSocketMessage(kind: .text, payload: Array("Hello".utf8))),
            .write(WebSocketFrame.pong(Array("ping".utf8).span)),
            .deliver(WebSocketMessage(kind: .text, payload: Array("Hel\u{e9}lo \u{1F6F0}".utf8))),
            .deliver(
                WebSocketMessage(
                    kind: .binary, payload: (0..<(big ? 65_536 : 200)).map { UInt8(truncatingIfNeeded: $0) })),
            .deliver(WebSocketMessage(kind: .text, payload: [])),
            .writeAndClose(hex("88 02 03 e8")),
        ]
    }

    @Test func wholeScript() {
        for big in [false, true] {
            let (actions, connection) = run(Self.script(big: big))
            #expect(actions == Self.expected(big: big))
            #expect(connection.termination == .closedByPeer(code: .normalClosure, reason: "done"))
        }
    }

    @Test func everySplitIntoTwoReads() {
        let wire = Self.script(big: false)
        let expected = Self.expected(big: false)
        for cut in 0...wire.count {
            let (actions, _) = run(wire, cuts: [cut])
            #expect(actions == expected, "split at \(cut)")
        }
    }

    @Test func everySplitIntoThreeReadsAroundTheFragments() {
        // Both cuts range over the fragmented message and its interleaved control frames.
        let wire = Self.script(big: false)
        let expected = Self.expected(big: false)
        for first in 10..<60 {
            for second in first..<70 {
                #expect(run(wire, cuts: [first, second]).actions == expected, "cuts \(first), \(second)")
            }
        }
    }

    @Test func dripFeedOneByteAtATime() {
        for big in [false, true] {
            let wire = Self.script(big: big)
            #expect(run(wire, cuts: Array(0...wire.count)).actions == Self.expected(big: big))
        }
    }

    @Test func randomChunkSizes() {
        var random = SplitMix64(state: 6455)
        let wire = Self.script(big: true)
        let expected = Self.expected(big: true)
        for round in 0..<100 {
            var cuts: [Int] = []
            var position = 0
            while position < wire.count {
                position += Int.random(in: 1...(round % 2 == 0 ? 20 : 5_000), using: &random)
                if position < wire.count { cuts.append(position) }
            }
            #expect(run(wire, cuts: cuts).actions == expected, "round \(round)")
        }
    }

    @Test func everyPrefixIsAQuietPartialState() {
        // Any proper prefix of one frame produces nothing; the rest completes it.
        let frame = clientFrame(0x1, Array("Hello, TMM".utf8), key: 0x1234_5678)
        for n in 0..<frame.count {
            var connection = WebSocketConnection()
            #expect(feed(&connection, Array(frame.prefix(n))).isEmpty, "prefix \(n)")
            #expect(feed(&connection, Array(frame.dropFirst(n))).map(text) == ["Hello, TMM"], "rest after \(n)")
        }
    }
}
