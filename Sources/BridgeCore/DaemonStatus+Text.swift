import GNSS
import Input
import TMMProtocol

// The three ways an operator reads a DaemonStatus, all pure:
//
//   summary     one clause list for systemd's STATUS= (`systemctl status` shows it):
//               "receiver /dev/ttyACM0 (u-blox 8), RTK fixed, 10 Hz, 3 clients"
//   report      `tmm-bridge status`: a label column and the facts, one topic a line
//   statusLine  `make run` on a terminal: fix, position, rate, clients, redrawn in place

extension FixQuality {
    /// How operators read a fix quality (lower case except acronyms, as in a sentence).
    public var statusName: String {
        switch self {
        case .noFix: "no fix"
        case .autonomous: "autonomous"
        case .dgps: "DGPS"
        case .pps: "PPS"
        case .rtkFixed: "RTK fixed"
        case .rtkFloat: "RTK float"
        case .estimated: "dead reckoning"
        case .manual: "manual"
        case .simulated: "simulated"
        }
    }
}

extension DaemonStatus {
    /// The receiver the summary names: the served one when the daemon knows it, else the first
    /// connected receiver gpsd has open, else the first connected one.
    public var headlineReceiver: Receiver? {
        if let served = servedReceiver, let receiver = receivers.first(where: { $0.path == served }) { return receiver }
        return receivers.first { $0.connected && $0.openInGPSD } ?? receivers.first(where: \.connected)
    }

    /// "no fix", "RTK fixed", "waiting for positions", "input lost".
    public var fixDescription: String {
        switch fix.input {
        case "waiting": "waiting for positions"
        case "lost": "input lost"
        default: fix.fixQuality?.statusName ?? "no fix"
        }
    }

    /// `systemctl status`'s line: receiver, fix, rate, clients. Built only from what changes
    /// slowly (the rate rounded, no position or ages), so it changes only when something an
    /// operator cares about does.
    public var summary: String {
        var parts: [String] = []
        let connected = receivers.filter(\.connected)
        if let receiver = headlineReceiver {
            let name = Self.receiverName(receiver).map { " (\($0))" } ?? ""
            let others = connected.count > 1 ? " and \(connected.count - 1) more" : ""
            parts.append("receiver \(receiver.path)\(name)\(others)")
        } else {
            parts.append("no receiver")
        }
        parts.append(fixDescription)
        if fix.input == "live", let rate = fix.epochRate { parts.append(Self.rate(rate)) }
        if let corrections = corrections?.headline { parts.append(corrections) }
        if let fleet = fleet?.headline { parts.append(fleet) }
        let total = clients.total
        parts.append(total == 1 ? "1 client" : "\(total) clients")
        return parts.joined(separator: ", ")
    }

    /// What a receiver is, in a few words: brand and model (the model alone when it already names
    /// the brand), else gpsd's driver; nil when nothing is known.
    public static func receiverName(_ receiver: Receiver) -> String? {
        var words: [String] = []
        if let brand = receiver.brand { words.append(brand) }
        if let model = receiver.model {
            if let brand = receiver.brand, model.lowercased().hasPrefix(brand.lowercased()) {
                words = [model]
            } else {
                words.append(model)
            }
        }
        if words.isEmpty, let driver = receiver.gpsdDriver, !driver.isEmpty { words.append(driver) }
        return words.isEmpty ? nil : words.joined(separator: " ")
    }

    /// "10 Hz", "0.5 Hz": `steadyRate`, so jitter around a receiver's rate does not change the text.
    public static func rate(_ hertz: Double) -> String {
        let steady = steadyRate(hertz)
        return hertz >= 2 ? "\(Int(steady)) Hz" : fixed(steady, decimals: 1) + " Hz"
    }

    /// A measured rate as the operator views show it: whole hertz from 2 Hz up, tenths below, so
    /// the jitter of a receiver's rate changes neither the text nor a retained message.
    public static func steadyRate(_ hertz: Double) -> Double {
        hertz >= 2 ? hertz.rounded() : (hertz * 10).rounded() / 10
    }

