import BridgeCore
import GNSS
import Posix
import TMMProtocol
import WebSocket

// The hub's WebSocket outputs: LocationV1, LocationV2, `/events` and dashboard clients, one
// subscriber per channel. Each encodes once what it sends (one text frame) and hands the same
// bytes to every client of its channel; each client's queue, coalescing and slow-client rule are
// BridgeCore's OutboundQueue and ClientConnection, applied by the client servers (`FrameDelivery`).
//
// Pacing is each output's own, from the pure tier: LocationV2Pacer (the rate cap: the V2 output
// arms a one-shot timer for a held epoch, so the last epoch of a burst is never lost and nothing
// on the loop sleeps), LocationV1Pacer (the newest epoch, once a second, while fresh) and
// FixQualityWatch (a quality change is an event when V2 sends the epoch that has it).

/// Queues a shared frame for one client: the client servers, where the connection's machine
/// applies its queue policy.
protocol FrameDelivery: AnyObject {
    func deliver(_ frame: [UInt8], _ kind: OutboundQueue.Kind, to connection: Connection)
}

/// The clients of one channel. Swap-removal: order does not matter, each connection knows its
/// slot (`Connection.hubSlot`).
struct ConnectionList {
    private(set) var members: [Connection] = []

    var count: Int { members.count }
    var isEmpty: Bool { members.isEmpty }

    mutating func add(_ connection: Connection) {
        connection.hubSlot = members.count
        members.append(connection)
    }

    mutating func remove(_ connection: Connection) {
        let slot = connection.hubSlot
        guard slot >= 0, slot < members.count, members[slot] === connection else { return }
        let last = members.removeLast()
        if slot < members.count {
            members[slot] = last
            last.hubSlot = slot
        }
        connection.hubSlot = -1
    }
}

/// The WebSocket channels' outputs, and which one a connection is in (`.subscribe` and
/// `.unsubscribe` of its machine).
final class WebSocketOutputs {
    let locationV1: LocationV1Output
    let locationV2: LocationV2Output
    let events: EventsOutput
    /// The operator dashboard's pages (Dashboard/DashboardOutput.swift).
    let dashboard: DashboardOutput

    /// The outputs, subscribed to `hub`; they deliver once `deliver(through:)` says where.
    init(hub: Hub, loop: EventLoop, limits: ServerLimits) {
        locationV1 = LocationV1Output(
            loop: loop, interval: limits.locationV1Interval, maximumAge: limits.locationV1MaximumAge)
        locationV2 = LocationV2Output(
            hub: hub, timer: loop.makeTimer(), minimumInterval: limits.locationV2MinimumInterval)
        events = EventsOutput()
        dashboard = DashboardOutput(loop: loop)
        hub.subscribe(locationV2)
        hub.subscribe(locationV1)
        hub.subscribe(events)
        hub.subscribe(dashboard)
    }

    /// Where the frames go: the client servers, made after the outputs they subscribe
    /// connections to.
    func deliver(through delivery: any FrameDelivery) {
        locationV1.delivery = delivery
        locationV2.delivery = delivery
        events.delivery = delivery
        dashboard.delivery = delivery
    }

    func subscribe(_ connection: Connection, to channel: ClientChannel) {
        guard connection.hubChannel == nil else { return }
        connection.hubChannel = channel
        self[keyPath: Self.clients(of: channel)].add(connection)
        if channel == .dashboard { dashboard.pageJoined() }
    }

    func unsubscribe(_ connection: Connection) {
        guard let channel = connection.hubChannel else { return }
        connection.hubChannel = nil
        self[keyPath: Self.clients(of: channel)].remove(connection)
    }

    /// The client list of `channel`'s output.
    private typealias ClientList = ReferenceWritableKeyPath<WebSocketOutputs, ConnectionList>

    private static func clients(of channel: ClientChannel) -> ClientList {
        switch channel {
        case .locationV1: \.locationV1.clients
        case .locationV2: \.locationV2.clients
        case .events: \.events.clients
        case .dashboard: \.dashboard.clients
        }
    }
}

/// LocationV2 clients (`locationV2Port`, `/` and `/locationV2`): every epoch the cap lets out,
/// encoded once, the same frame for all.
final class LocationV2Output: HubSubscriber {
    var clients = ConnectionList()
    /// The rate cap (a reload or a REST client may change its interval); counts what it
    /// coalesces.
    var pacer: LocationV2Pacer
    /// The cap in force: `max-location-rate`, or the slower rate a REST client asked for.
    private(set) var broadcast: LocationV2Broadcast
    /// Fix-quality events follow the epochs sent here.
    private(set) var quality = FixQualityWatch()
    private var encoder = LocationV2Encoder()
    /// The newest published epoch's identity: a held epoch goes out with it (it changes only
    /// when the served receiver or the antenna height does).
    private var identity: ReceiverIdentity?
    private unowned let hub: Hub
    unowned var delivery: (any FrameDelivery)?
    /// One-shot: the next instant the cap lets a held epoch out.
    private let timer: EventLoopTimer

