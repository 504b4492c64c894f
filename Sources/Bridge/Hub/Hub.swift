import BridgeCore
import GNSS
import Posix
import TMMProtocol

// The hub: the one publisher of positions and events. The input side's epochs pass the stale
// rule once (BridgeCore's EpochTimeline) and go, with the identity they are published under, to
// every subscriber; so do events (`/events`' vocabulary: receivers, input, fix quality,
// registrations). Each subscriber paces, encodes and queues what it gets by its own rules:
//
//   input ──► Hub (EpochTimeline: stale epochs dropped) ──┬─► LocationV2Output (rate cap, one frame per epoch)
//                                                          ├─► LocationV1Output (the newest, once a second)
//   registrations, input changes ──► events ──────────────┼─► EventsOutput (`/events`)
//                                                          └─► OperatorViews (epoch rate), and whatever comes next
//
// A subscriber is added once at start-up (`subscribe`) and never waits: what it cannot send now
// it holds or drops by its own policy (each WebSocket client's queue is BridgeCore's
// OutboundQueue). Nothing here knows what a subscriber does with an epoch.

/// An epoch as the hub publishes it.
struct PublishedEpoch {
    let position: Position
    /// The served receiver's model and serial, the antenna height and the app version, as the
    /// location messages carry them.
    let identity: ReceiverIdentity
    /// When it arrived (monotonic nanoseconds).
    let at: Int64
}

/// An output of the hub. Called on the io thread, in publication order; must not wait. Made
/// and subscribed in one place (`HubOutputs`); the server routes nothing to it but through the hub.
protocol HubSubscriber: AnyObject {
    /// An epoch that passed the stale rule.
    func publish(_ epoch: PublishedEpoch)
    /// An event, stamped `unixMilliseconds`.
    func publish(_ event: BridgeEvent, unixMilliseconds: Int64)
    /// The input side's inbox was drained (`now`): what a subscriber held back to see the whole
    /// batch (V2 sends only a backlog's freshest epochs) may go now.
    func inputDrained(now: Int64)
    /// The server's tick (every `tickInterval`): time-outs, reconnects, watchdogs.
    func tick(now: Int64)
    /// A reload: the configuration now in force (only reloadable options changed).
    func reconfigure(_ configuration: BridgeConfiguration)
}

extension HubSubscriber {
    func publish(_ event: BridgeEvent, unixMilliseconds: Int64) {}
    func inputDrained(now: Int64) {}
    func tick(now: Int64) {}
    func reconfigure(_ configuration: BridgeConfiguration) {}
}

/// The publisher. Loop-confined.
final class Hub {
    /// Who receives what (the identity of each epoch published from now on).
    var identity: ReceiverIdentity
    /// The stale rule, and the newest published epoch (status).
    private(set) var timeline = EpochTimeline()
    private var subscribers: [any HubSubscriber] = []
    /// Epochs offered, and those dropped as stale.
    private(set) var statistics = (offered: 0, stale: 0)

    init(identity: ReceiverIdentity) {
        self.identity = identity
    }

    /// Adds an output; it gets everything published from now on.
    func subscribe(_ subscriber: any HubSubscriber) {
        subscribers.append(subscriber)
    }

    /// An epoch from the input side, arrived at `now`: to every subscriber unless it is stale.
    func publish(_ position: Position, now: Int64) {
        statistics.offered += 1
        guard timeline.accept(position, now: now) else {
            statistics.stale += 1
            return
        }
        let epoch = PublishedEpoch(position: position, identity: identity, at: now)
        for subscriber in subscribers { subscriber.publish(epoch) }
    }

    /// An event to every subscriber.
    func publish(_ event: BridgeEvent, unixMilliseconds: Int64 = wallClockMilliseconds()) {
        for subscriber in subscribers { subscriber.publish(event, unixMilliseconds: unixMilliseconds) }
    }

    /// The input side's inbox was drained.
    func inputDrained(now: Int64) {
        for subscriber in subscribers { subscriber.inputDrained(now: now) }
    }

    /// The server's tick, to every subscriber.
    func tick(now: Int64) {
        for subscriber in subscribers { subscriber.tick(now: now) }
    }

    /// A reload, to every subscriber.
    func reconfigure(_ configuration: BridgeConfiguration) {
        for subscriber in subscribers { subscriber.reconfigure(configuration) }
    }
}

@available(*, unavailable, message: "the hub belongs to the io thread")
extension Hub: Sendable {}
