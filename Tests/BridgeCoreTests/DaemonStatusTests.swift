// The operator's views of the daemon, all pure: the STATUS control request and its reply, the
// DaemonStatus document (JSON both ways), the systemd summary, the `tmm-bridge status` report and
// the live status line (golden strings), the epoch rate meter and the STATUS= pacing.
import BridgeCore
import Foundation
import GNSS
import TestSupport
import Testing

/// A daemon serving one u-blox receiver with an RTK fix to three clients.
private func serving() -> DaemonStatus {
    DaemonStatus(
        version: "0.1.0", pid: 4242, uptimeSeconds: 3725,
        receivers: [
            DaemonStatus.Receiver(
                path: "/dev/ttyACM0", connected: true, foundBy: "discovery", connection: "usb",
                brand: "u-blox", model: "u-blox GNSS receiver", manufacturer: "u-blox AG",
                serialNumber: "M8N0042", usbID: "1546:01a8", classification: "gpsd-ublox-8",
                openInGPSD: true, gpsdDriver: "u-blox", gpsdSubtype: "SW ROM CORE 3.01"),
            DaemonStatus.Receiver(
                path: "/dev/ttyUSB0", connected: false, foundBy: "discovery", connection: "usb",
                usbID: "0403:6001", classification: "bridge-ftdi-ft232", openInGPSD: false),
        ],
        fix: DaemonStatus.Fix(
            input: "live", quality: "rtkFixed", epochRate: 9.98, lastEpochAgeSeconds: 0.04,
            latitude: 47.40690123, longitude: -8.50311234, height: 512.345, satellites: 14),
        gpsd: DaemonStatus.GPSD(kind: "private", address: "127.0.0.1:40123", release: "3.22"),
        ports: [
            "locationPort": 9635, "locationSecurePort": 9636, "apiPort": 9637, "apiSecurePort": 9638,
            "locationV2Port": 9639, "locationV2SecurePort": 9640,
        ],
        clients: DaemonStatus.Clients(
            bySocket: ["locationPort": 1, "locationV2Port": 2, "apiPort": 0], locationV1: 1,
            locationV2: 1, events: 1),
        registration: DaemonStatus.Registration(
            policy: "allowlist", allowedIDs: 3, registered: 1,
            applications: [DaemonStatus.Application(name: "application …9abc", registeredAt: "2026-12-01T07:58:48Z")],
            locationV2Unlocked: true))
}

/// A daemon that has just started: nothing plugged in, nobody connected.
private func starting() -> DaemonStatus {
    DaemonStatus(
        version: "0.1.0", pid: 7, uptimeSeconds: 2, receivers: [], fix: DaemonStatus.Fix(input: "waiting"),
        gpsd: DaemonStatus.GPSD(kind: "system", address: "127.0.0.1:2947", release: nil), ports: [:],
        clients: DaemonStatus.Clients(bySocket: [:], locationV1: 0, locationV2: 0, events: 0),
        registration: DaemonStatus.Registration(
            policy: "open", allowedIDs: 0, registered: 0, applications: [],
            locationV2Unlocked: false))
}

@Suite("The STATUS control request and its reply", .tags(.unit))
struct StatusRequestTests {
    private func read(_ text: String) -> ControlProtocol.LineReading {
        ControlProtocol.readRequestLine(Array(text.utf8))
    }

    @Test(arguments: [
        ("STATUS\n", ControlProtocol.LineReading.request(.status)),
        ("STATUS\r\n", .request(.status)),
        ("STATUS", .needMore),
        ("STATUS\r", .needMore),
        ("STATUS \n", .refused(.error("STATUS takes no argument"))),
        ("STATUS --json\n", .refused(.error("STATUS takes no argument"))),
        ("status\n", .refused(.error("unknown request 'status': expected OPEN <url> or STATUS"))),
        ("STATUSES\n", .refused(.error("unknown request 'STATUSES': expected OPEN <url> or STATUS"))),
        (" STATUS\n", .refused(.error("unknown request '': expected OPEN <url> or STATUS"))),
        ("\n", .refused(.error("unknown request '': expected OPEN <url> or STATUS"))),
        ("OPEN STATUS\n", .request(.open(url: "STATUS"))),
        ("STATUS\u{301}\n", .refused(.error("unknown request 'STATUS\u{301}': expected OPEN <url> or STATUS"))),
    ])
    func requestLines(_ line: String, _ expected: ControlProtocol.LineReading) {
        #expect(read(line) == expected)
    }

