import BridgeCore
import Discovery
import GNSS
import GPSD
import Input
import Logging
import Posix
import TMMProtocol

// The receiver side, wired together: which gpsd to read (the configured one, the system's, or a
// private one we start), the gpsd session thread, udev discovery, the receiver inventory that
// hands receivers to gpsd, and a replayed capture when asked. Both `tmm-bridge watch` and the
// daemon's io loop drive it: they wait on `descriptors` and call `drain()` when one is readable.
//
// Everything here runs on the caller's thread except the gpsd, udev and replay threads, which
// talk to it only through the inboxes (the gpsd thread decodes NMEA with `GPSDEpochConsumer` and
// posts epochs and gpsd's events; the state they amount to is kept here alone, in `tracker`), and
// gpsd control commands (`+/dev/x`, `-/dev/x`), which run on the `gpsd-control` worker: each one
// connects to gpsd's control socket and waits for its answer (gpsd takes 1 s to open and probe a
// tty, 3 s when it may write, and up to the 10 s timeout when it hangs: GPSDControlSocket), so the
// caller's loop only queues them and hears how they went through `controlResults`.

/// What a gpsd control command run on the worker reports back.
enum GPSDControlResult: Sendable {
    /// A receiver discovery handed to gpsd (`added`) or took away.
    case device(path: String, added: Bool, failure: String?)
    /// The commands of a REST request, and the lines to log for the ones that succeeded.
    case request(ticket: Int, failure: String?, done: [String])
}

/// Why `PUT /api/v1/receiver` cannot do what it was asked.
public enum ReceiverControlError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No receiver has been found or configured.
    case noReceiver
    /// The bridge cannot hand devices to gpsd (a system gpsd whose control socket it may not use).
    case notManaged
    /// gpsd refused or could not be reached.
    case gpsdFailed(String)

    public var description: String {
        switch self {
        case .noReceiver: "no receiver is configured: plug one in or start tmm-bridge with --device PATH"
        case .notManaged:
            "this bridge cannot connect or disconnect receivers: "
                + "gpsd's control socket is not available to it (configure gpsd-control)"
        case .gpsdFailed(let reason): "gpsd did not accept the change: \(reason)"
        }
    }
}

/// The input side of the bridge (loop-confined: one thread calls everything here).
public final class ReceiverInput {
    /// How to find receivers and gpsd.
    public struct Options: Sendable {
        public var devices: [String] = []
        public var gpsd: GPSDAddress?
        public var gpsdControlSocket: String?
        public var discovery = true
        /// Start a private gpsd read-only (`-b`, the default); false (`gpsd-read-only = no`) lets
        /// it write the RTCM corrections to the receivers it locks (PrivateGPSD says the price).
        public var privateGPSDReadOnly = true
        public var replay: ReplaySource?
        /// Where a private gpsd keeps its socket and log.
        public var runtimeDirectory: String
        /// The user and group a root bridge drops to after start-up: its private gpsd runs as
        /// them, and directories they own are accepted as the bridge's.
        public var dropTo: (uid: UserID, gid: GroupID)?
        /// The built-in capture for `ReplaySource.demo`.
        public var demoCapture: String = ""
        /// Which receivers to serve first (`prefer`), in order (ReceiverSelection).
        public var preferredReceivers: [ReceiverPreference] = []
        /// Bluetooth receivers to keep bound to rfcomm ttys (`bluetooth`), and the kernel calls
        /// that do it (a fake in tests).
        public var bluetooth: [RFCOMMBinding] = []
        public var rfcommControl: any RFCOMMControl = SystemRFCOMMControl()

        public init(runtimeDirectory: String) {
            self.runtimeDirectory = runtimeDirectory
        }
    }

