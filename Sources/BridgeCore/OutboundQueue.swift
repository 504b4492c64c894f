// What a client connection still has to send, and the slow-client policy that bounds it.
//
// Frames are shared: the hub encodes a position once and appends the same `[UInt8]` to every
// client's queue (an array is a reference-counted buffer, so this is a retain, not a copy). The
// kernel takes what fits; the rest waits here until the socket is writable again.
//
// The policy (docs/server.md, "Slow clients"):
// - past the soft limit, appending a position first drops every queued position the client has
//   not started to receive, so a client that cannot keep up gets the latest position, not a
//   growing backlog of stale ones;
// - `behind` counts the bytes a client has fallen behind since its queue was last empty (queued
//   plus dropped); past the hard limit for longer than the grace period the owner closes the
//   client with 1008. A client that catches up even once (queue empty) starts from zero.

/// The unsent output of one connection (loop-confined; pure bookkeeping, no I/O).
public struct OutboundQueue {
    /// Positions may be coalesced; everything else (HTTP responses, events, control frames) is
    /// always delivered in order.
    public enum Kind {
        case position
        case other
    }

    private struct Entry {
        public var bytes: [UInt8]
        public var kind: Kind
    }

    private var entries: [Entry] = []
    /// Index of the first entry not yet completely sent.
    private var head = 0
    /// Bytes of `entries[head]` already sent.
    private var sentInHead = 0
    /// Unsent bytes in the queue.
    public private(set) var byteCount = 0
    /// Bytes fallen behind since the queue was last empty: queued plus dropped.
    public private(set) var behind = 0
    /// Positions dropped by coalescing over the connection's life.
    public private(set) var droppedPositions = 0

    public init() {}

    public var isEmpty: Bool { head == entries.count }

    /// Appends bytes that must all be delivered.
    public mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        entries.append(Entry(bytes: bytes, kind: .other))
        byteCount += bytes.count
        behind += bytes.count
    }

    /// Appends a position frame; at or past `softLimit` queued bytes, the queued positions the
    /// client has not begun to receive are dropped first. Returns how many were dropped.
    @discardableResult
    public mutating func appendPosition(_ frame: [UInt8], softLimit: Int) -> Int {
        var dropped = 0
        if byteCount >= softLimit {
            // The head entry may be partly on the wire: it stays, or the stream would be corrupt.
            let firstDroppable = sentInHead > 0 ? head + 1 : head
            var kept: [Entry] = []
            if firstDroppable < entries.count {
                kept.reserveCapacity(entries.count - firstDroppable)
                for index in firstDroppable..<entries.count {
                    if entries[index].kind == .position {
                        dropped += 1
                        byteCount -= entries[index].bytes.count
                    } else {
                        kept.append(entries[index])
                    }
                }
                entries.removeSubrange(firstDroppable...)
                entries.append(contentsOf: kept)
            }
            droppedPositions += dropped
        }
        entries.append(Entry(bytes: frame, kind: .position))
        byteCount += frame.count
        behind += frame.count
        return dropped
    }

    /// Where a write of the unsent bytes has got to before the queue is told (`consumed`): the
    /// loop writes chunk after chunk and reports the total once, as the connection's next event.
    public struct WritePosition: Equatable {
        fileprivate var entry: Int
        fileprivate var offset: Int
    }

    /// The first unsent byte.
    public var unsentStart: WritePosition { WritePosition(entry: head, offset: sentInHead) }

    /// The entry holding `position` and the offset of `position` in it; nil at the end.
    public func chunk(at position: WritePosition) -> (bytes: [UInt8], offset: Int)? {
        guard position.entry < entries.count else { return nil }
        return (entries[position.entry].bytes, position.offset)
    }

    /// `position` moved past `count` bytes of its chunk (at most the rest of that chunk).
    public func advance(_ position: inout WritePosition, by count: Int) {
        precondition(count <= entries[position.entry].bytes.count - position.offset, "advanced past a chunk")
        position.offset += count
        if position.offset == entries[position.entry].bytes.count {
            position.entry += 1
            position.offset = 0
        }
    }

    /// The entry being sent and how much of it is already out; nil when empty.
    public var nextChunk: (bytes: [UInt8], offset: Int)? { chunk(at: unsentStart) }

    /// Records that `count` bytes from the first unsent one were sent (several entries' worth
    /// when the loop wrote several chunks).
    public mutating func consumed(_ count: Int) {
        var left = count
        while left > 0 {
            precondition(head < entries.count, "consumed more than queued")
            let piece = min(left, entries[head].bytes.count - sentInHead)
            left -= piece
            sentInHead += piece
            byteCount -= piece
            if sentInHead == entries[head].bytes.count {
                head += 1
                sentInHead = 0
                if head == entries.count {
                    entries.removeAll(keepingCapacity: true)
                    head = 0
                    behind = 0
                } else if head >= 64 && head * 2 >= entries.count {
                    entries.removeSubrange(0..<head)
                    head = 0
                }
            }
        }
    }

    /// Drops everything not yet started (a client being failed need not get its backlog); keeps a
    /// partly sent entry so the byte stream stays well-framed.
    public mutating func discardUnstarted() {
        let keep = sentInHead > 0 ? head + 1 : head
        for index in keep..<entries.count { byteCount -= entries[index].bytes.count }
        entries.removeSubrange(keep...)
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
            behind = 0
        }
    }
}

@available(*, unavailable, message: "an outbound queue belongs to the io thread")
extension OutboundQueue: Sendable {}
