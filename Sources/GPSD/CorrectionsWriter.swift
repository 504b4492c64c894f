import Posix
import Synchronization

/// Writes correction frames (RTCM 3, whole and CRC-checked by the caller) to the served
/// receiver, unchanged and in order, on a thread of its own ("corrections"): the io thread only
/// queues them (`submit` never waits).
///
/// **Route, per device.** gpsd owns the receiver's tty, so the bytes go where they leave gpsd
/// owning it:
/// - `gpsd`: through gpsd's control socket, `&PATH=HEX` (GPSDControlSocket says what gpsd 3.22
///   does with it), when a socket is known. One command per frame (a frame longer than one
///   command can carry goes in several, in order), each sent after the previous one's `OK`, on a
///   connection that is closed as soon as the queue is empty or `commandsPerConnection` commands
///   have gone: gpsd waits on nothing else while it is open.
/// - `tty`: the device itself, opened `O_WRONLY|O_NOCTTY|O_NONBLOCK` (gpsd keeps its termios),
///   when there is no control socket, or gpsd answers `ERROR` (it runs read-only, `-b`, as the
///   bridge's private gpsd does unless `gpsd-read-only = no`; or it does not have the device
///   open), or cannot be reached. The descriptor is closed whenever the queue runs empty: gpsd
///   3.22 refuses to open a serial receiver another process holds (serial.c, `fusercount`), so
///   holding it between bursts could cost the input after a gpsd restart or a re-plug. gpsd 3.22
///   also locks USB and RS-232 receivers (TIOCEXCL; not ptys, not Bluetooth rfcomm): beside it
///   only root may open them, so a bridge running as another user with a read-only gpsd has no
///   route to such a receiver (EBUSY, counted, logged and in `lastError` with the fix: a gpsd
///   that may write).
///
/// The route is chosen once per device (logged) and chosen again after a failure; a change of
/// device closes whatever the old one had open.
///
/// **A receiver that stops reading.** A frame the tty takes none of within
/// `frameTimeoutMilliseconds` is a write failure (dropped whole, nothing of it sent). A frame the
/// tty took part of is finished before anything else, however long that takes (half a frame
/// would make the receiver misread the next one too): the wait ends when the tty takes more, the
/// device fails, a frame for another device is queued, or `stop()`. Meanwhile the queue fills and
/// new frames are dropped whole (`framesDropped`).
///
/// **Queue.** Bounded by bytes (frames waiting plus the one being written); a frame that does not
/// fit is refused and counted, the queue is not disturbed (the receiver gets older frames whole,
/// rather than a gap in the middle of a burst).
public final class CorrectionsWriter: Sendable {
    public enum Route: String, Sendable { case gpsd, tty }

    public struct Statistics: Equatable, Sendable {
        public var framesWritten = 0, bytesWritten = 0
        /// Queue full (the receiver side slower than the caster): whole frames refused by `submit`.
        public var framesDropped = 0
        /// Frames that could not be written (device gone, EIO, permission, a receiver that took
        /// nothing for `frameTimeoutMilliseconds`, gpsd not answering).
        public var writeFailures = 0
        /// When a frame was last written whole (monotonic nanoseconds, Posix's clock).
        public var lastWrittenAt: Int64? = nil
        /// The route in force for `device` (nil until chosen, and after a failure until the next frame).
        public var route: Route? = nil, device: String? = nil
        /// Why the last frame that failed failed, or what holds one up now (a receiver not reading
        /// the rest of a frame), for a person ("cannot open /dev/ttyACM0: Permission denied").
        public var lastError: String? = nil

        public init() {}
    }

    /// How long the tty may take none of a frame before the frame counts as failed.
    public static let frameTimeoutMilliseconds: Int32 = 1000
    /// Commands on one gpsd connection before it is closed, so that a long backlog does not keep
    /// gpsd from its receivers (each command is a round trip of tens of microseconds).
    public static let commandsPerConnection = 32

    public let queueLimitBytes: Int
    /// gpsd's control socket, once known (`useGPSDControlSocket`): the daemon makes the writer,
    /// and its thread, before it drops privileges, and learns the socket when its input starts.
    private let controlSocket: Mutex<GPSDControlSocket?>
    var control: GPSDControlSocket? { controlSocket.withLock { $0 } }
    let log: Logger
    private let state: Mutex<State>
    /// Signalled by `submit` (and `stop`): the idle thread wakes.
    private let frameArrived: WakeUpEvent
    /// Signalled by `stop`: a wait for the tty ends.
    let stopRequested: WakeUpEvent
    private let thread = Mutex<OSThread?>(nil)

