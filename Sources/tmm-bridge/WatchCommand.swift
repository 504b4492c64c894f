// `tmm-bridge watch`: the whole input side, running: discovery hands receivers to gpsd, the
// gpsd session parses what they send, and every event is printed. It is the input half of the
// daemon (the servers come in a later issue) and the tool for checking a receiver on a bench.
import CLinux
import Discovery
import GNSS
import GPSD
import Glibc
import Posix
import TMMProtocol

struct WatchCommand: Equatable {
    var devices: [String] = []
    var gpsd: (host: String, port: UInt16)?
    var gpsdControlSocket: String?
    var discovery = true
    var json = false
    var runtimeDirectory: String?

    static func == (a: WatchCommand, b: WatchCommand) -> Bool {
        a.devices == b.devices && a.gpsd?.host == b.gpsd?.host && a.gpsd?.port == b.gpsd?.port
            && a.gpsdControlSocket == b.gpsdControlSocket && a.discovery == b.discovery && a.json == b.json
            && a.runtimeDirectory == b.runtimeDirectory
    }

    static let synopsis = """
               tmm-bridge watch [--device PATH]... [--gpsd HOST:PORT] [--gpsd-control PATH]
                                [--no-discovery] [--json] [--runtime-dir DIR]
        """
    static let summary = """
        watch    Run the receiver input side and print what happens: receivers found by udev
                 (and every --device PATH, ptys included) are handed to gpsd, and each epoch is
                 printed (a text line, or LocationV2 JSON with --json). Uses the gpsd at
                 --gpsd (default 127.0.0.1:2947) or, when none answers, starts a private gpsd.
                 Stops on SIGINT or SIGTERM.
        """

    static func parse(_ arguments: ArraySlice<String>) throws(UsageError) -> WatchCommand {
        var command = WatchCommand()
        var rest = arguments
        func value(_ option: String) throws(UsageError) -> String {
            guard let next = rest.popFirst(), !next.hasPrefix("--") else {
                throw UsageError(message: "\(option) needs a value")
            }
            return next
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--device": command.devices.append(try value(argument))
            case "--gpsd":
                let text = try value(argument)
                guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]),
                    port > 0, colon > text.startIndex
                else { throw UsageError(message: "--gpsd must be HOST:PORT, not '\(text)'") }
                command.gpsd = (String(text[..<colon]), port)
            case "--gpsd-control": command.gpsdControlSocket = try value(argument)
            case "--no-discovery": command.discovery = false
            case "--json": command.json = true
            case "--runtime-dir": command.runtimeDirectory = try value(argument)
            default: throw UsageError(message: "watch: unknown argument '\(argument)'")
            }
        }
        return command
    }

    func run() -> Int32 {
        // Signals are read from a signalfd in the loop; block them before any thread starts.
        var signals = sigset_t()
        clinux_sigset_empty(&signals)
        clinux_sigset_add(&signals, SIGINT)
        clinux_sigset_add(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)
        let signalFD = signalfd(-1, &signals, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        guard signalFD >= 0 else { return fail("cannot create a signalfd: \(Errno.current)") }
        defer { close(signalFD) }

        // gpsd: the configured one, else the system's, else our own.
        var privateGPSD: PrivateGPSD?
        var configuration: GPSDSession.Configuration
        if let gpsd {
            configuration = GPSDSession.Configuration(host: gpsd.host, port: gpsd.port)
            configuration.controlSocket = gpsdControlSocket
        } else if loopbackPortAnswers(2947) {
            configuration = GPSDSession.Configuration()
            configuration.controlSocket = gpsdControlSocket ?? (access("/run/gpsd.sock", W_OK) == 0 ? "/run/gpsd.sock" : nil)
            log("using the system gpsd at 127.0.0.1:2947")
        } else {
            let directory = runtimeDirectory ?? defaultRuntimeDirectory()
            guard makeDirectory(directory) else { return fail("cannot create runtime directory \(directory): \(Errno.current)") }
            do {
                let gpsd = PrivateGPSD(try .inRuntimeDirectory(directory)) { log($0) }
                try gpsd.start()
                privateGPSD = gpsd
                configuration = GPSDSession.Configuration(port: gpsd.configuration.port)
                configuration.controlSocket = gpsd.configuration.controlSocket
            } catch {
                return fail("no gpsd answers at 127.0.0.1:2947 and a private one could not start: \(error)")
            }
        }
        defer { privateGPSD?.stop() }
        if configuration.controlSocket == nil && (discovery || !devices.isEmpty) {
            log("no gpsd control socket (use --gpsd-control PATH): receivers are not handed to gpsd")
        }

        let input: Inbox<ReceiverInputEvent>
        let found: Inbox<DiscoveryEvent>
        do {
            input = try Inbox(capacity: 4096)
            found = try Inbox(capacity: 4096)
        } catch {
            return fail("cannot create inboxes: \(error)")
        }
        let session = GPSDSession(configuration, inbox: input) { log($0) }
        do { try session.start() } catch { return fail("cannot start the gpsd thread: \(error)") }
        defer { session.stop() }

        var inventory = ReceiverInventory()
        var udev: UdevDiscovery?
        if discovery {
            let monitor = UdevDiscovery(inbox: found)
            do {
                try monitor.start()
                udev = monitor
            } catch {
                log("udev discovery unavailable (\(error)); only --device receivers are used")
            }
        }
        defer { udev?.stop() }
        for path in devices {
            perform(inventory.addExplicitDevice(path: canonicalDevicePath(path)), session: session, inventory: inventory)
        }

        var encoder = LocationV2Encoder()
        let identity = ReceiverIdentity(appVersion: BridgeVersion.current)
        var pollers = [
            pollfd(fd: input.eventDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: found.eventDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: signalFD, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&pollers, nfds_t(pollers.count), 1000)
            if ready < 0 && errno != EINTR { return fail("poll failed: \(Errno.current)") }
            if pollers[2].revents != 0 {
                var info = signalfd_siginfo()
                _ = read(signalFD, &info, MemoryLayout<signalfd_siginfo>.size)
                log("signal \(info.ssi_signo): stopping")
                return ExitCode.ok
            }
            for event in found.drain() {
                if case .problem(let problem) = event { log("discovery: \(problem)") }
                perform(inventory.apply(event), session: session, inventory: inventory)
            }
            for event in input.drain() {
                switch event {
                case .position(let position):
                    if json {
                        encoder.encode(position, identity: identity)
                        Output.write(encoder.span, to: STDOUT_FILENO)
                        Output.standard("\n")
                    } else {
                        Output.standard(describe(position) + "\n")
                    }
                case .devices(let list):
                    log("gpsd has \(list.isEmpty ? "no devices" : list.map(\.path).joined(separator: ", "))")
                    perform(inventory.gpsdSessionStarted(devices: list.map(\.path)), session: session,
                            inventory: inventory)
                case .device(let device):
                    if device.isActive {
                        inventory.gpsdReported(path: device.path, driver: device.driver, subtype: device.subtype)
                        if !device.driver.isEmpty { log("gpsd reads \(device.path) with driver \(device.driver)") }
                    } else {
                        inventory.gpsdRemoved(path: device.path)
                        log("gpsd closed \(device.path)")
                    }
                case .connected(let release): log("connected to gpsd \(release)")
                case .inputLost(let reason): log("input lost: \(reason)")
                case .inputRestored: log("input restored")
                }
            }
        }
    }

    /// Carries out inventory actions against gpsd and reports them.
    private func perform(_ actions: [InventoryAction], session: GPSDSession, inventory: ReceiverInventory) {
        for action in actions {
            switch action {
            case .addToGPSD(let path):
                do {
                    try session.addDevice(path)
                    log("handed \(path) to gpsd")
                } catch {
                    log("cannot hand \(path) to gpsd: \(error)")
                }
            case .removeFromGPSD(let path):
                do { try session.removeDevice(path) } catch { log("cannot remove \(path) from gpsd: \(error)") }
            case .connected(let id):
                let receiver = inventory.receiver(id: id)
                let details = [receiver?.path, receiver?.brand, receiver?.model, receiver?.serialNumber.map { "serial \($0)" }]
                log("receiver connected: \(id) " + details.compactMap { $0 }.joined(separator: " "))
            case .disconnected(let id):
                log("receiver disconnected: \(id)")
            case .ignored:
                break  // every tty on the machine that is not a receiver: not worth a line
            }
        }
    }
}