    /// Short labels for the six servers, in TMM's order.
    public static let socketLabels: [(key: String, label: String)] = TMMServer.iOSOrder.map { server in
        let base =
            switch server.plain {
            case .location: "V1"
            case .api: "REST"
            default: "V2"
            }
        return (server.registrationKey, server.isSecure ? base + " TLS" : base)
    }

    // MARK: - tmm-bridge status

    /// `tmm-bridge status`: one topic per line, labels in a column.
    public var report: String {
        var lines: [(String, String)] = []
        lines.append(("daemon", "tmm-bridge \(version), pid \(pid), up \(Self.duration(uptimeSeconds))"))
        if receivers.isEmpty {
            lines.append(
                ("receivers", "none (plug one in, or give --device PATH; tmm-bridge devices shows what discovery sees)")
            )
        }
        for (index, receiver) in receivers.enumerated() {
            lines.append(
                (index == 0 ? "receivers" : "", Self.describe(receiver, served: receiver.path == servedReceiver)))
        }
        for (index, binding) in bluetooth.enumerated() {
            var text = "\(binding.address) channel \(binding.channel) → \(binding.device): "
            text += binding.bound ? "bound" + (binding.link.map { ", link \($0)" } ?? "") : "not bound"
            if binding.binds > 1 { text += ", re-bound \(binding.binds - 1) times" }
            if let error = binding.lastError { text += "; \(binding.failures) failed: \(error)" }
            lines.append((index == 0 ? "bluetooth" : "", text))
        }
        var fixLine = fixDescription
        if let rate = fix.epochRate { fixLine += ", " + Self.fixed(rate, decimals: 1) + " Hz" }
        if let age = fix.lastEpochAgeSeconds { fixLine += ", last epoch " + Self.fixed(age, decimals: 1) + " s ago" }
        lines.append(("fix", fixLine))
        if let position = Self.position(fix) {
            lines.append(("position", position + (fix.satellites.map { ", \($0) satellites" } ?? "")))
        }
        var gpsdLine = gpsd.kind ?? "unknown"
        gpsdLine += gpsd.release.map { " gpsd \($0)" } ?? " gpsd (not connected)"
        if let address = gpsd.address { gpsdLine += " on \(address)" }
        lines.append(("gpsd", gpsdLine))
        let busy = Self.socketLabels.compactMap { socket in
            clients.bySocket[socket.key].flatMap { $0 > 0 ? "\(socket.label) \($0)" : nil }
        }
        var clientLine = "\(clients.total)" + (busy.isEmpty ? "" : " (" + busy.joined(separator: ", ") + ")")
        clientLine +=
            "; streaming: LocationV1 \(clients.locationV1), LocationV2 \(clients.locationV2), events \(clients.events)"
            + (clients.dashboard > 0 ? ", dashboard \(clients.dashboard)" : "")
        lines.append(("clients", clientLine))
        let bound = Self.socketLabels.compactMap { socket in ports[socket.key].map { "\(socket.label) \($0)" } }
        if !bound.isEmpty { lines.append(("ports", bound.joined(separator: ", "))) }
        var apps = "\(registration.registered) registered, policy \(registration.policy)"
        if registration.policy == "allowlist" { apps += " (\(registration.allowedIDs) allowed)" }
        apps += registration.locationV2Unlocked ? ", LocationV2 unlocked" : ", LocationV2 locked until a registration"
        lines.append(("apps", apps))
        for application in registration.applications {
            lines.append(("", "\(application.name) since \(application.registeredAt)"))
        }
        if registration.applications.count < registration.registered {
            lines.append(("", "(the latest \(registration.applications.count) listed)"))
        }
        // Off and never used: nothing to say (the line would only widen the label column).
        if let corrections, corrections.state != "off" || corrections.frames > 0 {
            for (index, line) in Self.describe(corrections).enumerated() {
                lines.append((index == 0 ? "corrections" : "", line))
            }
        }
        if let fleet {
            for (index, line) in Self.describe(fleet).enumerated() {
                lines.append((index == 0 ? "mqtt" : "", line))
            }
        }
        let width = lines.map(\.0.count).max() ?? 0
        return lines.map { label, text in
            label + String(repeating: " ", count: width - label.count + 2) + text
        }.joined(separator: "\n") + "\n"
    }

