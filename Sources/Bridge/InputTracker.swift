import GNSS
import GPSD
import TMMProtocol

/// The input side's state, in one place: the receivers gpsd has open, whether positions flow,
/// and whether (and which) gpsd is connected. It has one owner, `ReceiverInput`, on the thread
/// that drains the gpsd inbox (the io thread); the gpsd thread only forwards facts
/// (`ReceiverInputEvent`) and decides nothing about them.
///
/// Pure: events in, in the order gpsd produced them, and the changes to publish out. No clock, I/O
/// or threads, so every rule is tested by feeding it events (`InputTrackerTests`).
public struct InputTracker: Sendable {
    /// Devices gpsd has open, by path.
    public private(set) var activeDevices: [String: GPSDDevice] = [:]
    /// `waiting` before any position, `live` while they flow, `lost` after a loss.
    public private(set) var state = InputState.waiting
    /// gpsd's release while connected to it (e.g. "3.22"); nil before and after.
    public private(set) var gpsdRelease: String?

    public init() {}

    /// Applies one event and appends what it changed, in order.
    ///
    /// - A position makes input live (and says `inputRestored` after a loss): positions flowing is
    ///   what "input" means to TMM's clients.
    /// - Input is lost when gpsd cannot be reached or the connection drops (every receiver goes
    ///   with it), when gpsd closes the last receiver it had, or when the stream is quiet while a
    ///   receiver is open. Only the first loss of a spell is reported.
    public mutating func apply(_ event: ReceiverInputEvent, into changes: inout [InputChange]) {
        switch event {
        case .position(let position):
            if state != .live {
                if state == .lost { changes.append(.inputRestored) }
                state = .live
            }
            changes.append(.position(position))
        case .gpsd(.connected(let release)):
            gpsdRelease = release
        case .gpsd(.devices(let list)):
            let active = Dictionary(list.filter(\.isActive).map { ($0.path, $0) }, uniquingKeysWith: { $1 })
            for path in activeDevices.keys.sorted() where active[path] == nil {
                changes.append(.receiverDisconnected(path: path))
            }
            for path in active.keys.sorted() where activeDevices[path] == nil {
                changes.append(.receiverConnected(path: path))
            }
            activeDevices = active
        case .gpsd(.device(let device)):
            if device.isActive {
                if activeDevices[device.path] == nil { changes.append(.receiverConnected(path: device.path)) }
                activeDevices[device.path] = device
            } else {
                if activeDevices.removeValue(forKey: device.path) != nil {
                    changes.append(.receiverDisconnected(path: device.path))
                }
                if activeDevices.isEmpty { lose(.receiverRemoved(path: device.path), into: &changes) }
            }
        case .gpsd(.unreachable(let reason)):
            disconnectAll(into: &changes)
            lose(.gpsdUnreachable(reason), into: &changes)
        case .gpsd(.connectionLost):
            disconnectAll(into: &changes)
            lose(.gpsdConnectionLost, into: &changes)
        case .gpsd(.quiet(let seconds)):
            if !activeDevices.isEmpty { lose(.receiverSilent(seconds: seconds), into: &changes) }
        }
    }

    /// The connection to gpsd is gone, and every receiver it had with it.
    private mutating func disconnectAll(into changes: inout [InputChange]) {
        for path in activeDevices.keys.sorted() { changes.append(.receiverDisconnected(path: path)) }
        activeDevices = [:]
        gpsdRelease = nil
    }

    private mutating func lose(_ reason: InputLossReason, into changes: inout [InputChange]) {
        guard state != .lost else { return }
        state = .lost
        changes.append(.inputLost(reason))
    }
}
