// The WebSocket servers over real sockets against an in-process bridge: the V2 lock, one frame
// per epoch with identical bytes for every client, V1 once per interval, /events, control frames,
// protocol errors and their close codes, keepalive, and the slow-client rule.
import Foundation
import GNSS
import GPSD
import Glibc
import Input
import Posix
import TMMProtocol
import TestSupport
import Testing
import WebSocket

@testable import Bridge
@testable import BridgeCore

/// Positions of the Trimble RTK capture, as the gpsd thread would post them.
func capturePositions() throws -> [Position] {
    var decoder = NMEAStreamDecoder()
    var positions: [Position] = []
    let capture = try Fixtures.bytes("nmea-rtk.log")
    decoder.feed(capture.span, now: 0) { positions.append($0) }
    decoder.finish { positions.append($0) }
    return positions
}

@Suite("WebSocket server", .tags(.integration), .serialized)
struct ServerWebSocketTests {
    @Test func locationV2IsLockedUntilARegistrationAndV1IsOpen() throws {
        let bridge = try TestBridge.start()
        for path in ["/", "/locationV2", "/events"] {
            do {
                _ = try WebSocketTestClient(port: bridge.ports.locationV2, path: path)
                Issue.record("\(path) upgraded while locked")
            } catch let refused as WebSocketTestClient.Refused {
                #expect(refused.response.status == 401, "\(path)")
                #expect((refused.response.json?["error"] as? String)?.contains("locked") == true)
            }
        }
        _ = try WebSocketTestClient(port: bridge.ports.location, path: "/")
        try bridge.register(testAppID)
        for path in ["/", "/locationV2", "/LocationV2/", "/events"] {
            _ = try WebSocketTestClient(port: bridge.ports.locationV2, path: path)
        }
        #expect(bridge.logs.contains { $0.contains("LocationV2 unlocked: registration of application …9abc") })
    }