    struct Frame {
        let bytes: [UInt8]
        let device: String
    }

    private struct State {
        /// Waiting frames from `head` on (the taken ones before it are released by compaction).
        var frames: [Frame?] = []
        var head = 0
        /// Bytes of the waiting frames and of the one being written.
        var bytes = 0
        var stopping = false
        var statistics = Statistics()
    }

    /// `gpsdControlSocket`: gpsd's control socket (gpsd -F PATH) if known. Starts a thread named
    /// "corrections".
    public init(gpsdControlSocket: String?, queueLimitBytes: Int = 64 * 1024, log: Logger) throws(Errno) {
        precondition(queueLimitBytes > 0, "the corrections queue needs room")
        self.queueLimitBytes = queueLimitBytes
        controlSocket = Mutex(gpsdControlSocket.map(GPSDControlSocket.init(path:)))
        self.log = log
        state = Mutex(State())
        frameArrived = try WakeUpEvent()
        stopRequested = try WakeUpEvent()
        let started = try OSThread(name: "corrections") { [self] in DeviceWriter(owner: self).run() }
        thread.withLock { $0 = started }
    }

    /// Never waits. Queues the frame for `devicePath`; false (and counted in framesDropped) when
    /// the queue is full, false (not counted) once `stop()` has begun.
    /// Uses gpsd's control socket at `path` (nil: none) for the frames from now on; a device's
    /// route is chosen again with it.
    public func useGPSDControlSocket(_ path: String?) {
        controlSocket.withLock { $0 = path.map(GPSDControlSocket.init(path:)) }
    }

    @discardableResult
    public func submit(_ frame: [UInt8], to devicePath: String) -> Bool {
        guard !frame.isEmpty else { return true }
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            guard state.bytes + frame.count <= queueLimitBytes else {
                state.statistics.framesDropped += 1
                return false
            }
            state.frames.append(Frame(bytes: frame, device: devicePath))
            state.bytes += frame.count
            return true
        }
        if accepted { frameArrived.signal() }
        return accepted
    }

    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// The writer thread's kernel id once it runs, nil after `stop()` (for tests: its entry in
    /// /proc/self/task shows whether it is still alive).
    public var threadKernelID: Int32? { thread.withLock { $0?.kernelID } }

    /// Bytes queued or being written (for tests and the status view).
    public var queuedBytes: Int { state.withLock { $0.bytes } }

    /// Discards what is still queued, ends a wait for the tty, and joins the thread (which may
    /// first wait for gpsd's answer to a command under way, `GPSDControlSocket.replyTimeoutMilliseconds`
    /// at most). Idempotent; call it from any thread but the writer's own.
    public func stop() {
        state.withLock { state in
            state.stopping = true
            state.frames.removeAll()
            state.head = 0
            state.bytes = 0
        }
        stopRequested.signal()
        frameArrived.signal()
        let running = thread.withLock { current -> OSThread? in
            defer { current = nil }
            return current
        }
        running?.join()
    }

    // MARK: - The writer thread's side

    enum Next {
        case frame(Frame)
        case empty
        case stop
    }

    /// The oldest waiting frame (its bytes stay counted until `finished`).
    func next() -> Next {
        state.withLock { state in
            if state.stopping { return .stop }
            guard state.head < state.frames.count, let frame = state.frames[state.head] else { return .empty }
            state.frames[state.head] = nil
            state.head += 1
            if state.head == state.frames.count {
                state.frames.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 64 && state.head * 2 >= state.frames.count {
                state.frames.removeFirst(state.head)
                state.head = 0
            }
            return .frame(frame)
        }
    }

    /// Sleeps until a frame is submitted or `stop()` (the timeout only bounds a lost wake-up).
    func waitForFrames() {
        _ = frameArrived.wait(milliseconds: 1000)
        frameArrived.clear()
    }

    /// Whether a frame for a device other than `device` waits.
    func isQueued(forOtherThan device: String) -> Bool {
        state.withLock { state in
            state.frames[state.head...].contains { $0.map { $0.device != device } ?? false }
        }
    }

    /// What became of a frame `next()` gave.
    enum Outcome {
        case written
        case failed(String)
        /// `stop()` ended it: not counted.
        case abandoned
    }

    func finished(_ frame: Frame, _ outcome: Outcome, route: Route?) {
        state.withLock { state in
            guard !state.stopping else { return }
            state.bytes -= frame.bytes.count
            state.statistics.device = frame.device
            state.statistics.route = route
            switch outcome {
            case .written:
                state.statistics.framesWritten += 1
                state.statistics.bytesWritten += frame.bytes.count
                state.statistics.lastWrittenAt = monotonicNanoseconds()
            case .failed(let reason):
                state.statistics.writeFailures += 1
                state.statistics.lastError = reason
            case .abandoned:
                break
            }
        }
    }

    /// Records a problem that has not failed a frame (yet): a receiver not reading the rest of one.
    func note(_ problem: String) {
        state.withLock { $0.statistics.lastError = problem }
    }

    func route(_ route: Route?, for device: String) {
        state.withLock { state in
            state.statistics.device = device
            state.statistics.route = route
        }
    }
}

