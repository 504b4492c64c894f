// InputTracker with one stream per receiver: only the served receiver's epochs are published,
// the others are tracked, and losing the served one fails over (events in, changes out).
import GNSS
import TestSupport
import Testing

@testable import Input

private let a = GPSDDevice(path: "/dev/ttyA", driver: "NMEA0183", activated: 1)
private let b = GPSDDevice(path: "/dev/ttyB", driver: "NMEA0183", activated: 2)

private func epoch(_ latitude: Double, quality: FixQuality = .rtkFixed) -> Position {
    var position = Position()
    position.latitude = latitude
    position.longitude = 11
    position.quality = quality
    return position
}

/// A's epochs are at latitude 1, B's at 2; `at` in tenths of a second.
private func fromA(_ tenth: Int64) -> ReceiverInputEvent {
    .receiverPosition(path: a.path, epoch(1), at: tenth * 100_000_000)
}
private func fromB(_ tenth: Int64) -> ReceiverInputEvent {
    .receiverPosition(path: b.path, epoch(2), at: tenth * 100_000_000)
}

private func apply(_ events: [ReceiverInputEvent], to tracker: inout InputTracker) -> [InputChange] {
    var changes: [InputChange] = []
    for event in events { tracker.apply(event, into: &changes) }
    return changes
}

/// The latitudes published, in order.
private func published(_ changes: [InputChange]) -> [Double] {
    changes.compactMap { if case .position(let position) = $0 { position.latitude } else { nil } }
}

