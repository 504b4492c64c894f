// GPSDEpochConsumer: what the gpsd thread runs for every line and event, driven here by hand
// with fake line sequences (no gpsd, no thread): epochs are posted the moment they are complete,
// and gpsd's events reach the inbox in order, with what they mean for the cycle in progress.
// The last suite runs the whole input path, consumer → inbox → InputTracker, as the bridge does.
import GNSS
import GPSD
import Input
import InputLoop
import Posix
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge

/// The cycle `n` of a position, from its time (TestNMEA cycles are 100 ms apart).
private func cycleNumber(_ position: Position) -> Int64? {
    position.time.map { $0.nanosecondsOfDay / 100_000_000 }
}

/// A short description of each event (positions by cycle), for order checks.
private func describe(_ events: [ReceiverInputEvent]) -> [String] {
    events.map { event in
        switch event {
        case .position(let position): "position \(cycleNumber(position).map(String.init) ?? "?")"
        case .gpsd(.device(let device)): "device \(device.path) \(device.isActive ? "open" : "closed")"
        case .gpsd(let other): "\(other)"
        case .receiverPosition(let path, let position, _):
            "\(path) position \(cycleNumber(position).map(String.init) ?? "?")"
        case .receiverQuiet(let path, let seconds): "\(path) quiet \(seconds)"
        case .receiverWatching(let path): "\(path) watched"
        case .receiverClosed(let path): "\(path) closed"
        }
    }
}

private extension GPSDEpochConsumer {
    mutating func feed(_ lines: [[UInt8]], now: Int64 = 0) {
        for line in lines { sentence(line.span, now: now) }
    }
}

@Suite("GPSDEpochConsumer: lines and gpsd events in, epochs and events posted", .tags(.unit))
struct GPSDEpochConsumerTests {
    @Test func eachEpochIsPostedTheMomentItsClosingSentenceIsRead() throws {
        let inbox = try Inbox<ReceiverInputEvent>(capacity: 64)
        var consumer = GPSDEpochConsumer(inbox: inbox)
        consumer.feed(TestNMEA.cycle(0))
        for n in 1..<5 {
            let lines = TestNMEA.cycle(n)
            consumer.feed(Array(lines[0...1]))
            _ = inbox.drain()
            consumer.feed([lines[2]])
            // Posted by the call that read the RMC: nothing waits for another line or a wake-up.
            #expect(describe(inbox.drain()) == ["position \(n)"])
        }
        #expect(consumer.statistics.decoded == 15)
    }

