import BridgeCore
import GNSS
import GPSD
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

    subscript(channel: Channel) -> [Connection] {
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
    /// Number of WebSocket clients per channel (V1, V2, events).
    public var clientCounts: (locationV1: Int, locationV2: Int, events: Int) {
        (hub.locationV1.count, hub.locationV2.count, hub.events.count)
    }

    func joinHub(_ connection: Connection) {
        guard let channel = connection.channel, connection.hubSlot < 0 else { return }
        connection.hubSlot = hub[channel].count
        hub[channel].append(connection)
    }

    func leaveHub(_ connection: Connection) {
        guard let channel = connection.channel, connection.hubSlot >= 0 else { return }
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
            case .inputLost(let reason):
                publish(.inputLost(reason: Self.reasonCode(reason), message: reason.description))
            case .inputRestored:
                publish(.inputRestored)
            case .receiverControlFinished(let ticket, let failure):
                receiverControlFinished(ticket: ticket, failure: failure)
            }
        }
        // After the whole drain: of a backlog that arrived at once only the newest epoch remains.
        releaseLocationV2(now: monotonicNanoseconds())
    }

    static func reasonCode(_ reason: InputLossReason) -> String {
        switch reason {
        case .gpsdUnreachable: "gpsdUnreachable"
        case .gpsdConnectionLost: "gpsdConnectionLost"
        case .receiverRemoved: "receiverRemoved"
        case .receiverSilent: "receiverSilent"
        }
    }

    /// The receiver's model and serial number, as the location messages carry them.
    private func refreshIdentity() {
        let info = input.receiverInfo
        identity.receiverModel = info.receiverModel
        identity.receiverSerialNumber = info.receiverSerialNumber
    }

    private func answerDeferredWhenConnected() {
        guard input.receiverInfo.isConnected else { return }
        for connection in Array(connections.values) where connection.deferred?.connecting == true {
            answerDeferred(connection)
        }
    }

    /// The gpsd commands of a `PUT /receiver` are done: a failure is answered with 503; a
    /// disconnection, or a connection whose receiver is already there, with the receiver as it
    /// is; a connection still waiting for its receiver goes on waiting.
    private func receiverControlFinished(ticket: Int, failure: String?) {
        guard let connection = connections.values.first(where: { $0.deferred?.awaitingTicket == ticket }) else { return }
        connection.deferred?.awaitingTicket = nil
        if failure != nil || connection.deferred?.connecting == false || input.receiverInfo.isConnected {
            answerDeferred(connection, failure: failure)
        }
    }

    /// An epoch from the input side: the latest for V1, and pending for V2 (replacing a pending
    /// one, which is then never sent) unless it is stale (LocationV2Pacer).
    func accept(_ position: Position, now: Int64) {
        statistics.positions += 1
        switch hub.pacer.accept(position, now: now) {
        case .stale: statistics.positionsStale += 1
        case .accepted(let replacedPending): if replacedPending { statistics.positionsCoalesced += 1 }
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

    private func carryOut(_ release: LocationV2Pacer.Release, now: Int64) {
        switch release {
        case .send(let position):
            publish(position, now: now)
        case .armTimer(let instant):
            locationV2Timer.arm(afterNanoseconds: max(1, instant - now))
        case .nothing:
            break
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
        for connection in clients { deliver(frame, .position, to: connection, now: now) }
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
        for connection in clients { deliver(frame, .position, to: connection, now: now) }
    }

    /// One event to every `/events` client.
    func publish(_ event: BridgeEvent) {
        guard !hub.events.isEmpty else { return }
        let frame = WebSocketFrame.text(BridgeEventEncoder.bytes(event, unixMilliseconds: wallClockMilliseconds()).span)
        let now = monotonicNanoseconds()
        let clients = hub.events
        for connection in clients { deliver(frame, .other, to: connection, now: now) }
    }

    /// The first message on a new `/events` connection.
    func sendStatusEvent(to connection: Connection) {
        let status = BridgeStatus(input: input.state, receiver: input.receiverInfo, quality: lastQuality)
        let bytes = BridgeEventEncoder.bytes(.status(status), unixMilliseconds: wallClockMilliseconds())
        send(WebSocketFrame.text(bytes.span), to: connection)
    }

    /// Queues a shared frame (positions may be coalesced, see OutboundQueue), sends what fits and
    /// applies the slow-client rule.
    private func deliver(_ frame: [UInt8], _ kind: OutboundQueue.Kind, to connection: Connection, now: Int64) {
        guard connection.canReceiveFrames else { return }
        switch kind {
        case .position:
            statistics.positionsDropped += connection.output.appendPosition(frame, softLimit: configuration.limits.queueSoftLimit)
        case .other:
            connection.output.append(frame)
        }
        flush(connection)
        if connections[connection.fd] === connection { checkBacklog(connection, now: now) }
    }

    /// The slow-client rule: behind by more than the hard limit for longer than the grace period
    /// closes the client with 1008; catching up resets it.
    func checkBacklog(_ connection: Connection, now: Int64) {
        let limits = configuration.limits
        guard connection.output.behind >= limits.queueHardLimit else {
            connection.overHardLimitSince = nil
            return
        }
        guard let since = connection.overHardLimitSince else {
            connection.overHardLimitSince = now
            return
        }
        guard now - since >= limits.slowClientGrace, !connection.lifecycle.isEnding else { return }
        statistics.slowClientsClosed += 1
        log("closing a slow WebSocket client (1008): \(connection.output.behind) bytes behind for \((now - since) / 1_000_000) ms, \(connection.output.droppedPositions) positions dropped")
        // What it has not started to receive is of no use to it any more.
        connection.output.discardUnstarted()
        if let action = connection.webSocket?.fail(code: .policyViolation, reason: "client too slow") {
            perform(action, on: connection)
        }
    }

    // MARK: - WebSocket input

    func readWebSocket(_ connection: Connection) {
        guard let count = readIntoScratch(connection) else { return }
        let bytes = readScratch
        receiveWebSocket(bytes.span.extracting(0..<count), on: connection)
    }

    func receiveWebSocket(_ bytes: Span<UInt8>, on connection: Connection) {
        var offset = 0
        while offset < bytes.count, connection.webSocket != nil, connections[connection.fd] === connection {
            guard let step = connection.webSocket?.receive(bytes.extracting(offset..<bytes.count)) else { return }
            offset += step.consumed
            if let action = step.action { perform(action, on: connection) }
            if step.consumed == 0 { return }
        }
    }

    /// Carries out what the WebSocket state machine asked for.
    func perform(_ action: WebSocketAction, on connection: Connection) {
        switch action {
        case .deliver:
            // TMM clients send nothing but control frames; a data message is ignored (and counted).
            statistics.unexpectedMessages += 1
        case .write(let bytes):
            send(bytes, to: connection)
        case .writeAndClose(let bytes):
            send(bytes, to: connection)
            if connections[connection.fd] === connection { closeAfterFlush(connection) }
        case .close:
            if connection.output.isEmpty {
                close(connection)
            } else {
                closeAfterFlush(connection)
            }
        }
    }

    // MARK: - The V2 lock

    func unlockLocationV2(because reason: String) {
        guard !isLocationV2Unlocked else { return }
        isLocationV2Unlocked = true
        log("LocationV2 unlocked: \(reason)")
    }
}