    init(hub: Hub, timer: EventLoopTimer, minimumInterval: Int64) {
        self.hub = hub
        self.timer = timer
        broadcast = LocationV2Broadcast(configuredMinimumInterval: minimumInterval)
        pacer = LocationV2Pacer(minimumInterval: broadcast.minimumInterval)
        timer.handler = { [unowned self] _ in
            let now = monotonicNanoseconds()
            carryOut(pacer.timerExpired(now: now), now: now)
        }
    }

    func publish(_ epoch: PublishedEpoch) {
        identity = epoch.identity
        pacer.accept(epoch.position, now: epoch.at)
    }

    /// What a reload may change (`max-location-rate`); a rate a client asked for stays asked.
    func reconfigure(_ configuration: BridgeConfiguration) {
        broadcast.configuredMinimumInterval = configuration.limits.locationV2MinimumInterval
        pacer.minimumInterval = broadcast.minimumInterval
    }

    /// A REST client's rate (`PUT /api/v1/positionStream/locationV2`): the interval it asked for,
    /// or nil for the configured cap alone. The next epoch is paced by it.
    func request(interval: Int64?) {
        broadcast.requestedInterval = interval
        pacer.minimumInterval = broadcast.minimumInterval
    }

    /// After the whole drain: of a backlog that arrived at once only its fresh newest epochs
    /// remain (LocationV2Pacer), and go out as far as the cap allows.
    func inputDrained(now: Int64) {
        carryOut(pacer.release(now: now), now: now)
    }

    /// Sends every epoch the cap lets out now (a burst may hold several), then arms the timer
    /// if more wait.
    private func carryOut(_ release: LocationV2Pacer.Release, now: Int64) {
        var next = release
        while case .send(let position) = next {
            send(position)
            next = pacer.release(now: now)
        }
        if case .armTimer(let instant) = next { timer.arm(afterNanoseconds: max(1, instant - now)) }
    }

    /// One epoch to every V2 client: encoded once, the same frame bytes for all; then its
    /// quality, if it changed, to the hub's subscribers.
    private func send(_ position: Position) {
        if let identity, let delivery, !clients.isEmpty {
            encoder.encode(position, identity: identity)
            let frame = WebSocketFrame.text(encoder.span)
            for connection in clients.members { delivery.deliver(frame, .position, to: connection) }
        }
        if let event = quality.sent(position.quality) { hub.publish(event) }
    }
}

/// LocationV1 clients (`locationPort`): the newest epoch once a second, encoded once a second.
final class LocationV1Output: HubSubscriber {
    var clients = ConnectionList()
    var pacer: LocationV1Pacer
    private var encoder = LocationV1Encoder()
    private var identity: ReceiverIdentity?
    unowned var delivery: (any FrameDelivery)?

    init(loop: EventLoop, interval: Int64, maximumAge: Int64) {
        pacer = LocationV1Pacer(maximumAge: maximumAge)
        loop.schedule(afterNanoseconds: interval, periodNanoseconds: interval) { [unowned self] _ in
            send(now: monotonicNanoseconds())
        }
    }

    func publish(_ epoch: PublishedEpoch) {
        identity = epoch.identity
        pacer.accept(epoch.position, now: epoch.at)
    }

    /// The output's tick: the newest position, while it is fresh, to every V1 client.
    func send(now: Int64) {
        guard !clients.isEmpty, let delivery, let position = pacer.due(now: now), let identity else { return }
        encoder.encode(position, identity: identity)
        let frame = WebSocketFrame.text(encoder.span)
        for connection in clients.members { delivery.deliver(frame, .position, to: connection) }
    }
}

/// `/events` clients: each event encoded once.
final class EventsOutput: HubSubscriber {
    var clients = ConnectionList()
    unowned var delivery: (any FrameDelivery)?

    func publish(_ epoch: PublishedEpoch) {}

    func publish(_ event: BridgeEvent, unixMilliseconds: Int64) {
        guard !clients.isEmpty, let delivery else { return }
        let frame = WebSocketFrame.text(BridgeEventEncoder.bytes(event, unixMilliseconds: unixMilliseconds).span)
        for connection in clients.members { delivery.deliver(frame, .other, to: connection) }
    }
}

@available(*, unavailable, message: "outputs belong to the io thread")
extension WebSocketOutputs: Sendable {}