    @Test func aStatusLineIsBoundedLikeAnyRequest() {
        let padded = "STATUS" + String(repeating: " ", count: ControlProtocol.maximumLineLength)
        #expect(
            read(padded + "\n")
                == .refused(.error("request line longer than \(ControlProtocol.maximumLineLength) bytes")))
        #expect(
            ControlProtocol.readRequestLine([0x53, 0xFF, 0x0A]) == .refused(.error("the request is not UTF-8 text")))
    }

    @Test func theReplyIsOneLineThatParsesBack() throws {
        var status = serving()
        // A USB product string is the device's to choose: line breaks in it stay inside the JSON.
        status.receivers[0].model = "evil\nOK 1 x://y\r\nERROR"
        let line = ControlProtocol.formatReply(.status(json: status.json()))
        #expect(line.hasPrefix("OK-JSON {") && line.hasSuffix("}\n"))
        #expect(line.dropLast().allSatisfy { $0 != "\n" && $0 != "\r" })
        let reply = ControlProtocol.parseReply(String(line.dropLast()))
        guard case .status(let json) = reply else {
            Issue.record("parsed as \(String(describing: reply))")
            return
        }
        #expect(try DaemonStatus.parse(json: json).get() == status)
        // The registration replies are what they were.
        #expect(ControlProtocol.parseReply("OK OK myapp://r?x") == .ok(result: "OK", url: "myapp://r?x"))
        #expect(ControlProtocol.parseReply("OK-JSONX") == nil)
    }

    @Test func aDocumentThatIsNotAStatusIsRefusedWithTheReason() throws {
        #expect(throws: ControlFailure.self) { try DaemonStatus.parse(json: "not json").get() }
        let other = serving().json().replacingOccurrences(of: "\"tmm-bridge status\"", with: "\"something else\"")
        #expect(
            DaemonStatus.parse(json: other).failure?.message
                == "the daemon's status has format 'something else', not 'tmm-bridge status'")
        let newer = serving().json().replacingOccurrences(of: "\"formatVersion\":1", with: "\"formatVersion\":2")
        #expect(
            DaemonStatus.parse(json: newer).failure?.message.contains("version 2, newer than this tmm-bridge reads (1)")
                == true)
        // A field a newer daemon adds is ignored, not an error.
        let extended = serving().json().replacingOccurrences(of: "{\"clients\"", with: "{\"future\":[1,2],\"clients\"")
        #expect(try DaemonStatus.parse(json: extended).get() == serving())
    }

    @Test func theServedReceiverIsAbsentUntilKnown() throws {
        #expect(!serving().json().contains("servedReceiver"))
        var status = serving()
        status.servedReceiver = "/dev/ttyACM0"
        #expect(status.json().contains("\"servedReceiver\":\"/dev/ttyACM0\""))
        #expect(try DaemonStatus.parse(json: status.json()).get().servedReceiver == "/dev/ttyACM0")
    }
}

