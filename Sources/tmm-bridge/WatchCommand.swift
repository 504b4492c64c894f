// `tmm-bridge watch`: the whole input side, running: discovery hands receivers to gpsd, the
// gpsd thread decodes what they send (through ReceiverInput, as in the daemon), and every event
// is printed. It is the input half of the daemon (the servers come in a later issue) and the tool
// for checking a receiver on a bench.
import Bridge
import BridgeCore
import GNSS
import Glibc
import Input
import InputLoop
import Logging
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
        let loop: EventLoop
        do { loop = try EventLoop() } catch {
            return fail("cannot create the event loop: \(error)")
        }
        // Signals are read from a signalfd in the loop; they are blocked here, before any thread starts.
        do {
            try loop.handleSignals([SIGINT, SIGTERM]) { [unowned loop] number in
                log("signal \(number): stopping")
                loop.stop()
            }
        } catch {
            return fail("cannot create a signalfd: \(error)")
        }
        signal(SIGPIPE, SIG_IGN)

        var options = ReceiverInput.Options(runtimeDirectory: runtimeDirectory ?? defaultRuntimeDirectory())
        options.devices = devices
        options.gpsd = gpsd.map { GPSDAddress(host: $0.host, port: $0.port) }
        options.gpsdControlSocket = gpsdControlSocket
        options.discovery = discovery
        let input: ReceiverInput
        do {
            input = try ReceiverInput(options: options, log: logger)
            try input.start()
        } catch {
            return fail("\(error)")
        }
        defer { input.stop() }

        var encoder = LocationV2Encoder()
        let identity = ReceiverIdentity(appVersion: BridgeVersion.current)
        let json = self.json
        do {
            for fd in input.descriptors {
                try loop.register(fd, interest: .readable) { _ in
                    for change in input.drain() {
                        switch change {
                        case .position(let position):
                            if json {
                                encoder.encode(position, identity: identity)
                                Output.write(encoder.span, to: STDOUT_FILENO)
                                Output.standard("\n")
                            } else {
                                Output.standard(describe(position) + "\n")
                            }
                        case .receiverConnected, .receiverDisconnected, .servedReceiver, .inputLost, .inputRestored,
                            .receiverControlFinished:
                            break  // the input side logs these itself (and watch asks for no REST changes)
                        }
                    }
                }
            }
            try loop.run()
        } catch {
            return fail("event loop failed: \(error)")
        }
        return ExitCode.ok
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

/// The process's logger: stderr (so stdout carries only data), as journald lines when stderr is
/// the journal. `run` sets its level from the configuration.
let logger = Logger.standardError(program: "tmm-bridge")

/// Logs through `logger`.
func log(_ message: String, level: LogLevel = .info) { logger(message, level: level) }

private func fail(_ message: String) -> Int32 {
    log(message, level: .error)
    return ExitCode.failure
}