    /// What the gpsd thread posts (gpsd's events and decoded epochs); readable descriptor in
    /// `descriptors`.
    public let events: Inbox<ReceiverInputEvent>
    private let found: Inbox<DiscoveryEvent>
    private let options: Options
    private let log: Logger
    private var session: GPSDSession?
    /// One device-filtered watch per receiver gpsd has open (its own gpsd thread, decoder and
    /// stream), by path: gpsd 3.22 passes NMEA through untagged, so one watch on everything
    /// would interleave two receivers' sentences into one epoch stream.
    private var receiverWatches: [String: GPSDSession] = [:]
    /// Watches asked to stop, joined once their thread has returned (never waited for on the
    /// loop: stopping takes up to a poll interval).
    private var stoppingWatches: [GPSDSession] = []
    /// The main session's address and trust, for the receivers' watches.
    private var watchConfiguration: GPSDSession.Configuration?
    /// Keeps the configured Bluetooth receivers bound, driven by `bluetoothTimer` on the
    /// caller's loop (every call a sysfs read and at most one ioctl: nothing waits).
    private var bluetoothKeeper: RFCOMMKeeper?
    private let bluetoothTimer: MonotonicTimer
    private var privateGPSD: PrivateGPSD?
    /// The files of the private gpsd, when one was started (see PrivateGPSD.Configuration.files).
    public var privateGPSDFiles: [String] { privateGPSD?.configuration.files ?? [] }
    private var udev: UdevDiscovery?
    private var replayer: CaptureReplayer?
    /// The gpsd control socket receivers are handed through (the private gpsd's, a configured
    /// one, or the system gpsd's), nil when there is none. Known once `chooseGPSD()` has run.
    public private(set) var controlSocket: String?
    /// Which gpsd `start()` reads, once `chooseGPSD()` has decided.
    private var gpsdChoice: GPSDChoice?

    private enum GPSDChoice {
        /// A gpsd that is there already (configured, or the system's): the session's configuration.
        case existing(GPSDSession.Configuration)
        /// One the bridge starts (`start()` does).
        case privateGPSD
    }
    /// Runs gpsd control commands off the caller's thread (see the top of the file).
    private let gpsdControl: Worker
    private let controlResults: Inbox<GPSDControlResult>
    /// The last ticket handed out by `connect()` or `disconnect()`.
    private var lastTicket = 0

    public private(set) var inventory = ReceiverInventory()
    /// Receivers present, input lost or live, gpsd connected: the one copy of that state.
    public private(set) var tracker: InputTracker
    /// Devices gpsd has open, by path.
    public var activeDevices: [String: GPSDDevice] { tracker.activeDevices }
    public var state: InputState { tracker.state }
    /// Set by `PUT isConnected:false`: receivers are kept away from gpsd until `connect()`.
    public private(set) var userDisconnected = false
    /// gpsd's release while connected (e.g. "3.22").
    public var gpsdRelease: String? { tracker.gpsdRelease }
    /// The replayed capture's pty, when replaying.
    public var replayDevicePath: String? { replayer?.devicePath }
    /// Which gpsd is read (`private`, `configured` or `system`) and where, for `tmm-bridge
    /// status`; nil before `start()` and for an injected input.
    public var gpsdInUse: (kind: String, address: String)? {
        guard let session else { return nil }
        let kind = privateGPSD != nil ? "private" : options.gpsd != nil ? "configured" : "system"
        return (kind, "\(session.configuration.host):\(session.configuration.port)")
    }

    // How many values each inbox holds. Past it an inbox drops its oldest value (Inbox), so these
    // bound what a stalled caller's loop lets pile up; each is far above what one drain finds.

    /// Epochs and gpsd's events: 4096 is some 80 s of one receiver at 50 Hz, the fastest rate
    /// served, and about 7 MB of epochs (a `Position` is 1.7 KB).
    static let eventCapacity = 4096
    /// Discovery's events: a scan is one value and a hotplug burst a handful per device
    /// (docs/discovery.md asks for 256 or more); as many as the epochs' inbox, since they are small.
    static let discoveryCapacity = 4096
    /// gpsd control results: one per command, and the commands run one at a time on the worker,
    /// each up to 3 s, so a drain finds one or two.
    static let controlResultCapacity = 1024

    /// The real input side (started by `start()`).
    public init(options: Options, log: Logger) throws(Errno) {
        self.options = options
        self.log = log
        tracker = InputTracker(streams: .perReceiver, preferences: options.preferredReceivers)
        events = try Inbox(capacity: Self.eventCapacity)
        found = try Inbox(capacity: Self.discoveryCapacity)
        controlResults = try Inbox(capacity: Self.controlResultCapacity)
        bluetoothTimer = try MonotonicTimer()
        gpsdControl = try Worker(name: "gpsd-control")
    }

    deinit { gpsdControl.stop() }