    @Test func aDeviceClosedPostsItsLastCycleBeforeTheClose() throws {
        let inbox = try Inbox<ReceiverInputEvent>(capacity: 64)
        var consumer = GPSDEpochConsumer(inbox: inbox)
        let device = GPSDDevice(path: "/dev/ttyACM0", activated: 1)
        consumer.event(.device(device), now: 0)
        consumer.feed(TestNMEA.cycle(0) + TestNMEA.cycle(1))
        consumer.feed(Array(TestNMEA.cycle(2).prefix(2)))  // unplugged mid-cycle
        consumer.event(.device(GPSDDevice(path: device.path)), now: 0)
        #expect(
            describe(inbox.drain()) == [
                "device /dev/ttyACM0 open", "position 0", "position 1", "position 2",
                "device /dev/ttyACM0 closed",
            ])
    }

    @Test func aReceiversWatchSaysItIsClosedAfterItsLastCycle() throws {
        let inbox = try Inbox<ReceiverInputEvent>(capacity: 64)
        let path = "/dev/ttyACM0"
        var consumer = GPSDEpochConsumer(inbox: inbox, receiver: path)
        consumer.event(.devices([GPSDDevice(path: path, activated: 1)]), now: 0)
        consumer.feed(TestNMEA.cycle(0) + TestNMEA.cycle(1))
        consumer.feed(Array(TestNMEA.cycle(2).prefix(2)))
        consumer.event(.device(GPSDDevice(path: path)), now: 0)
        #expect(
            describe(inbox.drain()) == [
                "\(path) watched", "\(path) position 0", "\(path) position 1",
                "\(path) position 2", "\(path) closed",
            ])
        // A watch (re)connected to a gpsd that no longer lists it: closed too.
        consumer.event(.devices([]), now: 0)
        #expect(describe(inbox.drain()) == ["\(path) watched", "\(path) closed"])
    }

    @Test func aReconnectDropsThePartialCycleAndDecodesTheNewStreamAfresh() throws {
        let inbox = try Inbox<ReceiverInputEvent>(capacity: 64)
        var consumer = GPSDEpochConsumer(inbox: inbox)
        consumer.event(.connected(release: "3.22"), now: 0)
        consumer.feed(TestNMEA.cycle(0) + TestNMEA.cycle(1) + Array(TestNMEA.cycle(2).prefix(2)))
        consumer.event(.connectionLost, now: 0)
        consumer.event(.connected(release: "3.22"), now: 0)
        // The new connection starts mid-cycle of another receiver (a restarted gpsd, a new tty).
        consumer.feed([TestNMEA.cycle(7, latitude: "5000.0000000")[2]])
        consumer.feed(TestNMEA.cycle(8, latitude: "5000.0000000") + TestNMEA.cycle(9, latitude: "5000.0000000"))
        let events = inbox.drain()
        #expect(
            describe(events) == [
                "connected(release: \"3.22\")", "position 0", "position 1", "connectionLost",
                "connected(release: \"3.22\")", "position 7", "position 8", "position 9",
            ])
        let after = events.compactMap { if case .position(let p) = $0 { p } else { nil } }.suffix(3)
        #expect(after.allSatisfy { $0.latitude == 50 }, "nothing of the old stream is mixed into the new one")
    }

    @Test func idleTimeFlushesACycleThatStalled() throws {
        let inbox = try Inbox<ReceiverInputEvent>(capacity: 64)
        var consumer = GPSDEpochConsumer(inbox: inbox)
        consumer.feed(Array(TestNMEA.cycle(0).prefix(2)), now: 1_000_000_000)
        consumer.idle(now: 1_050_000_000)
        #expect(inbox.drain().isEmpty)
        consumer.idle(now: 60_000_000_000)
        #expect(describe(inbox.drain()) == ["position 0"])
    }

    @Test func quietAndUnreachableAreForwardedAsTheyCame() throws {
        let inbox = try Inbox<ReceiverInputEvent>(capacity: 64)
        var consumer = GPSDEpochConsumer(inbox: inbox)
        consumer.event(.unreachable("connection refused"), now: 0)
        consumer.event(.quiet(seconds: 3), now: 0)
        #expect(inbox.drain() == [.gpsd(.unreachable("connection refused")), .gpsd(.quiet(seconds: 3))])
    }
}

@Suite("The input path: consumer, inbox and InputTracker together", .tags(.unit))
struct InputPathTests {
    /// The gpsd thread's half (the consumer) and the io thread's half (the tracker), run in turn
    /// on one thread: what the bridge publishes for a whole session.
    final class Path {
        let inbox: Inbox<ReceiverInputEvent>
        var consumer: GPSDEpochConsumer
        var tracker = InputTracker()
        init() throws {
            inbox = try Inbox(capacity: 256)
            consumer = GPSDEpochConsumer(inbox: inbox)
        }
        /// What the io thread would publish for everything posted so far.
        func drain() -> [InputChange] {
            var changes: [InputChange] = []
            for event in inbox.drain() { tracker.apply(event, into: &changes) }
            return changes
        }
    }

    private func summary(_ changes: [InputChange]) -> [String] {
        changes.map { change in
            if case .position(let position) = change {
                "position \(cycleNumber(position).map(String.init) ?? "?")"
            } else {
                "\(change)"
            }
        }
    }

