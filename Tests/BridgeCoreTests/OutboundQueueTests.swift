// The per-client queue and its slow-client bookkeeping, as pure state.
import TestSupport
import Testing

@testable import BridgeCore

@Suite("OutboundQueue", .tags(.unit))
struct OutboundQueueTests {
    private func frame(_ byte: UInt8, _ count: Int = 10) -> [UInt8] { [UInt8](repeating: byte, count: count) }

    /// Sends everything, returning the bytes in order.
    private func drain(_ queue: inout OutboundQueue, chunk: Int = .max) -> [UInt8] {
        var out: [UInt8] = []
        while let (bytes, offset) = queue.nextChunk {
            let n = min(chunk, bytes.count - offset)
            out += bytes[offset..<(offset + n)]
            queue.consumed(n)
        }
        return out
    }

    @Test func deliversEverythingInOrderAndResetsBehindWhenEmpty() {
        var queue = OutboundQueue()
        queue.append(frame(1))
        queue.appendPosition(frame(2), softLimit: 1000)
        queue.append(frame(3))
        #expect(queue.byteCount == 30)
        #expect(queue.behind == 30)
        #expect(drain(&queue, chunk: 7) == frame(1) + frame(2) + frame(3))
        #expect(queue.isEmpty && queue.byteCount == 0 && queue.behind == 0)
    }

    @Test func belowTheSoftLimitNothingIsDropped() {
        var queue = OutboundQueue()
        for i in 0..<5 { #expect(queue.appendPosition(frame(UInt8(i)), softLimit: 51) == 0) }
        #expect(queue.byteCount == 50)
        #expect(queue.droppedPositions == 0)
    }

    @Test func atTheSoftLimitOnlyTheLatestPositionIsKeptButOtherFramesStay() {
        var queue = OutboundQueue()
        queue.appendPosition(frame(1), softLimit: 30)
        queue.append(frame(9))  // an event: never dropped
        queue.appendPosition(frame(2), softLimit: 30)
        // 30 bytes queued: the next position replaces the queued ones.
        #expect(queue.appendPosition(frame(3), softLimit: 30) == 2)
        #expect(queue.droppedPositions == 2)
        #expect(queue.byteCount == 20)
        #expect(queue.behind == 40, "dropped bytes still count as behind")
        #expect(drain(&queue) == frame(9) + frame(3))
        #expect(queue.behind == 0)
    }

    @Test func aPartlySentPositionIsNeverDropped() {
        var queue = OutboundQueue()
        queue.appendPosition(frame(1), softLimit: 10)
        queue.consumed(4)  // on the wire: dropping it would corrupt the stream
        queue.appendPosition(frame(2), softLimit: 10)
        queue.appendPosition(frame(3), softLimit: 10)
        var out: [UInt8] = []
        while let (bytes, offset) = queue.nextChunk {
            out += bytes[offset...]
            queue.consumed(bytes.count - offset)
        }
        #expect(out == Array(frame(1)[4...]) + frame(3))
    }

    @Test func discardUnstartedKeepsThePartlySentEntry() {
        var queue = OutboundQueue()
        queue.append(frame(1))
        queue.consumed(3)
        queue.appendPosition(frame(2), softLimit: 1000)
        queue.append(frame(3))
        queue.discardUnstarted()
        #expect(queue.byteCount == 7)
        queue.append(frame(4, 2))  // the Close frame goes after it
        #expect(drain(&queue) == Array(frame(1)[3...]) + frame(4, 2))
    }

    @Test func discardUnstartedOnAFreshQueueEmptiesIt() {
        var queue = OutboundQueue()
        queue.appendPosition(frame(1), softLimit: 1000)
        queue.discardUnstarted()
        #expect(queue.isEmpty && queue.byteCount == 0)
    }

    @Test func aLongQueueCompactsWithoutLosingOrder() {
        var queue = OutboundQueue()
        var expected: [UInt8] = []
        var out: [UInt8] = []
        for round in 0..<300 {
            let bytes = frame(UInt8(round % 251), 3)
            queue.append(bytes)
            expected += bytes
            if round % 3 == 2, let (chunk, offset) = queue.nextChunk {
                out += chunk[offset...]
                queue.consumed(chunk.count - offset)
            }
        }
        out += drain(&queue)
        #expect(out == expected)
    }
}