    /// An input side fed by hand: nothing is started, and whatever is posted to `events` is
    /// processed as if gpsd had sent it (tests; the loop cannot tell the difference).
    /// With `gpsdControlSocket`, receivers are handed to (and taken from) a gpsd listening
    /// there, through a session that is never started: the gpsd commands are real, the positions
    /// are still whatever is posted to `events`.
    public static func injected(
        gpsdControlSocket: String? = nil,
        log: Logger
    ) throws(Errno) -> ReceiverInput {
        var options = Options(runtimeDirectory: "/nonexistent")
        options.discovery = false
        let input = try ReceiverInput(injectedOptions: options, log: log)
        // What is posted by hand is the one-stream kind (`.position`), as from a watch on everything.
        input.tracker = InputTracker(streams: .single)
        if let gpsdControlSocket {
            var configuration = GPSDSession.Configuration()
            configuration.controlSocket = gpsdControlSocket
            input.session = GPSDSession(configuration, log: log)
            input.controlSocket = gpsdControlSocket
        }
        return input
    }

    private var isInjected = false

    private convenience init(injectedOptions: Options, log: Logger) throws(Errno) {
        try self.init(options: injectedOptions, log: log)
        isInjected = true
    }

    /// The descriptors to wait on (readable: call `drain()`).
    public var descriptors: [CInt] {
        [
            events.eventDescriptor, found.eventDescriptor, controlResults.eventDescriptor,
            bluetoothTimer.descriptor.rawValue,
        ]
    }

    /// Whether the bridge may hand devices to gpsd.
    public var managesDevices: Bool { controlSocket != nil }

    /// Starts the replay (if any), picks or starts gpsd, and starts the session and discovery.
    public func start() throws(ReceiverInputError) {
        guard !isInjected else { return }
        var devices = options.devices.map(canonicalDevicePath)
        if let replay = options.replay {
            let capture: ReplayCapture
            do {
                switch replay {
                case .demo: capture = try ReplayCapture(text: options.demoCapture, name: "the built-in capture")
                case .file(let path):
                    // AtomicFile.read refuses what is not a regular file (a FIFO would block the
                    // start with the stop signals blocked) and files over the 16 MiB limit.
                    let bytes: [UInt8]?
                    do { bytes = try AtomicFile.read(path) } catch {
                        throw ReceiverInputError.replayUnreadable(path: path, error)
                    }
                    guard let bytes else {
                        throw ReceiverInputError.replayMissing(path: path)
                    }
                    guard let text = String(validating: bytes, as: UTF8.self) else {
                        throw ReceiverInputError.replayNotText(path: path)
                    }
                    capture = try ReplayCapture(text: text, name: path)
                }
            } catch let error as ReceiverInputError {
                throw error
            } catch {
                throw .replayUnusable("\(error)")
            }
            do {
                let replayer = try CaptureReplayer(capture: capture)
                try replayer.start()
                self.replayer = replayer
                devices.append(replayer.devicePath)
                log(
                    "replaying \(capture.epochs.count) epochs every \(capture.period / 1_000_000) ms "
                        + "into \(replayer.devicePath)"
                )
            } catch {
                throw .replayPseudoterminal(error)
            }
        }

        try chooseGPSD()
        var configuration: GPSDSession.Configuration
        if case .existing(let gpsd) = gpsdChoice {
            configuration = gpsd
        } else {
            do throws(AtomicFile.Failure) {
                try makeDirectories(options.runtimeDirectory, mode: 0o755, alsoOwnedBy: options.dropTo?.uid)
            } catch {
                // The runtime directory is another user's, a symlink, or not a directory.
                throw .runtimeDirectory(error)
            }
            do throws(PrivateGPSDError) {
                var gpsdConfiguration = try PrivateGPSD.Configuration.inRuntimeDirectory(options.runtimeDirectory)
                gpsdConfiguration.user = options.dropTo
                gpsdConfiguration.readOnly = options.privateGPSDReadOnly
                let gpsd = PrivateGPSD(gpsdConfiguration, log: log)
                try gpsd.start()
                privateGPSD = gpsd
                configuration = GPSDSession.Configuration(port: gpsd.configuration.port)
                configuration.controlSocket = gpsd.configuration.controlSocket
                configuration.privateGPSDUser = options.dropTo?.uid
            } catch {
                throw .privateGPSD(error)
            }
        }
        controlSocket = configuration.controlSocket
        if controlSocket == nil && (options.discovery || !devices.isEmpty) {
            log.warning("no gpsd control socket (configure gpsd-control): receivers are not handed to gpsd")
        }
        // This session watches gpsd's device reports only; each receiver's NMEA comes through a
        // watch of its own, started when gpsd opens it (startWatch).
        var receiverConfiguration = configuration
        receiverConfiguration.controlSocket = nil
        watchConfiguration = receiverConfiguration
        configuration.watch = .devices
        let session = GPSDSession(configuration, log: log)
        do { try session.start(feeding: GPSDEpochConsumer(inbox: events)) } catch { throw .gpsdThread(error) }
        self.session = session
        tracker.preferences = resolvedPreferences()

        if options.discovery {
            let monitor = UdevDiscovery(inbox: found)
            do {
                try monitor.start()
                udev = monitor
            } catch {
                log.warning("udev discovery unavailable (\(error)); only configured devices are used")
            }
        }
        for path in devices {
            perform(inventory.addExplicitDevice(path: path))
        }
        startBluetooth()
    }

