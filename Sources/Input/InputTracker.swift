import GNSS

/// What the bridge knows about one receiver gpsd has open (read-only for `status`).
public struct ReceiverTrack: Sendable, Equatable {
    /// The path gpsd reads.
    public let path: String
    /// gpsd's latest report about it (driver, subtype, baud rate).
    public internal(set) var device: GPSDDevice
    /// When gpsd opened it relative to the others (smaller: earlier); the failover order.
    public let order: Int
    /// Epochs decoded from its own stream since gpsd opened it.
    public internal(set) var epochs = 0
    /// When its last epoch was decoded (monotonic nanoseconds, `monotonicNanoseconds()`).
    public internal(set) var lastEpochAt: Int64?
    /// The receiver's own time of its last epoch.
    public internal(set) var lastEpochTime: UTCTimestamp?
    /// The solution of its last epoch (`noFix` before any).
    public internal(set) var quality = FixQuality.noFix
    /// Epochs per second, from the smoothed interval between its recent epochs; nil before two.
    public var epochRate: Double? { smoothedInterval.map { 1e9 / $0 } }
    /// Its stream has been quiet for the silence timeout (until its next epoch).
    public internal(set) var isSilent = false

    var smoothedInterval: Double?

    /// It has delivered an epoch and has not gone quiet since.
    public var isDelivering: Bool { epochs > 0 && !isSilent }

    init(device: GPSDDevice, order: Int) {
        path = device.path
        self.device = device
        self.order = order
    }

    mutating func record(_ position: Position, at now: Int64) {
        if let last = lastEpochAt, now > last {
            // An exponential average over ~5 epochs: steady at the receiver's rate, quick to
            // follow a change of it, and one late epoch does not swing it.
            let interval = Double(now - last)
            smoothedInterval = smoothedInterval.map { $0 * 0.8 + interval * 0.2 } ?? interval
        }
        epochs += 1
        lastEpochAt = now
        lastEpochTime = position.time
        quality = position.quality
        isSilent = false
    }
}

/// How positions reach the tracker.
public enum InputStreams: Sendable, Equatable {
    /// One stream for all of gpsd (a watch on every device's NMEA, untagged `.position`s): right
    /// for one receiver; input is lost when the last receiver closes or the stream goes quiet.
    case single
    /// One stream per receiver (`.receiverPosition`, `.receiverQuiet`): only the served
    /// receiver's epochs are published, and losing it is a loss even while others stay.
    case perReceiver
}

/// The input side's state, in one place: the receivers gpsd has open, which one is served,
/// whether positions flow, and whether (and which) gpsd is connected. It has one owner,
/// `ReceiverInput`, on the thread that drains the gpsd inbox (the io thread); the gpsd threads
/// only forward facts (`ReceiverInputEvent`) and decide nothing about them.
///
/// Pure: events in, in the order gpsd produced them, and the changes to publish out. No clock, I/O
/// or threads, so every rule is tested by feeding it events (`InputTrackerTests`).
public struct InputTracker: Sendable {
    /// The receivers gpsd has open, by path.
    public private(set) var receivers: [String: ReceiverTrack] = [:]
    /// The receiver whose epochs TMM clients get (ReceiverSelection's rule); nil without one.
    public private(set) var served: String?
    /// `waiting` before any position, `live` while they flow, `lost` after a loss.
    public private(set) var state = InputState.waiting
    /// gpsd's release while connected to it (e.g. "3.22"); nil before and after.
    public private(set) var gpsdRelease: String?
    public let streams: InputStreams
    /// The `prefer` entries, paths already resolved (ReceiverInput does that).
    public var preferences: [ReceiverPreference]
    /// Serial numbers discovery knows, by path (ReceiverInput keeps this current).
    public var serialNumbers: [String: String] = [:]
    /// The order the next receiver gpsd opens gets.
    private var nextOrder = 0
    /// Receivers whose own watch is reading them (`receiverWatching`, `perReceiver`), and of
    /// those, the ones gpsd closed whose watch has not yet said so (`receiverClosed`): the main
    /// session's DEVICE report comes from another thread and can overtake the watch's last
    /// epochs, so a watched receiver is removed when its watch is done with it, last epoch first.
    private var watched: Set<String> = []
    private var closing: [String: GPSDDevice] = [:]

    public init(streams: InputStreams = .single, preferences: [ReceiverPreference] = []) {
        self.streams = streams
        self.preferences = preferences
    }

    /// Devices gpsd has open, by path.
    public var activeDevices: [String: GPSDDevice] { receivers.mapValues(\.device) }

    /// The receivers gpsd has open, in the order it opened them.
    public var receiversInOrder: [ReceiverTrack] { receivers.values.sorted { $0.order < $1.order } }

