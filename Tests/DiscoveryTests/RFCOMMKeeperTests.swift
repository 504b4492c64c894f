// RFCOMMKeeper with a fake kernel (this machine has no Bluetooth): start-up binds, a released tty
// is bound again after the rebinder's delay, failures are logged once and retried at the
// backoff's pace, a tty bound to another receiver is not taken for ours, and the state for
// `status` follows.
import Discovery
import Glibc
import Input
import Posix
import Synchronization
import TestSupport
import Testing

/// The kernel as the keeper sees it: which ttys exist (and whose), what `bind` does.
private final class FakeRFCOMM: RFCOMMControl {
    struct State {
        var ttys: [Int16: RFCOMMTTY] = [:]
        var failure: Errno?
        var binds: [RFCOMMBinding] = []
        var link = RFCOMMState.clean
    }
    let state = Mutex(State())

    func tty(device: Int16) -> RFCOMMTTY? { state.withLock { $0.ttys[device] } }

    func bind(_ binding: RFCOMMBinding) throws(RFCOMMError) {
        let failure = state.withLock { state -> Errno? in
            state.binds.append(binding)
            guard state.failure == nil else { return state.failure }
            state.ttys[binding.device] = RFCOMMTTY(
                device: binding.device, address: binding.address, channel: binding.channel)
            return nil
        }
        if let failure {
            throw .system(.bind(device: binding.device, address: binding.address, channel: binding.channel), failure)
        }
    }

    func linkState(device: Int16) -> RFCOMMState? { state.withLock { $0.ttys[device] == nil ? nil : $0.link } }

    func release(_ device: Int16) { state.withLock { _ = $0.ttys.removeValue(forKey: device) } }
    var bindCount: Int { state.withLock { $0.binds.count } }
}

private let second: Int64 = 1_000_000_000
private let trimble = RFCOMMBinding(device: 0, address: try! BluetoothAddress(parsing: "00:07:80:AB:CD:EF"), channel: 1)
private let emlid = RFCOMMBinding(device: 1, address: try! BluetoothAddress(parsing: "8C:AA:B5:01:02:03"), channel: 2)