    /// Fleet publishing in two lines: the broker and its state; the messages and the spool.
    static func describe(_ fleet: Fleet) -> [String] {
        // The state's name, and why when it is a failure ("unreachable: Connection refused").
        var link = fleet.state
        if fleet.state != "off" && fleet.state != "connected" && fleet.message != fleet.state {
            link += ": " + fleet.message
        }
        if let broker = fleet.broker, fleet.state != "off" {
            link += " (" + broker + (fleet.topicPrefix.map { ", topics \($0)/…" } ?? "") + ") for "
            link += duration(fleet.stateSeconds)
        }
        var flow = "\(fleet.published) published, \(fleet.acknowledged) acknowledged"
        if fleet.inFlight > 0 { flow += ", \(fleet.inFlight) in flight" }
        if fleet.lost > 0 { flow += ", \(fleet.lost) lost" }
        flow += "; spool \(fleet.pending) pending (\(fleet.spoolBytes) of \(fleet.spoolLimit) bytes)"
        if let age = fleet.oldestPendingAgeSeconds { flow += ", oldest " + fixed(age, decimals: 0) + " s" }
        flow += ", \(fleet.spooled) spooled, \(fleet.drained) drained"
        if fleet.dropped > 0 { flow += ", \(fleet.dropped) dropped when full" }
        if fleet.recovered > 0 { flow += ", \(fleet.recovered) from before the start" }
        if fleet.damaged > 0 { flow += ", \(fleet.damaged) damaged" }
        return [link, flow]
    }

    /// The corrections client in two lines: the caster and its state; what came in and what
    /// reached the receiver.
    static func describe(_ corrections: Corrections) -> [String] {
        var source = corrections.state == "off" ? "off" : corrections.message
        if let caster = corrections.caster {
            let login = corrections.user.map { "\($0)@" } ?? ""
            let scheme = corrections.tls == true ? "ntrips://" : "ntrip://"
            source += " (" + scheme + login + caster + "/" + (corrections.mountPoint ?? "")
            source += corrections.revision.map { ", NTRIP \($0).0" } ?? ""
            source += corrections.origin.map { ", set by \($0)" } ?? ""
            source += ") for " + duration(corrections.stateSeconds)
        }
        guard corrections.state != "off" || corrections.frames > 0 else { return [source] }
        var flow = "\(corrections.frames) frames (\(corrections.bytes) bytes)"
        if corrections.damagedFrames > 0 { flow += ", \(corrections.damagedFrames) damaged" }
        if let age = corrections.lastFrameAgeSeconds { flow += ", last " + fixed(age, decimals: 1) + " s ago" }
        if let station = corrections.stationID { flow += ", station \(station)" }
        flow += "; to \(corrections.receiver ?? "no receiver")"
        if let route = corrections.route { flow += " via \(route)" }
        flow += ": \(corrections.framesWritten) written"
        if corrections.framesDropped > 0 { flow += ", \(corrections.framesDropped) dropped" }
        if corrections.writeFailures > 0 {
            flow += ", \(corrections.writeFailures) failed" + (corrections.writeError.map { " (\($0))" } ?? "")
        }
        flow += "; GGA sent \(corrections.ggaSent)"
        return [source, flow]
    }

