import BridgeCore
import Discovery
import GNSS
import Input
import InputLoop
import Posix
import TMMProtocol

// The daemon's status for operators: one function (`daemonStatus`) assembles BridgeCore's
// DaemonStatus from the loop's own state, and three views are made of it:
//
//   `tmm-bridge status`  the STATUS control request (Control/ControlServer.swift), as JSON
//   systemd STATUS=      `summary`, when it changes, at most once a second
//   the status line      `statusLine(width:)`, on a terminal, at most four times a second
//
// The two timed ones run from one loop timer (`operatorTimer`, registered only when one of them
// is wanted); both only build a value and write one datagram or one line, so the loop never waits.
// The status reads each part's own state; nothing here is kept but the operator views' own.

/// What the operator views keep on the io loop between timer runs, and the systemd watchdog. A
/// hub subscriber: it counts the published epochs for the rate and the last epoch's age.
final class OperatorViews: HubSubscriber {
    /// When the server was made (monotonic nanoseconds): the uptime's origin.
    let startedAt: Int64
    /// Published epochs as they arrive, for the rate and the last epoch's age.
    private(set) var epochs = EpochRateMeter()
    /// The STATUS= rate limit; nil when not under systemd.
    var notifications: StatusNotifications?
    /// `WATCHDOG_USEC`, when systemd asked for a watchdog, and the last ping.
    var watchdogInterval: Int64?
    private var lastWatchdog: Int64 = 0

    init(startedAt: Int64) {
        self.startedAt = startedAt
    }

    func publish(_ epoch: PublishedEpoch) {
        epochs.record(epoch.at)
    }

    /// Every tick: the watchdog's ping, twice per interval.
    func tick(now: Int64) {
        guard let interval = watchdogInterval, now - lastWatchdog >= interval / 2 else { return }
        lastWatchdog = now
        _ = try? SDNotify.notify("WATCHDOG=1")
    }

    /// `WATCHDOG_USEC` for this process, in nanoseconds, if systemd asked for a watchdog.
    static func watchdogInterval() -> Int64? {
        guard let raw = CurrentProcess.environment("WATCHDOG_USEC"), let usec = Int64(raw), usec > 0 else { return nil }
        if let pid = CurrentProcess.environment("WATCHDOG_PID"), let number = Int32(pid),
            number != CurrentProcess.processID
        {
            return nil
        }
        return usec * 1000
    }
}

@available(*, unavailable, message: "it belongs to the io thread")
extension OperatorViews: Sendable {}

extension BridgeServer {
    /// How often the operator timer runs: the status line's redraw rate (the STATUS= limit of
    /// once a second is StatusNotifications' own).
    static let operatorInterval: Int64 = 250_000_000

    /// Everything `tmm-bridge status` reports, as of `now` (monotonic nanoseconds).
    public func daemonStatus(now: Int64 = monotonicNanoseconds()) -> DaemonStatus {
        var status = DaemonStatus(
            version: environment.version, pid: CurrentProcess.processID,
            uptimeSeconds: Int((now - operatorViews.startedAt) / 1_000_000_000),
            receivers: statusReceivers(now: now),
            servedReceiver: input.servedReceiver,
            fix: statusFix(now: now), gpsd: statusGPSD(), ports: statusPorts(), clients: statusClients(),
            registration: statusRegistration())
        status.corrections = corrections.status(now: now)
        status.fleet = fleet.status(now: now)
        status.bluetooth = input.bluetooth.map { binding in
            DaemonStatus.BluetoothBinding(
                address: "\(binding.binding.address)", channel: Int(binding.binding.channel),
                device: binding.devicePath,
                bound: binding.isBound, link: binding.link.map { "\($0)" },
                lastError: binding.lastError.map { "\($0)" },
                failures: binding.failures, binds: binding.binds)
        }
        return status
    }

    /// The inventory's receivers (connected first, then by id), then what gpsd has open that the
    /// inventory does not know (a device added to a system gpsd by someone else).
    private func statusReceivers(now: Int64) -> [DaemonStatus.Receiver] {
        let open = input.activeDevices
        let snapshots = input.inventory.snapshots.sorted {
            ($0.isConnected ? 0 : 1, $0.id) < ($1.isConnected ? 0 : 1, $1.id)
        }
        let replay = input.replayDevicePath
        var receivers = snapshots.map { snapshot in
            let device = open[snapshot.devicePath]
            let foundBy =
                snapshot.devicePath == replay
                ? "replay" : snapshot.connection == .configured ? "configured" : "discovery"
            return DaemonStatus.Receiver(
                path: snapshot.devicePath, connected: snapshot.isConnected, foundBy: foundBy,
                connection: snapshot.connection.rawValue, brand: snapshot.brand, model: snapshot.model,
                manufacturer: snapshot.manufacturer, serialNumber: snapshot.serialNumber, usbID: snapshot.usbID,
                bluetoothAddress: snapshot.bluetoothAddress, bluetoothName: snapshot.bluetoothName,
                classification: snapshot.classification, openInGPSD: device != nil,
                gpsdDriver: snapshot.gpsdDriver ?? device.flatMap { $0.driver.isEmpty ? nil : $0.driver },
                gpsdSubtype: snapshot.gpsdSubtype ?? device.flatMap { $0.subtype.isEmpty ? nil : $0.subtype })
        }
        let known = Set(snapshots.map(\.devicePath))
        for (path, device) in open.sorted(by: { $0.key < $1.key }) where !known.contains(path) {
            receivers.append(
                DaemonStatus.Receiver(
                    path: path, connected: true, foundBy: "gpsd", openInGPSD: true,
                    gpsdDriver: device.driver.isEmpty ? nil : device.driver,
                    gpsdSubtype: device.subtype.isEmpty ? nil : device.subtype))
        }
        // Each open receiver's own stream (its watch), from the input side's tracker.
        for stream in input.receivers {
            guard let index = receivers.firstIndex(where: { $0.path == stream.track.path }) else { continue }
            let track = stream.track
            receivers[index].served = stream.isServed
            receivers[index].epochs = track.epochs
            receivers[index].epochRate = track.epochRate
            receivers[index].fixQuality = track.epochs > 0 ? "\(track.quality)" : nil
            receivers[index].lastEpochAgeSeconds = track.lastEpochAt.map { Double(now - $0) / 1e9 }
            receivers[index].silent = track.isSilent
            // The same rule the receiver's own watch applies to the same DEVICE report.
            receivers[index].epochSource = GPSDDriver(track.device.driver).source.rawValue
        }
        return Array(receivers.prefix(DaemonStatus.listLimit))
    }

