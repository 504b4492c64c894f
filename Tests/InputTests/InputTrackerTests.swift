// InputTracker: the one copy of the input side's state (receivers present, input lost or live,
// gpsd connected), fed the events the gpsd thread forwards, in order. No threads, no clock.
import GNSS
import TestSupport
import Testing

@testable import Input

private let a = GPSDDevice(path: "/dev/ttyA", driver: "NMEA0183", activated: 1)
private let b = GPSDDevice(path: "/dev/ttyB", driver: "NMEA0183", activated: 2)
private func closed(_ device: GPSDDevice) -> GPSDDevice { GPSDDevice(path: device.path) }

private func position(_ latitude: Double) -> Position {
    var position = Position()
    position.latitude = latitude
    return position
}

/// Applies `events` in order and returns what changed.
private func apply(_ events: [ReceiverInputEvent], to tracker: inout InputTracker) -> [InputChange] {
    var changes: [InputChange] = []
    for event in events { tracker.apply(event, into: &changes) }
    return changes
}

@Suite("InputTracker: receivers present, input lost, gpsd connected", .tags(.unit))
struct InputTrackerTests {
    @Test func positionsMakeInputLiveAndBringItBackAfterALoss() {
        var tracker = InputTracker()
        #expect(tracker.state == .waiting)
        #expect(
            apply([.gpsd(.connected(release: "3.22")), .gpsd(.devices([a]))], to: &tracker)
                == [.receiverConnected(path: a.path)])
        #expect(tracker.gpsdRelease == "3.22")
        #expect(tracker.state == .waiting, "a receiver open is not input yet")
        #expect(apply([.position(position(1))], to: &tracker) == [.position(position(1))])
        #expect(tracker.state == .live)
        #expect(
            apply([.gpsd(.quiet(seconds: 3)), .position(position(2))], to: &tracker)
                == [.inputLost(.receiverSilent(seconds: 3)), .inputRestored, .position(position(2))])
    }

    @Test func twoReceiversInterleavedInputIsLostOnlyWhenTheLastOneCloses() {
        var tracker = InputTracker()
        var changes = apply([.gpsd(.devices([a])), .gpsd(.device(b))], to: &tracker)
        #expect(changes == [.receiverConnected(path: a.path), .receiverConnected(path: b.path)])
        changes = apply(
            [.position(position(1)), .position(position(2)), .position(position(1)), .position(position(2))],
            to: &tracker)
        #expect(changes.count == 4 && tracker.state == .live)
        // A closes: its receiver goes, the input stays live on B.
        changes = apply([.gpsd(.device(closed(a))), .position(position(2))], to: &tracker)
        #expect(changes == [.receiverDisconnected(path: a.path), .position(position(2))])
        #expect(tracker.activeDevices.keys.sorted() == [b.path])
        // B closes too: now the input is lost, and says which device went last.
        changes = apply([.gpsd(.device(closed(b)))], to: &tracker)
        #expect(changes == [.receiverDisconnected(path: b.path), .inputLost(.receiverRemoved(path: b.path))])
        #expect(tracker.activeDevices.isEmpty && tracker.state == .lost)
        // A close of a device never seen changes no receiver and reports no second loss.
        #expect(apply([.gpsd(.device(closed(a)))], to: &tracker) == [])
    }

    @Test func aQuietStreamIsALossOnlyWhileAReceiverIsOpenAndOnlyOnce() {
        var tracker = InputTracker()
        #expect(
            apply([.gpsd(.connected(release: "3.22")), .gpsd(.devices([])), .gpsd(.quiet(seconds: 3))], to: &tracker)
                == [],
            "no receiver: nothing to lose")
        #expect(tracker.state == .waiting)
        _ = apply([.gpsd(.device(a))], to: &tracker)
        #expect(
            apply([.gpsd(.quiet(seconds: 3)), .gpsd(.quiet(seconds: 3))], to: &tracker)
                == [.inputLost(.receiverSilent(seconds: 3))])
    }

    @Test func aLostConnectionTakesEveryReceiverAndTheReconnectBringsThemBack() {
        var tracker = InputTracker()
        _ = apply([.gpsd(.connected(release: "3.22")), .gpsd(.devices([b, a])), .position(position(1))], to: &tracker)
        var changes = apply([.gpsd(.connectionLost)], to: &tracker)
        #expect(
            changes == [
                .receiverDisconnected(path: a.path), .receiverDisconnected(path: b.path),
                .inputLost(.gpsdConnectionLost),
            ])
        #expect(tracker.gpsdRelease == nil && tracker.activeDevices.isEmpty)
        // Retries that fail while the loss stands add nothing.
        #expect(apply([.gpsd(.unreachable("connection refused"))], to: &tracker) == [])
        // gpsd is back (restarted: it lists only what was re-added so far).
        changes = apply(
            [.gpsd(.connected(release: "3.22")), .gpsd(.devices([a])), .position(position(3))], to: &tracker)
        #expect(changes == [.receiverConnected(path: a.path), .inputRestored, .position(position(3))])
        #expect(tracker.gpsdRelease == "3.22" && tracker.state == .live)
    }

    @Test func noGPSDAtStartIsALossBeforeAnyPosition() {
        var tracker = InputTracker()
        #expect(
            apply([.gpsd(.unreachable("connection refused"))], to: &tracker)
                == [.inputLost(.gpsdUnreachable("connection refused"))])
        #expect(tracker.state == .lost)
    }

    @Test func aDeviceListReplacesTheOpenSet() {
        var tracker = InputTracker()
        _ = apply([.gpsd(.devices([a, b]))], to: &tracker)
        let c = GPSDDevice(path: "/dev/ttyC")  // listed, not open
        #expect(apply([.gpsd(.devices([b, c]))], to: &tracker) == [.receiverDisconnected(path: a.path)])
        #expect(tracker.activeDevices.keys.sorted() == [b.path])
        // A later report of an open device keeps what gpsd learned about it (its driver).
        let bAgain = GPSDDevice(path: b.path, driver: "u-blox", activated: 2)
        #expect(apply([.gpsd(.device(bAgain))], to: &tracker) == [])
        #expect(tracker.activeDevices[b.path]?.driver == "u-blox")
    }
}