    /// Decides which gpsd to read, and so `controlSocket`, without starting anything: the one
    /// configured or the system's when it can be trusted (`chooseSystemGPSD`), else a private
    /// one, whose control socket is `RUNDIR/gpsd.sock`. The daemon calls it before it makes its
    /// server, whose corrections writer is given `controlSocket` then (the server is made before
    /// `start()` because it is what finds another daemon on the same runtime directory, whose
    /// private gpsd `start()` would end); `start()` calls it when that has not been done.
    /// Throws what `start()` throws for a configured gpsd that is not trusted.
    public func chooseGPSD() throws(ReceiverInputError) {
        guard !isInjected, gpsdChoice == nil else { return }
        if let gpsd = try chooseSystemGPSD(replaying: options.replay != nil) {
            gpsdChoice = .existing(gpsd)
            controlSocket = gpsd.controlSocket
        } else {
            gpsdChoice = .privateGPSD
            controlSocket = PrivateGPSD.Configuration.controlSocket(inRuntimeDirectory: options.runtimeDirectory)
        }
    }

    /// Binds the configured Bluetooth receivers now (each bound tty is handed to gpsd like a
    /// configured device) and arms the timer that keeps them bound.
    func startBluetooth() {
        guard !options.bluetooth.isEmpty else { return }
        bluetoothKeeper = RFCOMMKeeper(
            bindings: options.bluetooth, control: options.rfcommControl, now: monotonicNanoseconds())
        for path in bluetoothKeeper?.boundPaths ?? [] { perform(inventory.addExplicitDevice(path: path)) }
        tickBluetooth()
    }

    /// Does what the Bluetooth bindings need now and arms the timer for the next check.
    private func tickBluetooth() {
        guard var keeper = bluetoothKeeper else { return }
        let tick = keeper.tick(now: monotonicNanoseconds())
        bluetoothKeeper = keeper
        for line in tick.log { log(line) }
        for path in tick.gone { perform(inventory.removeExplicitDevice(path: path)) }
        for path in tick.bound { perform(inventory.addExplicitDevice(path: path)) }
        do {
            try bluetoothTimer.arm(afterNanoseconds: max(tick.next, 1_000_000))
        } catch {
            log.error("bluetooth: cannot arm the rebind timer: \(error); the bindings are no longer checked")
        }
    }

    /// The configured Bluetooth receivers' bindings: tty, bound or not, link state, last error,
    /// failed attempts (for `status`; empty without `bluetooth` lines).
    public var bluetooth: [RFCOMMBindingStatus] { bluetoothKeeper?.status ?? [] }