    private func statusFix(now: Int64) -> DaemonStatus.Fix {
        var fix = DaemonStatus.Fix(input: input.state.rawValue)
        fix.epochRate = operatorViews.epochs.rate(now: now)
        fix.lastEpochAgeSeconds = operatorViews.epochs.latest.map { Double(now - $0) / 1e9 }
        if let position = hub.timeline.latest {
            fix.quality = "\(position.quality)"
            // Finite or absent: the document is JSON, which has no NaN.
            fix.latitude = position.latitude.flatMap { $0.isFinite ? $0 : nil }
            fix.longitude = position.longitude.flatMap { $0.isFinite ? $0 : nil }
            fix.height = position.altitude.flatMap { $0.isFinite ? $0 : nil }
            fix.satellites = position.hasFix ? position.satellitesUsed : nil
        }
        return fix
    }

    private func statusGPSD() -> DaemonStatus.GPSD {
        let inUse = input.gpsdInUse
        return DaemonStatus.GPSD(kind: inUse?.kind, address: inUse?.address, release: input.gpsdRelease)
    }

    private func statusPorts() -> [String: Int] {
        Dictionary(uniqueKeysWithValues: TMMServer.iOSOrder.map { ($0.registrationKey, Int(ports[$0])) })
    }

    private func statusClients() -> DaemonStatus.Clients {
        DaemonStatus.Clients(
            bySocket: clients.openBySocket, locationV1: outputs.locationV1.clients.count,
            locationV2: outputs.locationV2.clients.count, events: outputs.events.clients.count,
            dashboard: outputs.dashboard.clients.count)
    }

    private func statusRegistration() -> DaemonStatus.Registration {
        // The latest ones: an operator looks for the app that just registered.
        let registry = registrations.registry
        let listed = zip(registry.applicationIDs, registry.entries).suffix(DaemonStatus.listLimit)
        return DaemonStatus.Registration(
            policy: configuration.registration.rawValue, allowedIDs: configuration.allowedApplicationIDs.count,
            registered: registry.entries.count,
            applications: listed.map { DaemonStatus.Application(name: $0.0.logName, registeredAt: $0.1.registeredAt) },
            locationV2Unlocked: isLocationV2Unlocked)
    }

    // MARK: - Timed views

    /// Sets up the timed views before the loop runs: STATUS= under systemd (READY's own STATUS=
    /// line starts its interval), the status line on a terminal. No timer when neither is wanted.
    func startOperatorViews(readyStatus: String?) {
        if let readyStatus {
            var notifications = StatusNotifications()
            notifications.sent(readyStatus, now: monotonicNanoseconds())
            operatorViews.notifications = notifications
        }
        operatorViews.watchdogInterval = environment.notifySystemd ? OperatorViews.watchdogInterval() : nil
        guard operatorViews.notifications != nil || environment.statusLine != nil else { return }
        loop.schedule(afterNanoseconds: Self.operatorInterval, periodNanoseconds: Self.operatorInterval) {
            [unowned self] _ in
            operatorTimer()
        }
    }

    /// The operator timer: the status line, and STATUS= when due and changed.
    private func operatorTimer() {
        let now = monotonicNanoseconds()
        let due = operatorViews.notifications?.isDue(now: now) == true
        guard due || environment.statusLine != nil else { return }
        let status = daemonStatus(now: now)
        if let line = environment.statusLine { line.update(status.statusLine(width: line.columns - 1)) }
        // The interval counts from the send itself, not from the timer's start: building the
        // status (or the loop being preempted meanwhile) must not bring the next one closer.
        if due, let message = operatorViews.notifications?.message(for: status.summary, now: monotonicNanoseconds()) {
            _ = try? SDNotify.notify(message)
        }
    }

    /// Takes the status line off the terminal (the daemon stops; its last log lines follow).
    func finishOperatorViews() {
        environment.statusLine?.finish()
    }
}