/// One text line per epoch: time, position, quality, satellites, accuracy.
func describe(_ p: Position) -> String {
    var line = "epoch"
    if let time = p.time {
        let ns = time.nanosecondsOfDay
        let h = ns / 3_600_000_000_000, m = ns / 60_000_000_000 % 60, s = ns / 1_000_000_000 % 60
        let ms = ns / 1_000_000 % 1000
        func pad(_ v: Int64, _ n: Int) -> String {
            let t = String(v)
            return String(repeating: "0", count: max(0, n - t.count)) + t
        }
        line += " \(pad(h, 2)):\(pad(m, 2)):\(pad(s, 2)).\(pad(ms, 3))"
    }
    if p.hasFix, let lat = p.latitude, let lon = p.longitude {
        line += " \(lat) \(lon)"
        if let altitude = p.altitude { line += " h=\(altitude)" }
        line += " \(p.quality.solutionType ?? "")"
    } else {
        line += " no fix"
    }
    line += " sats=\(p.satellitesUsed)/\(p.satellitesInView)"
    if let hrms = p.hrms { line += " hrms=\(hrms)" }
    return line
}

/// Log lines go to stderr, so stdout carries only data.
func log(_ message: String) { Output.error("tmm-bridge: \(message)\n") }

private func fail(_ message: String) -> Int32 {
    log(message)
    return ExitCode.failure
}

/// `$RUNTIME_DIRECTORY` (systemd), else `$XDG_RUNTIME_DIR/tmm-bridge`, else `/run/tmm-bridge`
/// for root, else `/tmp/tmm-bridge-UID`.
func defaultRuntimeDirectory() -> String {
    if let systemd = getenv("RUNTIME_DIRECTORY") { return String(cString: systemd) }
    if let xdg = getenv("XDG_RUNTIME_DIR") { return String(cString: xdg) + "/tmm-bridge" }
    return getuid() == 0 ? "/run/tmm-bridge" : "/tmp/tmm-bridge-\(getuid())"
}

/// Creates `path` (and parents) with mode 0755; true if it exists afterwards.
func makeDirectory(_ path: String) -> Bool {
    var prefix = ""
    for component in path.split(separator: "/") {
        prefix += "/" + component
        mkdir(prefix, 0o755)
    }
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
}
