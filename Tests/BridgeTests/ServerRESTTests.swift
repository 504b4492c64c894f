// The REST API over real sockets against an in-process bridge: access codes, endpoints, CORS,
// keep-alive and pipelining, limits and time-outs.
import ByteCoding
import Foundation
import GPSD
import Glibc
import Input
import Posix
import Synchronization
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeCore

@Suite("REST server", .tags(.integration), .serialized)
struct ServerRESTTests {
    @Test func everyEndpointNeedsAnAccessCodeOfARegisteredApplication() throws {
        let bridge = try TestBridge.start()
        // Not registered yet: even a well-formed code is refused.
        var response = try request(bridge.ports.api, "/api/v1/receiver")
        #expect(response.status == 401)
        #expect(
            response.json?["error"] as? String
                == "no application is registered: register it first (tmmregister), or use Access Code V2")
        #expect(response.json?["Reason"] as? String == response.json?["error"] as? String)
        #expect(response.header("WWW-Authenticate") == "AccessCode realm=\"tmm-bridge\"")
        #expect(response.header("Access-Control-Allow-Origin") == "*", "a browser must be able to read the 401")

        try bridge.register(testAppID)
        for path in [
            "/api/v1/receiver", "/api/v1/tmmInfo", "/api/v1/test/ping", "/api/v1/positionStream?format=locationV2",
        ] {
            #expect(try request(bridge.ports.api, path, authorized: false).status == 401, "\(path) without a code")
            #expect(
                try request(
                    bridge.ports.api, path, headers: ["Authorization: \(accessCode(offset: -5))"],
                    authorized: false
                ).status == 401, "\(path) with a stale code")
            #expect(try request(bridge.ports.api, path).status == 200, "\(path)")
        }
        // The MAUI client retries with the previous second; a code one second ahead is fine too.
        for offset: Int64 in [-1, 1] {
            response = try request(
                bridge.ports.api, "/api/v1/receiver", headers: ["Authorization: \(accessCode(offset: offset))"],
                authorized: false)
            #expect(response.status == 200, "offset \(offset)")
        }
        // Scheme case and surrounding spaces do not matter; another application's code does.
        let lower = accessCode().replacingOccurrences(of: "Basic ", with: "basic   ")
        #expect(
            try request(bridge.ports.api, "/api/v1/receiver", headers: ["Authorization: \(lower)"], authorized: false)
                .status == 200)
        let other = accessCode("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
        #expect(
            try request(bridge.ports.api, "/api/v1/receiver", headers: ["Authorization: \(other)"], authorized: false)
                .status == 401)
        response = try request(
            bridge.ports.api, "/api/v1/receiver", headers: ["Authorization: AccessCodeV2 AAAA"], authorized: false)
        #expect(response.status == 401)
        #expect(
            (response.json?["error"] as? String)?.contains(
                "Access Code V2 refused: the code is 3 bytes; a code is the Base64 of the whole 256-byte RSA ciphertext"
            ) == true)
        let garbage = "AccessCodeV2 " + Base64.encode([UInt8](repeating: 0x01, count: 256))
        response = try request(
            bridge.ports.api, "/api/v1/receiver", headers: ["Authorization: \(garbage)"], authorized: false)
        #expect(response.status == 401)
        #expect(
            (response.json?["error"] as? String)?.contains("Access Code V2 refused: the code does not decrypt") == true)
    }

    @Test func allowlistPolicyAcceptsOnlyAllowedRegisteredIDs() throws {
        let bridge = try TestBridge.start {
            $0.registration = .allowlist
            $0.allowedApplicationIDs = [GUID(testAppID)!]
        }
        let refused = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
        guard case .ok(let result, let url) = try bridge.register(refused) else { Issue.record("no reply"); return }
        #expect(result == "Unauthorized")
        #expect(url.hasPrefix("testapp://response/register?"))
        #expect(
            try request(
                bridge.ports.api, "/api/v1/receiver", headers: ["Authorization: \(accessCode(refused))"],
                authorized: false
            ).status == 401)
        guard case .ok("OK", _) = try bridge.register(testAppID) else { Issue.record("not registered"); return }
        #expect(try request(bridge.ports.api, "/api/v1/receiver").status == 200)
    }

    @Test func bodiesAreTheDocumentedJSONWithThePortPlan() throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        let ports = bridge.ports
        var response = try request(ports.api, "/api/v1/positionStream?format=locationV2")
        #expect(response.text == "{\"port\":\(ports.locationV2)}")
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("Cache-Control") == "no-store")
        #expect(response.header("Date")?.hasSuffix(" GMT") == true)
        response = try request(ports.api, "/api/v1/positionStream/?format=locationV1")
        #expect(response.text == "{\"port\":\(ports.location)}")

        response = try request(ports.api, "/api/v1/tmmInfo")
        let info = try #require(response.json)
        #expect(info["name"] as? String == "tmm-bridge")
        #expect(info["version"] as? String == "9.8.7")
        #expect(info["schemaVersion"] as? Int == 1)
        for server in TMMServer.allCases {
            #expect(info[server.registrationKey] as? Int == Int(ports[server]), "\(server.registrationKey)")
        }
        let receiver = try #require(info["receiver"] as? [String: Any])
        #expect(receiver["isConnected"] as? Bool == false)

        #expect(try request(ports.api, "/api/v1/test/ping").text == "{\"result\":\"pong\"}")
        response = try request(ports.api, "/api/v1/test/ping", method: "HEAD")
        #expect(response.status == 200 && response.body.isEmpty && response.header("Content-Length") == "17")
    }

    @Test func receiverInfoFollowsWhatGPSDReports() throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        var info = try #require(try request(bridge.ports.api, "/api/v1/receiver").json)
        #expect(info["isReceiverConfigured"] as? Bool == false)
        #expect(info["isConnected"] as? Bool == false)
        #expect(
            info.keys.sorted() == [
                "bluetoothAddress", "bluetoothName", "isConnected", "isReceiverConfigured",
                "isSignedIn", "isSigninRequired", "receiverBrand", "receiverModel",
                "receiverSerialNumber",
            ])
        try bridge.connectReceiver()
        info = try #require(try request(bridge.ports.api, "/api/v1/receiver/").json)
        #expect(info["isReceiverConfigured"] as? Bool == true)
        #expect(info["isConnected"] as? Bool == true)
        bridge.input.post(.gpsd(.device(GPSDDevice(path: "/dev/ttyTEST0", activated: nil))))
        #expect(
            try waitUntil { try request(bridge.ports.api, "/api/v1/receiver").json?["isConnected"] as? Bool == false })
    }

    @Test func putReceiverWithoutADeviceManagerIsAConflictWithTheReason() throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        var response = try request(bridge.ports.api, "/api/v1/receiver", method: "PUT", body: "{\"isConnected\":true}")
        #expect(response.status == 409)
        #expect((response.json?["error"] as? String)?.contains("no receiver is configured") == true)
        try bridge.connectReceiver()
        response = try request(bridge.ports.api, "/api/v1/receiver", method: "PUT", body: "{\"isConnected\":false}")
        #expect(response.status == 409)
        #expect((response.json?["error"] as? String)?.contains("gpsd's control socket is not available") == true)
        response = try request(bridge.ports.api, "/api/v1/receiver", method: "PUT", body: "{\"isConnected\":true}")
        #expect(response.status == 200, "already connected: nothing to do")
        response = try request(bridge.ports.api, "/api/v1/receiver", method: "PUT", body: "{\"isConnected\":\"yes\"}")
        #expect(response.status == 400)
    }

    @Test func corsPreflightNeedsNoCodeAndAllowsTheWebSamplesRequest() throws {
        let bridge = try TestBridge.start()
        let response = try request(
            bridge.ports.api, "/api/v1/receiver/", method: "OPTIONS",
            headers: [
                "Origin: http://localhost:5173", "Access-Control-Request-Method: PUT",
                "Access-Control-Request-Headers: authorization,content-type",
            ], authorized: false)
        #expect(response.status == 204)
        #expect(response.header("Access-Control-Allow-Origin") == "*")
        #expect(response.header("Access-Control-Allow-Methods") == "GET, PUT, OPTIONS")
        #expect(response.header("Access-Control-Allow-Headers") == "Authorization, Content-Type")
        #expect(response.header("Access-Control-Max-Age") == "600")
        #expect(response.header("Allow") == "GET, HEAD, PUT, OPTIONS")
        #expect(response.header("Content-Length") == nil)
    }

    @Test func keepAliveAndPipelinedRequestsAreAnsweredInOrder() throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        let client = try RawClient(port: bridge.ports.api)
        let code = accessCode()
        let paths = [
            "/api/v1/test/ping", "/nope", "/api/v1/positionStream?format=locationV1", "/api/v1/tmmInfo",
            "/api/v1/positionStream?format=locationV2",
        ]
        // All five in one write.
        try client.send(paths.map { "GET \($0) HTTP/1.1\r\nHost: x\r\nAuthorization: \(code)\r\n\r\n" }.joined())
        let statuses = try paths.map { _ in try client.response().status }
        #expect(statuses == [200, 404, 200, 200, 200])
        // Still open: another request on the same connection, then Connection: close ends it.
        try client.send(
            "GET /api/v1/test/ping HTTP/1.1\r\nHost: x\r\nAuthorization: \(code)\r\nConnection: close\r\n\r\n")
        let last = try client.response()
        #expect(last.status == 200 && last.header("Connection") == "close")
        #expect(try client.isClosedByServer())
        // HTTP/1.0 without keep-alive is closed after one response.
        let old = try RawClient(port: bridge.ports.api)
        try old.send("GET /api/v1/test/ping HTTP/1.0\r\nAuthorization: \(code)\r\n\r\n")
        #expect(try old.response().status == 200)
        #expect(try old.isClosedByServer())
    }

    @Test func aRequestSentOneByteAtATimeIsAnswered() throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        let client = try RawClient(port: bridge.ports.api)
        for byte in Array("GET /api/v1/test/ping HTTP/1.1\r\nHost: x\r\nAuthorization: \(accessCode())\r\n\r\n".utf8) {
            try client.send([byte])
        }
        #expect(try client.response().status == 200)
    }

    @Test func chunkedAndContinueBodies() throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        try bridge.connectReceiver()
        let client = try RawClient(port: bridge.ports.api)
        let body = "{\"isConnected\":true}"
        try client.send(
            "PUT /api/v1/receiver HTTP/1.1\r\nHost: x\r\nAuthorization: \(accessCode())\r\n"
                + "Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
                + "\(String(body.utf8.count, radix: 16))\r\n\(body)\r\n0\r\n\r\n")
        #expect(try client.response().status == 200)
        try client.send(
            "PUT /api/v1/receiver HTTP/1.1\r\nHost: x\r\nAuthorization: \(accessCode())\r\n"
                + "Expect: 100-continue\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
        #expect(try client.response().status == 100)
        try client.send(body)
        #expect(try client.response().status == 200)
    }

    @Test func idleConnectionsAreClosedQuietlyAndStalledRequestsGet408() throws {
        let bridge = try TestBridge.start {
            $0.limits.httpIdleTimeout = 300_000_000
            $0.limits.httpRequestTimeout = 300_000_000
        }
        let idle = try RawClient(port: bridge.ports.api)
        #expect(try idle.isClosedByServer(milliseconds: 3000))
        #expect(idle.buffer.isEmpty, "an idle connection is closed without a response")

        let stalled = try RawClient(port: bridge.ports.api)
        try stalled.send("GET /api/v1/test/ping HTTP/1.1\r\nHost: x\r\n")
        let response = try stalled.response(milliseconds: 3000)
        #expect(response.status == 408)
        #expect(response.header("Connection") == "close")
        #expect(try stalled.isClosedByServer())
    }

    @Test func theConnectionLimitRefusesNewClientsWithoutDisturbingOthers() throws {
        let bridge = try TestBridge.start { $0.limits.maxConnections = 2 }
        try bridge.register(testAppID)
        let first = try RawClient(port: bridge.ports.api)
        let second = try RawClient(port: bridge.ports.api)
        let third = try RawClient(port: bridge.ports.api)
        #expect(try third.isClosedByServer())
        for client in [first, second] {
            try client.send("GET /api/v1/test/ping HTTP/1.1\r\nHost: x\r\nAuthorization: \(accessCode())\r\n\r\n")
            #expect(try client.response().status == 200)
        }
    }

    @Test func theSecurePortsListenAndAreHeld() throws {
        let bridge = try TestBridge.start()
        for port in [bridge.ports.apiSecure, bridge.ports.locationSecure, bridge.ports.locationV2Secure] {
            #expect(throws: Never.self) { _ = try StreamSocket.connect(loopbackPort: port) }
            #expect(throws: ListenerError.self, "port \(port) is held") {
                _ = try TCPListener.bind(address: "127.0.0.1", port: port)
            }
        }
    }
}