    /// The gpsd to read that the bridge did not start, or nil for a private one. Whichever it
    /// is, its socket must belong to root, the gpsd user or us (GPSDTrust; the session checks
    /// again on every connection): anyone else on the port would feed every TMM client.
    ///
    /// - A replay (`--demo`, `--replay`) always gets a private gpsd: it must read the capture,
    ///   and nothing else.
    /// - A configured `gpsd` that is there and fails the check is refused (exit 78): the
    ///   operator asked for it by name, so quietly reading another would hide the problem. One
    ///   that is not there yet is used and checked when it comes.
    /// - Otherwise the system gpsd on 127.0.0.1:2947 is used if it passes; if something else
    ///   holds that port, the bridge says why and starts a private gpsd.
    private func chooseSystemGPSD(replaying: Bool) throws(ReceiverInputError) -> GPSDSession.Configuration? {
        if replaying {
            if options.gpsd != nil {
                log("replaying: the configured gpsd is not used; a private gpsd reads the capture")
            }
            return nil
        }
        if let gpsd = options.gpsd {
            // `unknown` (the server end closed before it was looked up) is asked again: a
            // refusal ends the daemon, so it must not rest on a race.
            var verdict = GPSDTrust.probe(host: gpsd.host, port: gpsd.port)
            for _ in 0..<3 where verdict == .unknown { verdict = GPSDTrust.probe(host: gpsd.host, port: gpsd.port) }
            switch verdict {
            case .untrusted, .unknown:
                throw .untrustedGPSD(host: gpsd.host, port: gpsd.port, verdict: "\(verdict)")
            case .trusted, .remote, .unreachable:
                log("using the configured gpsd at \(gpsd.host):\(gpsd.port): \(verdict)")
            }
            var configuration = GPSDSession.Configuration(host: gpsd.host, port: gpsd.port)
            configuration.controlSocket = options.gpsdControlSocket
            return configuration
        }
        let verdict = GPSDTrust.probe(host: "127.0.0.1", port: 2947)
        switch verdict {
        case .trusted:
            var configuration = GPSDSession.Configuration()
            configuration.controlSocket = options.gpsdControlSocket ?? trustedSystemControlSocket()
            log("using the system gpsd at 127.0.0.1:2947: \(verdict)")
            return configuration
        case .untrusted, .unknown, .remote:
            log.warning("not using the gpsd at 127.0.0.1:2947: \(verdict); starting a private gpsd")
            return nil
        case .unreachable:
            return nil
        }
    }

    /// /run/gpsd.sock when it is a socket we may write that root or the gpsd user made (/run is
    /// root's, so this holds unless the system is already someone else's).
    private func trustedSystemControlSocket() -> String? {
        let path = "/run/gpsd.sock"
        guard let status = try? PathStatus.of(path), status.isSocket, GPSDTrust.trustedOwners.contains(status.owner),
            CurrentProcess.canWrite(path)
        else { return nil }
        return path
    }

    /// Stops everything `start()` started, in reverse order.
    public func stop() {
        udev?.stop()
        gpsdControl.stop()
        for watch in receiverWatches.values { watch.requestStop() }
        for watch in receiverWatches.values { watch.stop() }
        for watch in stoppingWatches { watch.stop() }
        receiverWatches = [:]
        stoppingWatches = []
        session?.stop()
        privateGPSD?.stop()
        replayer?.stop()
        events.close()
        found.close()
    }

    /// Takes what the threads posted and returns what changed.
    public func drain() -> [InputChange] {
        if (try? bluetoothTimer.readExpirations()) ?? 0 > 0 { tickBluetooth() }
        for event in found.drain() {
            if case .problem(let problem) = event { log("discovery: \(problem)") }
            perform(inventory.apply(event))
        }
        var changes: [InputChange] = []
        for result in controlResults.drain() {
            switch result {
            case .device(let path, let added, let failure?):
                logHandOverFailure(path, adding: added, failure)
            case .device(let path, true, nil):
                if managesDevices { log("handed \(path) to gpsd") }
            case .device:
                break
            case .request(let ticket, let failure, let done):
                for line in done { log(line) }
                changes.append(.receiverControlFinished(ticket: ticket, failure: failure))
            }
        }
        // What discovery learned (a serial number, maybe after gpsd opened the device) before
        // gpsd's events are weighed.
        updateSerialNumbers(into: &changes)
        for event in events.drain() {
            // Bookkeeping beside the state (the inventory's view of gpsd, log lines) needs the
            // devices as they were before the event.
            switch event {
            case .position, .receiverPosition, .receiverQuiet, .receiverClosed:
                break
            case .receiverWatching(let path):
                log("reading \(path) through its own gpsd watch")
            case .gpsd(.connected(let release)):
                log("connected to gpsd \(release)")
            case .gpsd(.devices(let list)):
                log("gpsd has \(list.isEmpty ? "no devices" : list.map(\.path).joined(separator: ", "))")
                for device in list.filter(\.isActive).sorted(by: { $0.path < $1.path }) {
                    inventory.gpsdReported(path: device.path, driver: device.driver, subtype: device.subtype)
                    logDriver(of: device)
                }
                // Only bookkeeping: the session itself re-adds the devices a restarted gpsd lacks
                // (GPSDSession.restoreWanted), and a second `+path` would only be refused.
                _ = inventory.gpsdSessionStarted(devices: list.map(\.path))
            case .gpsd(.device(let device)):
                if device.isActive {
                    inventory.gpsdReported(path: device.path, driver: device.driver, subtype: device.subtype)
                    logDriver(of: device)
                    if tracker.receivers[device.path] == nil && device.driver.isEmpty {
                        log("gpsd opened \(device.path)")
                    }
                } else {
                    inventory.gpsdRemoved(path: device.path)
                    log("gpsd closed \(device.path)")
                }
            case .gpsd(.unreachable), .gpsd(.connectionLost), .gpsd(.quiet):
                break
            }
            let first = changes.count
            tracker.apply(event, into: &changes)
            for change in changes[first...] {
                switch change {
                case .inputLost(let reason): log.warning("input lost: \(reason)")
                case .inputRestored: log.notice("input restored")
                case .receiverConnected(let path): startWatch(path)
                case .receiverDisconnected(let path): stopWatch(path)
                case .servedReceiver(let path):
                    log(
                        path.map {
                            "serving \($0)"
                                + (tracker.receivers.count > 1 ? " (of \(tracker.receivers.count) receivers)" : "")
                        }
                            ?? "serving no receiver")
                default: break
                }
            }
        }
        stoppingWatches.removeAll { watch in
            guard watch.hasFinished else { return false }
            watch.stop()  // returns at once: the thread is done
            return true
        }
        return changes
    }