@Suite("InputTracker: several receivers, one served", .tags(.unit))
struct ReceiverFailoverTests {
    @Test func onlyTheFirstOpenedIsPublishedAndTheOtherIsTracked() {
        var tracker = InputTracker(streams: .perReceiver)
        var changes = apply([.gpsd(.devices([a])), .gpsd(.device(b))], to: &tracker)
        #expect(
            changes == [
                .receiverConnected(path: a.path), .servedReceiver(path: a.path), .receiverConnected(path: b.path),
            ])
        changes = apply([fromA(0), fromB(0), fromA(1), fromB(1), fromA(2), fromB(2)], to: &tracker)
        #expect(published(changes) == [1, 1, 1], "never a mix")
        #expect(tracker.served == a.path && tracker.state == .live)
        let other = tracker.receivers[b.path]
        #expect(other?.epochs == 3 && other?.quality == .rtkFixed && other?.lastEpochAt == 200_000_000)
        #expect(other.flatMap(\.epochRate).map { abs($0 - 10) < 0.001 } == true, "10 Hz")
        #expect(tracker.receiversInOrder.map(\.path) == [a.path, b.path])
    }

    /// The main session's DEVICE close and the receiver's own watch are two threads: the close
    /// can reach the inbox before the last epoch the watch flushed on it (a binary receiver's
    /// held fix; ublox-zed-f9p-hp.log lost 21:19:48). A watching receiver goes when its watch
    /// says so, after that epoch.
    @Test func aWatchedReceiversLastEpochIsPublishedWhenTheCloseOvertakesIt() {
        var tracker = InputTracker(streams: .perReceiver)
        _ = apply([.gpsd(.devices([a, b])), .receiverWatching(path: a.path), fromA(0), fromB(0)], to: &tracker)
        var changes = apply([.gpsd(.device(GPSDDevice(path: a.path)))], to: &tracker)
        #expect(changes == [], "the removal waits for A's watch")
        changes = apply([fromA(1), .receiverClosed(path: a.path), fromB(1)], to: &tracker)
        #expect(
            changes == [
                .position(epoch(1)), .receiverDisconnected(path: a.path),
                .inputLost(.receiverRemoved(path: a.path)), .servedReceiver(path: b.path),
                .inputRestored, .position(epoch(2)),
            ])
        // A watch that saw the device gone first: the main session's close removes at once.
        _ = apply([.gpsd(.device(a)), .receiverWatching(path: a.path), .receiverClosed(path: a.path)], to: &tracker)
        #expect(
            apply([.gpsd(.device(GPSDDevice(path: a.path)))], to: &tracker) == [.receiverDisconnected(path: a.path)])
    }

    @Test func theServedOneUnpluggedIsALossAndTheOtherOnesFirstEpochTheRestore() {
        var tracker = InputTracker(streams: .perReceiver)
        _ = apply([.gpsd(.devices([a, b])), fromA(0), fromB(0)], to: &tracker)
        var changes = apply([.gpsd(.device(GPSDDevice(path: a.path)))], to: &tracker)
        #expect(
            changes == [
                .receiverDisconnected(path: a.path), .inputLost(.receiverRemoved(path: a.path)),
                .servedReceiver(path: b.path),
            ])
        changes = apply([fromA(1), fromB(1)], to: &tracker)
        #expect(changes == [.inputRestored, .position(epoch(2))], "A's late last cycle is dropped, B's epoch restores")
        // A comes back: B keeps serving (no preference), A is tracked again from scratch.
        changes = apply([.gpsd(.device(a)), fromA(2), fromB(2)], to: &tracker)
        #expect(changes == [.receiverConnected(path: a.path), .position(epoch(2))])
        #expect(tracker.receivers[a.path]?.epochs == 1 && tracker.served == b.path)
    }

    @Test func theServedOneGoingQuietFailsOverAndComesBackOnlyIfPreferred() {
        var tracker = InputTracker(streams: .perReceiver)
        _ = apply([.gpsd(.devices([a, b])), fromA(0), fromB(0)], to: &tracker)
        var changes = apply([.receiverQuiet(path: a.path, seconds: 3), fromB(1)], to: &tracker)
        #expect(
            changes == [
                .inputLost(.receiverSilent(seconds: 3)), .servedReceiver(path: b.path), .inputRestored,
                .position(epoch(2)),
            ])
        changes = apply([fromA(2), fromB(2)], to: &tracker)
        #expect(published(changes) == [2], "A speaks again: B stays served")

        var preferring = InputTracker(streams: .perReceiver, preferences: [.path(a.path)])
        _ = apply(
            [.gpsd(.devices([a, b])), fromA(0), fromB(0), .receiverQuiet(path: a.path, seconds: 3), fromB(1)],
            to: &preferring)
        #expect(preferring.served == b.path)
        changes = apply([fromA(2), fromB(2)], to: &preferring)
        #expect(
            changes == [.servedReceiver(path: a.path), .position(epoch(1))],
            "the preferred receiver takes over with its first epoch, seamlessly: the input never stopped")
    }

    @Test func aPreferredReceiverIsServedOnceItDeliversWhateverTheOpeningOrder() {
        var tracker = InputTracker(streams: .perReceiver, preferences: [.serialNumber("B-SERIAL")])
        tracker.serialNumbers = [b.path: "B-SERIAL"]
        var changes = apply([.gpsd(.devices([a, b])), fromA(0)], to: &tracker)
        #expect(published(changes) == [1], "B has not delivered yet: A is served meanwhile")
        changes = apply([fromB(0), fromA(1), fromB(1)], to: &tracker)
        #expect(published(changes) == [2, 2])
        #expect(changes.first == .servedReceiver(path: b.path))
    }

    @Test func aSerialNumberLearnedLaterChangesTheChoice() {
        var tracker = InputTracker(streams: .perReceiver, preferences: [.serialNumber("B-SERIAL")])
        _ = apply([.gpsd(.devices([a, b])), fromA(0), fromB(0)], to: &tracker)
        #expect(tracker.served == a.path)
        tracker.serialNumbers = [b.path: "B-SERIAL"]
        var changes: [InputChange] = []
        tracker.reselect(into: &changes)
        #expect(changes == [.servedReceiver(path: b.path)])
    }

    @Test func theLastReceiverGoingAndGPSDGoingAreLossesAsBefore() {
        var tracker = InputTracker(streams: .perReceiver)
        _ = apply([.gpsd(.devices([a, b])), fromA(0)], to: &tracker)
        var changes = apply([.gpsd(.connectionLost)], to: &tracker)
        #expect(
            changes == [
                .receiverDisconnected(path: a.path), .receiverDisconnected(path: b.path),
                .servedReceiver(path: nil), .inputLost(.gpsdConnectionLost),
            ])
        #expect(tracker.receivers.isEmpty && tracker.served == nil)
        changes = apply([.gpsd(.devices([b])), fromB(5)], to: &tracker)
        #expect(
            changes == [
                .receiverConnected(path: b.path), .servedReceiver(path: b.path), .inputRestored,
                .position(epoch(2)),
            ])
        // Not the served one: no loss.
        changes = apply([.gpsd(.device(a)), .gpsd(.device(GPSDDevice(path: a.path)))], to: &tracker)
        #expect(changes == [.receiverConnected(path: a.path), .receiverDisconnected(path: a.path)])
        #expect(tracker.state == .live)
    }
}
