import GNSS
import NMEA0183
import Posix
import Synchronization

/// The gpsd thread: one libgps connection (watching JSON and NMEA), every NMEA line parsed in
/// place by the zero-copy parser and assembled into epochs, and everything the bridge needs
/// posted to its inbox in order. Reconnects with capped backoff when gpsd goes away, and says
/// when input is lost and when it is back.
public final class GPSDSession: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: UInt16
        /// First reconnect attempt after a loss, then doubled up to `maximumBackoff`.
        public var initialBackoff: Int64 = 250_000_000
        public var maximumBackoff: Int64 = 5_000_000_000
        /// How long `wait` blocks before the thread checks for stop and stale epochs.
        public var pollInterval: Int64 = 50_000_000
        /// A receiver silent this long (while gpsd is connected) counts as input lost; at least
        /// three receiver periods.
        public var silenceTimeout: Int64 = 3_000_000_000
        /// gpsd's control socket, when the bridge manages devices (private gpsd, or a system gpsd
        /// whose socket it may use). Wanted devices are re-added after gpsd restarts.
        public var controlSocket: String?
        /// The user the bridge's private gpsd runs as when that is not gpsd's or the bridge's
        /// own (a root bridge that drops to `user` starts gpsd as that user): trusted on this
        /// session only, never for a system gpsd.
        public var privateGPSDUser: UInt32?

        public init(host: String = "127.0.0.1", port: UInt16 = 2947) {
            self.host = host
            self.port = port
        }
    }

    /// Counters, readable from any thread.
    public struct Statistics: Sendable, Equatable {
        public var connections = 0
        public var nmeaLines = 0
        public var epochs = 0
        public var rejectedSentences = 0
        public var otherLines = 0
    }

    public let configuration: Configuration
    private let inbox: Inbox<ReceiverInputEvent>
    private let control = Mutex(Control())
    private let counters = Mutex(Statistics())
    /// Called on the gpsd thread after each sentence is parsed (latency measurement hook).
    private let sentenceObserver: (@Sendable (Int64) -> Void)?
    private let log: @Sendable (String) -> Void

    private struct Control {
        var stopping = false
        var thread: OSThread?
        /// Devices the bridge wants gpsd to read (re-added when a restarted gpsd lacks them), with
        /// when they were last handed over.
        var wanted: [String: Int64] = [:]
    }

    public init(_ configuration: Configuration, inbox: Inbox<ReceiverInputEvent>,
                sentenceObserver: (@Sendable (Int64) -> Void)? = nil,
                log: @escaping @Sendable (String) -> Void) {
        self.configuration = configuration
        self.inbox = inbox
        self.sentenceObserver = sentenceObserver
        self.log = log
    }

    public var statistics: Statistics { counters.withLock { $0 } }

    public func start() throws(Errno) {
        let thread = try OSThread(name: "gpsd") { [self] in run() }
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

    private var stopping: Bool { control.withLock { $0.stopping } }

    /// Asks gpsd to read `path` now, and again whenever a restarted gpsd lacks it.
    public func addDevice(_ path: String) throws(GPSDControlSocket.Failure) {
        control.withLock { $0.wanted[path] = monotonicNanoseconds() }
        guard let socket = configuration.controlSocket else { return }
        try GPSDControlSocket(path: socket).add(path)
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
        for (path, addedAt) in control.withLock({ $0.wanted }).sorted(by: { $0.key < $1.key }) where !present.contains(path) {
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
            log("re-added \(path) to gpsd")
        } catch {
            log("cannot re-add \(path) to gpsd: \(error)")
        }
    }

    private func run() {
        var backoff = configuration.initialBackoff
        var lost: InputLossReason?
        var everConnected = false
        while !stopping {
            let connection: GPSDConnection
            do throws(GPSDError) {
                connection = try Self.open(configuration)
            } catch {
                let reason = InputLossReason.gpsdUnreachable(error.description)
                if lost == nil || (!everConnected && lost != reason) {
                    lost = reason
                    log("gpsd at \(configuration.host):\(configuration.port): \(error); retrying")
                    inbox.post(.inputLost(reason))
                }
                pause(backoff)
                backoff = min(backoff * 2, configuration.maximumBackoff)
                continue
            }
            everConnected = true
            backoff = configuration.initialBackoff
            counters.withLock { $0.connections += 1 }
            let reason = serve(connection, restoring: &lost)
            if !stopping {
                log("gpsd input lost: \(reason)")
                lost = reason
                inbox.post(.inputLost(reason))
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
        try connection.watch()
        return connection
    }

    /// Reads from one connection until it fails or the session stops; returns why it ended.
    private func serve(_ connection: borrowing GPSDConnection, restoring lost: inout InputLossReason?)
        -> InputLossReason
    {
        var decoder = NMEAStreamDecoder()
        var buffer = [UInt8](repeating: 0, count: GPSDConnection.lineCapacity)
        var lastData = monotonicNanoseconds()
        var announced = false
        var activePaths: Set<String> = []
        // Devices to re-add if gpsd has still not opened them by then (see handOffGrace).
        var pendingChecks: [String: Int64] = [:]
        while !stopping {
            let ready: Bool
            do {
                ready = try connection.wait(microseconds: Int32(configuration.pollInterval / 1000))
            } catch {
                return .gpsdConnectionLost
            }
            let now = monotonicNanoseconds()
            for (path, deadline) in pendingChecks where now >= deadline {
                pendingChecks[path] = nil
                let stillWanted = control.withLock { $0.wanted[path] != nil }
                if stillWanted && !activePaths.contains(path) { reAdd(path) }
            }
            if !ready {
                decoder.flushIfStale(now: now) { post($0) }
                if lost == nil, !activePaths.isEmpty, now - lastData > configuration.silenceTimeout {
                    lost = .receiverSilent(seconds: Double(configuration.silenceTimeout) / 1e9)
                    inbox.post(.inputLost(lost!))
                }
                continue
            }
            let line: GPSDConnection.Line
            do {
                line = try connection.read(into: &buffer)
            } catch {
                return .gpsdConnectionLost
            }
            switch line {
            case .nmea(let length):
                lastData = now
                counters.withLock { $0.nmeaLines += 1 }
                if lost != nil {
                    lost = nil
                    inbox.post(.inputRestored)
                }
                let before = decoder.statistics.rejected + decoder.statistics.malformed
                decoder.accept(buffer.span.extracting(0..<min(length, buffer.count)), now: now) { post($0) }
                if decoder.statistics.rejected + decoder.statistics.malformed != before {
                    counters.withLock { $0.rejectedSentences += 1 }
                }
                sentenceObserver?(now)
            case .version(let release):
                if !announced {
                    announced = true
                    inbox.post(.connected(release: release))
                }
            case .devices(let devices):
                activePaths = Set(devices.filter(\.isActive).map(\.path))
                inbox.post(.devices(devices))
                pendingChecks.merge(restoreWanted(missingFrom: devices, now: now)) { $1 }
            case .device(let device):
                inbox.post(.device(device))
                if device.isActive {
                    activePaths.insert(device.path)
                    lastData = now
                } else {
                    activePaths.remove(device.path)
                    decoder.finish { post($0) }
                    decoder = NMEAStreamDecoder()
                    if activePaths.isEmpty {
                        lost = .receiverRemoved(path: device.path)
                        inbox.post(.inputLost(lost!))
                    }
                }
            case .error, .other:
                counters.withLock { $0.otherLines += 1 }
            }
        }
        return .gpsdConnectionLost
    }

    private func post(_ position: Position) {
        counters.withLock { $0.epochs += 1 }
        inbox.post(.position(position))
    }

    /// Sleeps `nanoseconds` in slices so `stop()` is never delayed by a backoff.
    private func pause(_ nanoseconds: Int64) {
        let deadline = monotonicNanoseconds() + nanoseconds
        while !stopping && monotonicNanoseconds() < deadline {
            sleep(nanoseconds: min(20_000_000, deadline - monotonicNanoseconds()))
        }
    }
}