@Suite("What operators read: summary, report, status line", .tags(.unit))
struct StatusTextTests {
    @Test func summaries() {
        #expect(serving().summary == "receiver /dev/ttyACM0 (u-blox GNSS receiver), RTK fixed, 10 Hz, 3 clients")
        #expect(starting().summary == "no receiver, waiting for positions, 0 clients")
        var one = serving()
        one.clients.bySocket = ["apiPort": 1]
        one.fix.epochRate = 0.5
        #expect(one.summary == "receiver /dev/ttyACM0 (u-blox GNSS receiver), RTK fixed, 0.5 Hz, 1 client")
        var two = serving()
        two.receivers[1].connected = true
        two.fix.input = "lost"
        #expect(two.summary == "receiver /dev/ttyACM0 (u-blox GNSS receiver) and 1 more, input lost, 3 clients")
        var pty = serving()
        pty.receivers = [
            DaemonStatus.Receiver(
                path: "/dev/pts/3", connected: true, foundBy: "replay", openInGPSD: true,
                gpsdDriver: "NMEA0183")
        ]
        #expect(pty.summary == "receiver /dev/pts/3 (NMEA0183), RTK fixed, 10 Hz, 3 clients")
        // A served receiver, once the daemon names one, is the one the summary names.
        var served = two
        served.servedReceiver = "/dev/ttyUSB0"
        #expect(served.summary.hasPrefix("receiver /dev/ttyUSB0 and 1 more"))
    }