    /// Starts the device-filtered watch of a receiver gpsd just opened.
    private func startWatch(_ path: String) {
        guard var configuration = watchConfiguration, receiverWatches[path] == nil else { return }
        configuration.watch = .device(path)
        configuration.logPrefix = path + ": "
        let watch = GPSDSession(configuration, log: log)
        do {
            try watch.start(feeding: GPSDEpochConsumer(inbox: events, receiver: path))
            receiverWatches[path] = watch
        } catch {
            log.error("cannot start the gpsd thread for \(path): \(error); its positions are not read")
        }
    }

    /// Stops the watch of a receiver gpsd closed. A watching receiver is removed only once its
    /// watch has posted its last epoch and `receiverClosed` (InputTracker), so nothing is lost.
    private func stopWatch(_ path: String) {
        guard let watch = receiverWatches.removeValue(forKey: path) else { return }
        watch.requestStop()
        stoppingWatches.append(watch)
    }

    /// Gives the tracker the serial numbers discovery knows and asks it to choose again when one
    /// changed (a `prefer` by serial number can only match once it is known).
    private func updateSerialNumbers(into changes: inout [InputChange]) {
        guard !options.preferredReceivers.isEmpty else { return }
        var serials: [String: String] = [:]
        for snapshot in inventory.snapshots where snapshot.isConnected {
            if let serial = snapshot.serialNumber { serials[snapshot.devicePath] = serial }
        }
        guard serials != tracker.serialNumbers else { return }
        tracker.serialNumbers = serials
        tracker.reselect(into: &changes)
    }

    /// The `prefer` entries with each path as gpsd will name it (a `/dev/gnss/...` or
    /// `/dev/serial/by-id/...` link resolved, as devices given by path are).
    private func resolvedPreferences() -> [ReceiverPreference] {
        options.preferredReceivers.map { preference in
            if case .path(let path) = preference { return .path(canonicalDevicePath(path)) }
            return preference
        }
    }

    /// The receivers gpsd has open, in the order it opened them, with what discovery knows of
    /// each (for `status`).
    public var receivers: [ReceiverStatus] {
        let snapshots = inventory.snapshots
        return tracker.receiversInOrder.map { track in
            ReceiverStatus(
                track: track, isServed: track.path == tracker.served,
                identity: snapshots.last { $0.isConnected && $0.devicePath == track.path })
        }
    }

    /// The path of the receiver TMM clients are served, nil when gpsd has none open.
    public var servedReceiver: String? { tracker.served }

    /// Logs gpsd's driver for a device the first time it is known (gpsd learns it from the data).
    private func logDriver(of device: GPSDDevice) {
        guard !device.driver.isEmpty, tracker.receivers[device.path]?.device.driver != device.driver else { return }
        log("gpsd reads \(device.path) with driver \(device.driver)")
    }

