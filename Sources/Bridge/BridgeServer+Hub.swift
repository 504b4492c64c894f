import BridgeCore
import GNSS
import Input
import InputLoop
import Posix
import TMMProtocol
import WebSocket

// Positions and events out to the WebSocket clients.
//
// Each epoch sent is encoded once (LocationV2 JSON, then one text frame) and the same frame bytes
// are queued to every V2 client; V1 clients get the latest position once per second, encoded once
// per second. Events are encoded once each. Queues, coalescing and the slow-client rule are in
// OutboundQueue; here they are applied.
//
// The V2 rate cap and the stale rule (docs/server.md, "Rate") are BridgeCore's LocationV2Pacer:
// it says what to send and when; here the one-shot V2 timer is armed and the frames go out, so
// the last epoch of a burst is never lost and nothing on the loop sleeps. Epochs superseded in
// one drain of the input inbox never reach the encoder.

/// The subscribed clients, one list per channel (swap-removal: order does not matter).
struct Hub {
    var locationV1: [Connection] = []
    var locationV2: [Connection] = []
    var events: [Connection] = []
    var v1Encoder = LocationV1Encoder()
    var v2Encoder = LocationV2Encoder()
    /// The rate cap and stale rule, and the latest epoch (for V1).
    var pacer: LocationV2Pacer

    init(locationV2MinimumInterval: Int64) {
        pacer = LocationV2Pacer(minimumInterval: locationV2MinimumInterval)
    }

    var clientCount: Int { locationV1.count + locationV2.count + events.count }

    subscript(channel: ClientChannel) -> [Connection] {
        get {
            switch channel {
            case .locationV1: locationV1
            case .locationV2: locationV2
            case .events: events
            }
        }
        set {
            switch channel {
            case .locationV1: locationV1 = newValue
            case .locationV2: locationV2 = newValue
            case .events: events = newValue
            }
        }
    }
}

@available(*, unavailable, message: "the hub belongs to the io thread")
extension Hub: Sendable {}

extension BridgeServer {
    func joinHub(_ connection: Connection, _ channel: ClientChannel) {
        guard connection.hubSlot < 0 else { return }
        connection.hubChannel = channel
        connection.hubSlot = hub[channel].count
        hub[channel].append(connection)
    }

    func leaveHub(_ connection: Connection) {
        guard let channel = connection.hubChannel, connection.hubSlot >= 0 else { return }
        let slot = connection.hubSlot
        var list = hub[channel]
        hub[channel] = []  // keep `list` uniquely referenced while it changes
        let last = list.removeLast()
        if slot < list.count {
            list[slot] = last
            last.hubSlot = slot
        }
        hub[channel] = list
        connection.hubSlot = -1
        connection.hubChannel = nil
    }

    // MARK: - Input

    /// Drains the input side and publishes what changed.
    func handleInput() {
        let now = monotonicNanoseconds()
        for change in input.drain() {
            switch change {
            case .position(let position):
                accept(position, now: now)
            case .receiverConnected(let path):
                refreshIdentity()
                publish(.receiverConnected(device: path, receiver: input.receiverInfo))
                answerDeferredWhenConnected()
            case .receiverDisconnected(let path):
                refreshIdentity()
                publish(.receiverDisconnected(device: path, receiver: input.receiverInfo))
            case .servedReceiver:
                // Clients learn of a failover from inputLost and inputRestored (docs/input.md);
                // the location messages name the served receiver's model and serial from now on.
                refreshIdentity()
            case .inputLost(let reason):
                publish(.inputLost(reason))
            case .inputRestored:
                publish(.inputRestored)
            case .receiverControlFinished(let ticket, let failure):
                receiverControlFinished(ticket: ticket, failure: failure)
            }
        }
        // After the whole drain: of a backlog that arrived at once only its fresh newest epochs
        // remain (LocationV2Pacer), and go out as far as the cap allows.
        releaseLocationV2(now: monotonicNanoseconds())
    }

    /// The receiver's model and serial number, as the location messages carry them.
    private func refreshIdentity() {
        let info = input.receiverInfo
        identity.receiverModel = info.receiverModel
        identity.receiverSerialNumber = info.receiverSerialNumber
    }

    /// An epoch from the input side: the latest for V1, and waiting for V2 unless it is stale
    /// (LocationV2Pacer, which also counts what it coalesces: `hub.pacer.coalesced`).
    func accept(_ position: Position, now: Int64) {
        statistics.positions += 1
        switch hub.pacer.accept(position, now: now) {
        case .stale: statistics.positionsStale += 1
        case .accepted: operatorState.epochs.record(now)
        }
    }

    /// Sends the pending epoch if the cap allows it now, else arms the V2 timer for the instant
    /// it does (the timer's handler comes back through `locationV2TimerExpired`).
    func releaseLocationV2(now: Int64) {
        carryOut(hub.pacer.release(now: now), now: now)
    }

    /// The V2 timer expired: the pending epoch's instant has come.
    func locationV2TimerExpired() {
        let now = monotonicNanoseconds()
        carryOut(hub.pacer.timerExpired(now: now), now: now)
    }

    /// Sends every epoch the cap lets out now (a burst may hold several), then arms the timer
    /// if more wait.
    private func carryOut(_ release: LocationV2Pacer.Release, now: Int64) {
        var next = release
        while true {
            switch next {
            case .send(let position):
                publish(position, now: now)
                next = hub.pacer.release(now: now)
                continue
            case .armTimer(let instant):
                locationV2Timer.arm(afterNanoseconds: max(1, instant - now))
            case .nothing:
                break
            }
            return
        }
    }

    /// One epoch to every V2 client: encoded once, the same frame bytes for all. Fix-quality
    /// events follow the epochs sent, so they are bounded by the cap too.
    private func publish(_ position: Position, now: Int64) {
        if position.quality != lastQuality {
            let previous = lastQuality
            lastQuality = position.quality
            publish(.fixQualityChanged(previous: previous, current: position.quality))
        }
        guard !hub.locationV2.isEmpty else { return }
        hub.v2Encoder.encode(position, identity: identity)
        let frame = WebSocketFrame.text(hub.v2Encoder.span)
        let clients = hub.locationV2
        for connection in clients { deliver(frame, .position, to: connection) }
    }

    /// The V1 timer: the latest position, while it is fresh, to every V1 client.
    func sendLocationV1() {
        let now = monotonicNanoseconds()
        guard !hub.locationV1.isEmpty, let position = hub.pacer.latest,
              now - hub.pacer.latestAt <= configuration.limits.locationV1MaximumAge
        else { return }
        hub.v1Encoder.encode(position, identity: identity)
        let frame = WebSocketFrame.text(hub.v1Encoder.span)
        let clients = hub.locationV1
        for connection in clients { deliver(frame, .position, to: connection) }
    }

    /// One event to every `/events` client.
    func publish(_ event: BridgeEvent) {
        guard !hub.events.isEmpty else { return }
        let frame = WebSocketFrame.text(BridgeEventEncoder.bytes(event, unixMilliseconds: wallClockMilliseconds()).span)
        let clients = hub.events
        for connection in clients { deliver(frame, .other, to: connection) }
    }

    /// Queues a shared frame for one client (BridgeCore's `ClientConnection.deliver` applies the
    /// queue policy and, once written, the slow-client rule).
    private func deliver(_ frame: [UInt8], _ kind: OutboundQueue.Kind, to connection: Connection) {
        drive(connection) { $0.deliver(frame, kind, into: &$1) }
    }
}