    @Test func theReport() {
        #expect(
            serving().report == """
                daemon     tmm-bridge 0.1.0, pid 4242, up 1 h 02 min
                receivers  /dev/ttyACM0  u-blox GNSS receiver, serial M8N0042, USB 1546:01a8, found by discovery \
                (gpsd-ublox-8), open in gpsd (u-blox)
                           /dev/ttyUSB0  USB 0403:6001, found by discovery (bridge-ftdi-ft232), disconnected
                fix        RTK fixed, 10.0 Hz, last epoch 0.0 s ago
                position   47.4069012 N, 8.5031123 W, 512.35 m, 14 satellites
                gpsd       private gpsd 3.22 on 127.0.0.1:40123
                clients    3 (V1 1, V2 2); streaming: LocationV1 1, LocationV2 1, events 1
                ports      V1 9635, V1 TLS 9636, REST 9637, REST TLS 9638, V2 9639, V2 TLS 9640
                apps       1 registered, policy allowlist (3 allowed), LocationV2 unlocked
                           application …9abc since 2026-12-01T07:58:48Z

                """)
        #expect(
            starting().report == """
                daemon     tmm-bridge 0.1.0, pid 7, up 2 s
                receivers  none (plug one in, or give --device PATH; tmm-bridge devices shows what discovery sees)
                fix        waiting for positions
                gpsd       system gpsd (not connected) on 127.0.0.1:2947
                clients    0; streaming: LocationV1 0, LocationV2 0, events 0
                apps       0 registered, policy open, LocationV2 locked until a registration

                """)
    }

    /// Two receivers, each on its own watch, one served; a configured Bluetooth receiver that
    /// cannot be bound: each stream and the binding on its own line, and in the JSON.
    @Test func severalReceiversAndABluetoothBinding() throws {
        var status = serving()
        status.servedReceiver = "/dev/ttyACM0"
        status.receivers[0].served = true
        status.receivers[0].epochs = 1200
        status.receivers[0].epochRate = 9.98
        status.receivers[0].fixQuality = "rtkFixed"
        status.receivers[0].lastEpochAgeSeconds = 0.04
        status.receivers[0].epochSource = "gpsd-json"
        status.receivers.append(
            DaemonStatus.Receiver(
                path: "/dev/ttyACM1", connected: true, foundBy: "configured",
                openInGPSD: true, epochSource: "nmea", served: false, epochs: 300, epochRate: 1,
                fixQuality: "autonomous", lastEpochAgeSeconds: 7.5, silent: true))
        status.bluetooth = [
            DaemonStatus.BluetoothBinding(
                address: "00:11:22:33:44:55", channel: 1, device: "/dev/rfcomm0",
                bound: false, lastError: "no Bluetooth adapter", failures: 3)
        ]
        let lines = status.report.split(separator: "\n").map(String.init)
        #expect(
            lines.contains {
                $0.hasSuffix(
                    "open in gpsd (u-blox), SERVED, 1200 epochs at 10.0 Hz, rtkFixed, last 0.0 s ago, "
                        + "read from gpsd's JSON"
                )
            },
            "\(lines)")
        #expect(
            lines.contains(
                "           /dev/ttyACM1  configured (device =), open in gpsd, silent, autonomous, last 7.5 s ago, "
                    + "read from its NMEA"
            ),
            "\(lines)")
        #expect(
            lines.contains(
                "bluetooth  00:11:22:33:44:55 channel 1 → /dev/rfcomm0: not bound; 3 failed: no Bluetooth adapter"),
            "\(lines)")
        let decoded = try JSONDecoder().decode(DaemonStatus.self, from: JSONEncoder().encode(status))
        #expect(decoded == status)
    }

    @Test func theCorrectionsClientInTheReportTheSummaryAndTheStatusLine() throws {
        var status = serving()
        status.corrections = DaemonStatus.Corrections(
            state: "streaming", message: "receiving RTCM corrections", stateSeconds: 725, origin: "rest",
            caster: "caster.example.com:2101", mountPoint: "RTCM3", user: "me", tls: false, revision: 2, attempts: 1,
            bytes: 1_480_312, frames: 7241, damagedFrames: 2, lastFrameAgeSeconds: 0.4, stationID: 2718, ggaSent: 73,
            receiver: "/dev/ttyACM0", route: "gpsd", framesWritten: 7239, framesDropped: 3)
        #expect(
            status.summary
                == "receiver /dev/ttyACM0 (u-blox GNSS receiver), RTK fixed, 10 Hz, corrections streaming, 3 clients")
        let lines = status.report.split(separator: "\n").filter { $0.hasPrefix("corrections") || $0.hasPrefix("   ") }
        #expect(
            status.report.contains(
                "corrections  receiving RTCM corrections (ntrip://me@caster.example.com:2101/RTCM3, NTRIP 2.0, "
                    + "set by rest) for 12 min 05 s\n"), "\(lines)")
        #expect(
            status.report.contains(
                "7241 frames (1480312 bytes), 2 damaged, last 0.4 s ago, station 2718; to /dev/ttyACM0 via gpsd: "
                    + "7239 written, 3 dropped; GGA sent 73\n"), "\(status.report)")
        #expect(status.statusLine(width: 0).contains("corrections streaming"))
        status.corrections?.state = "login-refused"
        #expect(status.summary.contains("corrections: login refused"))
        status.corrections = DaemonStatus.Corrections(state: "off", message: "off", stateSeconds: 9)
        #expect(!status.summary.contains("corrections"))
        #expect(!status.report.contains("corrections"))
        // The document round-trips with the section.
        status.corrections?.state = "streaming"
        #expect(try DaemonStatus.parse(json: status.json()).get() == status)
    }

    @Test func aLongRegistryIsListedInPart() {
        var status = serving()
        status.registration.registered = 500
        #expect(
            status.report.hasSuffix("application …9abc since 2026-12-01T07:58:48Z\n           (the latest 1 listed)\n"))
    }

    @Test(arguments: [
        (0, "0 s"), (59, "59 s"), (60, "1 min 00 s"), (3599, "59 min 59 s"), (3600, "1 h 00 min"), (90_061, "1 d 01 h"),
    ])
    func durations(_ seconds: Int, _ text: String) {
        #expect(DaemonStatus.duration(seconds) == text)
    }

    @Test(arguments: [
        (0.0, 2, "0.00"), (1.005, 1, "1.0"), (-0.04, 1, "0.0"), (-0.05, 1, "-0.1"), (47.40690123, 7, "47.4069012"),
        (512.345, 0, "512"), (9.96, 1, "10.0"), (-93.7505648, 7, "-93.7505648"),
    ])
    func fixedDecimals(_ value: Double, _ decimals: Int, _ text: String) {
        #expect(DaemonStatus.fixed(value, decimals: decimals) == text)
    }

    @Test func theStatusLine() {
        #expect(serving().statusLine(width: 200) == "RTK fixed  47.4069012 -8.5031123 512.35 m  10 Hz  3 clients")
        #expect(starting().statusLine(width: 200) == "waiting for positions  0 clients")
        var stalled = serving()
        stalled.fix.input = "lost"
        stalled.fix.lastEpochAgeSeconds = 12.7
        #expect(stalled.statusLine(width: 200) == "input lost  last epoch 12 s ago  3 clients")
        // Never wider than the terminal: a wrapped line could not be redrawn in place.
        #expect(serving().statusLine(width: 20) == "RTK fixed  47.406901")
        #expect(serving().statusLine(width: 20).count == 20)
    }

    @Test func fixQualityNames() {
        #expect(
            FixQuality.allCases.map(\.statusName) == [
                "no fix", "autonomous", "DGPS", "PPS", "RTK fixed", "RTK float", "dead reckoning", "manual",
                "simulated",
            ])
        for quality in FixQuality.allCases {
            #expect(DaemonStatus.Fix(input: "live", quality: "\(quality)").fixQuality == quality)
        }
    }
}