    /// What REST's `/api/v1/receiver` says now.
    public var receiverInfo: ReceiverInfo {
        let snapshot = primarySnapshot
        let device =
            (tracker.served ?? snapshot?.devicePath).flatMap { tracker.receivers[$0]?.device }
            ?? tracker.receiversInOrder.first?.device
        let subtype = device.map(\.subtype).flatMap { $0.isEmpty ? nil : $0 }
        return ReceiverInfo(
            isReceiverConfigured: snapshot != nil || !tracker.receivers.isEmpty,
            isConnected: !tracker.receivers.isEmpty && !userDisconnected,
            bluetoothName: snapshot?.bluetoothName,
            bluetoothAddress: snapshot?.bluetoothAddress,
            receiverBrand: snapshot?.brand,
            receiverModel: snapshot?.model ?? subtype,
            receiverSerialNumber: snapshot?.serialNumber)
    }

    /// The inventory's receiver that is served, else one gpsd has open, else its primary one.
    private var primarySnapshot: ReceiverSnapshot? {
        let snapshots = inventory.snapshots
        if let served = tracker.served,
            let snapshot = snapshots.last(where: { $0.isConnected && $0.devicePath == served })
        {
            return snapshot
        }
        return snapshots.last { $0.isConnected && tracker.receivers[$0.devicePath] != nil } ?? inventory.primary
    }

    /// `PUT {"isConnected":false}`: takes every receiver away from gpsd until `connect()`. The
    /// gpsd commands run on the worker: the returned ticket comes back in
    /// `.receiverControlFinished` when they are done.
    public func disconnect() throws(ReceiverControlError) -> Int {
        guard let session, managesDevices else { throw .notManaged }
        guard receiverInfo.isReceiverConfigured else { throw .noReceiver }
        userDisconnected = true
        let paths = Set(tracker.receivers.keys).union(inventory.snapshots.filter(\.isConnected).map(\.devicePath))
        return try submit(paths.sorted(), verb: "disconnected") { path throws(GPSDControlSocket.Failure) in
            try session.removeDevice(path)
        }
    }

    /// `PUT {"isConnected":true}`: hands every present receiver to gpsd again. Returns a ticket
    /// as `disconnect()` does, or nil when there is nothing to hand over.
    public func connect() throws(ReceiverControlError) -> Int? {
        guard receiverInfo.isReceiverConfigured else { throw .noReceiver }
        let wasDisconnected = userDisconnected
        userDisconnected = false
        guard wasDisconnected || tracker.receivers.isEmpty else { return nil }
        guard let session, managesDevices else { throw .notManaged }
        let paths = inventory.snapshots.filter { $0.isConnected && tracker.receivers[$0.devicePath] == nil }.map(
            \.devicePath)
        guard !paths.isEmpty else { return nil }
        return try submit(paths, verb: "connected") { path throws(GPSDControlSocket.Failure) in
            try session.addDevice(path)
        }
    }

    /// Queues `command` for each of `paths`, in order, as one job that stops at the first
    /// failure; returns its ticket.
    private func submit(
        _ paths: [String], verb: String,
        _ command: @escaping @Sendable (String) throws(GPSDControlSocket.Failure) -> Void
    )
        throws(ReceiverControlError) -> Int
    {
        lastTicket += 1
        let ticket = lastTicket
        let results = controlResults
        let queued = gpsdControl.submit {
            var done: [String] = []
            for path in paths {
                do {
                    try command(path)
                } catch {
                    results.post(.request(ticket: ticket, failure: "\(error)", done: done))
                    return
                }
                done.append("\(verb) \(path) (REST request)")
            }
            results.post(.request(ticket: ticket, failure: nil, done: done))
        }
        guard queued else { throw .gpsdFailed("too many gpsd commands are waiting; try again") }
        return ticket
    }

    /// Queues `+path` (`adding`) or `-path` for gpsd on the worker; `drain` logs how it went.
    private func handOver(_ path: String, adding: Bool) {
        guard let session else { return }
        let results = controlResults
        let queued = gpsdControl.submit {
            var failure: String?
            do {
                if adding { try session.addDevice(path) } else { try session.removeDevice(path) }
            } catch {
                failure = "\(error)"
            }
            results.post(.device(path: path, added: adding, failure: failure))
        }
        if !queued { logHandOverFailure(path, adding: adding, "too many gpsd commands are waiting") }
    }

    private func logHandOverFailure(_ path: String, adding: Bool, _ reason: String) {
        log(adding ? "cannot hand \(path) to gpsd: \(reason)" : "cannot remove \(path) from gpsd: \(reason)")
    }

