import BridgeCore
import Posix

// Every output of the hub, made once at start-up from the configuration. The one place an
// output is added: its own file (a `HubSubscriber`) and one line here; the server routes epochs,
// events, ticks and reloads to it through the hub and needs no change.

/// The hub's subscribers.
struct HubOutputs {
    /// LocationV1, LocationV2 and `/events` clients (the client servers subscribe connections).
    let webSocket: WebSocketOutputs
    /// Uptime, epoch rate, STATUS= and the watchdog.
    let operatorViews: OperatorViews

    init(
        hub: Hub, loop: EventLoop, configuration: BridgeConfiguration, corrections: CorrectionsClient,
        fleet: FleetPublisher, startedAt: Int64
    ) {
        webSocket = WebSocketOutputs(hub: hub, loop: loop, limits: configuration.limits)
        operatorViews = OperatorViews(startedAt: startedAt)
        hub.subscribe(operatorViews)
        // The served receiver's epochs go to the caster as GGA; ticks drive its retries.
        hub.subscribe(corrections)
        // Locations at mqtt-rate, events, and the status each second, to the MQTT broker.
        hub.subscribe(fleet)
    }
}
