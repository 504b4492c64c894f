import BridgeCore
import GNSS
import Posix
import TMMProtocol
import WebSocket

// The operator dashboard's output (docs/dashboard.md): a hub subscriber like the location outputs.
// It keeps the served receiver's newest position, its track (one point a second, ten minutes) and
// its fix history, and sends the pages whose hello was accepted one snapshot (BridgeCore's
// DashboardSnapshot: the position, the track, the fix history and the daemon's status) at most
// four times a second, whatever the receiver's rate: epochs only mark the snapshot due
// (DashboardPacer), and a 4 Hz timer sends it. With no page open it does nothing but keep the
// track. A snapshot is a whole state, so a page that falls behind gets only the newest
// (OutboundQueue's coalescing, `.position`), and the slow-client rule of every WebSocket applies.

/// Dashboard pages (`/dashboard/socket`).
final class DashboardOutput: HubSubscriber {
    var clients = ConnectionList()
    unowned var delivery: (any FrameDelivery)?
    /// What `status` reports (wired by the server).
    var daemonStatus: () -> DaemonStatus? = { nil }
    private var pacer = DashboardPacer()
    private var track = DashboardTrack()
    private var fixHistory = FixHistory()
    private var latest: Position?
    /// The served receiver the track belongs to (a new one starts a new track).
    private var identity: ReceiverIdentity?
    /// The status (clients, receivers, corrections) changes without epochs: looked at once a second.
    private var lastStatusMark: Int64 = 0

    /// The timer's own clock: its expirations so far. The pacer is asked on it (ticks × 250 ms),
    /// not on the time the callback happens to run: a tick whose callback ran a little sooner
    /// after the previous one than 250 ms would otherwise be refused, leaving a 500 ms gap.
    private var ticks: Int64 = 0

    init(loop: EventLoop) {
        let interval = 1_000_000_000 / Int64(DashboardPacer.maximumRate)
        loop.schedule(afterNanoseconds: interval, periodNanoseconds: interval) { [unowned self] expirations in
            ticks += Int64(expirations)
            send(now: monotonicNanoseconds(), pacerMilliseconds: ticks * (interval / 1_000_000))
        }
    }

    func publish(_ epoch: PublishedEpoch) {
        if let identity,
            identity.receiverSerialNumber != epoch.identity.receiverSerialNumber
                || identity.receiverModel != epoch.identity.receiverModel
        {
            track.removeAll()
            fixHistory.removeAll()
        }
        identity = epoch.identity
        latest = epoch.position
        let now = wallClockMilliseconds()
        if let latitude = epoch.position.latitude, let longitude = epoch.position.longitude,
            epoch.position.hasFix
        {
            track.add(latitude: latitude, longitude: longitude, unixMilliseconds: now)
        }
        fixHistory.record(epoch.position.quality, unixMilliseconds: now)
        pacer.markChanged()
    }

    func publish(_ event: BridgeEvent, unixMilliseconds: Int64) {
        pacer.markChanged()
    }

    /// A page's hello was accepted: it gets the snapshot with the next round of the timer (within
    /// a quarter of a second), like every page.
    func pageJoined() {
        pacer.markChanged()
    }

    /// The snapshot as of now, as one text frame (nil before the server wired `daemonStatus`).
    private func snapshotFrame() -> [UInt8]? {
        guard let status = daemonStatus() else { return nil }
        let bytes = DashboardSnapshot.encode(
            status: status, position: latest, track: track, fixHistory: fixHistory,
            unixMilliseconds: wallClockMilliseconds())
        return WebSocketFrame.text(bytes.span)
    }

    /// The 4 Hz timer: the snapshot, if something changed, to every page.
    func send(now: Int64, pacerMilliseconds: Int64) {
        guard !clients.isEmpty, let delivery else { return }
        if now - lastStatusMark >= 1_000_000_000 {
            lastStatusMark = now
            pacer.markChanged()
        }
        guard pacer.due(now: pacerMilliseconds), let frame = snapshotFrame() else { return }
        for connection in clients.members { delivery.deliver(frame, .position, to: connection) }
    }
}

@available(*, unavailable, message: "outputs belong to the io thread")
extension DashboardOutput: Sendable {}