    /// One receiver on one line: path, what it is, how it was found, what gpsd does with it.
    static func describe(_ receiver: Receiver, served: Bool) -> String {
        var facts: [String] = []
        if let name = receiverName(receiver), receiver.brand != nil || receiver.model != nil { facts.append(name) }
        if let serial = receiver.serialNumber { facts.append("serial \(serial)") }
        if let usbID = receiver.usbID { facts.append("USB \(usbID)") }
        if let address = receiver.bluetoothAddress {
            facts.append("Bluetooth \(address)" + (receiver.bluetoothName.map { " \"\($0)\"" } ?? ""))
        }
        switch receiver.foundBy {
        case "discovery": facts.append("found by discovery" + (receiver.classification.map { " (\($0))" } ?? ""))
        case "configured": facts.append("configured (device =)")
        case "replay": facts.append("the replayed capture")
        case "gpsd": facts.append("added to gpsd by someone else")
        default: facts.append("found by \(receiver.foundBy)")
        }
        if receiver.openInGPSD {
            facts.append("open in gpsd" + (receiver.gpsdDriver.flatMap { $0.isEmpty ? nil : " (\($0))" } ?? ""))
        } else {
            facts.append(receiver.connected ? "not open in gpsd" : "disconnected")
        }
        if served { facts.append("SERVED") }
        if let epochs = receiver.epochs {
            var stream = receiver.silent == true ? "silent" : "\(epochs) epochs"
            if let rate = receiver.epochRate, receiver.silent != true {
                stream += " at " + fixed(rate, decimals: 1) + " Hz"
            }
            if let quality = receiver.fixQuality { stream += ", " + quality }
            if let age = receiver.lastEpochAgeSeconds { stream += ", last " + fixed(age, decimals: 1) + " s ago" }
            switch receiver.epochSource.flatMap(EpochSource.init(rawValue:)) {
            case .nmea: stream += ", read from its NMEA"
            case .gpsdReports: stream += ", read from gpsd's JSON"
            case nil: break
            }
            facts.append(stream)
        }
        return receiver.path + "  " + facts.joined(separator: ", ")
    }

    /// "47.4069012 N, 8.5031123 E, 512.35 m"; nil without a latitude and longitude.
    static func position(_ fix: Fix) -> String? {
        guard let latitude = fix.latitude, let longitude = fix.longitude else { return nil }
        var text = fixed(abs(latitude), decimals: 7) + (latitude < 0 ? " S, " : " N, ")
        text += fixed(abs(longitude), decimals: 7) + (longitude < 0 ? " W" : " E")
        if let height = fix.height { text += ", " + fixed(height, decimals: 2) + " m" }
        return text
    }

    /// "45 s", "12 min 05 s", "3 h 07 min", "2 d 04 h".
    public static func duration(_ seconds: Int) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        switch seconds {
        case ..<60: return "\(max(0, seconds)) s"
        case ..<3600: return "\(seconds / 60) min \(two(seconds % 60)) s"
        case ..<86_400: return "\(seconds / 3600) h \(two(seconds / 60 % 60)) min"
        default: return "\(seconds / 86_400) d \(two(seconds / 3600 % 24)) h"
        }
    }

    /// `value` with exactly `decimals` decimals (rounded half away from zero); "nan" and "inf"
    /// for what is not a number. No Foundation formatter: BridgeCore is pure.
    public static func fixed(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e18 else { return "\(value)" }
        let digits = Int64(scaled)
        let power = Int64(scale)
        var text = (value < 0 && digits != 0 ? "-" : "") + "\(digits / power)"
        if decimals > 0 {
            let fraction = "\(digits % power)"
            text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
        }
        return text
    }

    // MARK: - The live status line

    /// The line `make run` keeps redrawn on a terminal: fix, position, rate, clients, cut to
    /// `width` columns (a line that wraps could no longer be erased with one carriage return).
    public func statusLine(width: Int) -> String {
        var parts = [fixDescription]
        if fix.input == "live" {
            if let latitude = fix.latitude, let longitude = fix.longitude {
                var position = Self.fixed(latitude, decimals: 7) + " " + Self.fixed(longitude, decimals: 7)
                if let height = fix.height { position += " " + Self.fixed(height, decimals: 2) + " m" }
                parts.append(position)
            }
            if let rate = fix.epochRate { parts.append(Self.rate(rate)) }
        }
        if let age = fix.lastEpochAgeSeconds, age >= 2 { parts.append("last epoch \(Int(age)) s ago") }
        if let corrections = corrections?.headline { parts.append(corrections) }
        if let fleet = fleet?.headline { parts.append(fleet) }
        let total = clients.total
        parts.append(total == 1 ? "1 client" : "\(total) clients")
        let line = parts.joined(separator: "  ")
        // Every character here is one column: the text is ASCII except the input's own strings,
        // which do not appear in it.
        return width > 0 && line.count > width ? String(line.prefix(width)) : line
    }
}