/// The writer thread's state: the device frames go to, its route, and what is open for it.
/// Confined to the thread (made there, never shared).
private final class DeviceWriter {
    let owner: CorrectionsWriter
    var device: String?
    var route: CorrectionsWriter.Route?
    var tty: OpenTTY?
    var gpsd: OpenControl?
    /// The route last logged for `device` (a route chosen again after a failure is logged only
    /// when it changes).
    var loggedRoute: CorrectionsWriter.Route?
    /// The kinds of failure logged since the last frame written (each kind is logged once a spell).
    var loggedFailures: Set<String> = []

    final class OpenTTY {
        let descriptor: FileDescriptor
        init(_ descriptor: consuming FileDescriptor) { self.descriptor = descriptor }
    }

    final class OpenControl {
        let connection: GPSDControlSocket.Connection
        var commands = 0
        init(_ connection: consuming GPSDControlSocket.Connection) { self.connection = connection }
    }

    init(owner: CorrectionsWriter) { self.owner = owner }

    var log: Logger { owner.log }

    func run() {
        while true {
            switch owner.next() {
            case .frame(let frame):
                let outcome = write(frame)
                owner.finished(frame, outcome, route: route)
            case .empty:
                // Nothing held between bursts: gpsd waits on an open control connection, and
                // refuses to reopen a receiver someone else has open.
                gpsd = nil
                tty = nil
                owner.waitForFrames()
            case .stop:
                gpsd = nil
                tty = nil
                return
            }
        }
    }

    private func write(_ frame: CorrectionsWriter.Frame) -> CorrectionsWriter.Outcome {
        if frame.device != device { switchDevice(to: frame.device) }
        if route == nil { choose(owner.control == nil ? .tty : .gpsd, because: "no gpsd control socket is known") }
        var offset = 0
        if route == .gpsd {
            switch writeThroughGPSD(frame.bytes, to: frame.device) {
            case .written:
                logRoute(.gpsd)
                return succeeded()
            case .failed(let kind, let reason):
                return failed(kind, reason)
            case .notTaken(let written, let reason):
                // gpsd wrote nothing of the refused command: the tty takes the frame from there.
                offset = written
                choose(.tty, because: reason)
            }
        }
        return writeToTTY(frame.bytes, from: offset, device: frame.device)
    }

    private func switchDevice(to path: String) {
        gpsd = nil
        tty = nil
        device = path
        route = nil
        loggedRoute = nil
        loggedFailures = []
        owner.route(nil, for: path)
    }

    /// Sets the route; the tty route is logged now, the gpsd route once gpsd has taken a frame (a
    /// read-only gpsd refuses the first one, and the tty is logged instead).
    private func choose(_ chosen: CorrectionsWriter.Route, because reason: String) {
        route = chosen
        guard chosen == .tty else { return }
        gpsd = nil  // gpsd would wait on the connection while the tty is written
        logRoute(.tty, because: reason)
    }

    /// Logs the route for the device, unless it is the one last logged.
    private func logRoute(_ chosen: CorrectionsWriter.Route, because reason: String = "") {
        guard chosen != loggedRoute, let device else { return }
        loggedRoute = chosen
        switch chosen {
        case .gpsd:
            log("corrections for \(device): written through gpsd's control socket \(owner.control?.path ?? "")")
        case .tty:
            log("corrections for \(device): written to the device directly (\(reason))")
        }
    }

    private func succeeded() -> CorrectionsWriter.Outcome {
        loggedFailures = []
        return .written
    }

    /// A failed frame: counted, logged the first time its kind occurs in a spell, and the route
    /// chosen again for the next frame (whatever was open for this one is closed).
    private func failed(_ kind: String, _ reason: String) -> CorrectionsWriter.Outcome {
        if loggedFailures.insert(kind).inserted { log.warning("corrections: \(reason)") }
        gpsd = nil
        tty = nil
        route = nil
        return .failed(reason)
    }

