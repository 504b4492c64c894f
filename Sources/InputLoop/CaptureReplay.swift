import BridgeCore
import Posix
import Synchronization

// A recorded receiver played back through a pseudo-terminal, so gpsd reads it exactly as it reads
// a serial receiver: the demo (`tmm-bridge run --demo`, `make run`) and `--replay FILE`.
//
// The capture is cut into epochs at each repeat of its first sentence type (nmea-rtk.log: a GGA
// starts each epoch, an RMC ends it), and the epochs are written at the capture's own rate, taken
// from the time field of those first sentences (10 Hz for nmea-rtk.log), looping forever. gpsd's
// comment lines (`#`) are skipped. The cutting is ReplayCapture (pure, ReplayCapture.swift).

/// Plays a capture into a pty on a thread of its own until stopped.
public final class CaptureReplayer: Sendable {
    private struct State {
        var stopping = false
        var thread: OSThread?
        var loops = 0
    }

    public let capture: ReplayCapture
    /// The device path gpsd is given (`/dev/pts/N`).
    public let devicePath: String
    private let controller: CInt
    private let device: CInt
    private let state = Mutex(State())

    /// Opens the pty (nothing is written until `start`).
    public init(capture: ReplayCapture) throws(Errno) {
        self.capture = capture
        let pty = try Pseudoterminal()
        try pty.controller.setNonBlocking(true)
        devicePath = pty.devicePath
        // The descriptors are owned by this object from here on (closed in deinit).
        (controller, device) = pty.release()
    }

    deinit {
        FileDescriptor(adopting: controller).close()
        FileDescriptor(adopting: device).close()
    }

    /// Times the capture has been played to its end.
    public var loops: Int { state.withLock { $0.loops } }

    public func start() throws(Errno) {
        let thread = try OSThread(name: "replay") { [self] in run() }
        state.withLock { $0.thread = thread }
    }

    public func stop() {
        let thread = state.withLock { state -> OSThread? in
            state.stopping = true
            return state.thread
        }
        thread?.join()
    }

    private func run() {
        var next = monotonicNanoseconds()
        while true {
            for epoch in capture.epochs {
                if state.withLock({ $0.stopping }) { return }
                write(epoch)
                next += capture.period
                let now = monotonicNanoseconds()
                // After a stall (machine suspended, gpsd not reading) continue from now, not in a burst.
                if next < now - capture.period { next = now }
                sleepUntil(next)
            }
            state.withLock { $0.loops += 1 }
        }
    }

    /// Writes one epoch; when nobody reads the pty (gpsd not started yet) the bytes are dropped,
    /// as a real receiver's would be.
    private func write(_ bytes: [UInt8]) {
        var attempts = 0
        // Full (nobody reads): up to 10 waits of 1 ms, then the rest is dropped; so is everything
        // after any other error.
        _ = try? writeAll(bytes.span, to: controller) { _ in
            attempts += 1
            guard attempts <= 10 else { return false }
            sleep(nanoseconds: 1_000_000)
            return true
        }
    }

    private func sleepUntil(_ deadline: Int64) {
        while !state.withLock({ $0.stopping }) {
            let left = deadline - monotonicNanoseconds()
            if left <= 0 { return }
            sleep(nanoseconds: min(left, 50_000_000))
        }
    }
}