@Suite("Backpressure", .tags(.integration), .serialized)
struct ServerBackpressureTests {
    @Test func aClientThatPipelinesWithoutReadingIsPausedAndLosesNothing() throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        let greedy = try RawClient(port: bridge.ports.api, receiveBuffer: 4096)
        // 404s: answered with keep-alive and without an access code (which would expire meanwhile).
        let ping = "GET /nothing/here HTTP/1.1\r\nHost: x\r\nX-Padding: \(String(repeating: "p", count: 1900))\r\n\r\n"
        // 16 MB of requests (more than the kernel buffers on both sides hold) and 2.5 MB of answers
        // (more than the server queues for one client).
        let count = 8000
        let bytes = Array(String(repeating: ping, count: count).utf8)
        let fd = greedy.socket.descriptor.rawValue
        let done = LogLines()
        // Written from another thread: once the server's queue for this client is full it stops
        // reading it, so this write blocks until the answers below are read.
        let writer = try OSThread(name: "greedy") {
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes {
                    Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if n <= 0 { break }
                offset += n
            }
            done.lines.withLock { $0.append("sent \(offset)") }
        }
        // Without the pause the server reads all 16 MB within about a second; with it the writer is
        // still blocked after three. A fixed wait on purpose: what is tested is that nothing
        // happens (the writer stays blocked) for three seconds.
        sleep(for: .seconds(3))
        #expect(done.lines.withLock { $0.isEmpty }, "the server kept reading a client that does not read its answers")
        // Meanwhile the server answers others at once.
        let started = monotonicNanoseconds()
        #expect(try request(bridge.ports.api, "/api/v1/test/ping").status == 200)
        #expect(monotonicNanoseconds() - started < 1_000_000_000)
        var answered = 0
        while answered < count {
            let response = try greedy.response(milliseconds: 5000)
            guard response.status == 404 else {
                Issue.record("answer \(answered): \(response)")
                break
            }
            answered += 1
        }
        writer.join()
        #expect(answered == count, "every pipelined request is answered, in order")
        #expect(done.lines.withLock { $0 } == ["sent \(bytes.count)"])
    }

    @Test func aPingFloodWithoutReadingEndsIn1008() throws {
        let bridge = try TestBridge.start {
            $0.limits.queueHardLimit = 64 * 1024
            $0.limits.slowClientGrace = 100_000_000
        }
        let flooder = try WebSocketTestClient(port: bridge.ports.location)
        let ping = WebSocketTestClient.frame(opcode: 0x9, [UInt8](repeating: 0x55, count: 125))
        var flood: [UInt8] = []
        for _ in 0..<64 { flood += ping }
        let fd = flooder.raw.socket.descriptor.rawValue
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        // Pings every millisecond until the server gives up on the client.
        _ = waitUntil(pollInterval: .milliseconds(1)) {
            _ = flood.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            return bridge.logLines(containing: "closing a slow WebSocket client") > 0
        }
        #expect(bridge.logs.contains { $0.contains("closing a slow WebSocket client (1008)") }, "\(bridge.logs)")
        // The server stayed responsive throughout.
        let other = try WebSocketTestClient(port: bridge.ports.location)
        try other.send(opcode: 0x9, [1])
        #expect(try other.frame()?.opcode == 0xA)
    }
}