@Suite("EpochRateMeter and StatusNotifications", .tags(.unit))
struct EpochRateAndNotificationTests {
    private let second: Int64 = 1_000_000_000

    @Test func aSteadyReceiverMeasuresItsRate() throws {
        var meter = EpochRateMeter()
        #expect(meter.rate(now: 0) == nil && meter.latest == nil)
        meter.record(5 * second)
        #expect(meter.rate(now: 5 * second) == nil)  // one instant is no rate
        for tick in 1...200 { meter.record(5 * second + Int64(tick) * 100_000_000) }
        let rate = try #require(meter.rate(now: 25 * second + 50_000_000))
        #expect(abs(rate - 10) < 1e-9)
        #expect(meter.latest == 25 * second)
    }

    @Test func onlyTheWindowCounts() throws {
        var meter = EpochRateMeter(capacity: 64, window: 10 * second)
        // 1 Hz for a minute, then 5 Hz for 2 s: the window (10 s back) sees the change.
        for tick in 0..<60 { meter.record(Int64(tick) * second) }
        for tick in 1...10 { meter.record(59 * second + Int64(tick) * 200_000_000) }
        let rate = try #require(meter.rate(now: 61 * second))
        // 10 s back from 61 s: instants 51...59 s at 1 Hz, then ten at 5 Hz: 18 intervals in 10 s.
        #expect(abs(rate - 1.8) < 1e-9)
        // A receiver that stopped: its last epoch leaves the window, and the rate with it.
        #expect(meter.rate(now: 75 * second) == nil)
    }

    @Test func statusGoesOutOnChangeAtMostOncePerSecond() {
        var pacing = StatusNotifications()
        pacing.sent("serving on ports", now: 0)
        #expect(!pacing.isDue(now: second / 2))
        #expect(pacing.message(for: "receiver x, RTK fixed", now: second / 2) == nil)  // too soon
        #expect(pacing.message(for: "receiver x, RTK fixed", now: second) == "STATUS=receiver x, RTK fixed")
        #expect(pacing.message(for: "receiver x, RTK fixed", now: 5 * second) == nil)  // unchanged
        #expect(pacing.message(for: "receiver x, RTK float", now: 5 * second + 1) == "STATUS=receiver x, RTK float")
        #expect(pacing.message(for: "receiver x, RTK fixed", now: 5 * second + 2) == nil)
        #expect(pacing.lastSent == "receiver x, RTK float")
    }

    @Test func aLineBreakCannotStartAnotherAssignment() {
        var pacing = StatusNotifications()
        #expect(pacing.message(for: "receiver (evil\nREADY=1\r)", now: 0) == "STATUS=receiver (evil READY=1 )")
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