    /// Carries out inventory actions against gpsd and logs them.
    private func perform(_ actions: [InventoryAction]) {
        for action in actions {
            switch action {
            case .addToGPSD(let path):
                guard !userDisconnected else {
                    log("receiver \(path) found; not handed to gpsd while disconnected by request")
                    continue
                }
                handOver(path, adding: true)
            case .removeFromGPSD(let path):
                handOver(path, adding: false)
            case .connected(let id):
                let receiver = inventory.receiver(id: id)
                let details = [
                    receiver?.path, receiver?.brand, receiver?.model, receiver?.serialNumber.map { "serial \($0)" },
                ]
                log("receiver connected: \(id) " + details.compactMap { $0 }.joined(separator: " "))
                let twins = inventory.sharingSerialNumber(with: id)
                if let receiver, let serial = receiver.serialNumber, !twins.isEmpty {
                    log(
                        "\(id) \(receiver.path) and " + twins.map { "\($0.id) \($0.path)" }.joined(separator: ", ")
                            + " claim the same vendor and serial number \(serial):"
                            + " a /dev/\(UdevRules.linkFolder) link by serial and prefer = \(serial)"
                            + " cannot tell them apart; name them by port (/dev/serial/by-path/...)",
                        level: .warning)
                }
            case .disconnected(let id):
                log("receiver disconnected: \(id)")
            case .ignored:
                break  // every tty on the machine that is not a receiver: not worth a line
            }
        }
    }
}

/// Why the input side could not start.
public enum ReceiverInputError: ExitStatusError, Sendable {
    /// `--replay FILE` cannot be read (not a regular file, too large, no permission): exit 78.
    case replayUnreadable(path: String, AtomicFile.Failure)
    /// `--replay FILE` does not exist: exit 78.
    case replayMissing(path: String)
    /// `--replay FILE` is not UTF-8 text: exit 78.
    case replayNotText(path: String)
    /// The capture holds nothing to replay: exit 1.
    case replayUnusable(String)
    /// No pseudo-terminal for the replay: exit 1.
    case replayPseudoterminal(Errno)
    /// The runtime directory is another user's, a symlink or not a directory: exit 78.
    case runtimeDirectory(AtomicFile.Failure)
    /// The private gpsd did not start: exit 1.
    case privateGPSD(PrivateGPSDError)
    /// The gpsd thread did not start: exit 1.
    case gpsdThread(Errno)
    /// The configured gpsd's socket belongs to someone untrusted: exit 78.
    case untrustedGPSD(host: String, port: UInt16, verdict: String)

    public var exitStatus: ExitStatus {
        switch self {
        case .replayUnreadable, .replayMissing, .replayNotText, .runtimeDirectory, .untrustedGPSD: .badConfiguration
        case .replayUnusable, .replayPseudoterminal, .privateGPSD, .gpsdThread: .failure
        }
    }

    public var description: String {
        switch self {
        case .replayUnreadable(let path, let error):
            "replay: cannot use \(path): \(error.reason ?? error.errno.description)"
        case .replayMissing(let path): "replay: \(path) does not exist"
        case .replayNotText(let path): "replay: \(path) is not text (a gpsd-format NMEA log is expected)"
        case .replayUnusable(let reason): "replay: \(reason)"
        case .replayPseudoterminal(let error): "replay: cannot open a pseudo-terminal: \(error)"
        case .runtimeDirectory(let error): "runtime directory: \(error)"
        case .privateGPSD(let error): "a private gpsd could not start: \(error)"
        case .gpsdThread(let error): "cannot start the gpsd thread: \(error)"
        case .untrustedGPSD(let host, let port, let verdict):
            "refusing the configured gpsd at \(host):\(port): \(verdict). "
                + "Stop whatever listens there or configure the gpsd that should be read"
        }
    }
}

@available(*, unavailable, message: "the input side belongs to the thread that drains it")
extension ReceiverInput: Sendable {}

/// One receiver gpsd has open, as `status` shows it: what the input side tracks of its stream
/// and what discovery knows of the device.
public struct ReceiverStatus: Sendable, Equatable {
    /// Its stream: path, gpsd's driver, epochs, last epoch, fix quality, rate, silence.
    public var track: ReceiverTrack
    /// Its epochs are the ones TMM clients get.
    public var isServed: Bool
    /// Discovery's record (brand, model, serial number, how it was found: `connection`); nil for
    /// a device discovery does not know (given by path and not yet classified).
    public var identity: ReceiverSnapshot?

    public var path: String { track.path }
}