extension ServerBackpressureTests {
    @Test func aClientThatNeverTakesItsAnswersIsDroppedAfterTheIdleTime() throws {
        let bridge = try TestBridge.start { $0.limits.httpIdleTimeout = 500_000_000 }
        let stuck = try RawClient(port: bridge.ports.api, receiveBuffer: 4096)
        // 300 KB of answers queued (more than the kernel buffers hold), none read.
        try stuck.send(String(repeating: "GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n", count: 1500))
        // The behaviour under test: the client takes nothing for three idle times (reading would
        // be activity). The server's close shows no sooner on this side: its FIN waits behind the
        // answers the client has not read.
        sleep(for: .milliseconds(1500))
        // Dropped: reading now finds the end of the stream after what the kernel had buffered.
        var ended = false
        let deadline = monotonicNanoseconds() + 5_000_000_000
        while monotonicNanoseconds() < deadline {
            do {
                if try !stuck.fill(milliseconds: 1000) { ended = true; break }
            } catch {
                ended = true  // reset
                break
            }
        }
        #expect(ended, "the connection was not closed")
        let answers = String(decoding: stuck.buffer, as: UTF8.self).components(separatedBy: "HTTP/1.1 404").count - 1
        #expect(answers < 1500, "it got \(answers) answers: the queue was never full")
    }
}