    // MARK: gpsd

    private enum GPSDResult {
        case written
        /// gpsd did not write the bytes from `written` on: they may go another way.
        case notTaken(written: Int, reason: String)
        /// Whether gpsd wrote them is unknown.
        case failed(kind: String, reason: String)
    }

    private func writeThroughGPSD(_ bytes: [UInt8], to device: String) -> GPSDResult {
        guard let control = owner.control else { return .notTaken(written: 0, reason: "no gpsd control socket") }
        let chunk = GPSDControlSocket.maximumWriteLength(to: device)
        var offset = 0
        while offset < bytes.count {
            let open: OpenControl
            if let current = gpsd {
                open = current
            } else {
                do {
                    open = OpenControl(try control.connect())
                } catch {
                    return .notTaken(written: offset, reason: error.description)
                }
                gpsd = open
            }
            let end = min(bytes.count, offset + chunk)
            do {
                try open.connection.write(bytes[offset..<end], to: device)
            } catch {
                gpsd = nil
                switch error {
                case .refused:
                    return .notTaken(
                        written: offset,
                        reason:
                            "gpsd answered ERROR to a write: it runs read-only (-b) or does not have the device open")
                case .invalidPath, .unreachable:
                    return .notTaken(written: offset, reason: error.description)
                case .noAnswer:
                    return .failed(kind: "gpsd-no-answer", reason: error.description)
                }
            }
            offset = end
            open.commands += 1
            if open.commands >= CorrectionsWriter.commandsPerConnection { gpsd = nil }
        }
        return .written
    }

    // MARK: tty

    private func writeToTTY(_ bytes: [UInt8], from offset: Int, device: String) -> CorrectionsWriter.Outcome {
        let open: OpenTTY
        if let current = tty {
            open = current
        } else {
            do {
                // No termios change: gpsd set the line up and keeps it.
                open = OpenTTY(try FileDescriptor.openTerminalForWriting(device))
            } catch {
                // gpsd's lock (TIOCEXCL) lets only root open the tty beside it: gpsd must write.
                let hint =
                    error == .deviceBusy
                    ? " (gpsd holds the device exclusively and is read-only: set gpsd-read-only = no "
                        + "(private gpsd) or use a system gpsd without -b)"
                    : ""
                return failed("open \(error.rawValue)", "cannot open \(device): \(error)\(hint)")
            }
            tty = open
        }
        let stopRequested = owner.stopRequested
        var ending: TTYWaitEnd?
        do throws(Errno) {
            try writeAll(bytes.span.extracting(offset..<bytes.count), to: open.descriptor.rawValue) { written in
                let started = offset + written > 0
                while true {
                    let readiness: FileDescriptor.WriteReadiness
                    do throws(Errno) {
                        readiness = try open.descriptor.waitWritable(
                            milliseconds: CorrectionsWriter.frameTimeoutMilliseconds, interrupt: stopRequested)
                    } catch {
                        ending = .waitFailed(error)
                        return false
                    }
                    switch readiness {
                    case .writable:
                        return true
                    case .interrupted:
                        ending = .stopped
                        return false
                    case .timedOut where !started:
                        ending = .stalled
                        return false
                    case .timedOut:
                        owner.note("the receiver on \(device) is not reading: part of a frame waits for it")
                        if loggedFailures.insert("stalled mid-frame").inserted {
                            log.warning("corrections: the receiver on \(device) is not reading; part of a frame waits")
                        }
                        if owner.isQueued(forOtherThan: device) {
                            ending = .otherDevice
                            return false
                        }
                    }
                }
            }
        } catch {
            switch ending {
            case .stopped:
                return .abandoned
            case .stalled:
                return failed(
                    "stalled",
                    "the receiver on \(device) took nothing for \(CorrectionsWriter.frameTimeoutMilliseconds) ms: "
                        + "frame dropped")
            case .otherDevice:
                return failed("abandoned", "the rest of a frame for \(device) was dropped: corrections go elsewhere")
            case .waitFailed(let waitError):
                return failed("poll \(waitError.rawValue)", "cannot wait for \(device): \(waitError)")
            case nil:
                return failed("write \(error.rawValue)", "cannot write to \(device): \(error)")
            }
        }
        return succeeded()
    }

    private enum TTYWaitEnd {
        case stopped, stalled, otherDevice
        case waitFailed(Errno)
    }
}