    /// Applies one event and appends what it changed, in order.
    ///
    /// - A served position makes input live (and says `inputRestored` after a loss): positions
    ///   flowing is what "input" means to TMM's clients. Other receivers' epochs are only tracked.
    /// - Input is lost when gpsd cannot be reached or the connection drops (every receiver goes
    ///   with it), when gpsd closes the served receiver (`perReceiver`; `single`: the last one),
    ///   or when the served stream is quiet while a receiver is open. Only the first loss of a
    ///   spell is reported. A failover to another receiver is such a loss, and its first epoch
    ///   the restore: clients learn that the stream was cut and now comes from another antenna.
    public mutating func apply(_ event: ReceiverInputEvent, into changes: inout [InputChange]) {
        switch event {
        case .position(let position):
            publish(position, into: &changes)
        case .receiverPosition(let path, let position, let now):
            guard receivers[path] != nil else { return }  // the last cycle of a receiver already closed
            let wasDelivering = receivers[path]!.isDelivering
            receivers[path]!.record(position, at: now)
            if !wasDelivering { reselect(into: &changes) }
            if path == served { publish(position, into: &changes) }
        case .receiverQuiet(let path, let seconds):
            // A watch quiet after the close has posted all it will.
            if let device = closing[path] { return removed(device, into: &changes) }
            guard receivers[path] != nil, !receivers[path]!.isSilent else { return }
            receivers[path]!.isSilent = true
            if path == served {
                lose(.receiverSilent(seconds: seconds), into: &changes)
                reselect(into: &changes)
            }
        case .receiverWatching(let path):
            // It changes what is read, not what the input is; a close is waited for from now on.
            if streams == .perReceiver, receivers[path] != nil { watched.insert(path) }
        case .receiverClosed(let path):
            if let device = closing[path] { removed(device, into: &changes) } else { watched.remove(path) }
        case .gpsd(.connected(let release)):
            gpsdRelease = release
        case .gpsd(.devices(let list)):
            var active: [String: GPSDDevice] = [:]
            for device in list where device.isActive { active[device.path] = device }
            for path in receivers.keys.sorted() where active[path] == nil {
                receivers[path] = nil
                watched.remove(path)
                closing[path] = nil
                changes.append(.receiverDisconnected(path: path))
            }
            for device in list where device.isActive {
                if receivers[device.path] == nil {
                    opened(device, into: &changes)
                } else {
                    receivers[device.path]!.device = device
                }
            }
            reselect(into: &changes)
        case .gpsd(.device(let device)):
            if device.isActive {
                closing[device.path] = nil
                if receivers[device.path] == nil {
                    opened(device, into: &changes)
                } else {
                    receivers[device.path]!.device = device
                }
                reselect(into: &changes)
            } else if watched.contains(device.path), receivers[device.path] != nil {
                closing[device.path] = device  // removed at its watch's `receiverClosed`
            } else {
                removed(device, into: &changes)
            }
        case .gpsd(.unreachable(let reason)):
            disconnectAll(into: &changes)
            lose(.gpsdUnreachable(reason), into: &changes)
        case .gpsd(.connectionLost):
            disconnectAll(into: &changes)
            lose(.gpsdConnectionLost, into: &changes)
        case .gpsd(.quiet(let seconds)):
            if !receivers.isEmpty { lose(.receiverSilent(seconds: seconds), into: &changes) }
        }
    }

    /// Asks the selection rule again (after `preferences` or `serialNumbers` changed).
    public mutating func reselect(into changes: inout [InputChange]) {
        let candidates = receivers.values.map {
            ReceiverSelection.Candidate(
                path: $0.path, serialNumber: serialNumbers[$0.path], order: $0.order,
                isDelivering: $0.isDelivering)
        }
        let choice = ReceiverSelection.choose(among: candidates, current: served, preferences: preferences)
        guard choice != served else { return }
        served = choice
        // With one stream for all of gpsd the choice only names a receiver for `status`: every
        // position is published whichever it is, so clients are told of no change.
        if streams == .perReceiver { changes.append(.servedReceiver(path: choice)) }
    }

    /// gpsd closed `device` (and its watch, if any, posted its last epoch).
    private mutating func removed(_ device: GPSDDevice, into changes: inout [InputChange]) {
        watched.remove(device.path)
        closing[device.path] = nil
        if receivers.removeValue(forKey: device.path) != nil {
            changes.append(.receiverDisconnected(path: device.path))
        }
        let lost =
            switch streams {
            case .single: receivers.isEmpty
            case .perReceiver: device.path == served || receivers.isEmpty
            }
        if lost { lose(.receiverRemoved(path: device.path), into: &changes) }
        reselect(into: &changes)
    }

    private mutating func opened(_ device: GPSDDevice, into changes: inout [InputChange]) {
        receivers[device.path] = ReceiverTrack(device: device, order: nextOrder)
        nextOrder += 1
        changes.append(.receiverConnected(path: device.path))
    }

    private mutating func publish(_ position: Position, into changes: inout [InputChange]) {
        if state != .live {
            if state == .lost { changes.append(.inputRestored) }
            state = .live
        }
        changes.append(.position(position))
    }

    /// The connection to gpsd is gone, and every receiver it had with it.
    private mutating func disconnectAll(into changes: inout [InputChange]) {
        for path in receivers.keys.sorted() { changes.append(.receiverDisconnected(path: path)) }
        receivers = [:]
        watched = []
        closing = [:]
        gpsdRelease = nil
        reselect(into: &changes)
    }

    private mutating func lose(_ reason: InputLossReason, into changes: inout [InputChange]) {
        guard state != .lost else { return }
        state = .lost
        changes.append(.inputLost(reason))
    }
}