    @Test func anAuthenticatedRESTCallAlsoUnlocks() throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        bridge.stop()
        // A new process (same state): locked again, although the application is still registered.
        let restarted = try TestBridge.start(stateDirectory: bridge.stateDirectory)
        #expect(throws: WebSocketTestClient.Refused.self) {
            _ = try WebSocketTestClient(port: restarted.ports.locationV2)
        }
        #expect(try request(restarted.ports.api, "/api/v1/receiver").status == 200)
        _ = try WebSocketTestClient(port: restarted.ports.locationV2, path: "/locationV2")
    }

    @Test(arguments: [
        ("/nope", 404), ("/locationV2/x", 404), ("/events/", 101),
    ])
    func pathsOnTheV2Port(_ path: String, _ status: Int) throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        do {
            _ = try WebSocketTestClient(port: bridge.ports.locationV2, path: path)
            #expect(status == 101)
        } catch let refused as WebSocketTestClient.Refused {
            #expect(refused.response.status == status, "\(path)")
        }
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 426),
        (
            "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
            426
        ),
        (
            "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
            426
        ),
        (
            "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Version: 13\r\n\r\n",
            400
        ),
        (
            "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n",
            400
        ),
        ("POST / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nContent-Length: 0\r\n\r\n", 405),
        ("GET / HTTP/1.0\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n\r\n", 400),
    ])
    func brokenHandshakesAreRefusedWithTheRightStatusAndClosed(_ text: String, _ status: Int) throws {
        let bridge = try TestBridge.start()
        let client = try RawClient(port: bridge.ports.location)
        try client.send(text)
        let response = try client.response()
        #expect(response.status == status, "\(text)")
        #expect(response.header("Date")?.hasSuffix(" GMT") == true)
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("Access-Control-Allow-Origin") == "*")
        #expect(response.header("Connection") == (status == 426 ? "Upgrade, close" : "close"))
        if status == 426 { #expect(response.header("Upgrade") == "websocket") }
        #expect(try client.isClosedByServer())
    }

    @Test func everyEpochIsOneTextFrameWithTheSameBytesForEveryClient() throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        let clients = try (0..<3).map { i in
            try WebSocketTestClient(port: bridge.ports.locationV2, path: i == 0 ? "/" : "/locationV2")
        }
        let positions = Array(try capturePositions().prefix(20))
        try bridge.connectReceiver()

        var encoder = LocationV2Encoder()
        let expected = positions.map { position -> [UInt8] in
            encoder.encode(position, identity: ReceiverIdentity(appVersion: "9.8.7"))
            return encoder.bytes
        }
        // At a receiver's pace (each epoch once the last arrived): epochs that come at once
        // coalesce to the latest (ServerRateTests).
        var received = [[ServerFrame]](repeating: [], count: clients.count)
        for position in positions {
            bridge.input.post(.position(position))
            for (index, client) in clients.enumerated() { received[index] += try client.frames(1) }
        }
        for frames in received {
            #expect(frames.count == positions.count)
            #expect(frames.allSatisfy { $0.fin && $0.opcode == 1 }, "single unfragmented text frames")
            #expect(frames.map(\.payload) == expected)
        }
        let first = try #require(try JSONSerialization.jsonObject(with: Data(expected[0])) as? [String: Any])
        #expect((first["latitude"] as? Double).map { abs($0 - 41.5749659) < 1e-6 } == true)
    }

    @Test func noFixEpochsKeepComingWithNulls() throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        let client = try WebSocketTestClient(port: bridge.ports.locationV2, path: "/locationV2")
        var position = Position()
        position.time = UTCTimestamp(date: CalendarDate(year: 2026, month: 12, day: 1), nanosecondsOfDay: 0)
        bridge.input.post(.position(position))
        let frame = try #require(try client.frame())
        let json = try #require(try JSONSerialization.jsonObject(with: Data(frame.payload)) as? [String: Any])
        #expect(json["latitude"] is NSNull)
        #expect(json["diffStatus"] is NSNull)
        #expect(json["satellites"] as? Int == 0)
        #expect(json["utcTimeStamp"] as? String == "2026-12-01T00:00:00Z")
    }

    @Test func locationV1GetsTheLatestPositionOncePerIntervalWhileItIsFresh() throws {
        let bridge = try TestBridge.start {
            $0.limits.locationV1Interval = 200_000_000
            $0.limits.locationV1MaximumAge = 1_000_000_000
        }
        let client = try WebSocketTestClient(port: bridge.ports.location)
        let positions = try capturePositions()
        // Ten epochs at once: V1 sends only the latest, at its own pace.
        for position in positions.prefix(10) { bridge.input.post(.position(position)) }
        let started = monotonicNanoseconds()
        let frames = try client.frames(3)
        let elapsed = monotonicNanoseconds() - started
        #expect(frames.count == 3)
        #expect(elapsed >= 300_000_000 && elapsed < 1_500_000_000, "3 frames in \(elapsed / 1_000_000) ms at 200 ms")
        var encoder = LocationV1Encoder()
        encoder.encode(positions[9], identity: ReceiverIdentity(appVersion: "9.8.7"))
        #expect(frames.allSatisfy { $0.payload == encoder.bytes }, "the latest position, LocationV1")
        // No new position for longer than the maximum age: V1 falls silent (frames come every 200 ms
        // while the position is fresh, so a 400 ms gap means it stopped).
        while try client.frame(milliseconds: 400) != nil {}
        let silentAfter = monotonicNanoseconds() - started
        #expect(silentAfter < 2_000_000_000, "still sending \(silentAfter / 1_000_000) ms after the last position")
        #expect(try client.frame(milliseconds: 600) == nil)
    }

    @Test func eventsStartWithTheStatusAndReportWhatHappens() throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        let client = try WebSocketTestClient(port: bridge.ports.locationV2, path: "/events")
        func next() throws -> [String: Any] {
            let frame = try #require(try client.frame())
            #expect(frame.opcode == 1)
            return try #require(try JSONSerialization.jsonObject(with: Data(frame.payload)) as? [String: Any])
        }
        var event = try next()
        #expect(event["event"] as? String == "status")
        #expect(event["input"] as? String == "waiting")
        #expect(event["diffStatus"] is NSNull)
        #expect((event["receiver"] as? [String: Any])?["isConnected"] as? Bool == false)
        #expect((event["time"] as? String)?.hasSuffix("Z") == true)

        try bridge.connectReceiver("/dev/ttyTEST0")
        event = try next()
        #expect(event["event"] as? String == "receiverConnected")
        #expect(event["device"] as? String == "/dev/ttyTEST0")
        #expect((event["receiver"] as? [String: Any])?["isConnected"] as? Bool == true)

        let positions = try capturePositions()
        bridge.input.post(.position(positions[0]))  // DGPS
        event = try next()
        #expect(event["event"] as? String == "fixQualityChanged")
        #expect(event["diffStatus"] as? Int == 2 && event["solutionType"] as? String == "DGPS")
        #expect(event["previousDiffStatus"] is NSNull)
        let rtk = try #require(positions.first { $0.quality == .rtkFixed })
        bridge.input.post(.position(positions[1]))  // still DGPS: no event
        bridge.input.post(.position(rtk))
        event = try next()
        #expect(event["solutionType"] as? String == "RTK Fixed" && event["previousSolutionType"] as? String == "DGPS")

        bridge.input.post(.gpsd(.quiet(seconds: 3)))
        event = try next()
        #expect(event["event"] as? String == "inputLost")
        #expect(event["reason"] as? String == "receiverSilent")
        #expect(event["message"] as? String == "no data from the receiver for 3.0 s")
        bridge.input.post(.position(rtk))  // positions flow again (same quality: no other event)
        #expect(try next()["event"] as? String == "inputRestored")

        try bridge.register("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
        event = try next()
        #expect(event["event"] as? String == "registration")
        #expect(event["registrationResult"] as? String == "OK")
        // The id is a credential (Access Code V1 is computed from it): not in the event, not in a log.
        #expect(event["applicationId"] == nil)
        #expect(!event.values.contains { "\($0)".contains("eeeeeeeeeeee") }, "\(event)")
        #expect(!bridge.logs.contains { $0.contains("aaaaaaaa-bbbb") || $0.contains("eeeeeeeeeeee") }, "\(bridge.logs)")

        bridge.input.post(.gpsd(.device(GPSDDevice(path: "/dev/ttyTEST0"))))
        event = try next()
        #expect(event["event"] as? String == "receiverDisconnected")
        #expect((event["receiver"] as? [String: Any])?["isConnected"] as? Bool == false)
    }

    @Test func pingsArePongedAndACloseIsEchoed() throws {
        let bridge = try TestBridge.start()
        let client = try WebSocketTestClient(port: bridge.ports.location)
        try client.send(opcode: 0x9, Array("are you there".utf8))
        #expect(try client.frame() == ServerFrame(fin: true, opcode: 0xA, payload: Array("are you there".utf8)))
        // A data message from a client is ignored, not an error.
        try client.send(opcode: 0x1, Array("hello".utf8))
        try client.send(opcode: 0x8, [0x03, 0xE8] + Array("bye".utf8))
        let close = try #require(try client.frame())
        #expect(close.opcode == 8 && close.closeCode == 1000)
        #expect(try client.raw.isClosedByServer())
    }

    @Test func idleClientsArePingedAndDroppedWhenSilent() throws {
        let bridge = try TestBridge.start(configure: Self.quickKeepalive)
        let client = try WebSocketTestClient(port: bridge.ports.location)
        let ping = try client.frame(milliseconds: 2000)
        #expect(ping?.opcode == 0x9)
        // No pong: after the time-out the server closes with 1001.
        let goodbye = try client.frame(milliseconds: 2000)
        #expect(goodbye?.opcode == 8)
        #expect(goodbye?.closeCode == 1001)
        let closed = try client.raw.isClosedByServer()
        #expect(closed)

        // A client that answers stays.
        let polite = try WebSocketTestClient(port: bridge.ports.location)
        try answerPings(polite, count: 3)
    }

    @Sendable private static func quickKeepalive(_ configuration: inout BridgeConfiguration) {
        configuration.limits.webSocket.pingInterval = 300_000_000
        configuration.limits.webSocket.pongTimeout = 300_000_000
    }

    private func answerPings(_ client: WebSocketTestClient, count: Int) throws {
        for _ in 0..<count {
            let frame = try client.frame(milliseconds: 2000)
            #expect(frame?.opcode == 0x9)
            try client.send(opcode: 0xA, frame?.payload ?? [])
        }
    }

    /// One row per RFC 6455 framing rule the server enforces, with the close code it must send.
    struct MalformedFrame: Sendable, CustomStringConvertible {
        var rule: String
        var bytes: [UInt8]
        var closeCode: UInt16
        var description: String { rule }
    }

    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        WebSocketTestClient.frame(opcode: opcode, payload, fin: fin)
    }

    static let malformedFrames: [MalformedFrame] = {
        var rows: [MalformedFrame] = []
        func row(_ rule: String, _ bytes: [UInt8], _ code: UInt16) {
            rows.append(MalformedFrame(rule: rule, bytes: bytes, closeCode: code))
        }
        row("reserved bits set", [0xC1, 0x80, 1, 2, 3, 4], 1002)
        row("unknown opcode", [0x83, 0x80, 1, 2, 3, 4], 1002)
        row("unmasked client frame", [0x81, 0x02, 0x68, 0x69], 1002)
        row("fragmented control frame", [0x09, 0x80, 1, 2, 3, 4], 1002)
        row("control frame longer than 125", frame(0x9, [UInt8](repeating: 0, count: 126)), 1002)
        row("non-minimal 16-bit length", [0x81, 0xFE, 0x00, 0x05, 1, 2, 3, 4], 1002)
        row("64-bit length with the high bit set", [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4], 1002)
        row("frame too large", [0x82, 0xFF, 0, 0, 0, 0, 0, 0x10, 0, 0], 1009)
        row("continuation without a message", frame(0x0, [1]), 1002)
        var interleaved = frame(0x1, [0x61], fin: false)
        interleaved.append(contentsOf: frame(0x1, [0x62]))
        row("new message inside a fragmented one", interleaved, 1002)
        var large = frame(0x2, [UInt8](repeating: 0, count: 40_000), fin: false)
        large.append(contentsOf: frame(0x0, [UInt8](repeating: 0, count: 40_000)))
        row("message too large", large, 1009)
        row("invalid UTF-8", frame(0x1, [0xC0, 0xAF]), 1007)
        row("close payload of one byte", frame(0x8, [0x03]), 1002)
        row("invalid close code", frame(0x8, [0x03, 0xED]), 1002)
        row("close reason not UTF-8", frame(0x8, [0x03, 0xE8, 0xFF]), 1007)
        return rows
    }()

    @Test func everyFramingRuleHasARow() {
        #expect(Self.malformedFrames.count == 15, "WebSocketProtocolError has 15 cases; add a row for a new one")
    }

    @Test(arguments: malformedFrames)
    func protocolErrorsCloseWithTheRightCode(_ row: MalformedFrame) throws {
        let (rule, bytes, code) = (row.rule, row.bytes, row.closeCode)
        let bridge = try TestBridge.start()
        let client = try WebSocketTestClient(port: bridge.ports.location)
        let witness = try WebSocketTestClient(port: bridge.ports.location)
        try client.raw.send(bytes)
        let close = try #require(try client.frame(), "\(rule): no Close frame")
        #expect(close.opcode == 8 && close.closeCode == code, "\(rule)")
        #expect(try client.raw.isClosedByServer(), "\(rule)")
        // Another client is not affected.
        try witness.send(opcode: 0x9, [7])
        #expect(try witness.frame()?.opcode == 0xA)
    }

    @Test func aClientThatStopsReadingIsClosedWith1008AndNobodyElseWaits() throws {
        let bridge = try TestBridge.start {
            $0.limits.queueSoftLimit = 8 * 1024
            $0.limits.queueHardLimit = 32 * 1024
            $0.limits.slowClientGrace = 100_000_000
            $0.limits.sendBuffer = 4096
            $0.limits.locationV2MinimumInterval = 1_000_000  // the cap is not what this test is about
        }
        try bridge.register(testAppID)
        let slow = try WebSocketTestClient(port: bridge.ports.locationV2, path: "/locationV2")
        var small: CInt = 4096
        setsockopt(
            slow.raw.socket.descriptor.rawValue, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<CInt>.size))
        let fast = try WebSocketTestClient(port: bridge.ports.locationV2, path: "/locationV2")
        let positions = try capturePositions()
        var received = 0
        // Two seconds of a 100 Hz receiver; the fast client reads everything as it comes.
        for round in 0..<200 {
            bridge.input.post(.position(positions[round % positions.count]))
            sleep(for: .milliseconds(10))  // the receiver's pace (100 Hz), not a wait for a result
            while let frame = try fast.frame(milliseconds: 1) {
                #expect(frame.opcode == 1)
                received += 1
            }
        }
        received += try fast.frames(200 - received, milliseconds: 1000).count
        #expect(received == 200, "the fast client got every epoch")
        try bridge.waitForLog("closing a slow WebSocket client (1008)")
        // The slow client finds its stream ended (after whatever its buffers held).
        var sawEnd = false
        while true {
            guard let frame = try slow.frame(milliseconds: 3000) else {
                sawEnd = true
                break
            }
            if frame.opcode == 8 {
                #expect(frame.closeCode == 1008)
                sawEnd = true
                break
            }
        }
        #expect(sawEnd)
    }
}