@Suite("RFCOMMKeeper: configured Bluetooth receivers kept bound", .tags(.unit))
struct RFCOMMKeeperTests {
    @Test func startUpBindsEveryReceiverAndReportsTheirState() {
        let kernel = FakeRFCOMM()
        var keeper = RFCOMMKeeper(bindings: [trimble, emlid], control: kernel, now: 0)
        #expect(keeper.boundPaths.isEmpty)
        let tick = keeper.tick(now: 0)
        #expect(tick.bound == ["/dev/rfcomm0", "/dev/rfcomm1"])
        #expect(
            tick.log == [
                "bluetooth: bound rfcomm0 -> 00:07:80:AB:CD:EF channel 1",
                "bluetooth: bound rfcomm1 -> 8C:AA:B5:01:02:03 channel 2",
            ])
        #expect(tick.next == RFCOMMKeeper.checkInterval, "all bound: checked every 2 s")
        #expect(keeper.status.map(\.isBound) == [true, true])
        #expect(keeper.status.map(\.link) == [.clean, .clean])
        #expect(keeper.status.map(\.binds) == [1, 1])
        #expect(keeper.tick(now: 2 * second) == RFCOMMKeeper.Tick(), "nothing to do while bound")
    }

    @Test func aReleasedTTYIsBoundAgainAfterTheFirstDelay() {
        let kernel = FakeRFCOMM()
        var keeper = RFCOMMKeeper(bindings: [trimble], control: kernel, now: 0)
        _ = keeper.tick(now: 0)
        kernel.state.withLock { $0.link = .connected }
        _ = keeper.tick(now: second)
        #expect(keeper.status.first?.link == .connected, "link up while gpsd reads it")

        kernel.release(0)
        var tick = keeper.tick(now: 3 * second)
        #expect(tick.gone == ["/dev/rfcomm0"] && tick.bound.isEmpty)
        #expect(tick.next == 500_000_000, "the rebinder's first delay")
        #expect(keeper.status.first?.isBound == false && keeper.status.first?.link == nil)
        tick = keeper.tick(now: 3 * second + 500_000_000)
        #expect(tick.bound == ["/dev/rfcomm0"])
        #expect(keeper.status.first?.binds == 2 && kernel.bindCount == 2)
    }

    @Test func failuresAreLoggedOnceAndRetriedWithBackoff() {
        let kernel = FakeRFCOMM()
        kernel.state.withLock { $0.failure = Errno(rawValue: EBUSY) }
        var keeper = RFCOMMKeeper(bindings: [trimble], control: kernel, now: 0)
        // The loop's way: tick, then again after what it asked for; note when binds were tried.
        var now: Int64 = 0
        var attempts: [Int64] = []
        var lines: [String] = []
        while attempts.count < 5 {
            let before = kernel.bindCount
            let tick = keeper.tick(now: now)
            lines += tick.log
            if kernel.bindCount > before { attempts.append(now) }
            #expect(tick.next > 0 && tick.next <= RFCOMMKeeper.checkInterval)
            now += tick.next
        }
        #expect(attempts == [0, 1, 3, 7, 15].map { $0 * second }, "waits doubling from 1 s")
        #expect(lines.count == 1, "one line per distinct failure, not per retry: \(lines)")
        #expect(lines.first?.hasPrefix("bluetooth: cannot bind rfcomm0 -> 00:07:80:AB:CD:EF channel 1: ") == true)
        #expect(keeper.status.first?.failures == 5)
        #expect(keeper.status.first?.lastError?.errno == Errno(rawValue: EBUSY))

        // Fixed: the next attempt (31 s, 16 s after the last) binds, and the failure is forgotten.
        kernel.state.withLock { $0.failure = nil }
        var bound: [String] = []
        while bound.isEmpty && now <= 31 * second {
            let tick = keeper.tick(now: now)
            bound = tick.bound
            now += tick.next
        }
        #expect(bound == ["/dev/rfcomm0"] && kernel.bindCount == 6)
        #expect(keeper.status.first?.lastError == nil && keeper.status.first?.failures == 0)
    }

    @Test func noBluetoothInTheKernelWaitsTheLongestAtOnce() {
        let kernel = FakeRFCOMM()
        kernel.state.withLock { $0.failure = Errno(rawValue: EAFNOSUPPORT) }
        var keeper = RFCOMMKeeper(bindings: [trimble], control: kernel, now: 0)
        let tick = keeper.tick(now: 0)
        #expect(tick.next == RFCOMMKeeper.checkInterval, "checks stay at 2 s; the bind waits 30 s")
        #expect(tick.log.first?.contains("next attempt in 30.0 s") == true, "\(tick.log)")
        #expect(keeper.tick(now: 29 * second).log.isEmpty && kernel.bindCount == 1)
        _ = keeper.tick(now: 30 * second)
        #expect(kernel.bindCount == 2)
    }

    @Test func aTTYBoundToAnotherReceiverIsNotOurs() {
        let kernel = FakeRFCOMM()
        kernel.state.withLock {
            $0.ttys[0] = RFCOMMTTY(device: 0, address: emlid.address, channel: 1)
            $0.failure = Errno(rawValue: EADDRINUSE)
        }
        var keeper = RFCOMMKeeper(bindings: [trimble], control: kernel, now: 0)
        let tick = keeper.tick(now: 0)
        #expect(tick.bound.isEmpty && keeper.status.first?.isBound == false)
        #expect(kernel.bindCount == 1, "tried, and refused: the number is taken")

        // Someone binds it the way it is configured (rfcomm bind by hand): read, not re-bound.
        kernel.state.withLock { $0.ttys[0] = RFCOMMTTY(device: 0, address: trimble.address, channel: 1) }
        let adopted = keeper.tick(now: second)
        #expect(
            adopted.bound == ["/dev/rfcomm0"]
                && adopted.log == [
                    "bluetooth: rfcomm0 -> 00:07:80:AB:CD:EF channel 1 is bound (by someone else): reading it"
                ])
        #expect(kernel.bindCount == 1)
    }
}
