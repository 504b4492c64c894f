import Input
import Posix
import Synchronization

/// The gpsd thread: one libgps connection (watching JSON and NMEA), and a transport only. Every
/// NMEA line goes, as the bytes gpsd sent, to the consumer handed to `start` (which decodes it on
/// this thread; docs/ARCHITECTURE.md says why), and everything else gpsd says or that happens to
/// the connection goes to it as a `GPSDEvent`, in order. Reconnects with capped backoff when gpsd
/// goes away, and re-adds the devices the bridge handed over that a restarted gpsd lacks. What
/// the events mean for the input (receivers present, input lost or back) is the consumer's
/// side's to decide; nothing here tracks it.
public final class GPSDSession: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: UInt16
        /// Starts this session's log lines (a receiver's watch: "/dev/ttyACM0: ").
        public var logPrefix = ""
        /// First reconnect attempt after a loss, then doubled up to `maximumBackoff`.
        public var initialBackoff: Int64 = 250_000_000
        public var maximumBackoff: Int64 = 5_000_000_000
        /// How long `wait` blocks before the thread checks for stop and gives the consumer its
        /// `idle` call (where a stalled cycle is emitted).
        public var pollInterval: Int64 = 50_000_000
        /// No NMEA line for this long (while connected) is reported as `GPSDEvent.quiet`; at
        /// least three receiver periods.
        public var silenceTimeout: Int64 = 3_000_000_000
        /// gpsd's control socket, when the bridge manages devices (private gpsd, or a system gpsd
        /// whose socket it may use). Wanted devices are re-added after gpsd restarts.
        public var controlSocket: String?
        /// The user the bridge's private gpsd runs as when that is not gpsd's or the bridge's
        /// own (a root bridge that drops to `user` starts gpsd as that user): trusted on this
        /// session only, never for a system gpsd.
        public var privateGPSDUser: UInt32?
        /// What the watch asks gpsd for: every device's NMEA untagged (`everything`), only the
        /// device reports (`devices`: no NMEA, no quiet watchdog), or one device's NMEA
        /// (`device(path)`, the per-receiver stream).
        public var watch = GPSDWatch.everything

        public init(host: String = "127.0.0.1", port: UInt16 = 2947) {
            self.host = host
            self.port = port
        }
    }

    /// The transport's counters, readable from any thread. (Epochs and rejected sentences are
    /// counted by whoever decodes: the consumer.)
    public struct Statistics: Sendable, Equatable {
        public var connections = 0
        public var nmeaLines = 0
        /// TPV, SKY and GST objects handed to the consumer.
        public var reports = 0
        /// TPV, SKY and GST lines that were not well-formed JSON or that libgps could not parse
        /// whole, and lines over `GPSDConnection.lineCapacity`: dropped.
        public var malformedReports = 0
        public var otherLines = 0
    }

    public let configuration: Configuration
    private let control = Mutex(Control())
    private let counters = Mutex(Statistics())
    private let log: Logger

    private struct Control {
        var stopping = false
        var finished = false
        var thread: OSThread?
        /// Devices the bridge wants gpsd to read (re-added when a restarted gpsd lacks them), with
        /// when they were last handed over.
        var wanted: [String: Int64] = [:]
    }

    /// A session that is not started yet: `addDevice` and `removeDevice` work at once (they only
    /// talk to gpsd's control socket); lines flow once `start` hands over a consumer.
    public init(_ configuration: Configuration, log: Logger) {
        self.configuration = configuration
        self.log = log
    }

    public var statistics: Statistics { counters.withLock { $0 } }

    /// Starts the gpsd thread; `consumer` moves to it and gets every line and event from now on.
    public func start(feeding consumer: consuming some GPSDStreamConsumer) throws(Errno) {
        // One receiver's watch is named after it ("gpsd:ttyUSB0"; the kernel keeps 15 bytes).
        let name: String
        if case .device(let path) = configuration.watch {
            name = "gpsd:" + (path.split(separator: "/").last.map(String.init) ?? path)
        } else {
            name = "gpsd"
        }
        let thread = try OSThread(name: name) { [self, consumer] in
            var consumer = consumer
            run(&consumer)
            control.withLock { $0.finished = true }
        }
        control.withLock { $0.thread = thread }
    }

    /// Stops the thread (within one poll interval) and closes the connection.
    public func stop() {
        let thread = control.withLock { state -> OSThread? in
            state.stopping = true
            return state.thread
        }
        thread?.join()
    }

    /// Asks the thread to stop without waiting for it (the io loop's way: `stop()` would wait up
    /// to a poll interval); `hasFinished` says when `stop()` will return at once.
    public func requestStop() {
        control.withLock { $0.stopping = true }
    }

    /// The thread has returned (or never started).
    public var hasFinished: Bool { control.withLock { $0.finished || $0.thread == nil } }

    private var stopping: Bool { control.withLock { $0.stopping } }

    /// Asks gpsd to read `path` now, and again whenever a restarted gpsd lacks it.
    public func addDevice(_ path: String) throws(GPSDControlSocket.Failure) {
        control.withLock { $0.wanted[path] = monotonicNanoseconds() }
        guard let socket = configuration.controlSocket else { return }
        try GPSDControlSocket(path: socket).add(path)
        // The grace runs from gpsd's answer: a gpsd that may write takes ~3 s to give it.
        control.withLock { state in
            if state.wanted[path] != nil { state.wanted[path] = monotonicNanoseconds() }
        }
    }

    /// Asks gpsd to close `path` and forgets it.
    public func removeDevice(_ path: String) throws(GPSDControlSocket.Failure) {
        control.withLock { _ = $0.wanted.removeValue(forKey: path) }
        guard let socket = configuration.controlSocket else { return }
        try GPSDControlSocket(path: socket).remove(path)
    }

    /// How long after handing a device to gpsd a device list without it is not taken as lost: a
    /// WATCH answered just before gpsd opened the device lists none, and a second `+path` would
    /// only get ERROR (gpsd already has it). Such devices are checked again once this has passed.
    static let handOffGrace: Int64 = 3_000_000_000

    /// Re-adds wanted devices missing from gpsd's list (after gpsd restarted). Devices handed over
    /// within `handOffGrace` are returned instead, with the time to check them again.
    private func restoreWanted(missingFrom devices: [GPSDDevice], now: Int64) -> [String: Int64] {
        guard configuration.controlSocket != nil else { return [:] }
        let present = Set(devices.map(\.path))
        var later: [String: Int64] = [:]
        for (path, addedAt) in control.withLock({ $0.wanted }).sorted(by: { $0.key < $1.key })
        where !present.contains(path) {
            if now - addedAt < Self.handOffGrace {
                later[path] = addedAt + Self.handOffGrace
            } else {
                reAdd(path)
            }
        }
        return later
    }

    private func reAdd(_ path: String) {
        guard let socket = configuration.controlSocket else { return }
        do {
            try GPSDControlSocket(path: socket).add(path)
            control.withLock { $0.wanted[path] = monotonicNanoseconds() }
            log("\(configuration.logPrefix)re-added \(path) to gpsd")
        } catch {
            log.warning("\(configuration.logPrefix)cannot re-add \(path) to gpsd: \(error)")
        }
    }

    private func run<Consumer: GPSDStreamConsumer>(_ consumer: inout Consumer) {
        var backoff = configuration.initialBackoff
        // Connection failures are reported until the first connection, once per reason; after
        // that a loss has been reported as `connectionLost` and the retries are quiet.
        var reportedFailure: String?
        var everConnected = false
        while !stopping {
            let connection: GPSDConnection
            do throws(GPSDError) {
                connection = try Self.open(configuration)
            } catch {
                if !everConnected && reportedFailure != error.description {
                    reportedFailure = error.description
                    log.warning(
                        "\(configuration.logPrefix)gpsd at \(configuration.host):\(configuration.port): "
                            + "\(error); retrying"
                    )
                    consumer.event(.unreachable(error.description), now: monotonicNanoseconds())
                }
                pause(backoff)
                backoff = min(backoff * 2, configuration.maximumBackoff)
                continue
            }
            everConnected = true
            backoff = configuration.initialBackoff
            counters.withLock { $0.connections += 1 }
            serve(connection, into: &consumer)
            if !stopping {
                // The main session says it once; a receiver's watch loses its connection with it.
                if case .device = configuration.watch {
                } else {
                    log.warning("\(configuration.logPrefix)gpsd input lost: gpsd closed the connection")
                }
                consumer.event(.connectionLost, now: monotonicNanoseconds())
                pause(configuration.initialBackoff)
            }
        }
    }

    private static func open(_ configuration: Configuration) throws(GPSDError) -> GPSDConnection {
        let connection = try GPSDConnection(host: configuration.host, port: configuration.port)
        // Checked on every connection, before a single line is read: whatever answered after a
        // restart may not be the gpsd that answered before (GPSDTrust).
        let verdict = GPSDTrust.check(connected: connection.descriptor, alsoTrusted: configuration.privateGPSDUser)
        guard verdict.isUsable else { throw GPSDError("refusing to read this gpsd: \(verdict)") }
        try connection.watch(configuration.watch)
        return connection
    }

    /// Reads from one connection until it fails or the session stops.
    private func serve<Consumer: GPSDStreamConsumer>(
        _ connection: borrowing GPSDConnection, into consumer: inout Consumer
    ) {
        var buffer = [UInt8](repeating: 0, count: GPSDConnection.lineCapacity)
        // The quiet watchdog: re-armed by every line and every device gpsd activates (a receiver
        // just opened gets the whole timeout), reported once per quiet spell.
        var lastHeard = monotonicNanoseconds()
        var quietReported = false
        // Wanted devices to look for again in gpsd's list once their hand-off grace has passed.
        var pendingChecks: [String: Int64] = [:]
        // gpsd says VERSION once, first, and DEVICES only to a WATCH (sent when the connection
        // opened) or a `?DEVICES`: anything else is not gpsd's. Its JSON slave driver prints what
        // a receiver that speaks gpsd's JSON sends (navisys-gr701w.log begins with another gpsd's
        // VERSION, DEVICES and WATCH) to every client as if it were its own.
        var versionSeen = false
        var devicesAnswersDue = 1
        var relayedReported = false
        func relayed(_ what: String) {
            counters.withLock { $0.otherLines += 1 }
            guard !relayedReported else { return }
            relayedReported = true
            log.warning(
                "\(configuration.logPrefix)gpsd passed on a \(what) it did not send "
                    + "(a receiver speaking gpsd's JSON?): ignored, as is every such line on this connection")
        }
        while !stopping {
            let ready: Bool
            do {
                // A held fix's deadline shortens the wait, so its `idle` comes on time.
                var timeout = configuration.pollInterval
                if let deadline = consumer.deadline {
                    timeout = max(0, min(timeout, deadline - monotonicNanoseconds()))
                }
                ready = try connection.wait(microseconds: Int32(timeout / 1000))
            } catch {
                return
            }
            let now = monotonicNanoseconds()
            if pendingChecks.values.contains(where: { now >= $0 }) {
                pendingChecks = pendingChecks.filter { now < $0.value }
                // gpsd's own list decides (its answer comes back as `.devices` and goes through
                // restoreWanted): the session keeps no copy of which devices gpsd has open.
                do { try connection.send("?DEVICES;") } catch { return }
                devicesAnswersDue += 1
            }
            if ready, let deadline = consumer.deadline, now >= deadline { consumer.idle(now: now) }
            if !ready {
                // A watch without NMEA is never quiet: its silence says nothing about a receiver.
                if !quietReported, configuration.watch != .devices, now - lastHeard > configuration.silenceTimeout {
                    quietReported = true
                    consumer.event(.quiet(seconds: Double(configuration.silenceTimeout) / 1e9), now: now)
                }
                consumer.idle(now: now)
                continue
            }
            let line: GPSDConnection.Line
            do {
                line = try connection.read(into: &buffer)
            } catch {
                return
            }
            switch line {
            case .nmea(let length):
                lastHeard = now
                quietReported = false
                counters.withLock { $0.nmeaLines += 1 }
                consumer.sentence(buffer.span.extracting(0..<min(length, buffer.count)), now: now)
            case .version(let release):
                guard !versionSeen else {
                    relayed("VERSION")
                    continue
                }
                versionSeen = true
                consumer.event(.connected(release: release), now: now)
            case .devices(let devices):
                guard devicesAnswersDue > 0 else {
                    relayed("device list")
                    continue
                }
                devicesAnswersDue -= 1
                consumer.event(.devices(devices), now: now)
                pendingChecks.merge(restoreWanted(missingFrom: devices, now: now)) { $1 }
            case .device(let device):
                if device.isActive {
                    lastHeard = now
                    quietReported = false
                }
                consumer.event(.device(device), now: now)
            case .report(let report):
                // The device watch hears every device's reports; what they say is a receiver's
                // watch's to read (a binary receiver's epochs).
                guard configuration.watch != .devices else {
                    counters.withLock { $0.otherLines += 1 }
                    continue
                }
                lastHeard = now
                quietReported = false
                counters.withLock { $0.reports += 1 }
                consumer.report(report, now: now)
            case .malformedReport:
                counters.withLock { $0.malformedReports += 1 }
                log.warning("\(configuration.logPrefix)gpsd sent a report that is not well-formed JSON: dropped")
            case .overlong:
                counters.withLock { $0.malformedReports += 1 }
                log.warning(
                    "\(configuration.logPrefix)gpsd sent a line over \(GPSDConnection.lineCapacity) bytes: dropped")
            case .none:
                continue
            case .error, .other:
                counters.withLock { $0.otherLines += 1 }
            }
        }
    }

    /// Sleeps `nanoseconds` in slices so `stop()` is never delayed by a backoff.
    private func pause(_ nanoseconds: Int64) {
        let deadline = monotonicNanoseconds() + nanoseconds
        while !stopping && monotonicNanoseconds() < deadline {
            sleep(nanoseconds: min(20_000_000, deadline - monotonicNanoseconds()))
        }
    }
}