    @Test func plugStreamReconnectAndUnplug() throws {
        let path = try Path()
        let device = GPSDDevice(path: "/dev/ttyACM0", driver: "NMEA0183", activated: 1)
        path.consumer.event(.connected(release: "3.22"), now: 0)
        path.consumer.event(.devices([device]), now: 0)
        path.consumer.feed(TestNMEA.cycle(0) + TestNMEA.cycle(1))
        #expect(summary(path.drain()) == ["receiverConnected(path: \"/dev/ttyACM0\")", "position 0", "position 1"])
        #expect(path.tracker.state == .live)

        // gpsd dies mid-cycle and comes back with the receiver re-added.
        path.consumer.feed(Array(TestNMEA.cycle(2).prefix(1)))
        path.consumer.event(.connectionLost, now: 0)
        #expect(
            summary(path.drain()) == [
                "receiverDisconnected(path: \"/dev/ttyACM0\")", "inputLost(gpsd closed the connection)",
            ])
        path.consumer.event(.connected(release: "3.22"), now: 0)
        path.consumer.event(.devices([]), now: 0)
        path.consumer.event(.device(device), now: 0)
        path.consumer.feed(TestNMEA.cycle(5) + TestNMEA.cycle(6))
        #expect(
            summary(path.drain()) == [
                "receiverConnected(path: \"/dev/ttyACM0\")", "inputRestored", "position 5", "position 6",
            ])

        // Unplugged mid-cycle: the last cycle, then the receiver, then the input.
        path.consumer.feed(Array(TestNMEA.cycle(7).prefix(2)))
        path.consumer.event(.device(GPSDDevice(path: device.path)), now: 0)
        #expect(
            summary(path.drain()) == [
                "position 7", "receiverDisconnected(path: \"/dev/ttyACM0\")",
                "inputLost(gpsd closed /dev/ttyACM0 (receiver unplugged or removed))",
            ])
        #expect(path.tracker.activeDevices.isEmpty && path.tracker.state == .lost)
    }

    @Test func twoReceiversOneUnpluggedTheOtherStreamsOn() throws {
        let path = try Path()
        let first = GPSDDevice(path: "/dev/ttyACM0", activated: 1)
        let second = GPSDDevice(path: "/dev/ttyUSB0", activated: 2)
        path.consumer.event(.devices([first, second]), now: 0)
        path.consumer.feed(TestNMEA.cycle(0) + TestNMEA.cycle(1))
        path.consumer.event(.device(GPSDDevice(path: first.path)), now: 0)
        path.consumer.feed(
            TestNMEA.cycle(10, latitude: "5000.0000000") + TestNMEA.cycle(11, latitude: "5000.0000000")
                + TestNMEA.cycle(12, latitude: "5000.0000000"))
        let changes = path.drain()
        #expect(
            summary(changes) == [
                "receiverConnected(path: \"/dev/ttyACM0\")", "receiverConnected(path: \"/dev/ttyUSB0\")",
                "position 0", "position 1", "receiverDisconnected(path: \"/dev/ttyACM0\")",
                "position 10", "position 11", "position 12",
            ])
        #expect(!changes.contains { if case .inputLost = $0 { true } else { false } }, "one receiver is still there")
        #expect(path.tracker.activeDevices.keys.sorted() == [second.path])
    }
}

@Suite(
    "GPSDEpochConsumer allocates nothing between drains", .tags(.unit),
    .enabled(if: isOptimizedBuild, Comment(rawValue: allocationTestsNeedOptimizedBuild)))
struct GPSDEpochConsumerAllocationTests {
    /// A watch on everything, and one receiver's watch (its epochs tagged with the path, held by
    /// the consumer: posting it copies a reference, or a short path's inline bytes).
    @Test(arguments: [nil, "/dev/serial/by-id/usb-Trimble_Navigation_R12i_5432A12345-if00"])
    func linesAndEpochsAllocateNothing(_ receiver: String?) throws {
        let inbox = try Inbox<ReceiverInputEvent>(capacity: 4096)
        var consumer = GPSDEpochConsumer(inbox: inbox, receiver: receiver)
        let lines = (0..<1000).flatMap { TestNMEA.cycle($0) }
        // The first pass grows the inbox's storage; the drain leaves it (capacity kept) for the next.
        for line in lines { consumer.sentence(line.span, now: 0) }
        _ = inbox.drain()
        let allocations = countAllocations {
            for line in lines { consumer.sentence(line.span, now: 0) }
        }
        #expect(inbox.drain().count == 1000)
        #expect(allocations == 0, "\(allocations) allocations for 1000 epochs")
    }
}
