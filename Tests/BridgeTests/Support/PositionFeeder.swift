// A receiver for in-process bridges: the capture's positions posted to the input side at a
// fixed pace on a thread of its own, as the gpsd thread would post them.
import Bridge
import GNSS
import GPSD
import Input
import Posix
import Synchronization
import TestSupport

final class PositionFeeder: Sendable {
    /// Set by `stop`; the feeding thread polls it between positions.
    private final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    private let stopping = Flag()
    private let thread: OSThread

    /// Starts posting `positions` (round and round) to `bridge` every `interval`.
    init(_ bridge: TestBridge, positions: [Position], every interval: Duration) throws {
        let stopping = self.stopping
        thread = try OSThread(name: "feeder") {
            var index = 0
            while !stopping.value.load(ordering: .relaxed) {
                bridge.input.post(.position(positions[index % positions.count]))
                index += 1
                sleep(for: interval)  // the receiver's pace, not a wait for a result
            }
        }
    }

    /// Stops posting and waits for the thread.
    func stop() {
        stopping.value.store(true, ordering: .relaxed)
        thread.join()
    }
}
