// `allowed-origins` over real sockets against an in-process bridge: the default answers every
// origin as TMM does (CORS `*`), a list refuses other origins with 403 on REST, preflights and
// every WebSocket channel before anything else is looked at, echoes listed origins with
// `Vary: Origin`, always serves requests without `Origin`, and logs refusals without flooding.
// Plus independent clients: python3-websockets and curl.
import Foundation
import Glibc
import HTTP1
import Posix
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeCore

private let app = "https://app.example"
private let evil = "https://evil.example"

/// A bridge that lets only `app` (and pages from files, `null`) use it, with V2 unlocked.
private func listBridge(register: Bool = true) throws -> TestBridge {
    let bridge = try TestBridge.start { c in
        c.allowedOrigins = .only([try! HTTPOrigin(app), .null])
    }
    if register { try bridge.register(testAppID) }
    return bridge
}

/// The WebSocket channels: V1's `/`, V2's `/` and `/locationV2`, and `/events`.
private func channels(_ bridge: TestBridge) -> [(port: UInt16, path: String)] {
    [
        (bridge.ports.location, "/"), (bridge.ports.locationV2, "/"), (bridge.ports.locationV2, "/locationV2"),
        (bridge.ports.locationV2, "/events"),
    ]
}

/// The handshake's status: 101, or the refusal's.
private func handshake(_ port: UInt16, _ path: String, origin: String?) throws -> HTTPResponse? {
    do {
        _ = try WebSocketTestClient(port: port, path: path, headers: origin.map { ["Origin: \($0)"] } ?? [])
        return nil
    } catch let refused as WebSocketTestClient.Refused {
        return refused.response
    }
}

private func accessControlHeaders(_ response: HTTPResponse) -> [String] {
    response.headers.map(\.0).filter { $0.lowercased().hasPrefix("access-control-") }
}

@Suite("Allowed origins", .tags(.integration), .serialized)
struct ServerOriginTests {
    @Test func byDefaultEveryOriginIsAnsweredAsTMMDoes() throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        var response = try request(bridge.ports.api, "/api/v1/tmmInfo", headers: ["Origin: \(evil)"])
        #expect(response.status == 200)
        #expect(response.header("Access-Control-Allow-Origin") == "*")
        #expect(response.header("Vary") == nil, "unchanged: no Vary with *")
        response = try request(
            bridge.ports.api, "/api/v1/receiver", method: "OPTIONS",
            headers: ["Origin: \(evil)", "Access-Control-Request-Method: PUT"], authorized: false)
        #expect(response.status == 204 && response.header("Access-Control-Allow-Origin") == "*")
        #expect(response.header("Access-Control-Allow-Private-Network") == "true")
        for (port, path) in channels(bridge) {
            #expect(try handshake(port, path, origin: evil) == nil, "\(path) on \(port)")
            #expect(try handshake(port, path, origin: "not even an origin") == nil, "\(path) on \(port)")
        }
        #expect(!bridge.logs.contains { $0.contains("allowed-origins") || $0.contains("refused Origin") })
    }

    @Test func aListRefusesOtherOriginsOnEveryWebSocketChannel() throws {
        let bridge = try listBridge()
        for (port, path) in channels(bridge) {
            for origin in [
                evil, "http://app.example", "https://app.example:8443", "https://app.example.evil.example",
                "https://app.example/", "garbage",
            ] {
                let refused = try #require(try handshake(port, path, origin: origin), "\(origin) upgraded on \(path)")
                #expect(refused.status == 403, "\(origin) \(path)")
                #expect(refused.header("Connection") == "close")
                #expect(accessControlHeaders(refused).isEmpty, "\(refused)")
                #expect(refused.header("Sec-WebSocket-Accept") == nil)
            }
            // Listed, in any spelling; the opaque origin because it is listed; no Origin at all.
            for origin in [app, "HTTPS://App.Example:443", "null", nil] {
                #expect(try handshake(port, path, origin: origin) == nil, "\(origin ?? "no Origin") \(path)")
            }
        }
        // Two Origin fields: no single origin to check (RFC 6454 §7.3).
        let twice = try #require(try handshake(bridge.ports.location, "/", origin: "\(app)\r\nOrigin: \(app)"))
        #expect(twice.status == 403)
    }

    @Test func theOriginIsCheckedBeforeTheV2LockAndTheRoute() throws {
        let bridge = try listBridge(register: false)
        // Locked V2 answers 401 and an unknown path 404, but a refused origin learns only the 403.
        #expect(try handshake(bridge.ports.locationV2, "/events", origin: app)?.status == 401)
        #expect(try handshake(bridge.ports.locationV2, "/events", origin: evil)?.status == 403)
        #expect(try handshake(bridge.ports.location, "/nope", origin: app)?.status == 404)
        #expect(try handshake(bridge.ports.location, "/nope", origin: evil)?.status == 403)
        // REST: 403 before the access code (401), the route (404) and the body (400).
        #expect(
            try request(bridge.ports.api, "/api/v1/receiver", headers: ["Origin: \(evil)"], authorized: false).status
                == 403)
        #expect(try request(bridge.ports.api, "/nope", headers: ["Origin: \(evil)"]).status == 403)
        #expect(
            try request(
                bridge.ports.api, "/api/v1/receiver", method: "PUT", headers: ["Origin: \(evil)"],
                body: "{\"isConnected\":\"yes\"}"
            ).status == 403)
        #expect(
            try request(bridge.ports.api, "/api/v1/receiver", headers: ["Origin: \(app)"], authorized: false).status
                == 401)
    }

    @Test func restAndPreflightsFromARefusedOriginGet403WithoutCORSHeaders() throws {
        let bridge = try listBridge()
        var response = try request(bridge.ports.api, "/api/v1/tmmInfo", headers: ["Origin: \(evil)"])
        #expect(response.status == 403)
        #expect(accessControlHeaders(response).isEmpty, "\(response)")
        #expect(response.header("Vary") == "Origin")
        #expect(response.header("Connection") == "close")
        #expect((response.json?["error"] as? String)?.contains("allowed-origins") == true)
        #expect(response.text.contains(evil) == false, "the body does not reflect the origin")
        response = try request(
            bridge.ports.api, "/api/v1/receiver", method: "OPTIONS",
            headers: [
                "Origin: \(evil)", "Access-Control-Request-Method: PUT",
                "Access-Control-Request-Headers: authorization,content-type",
            ], authorized: false)
        #expect(response.status == 403)
        #expect(accessControlHeaders(response).isEmpty, "\(response)")
    }

    @Test func listedOriginsAreEchoedNeverStar() throws {
        let bridge = try listBridge()
        var response = try request(bridge.ports.api, "/api/v1/tmmInfo", headers: ["Origin: \(app)"])
        #expect(response.status == 200)
        #expect(response.header("Access-Control-Allow-Origin") == app)
        #expect(response.header("Vary") == "Origin")
        // Echoed as the client sent it: that is what a browser compares.
        response = try request(bridge.ports.api, "/api/v1/tmmInfo", headers: ["Origin: HTTPS://APP.example:443"])
        #expect(response.status == 200 && response.header("Access-Control-Allow-Origin") == "HTTPS://APP.example:443")
        // A browser can read the 401 of its own origin.
        response = try request(bridge.ports.api, "/api/v1/tmmInfo", headers: ["Origin: \(app)"], authorized: false)
        #expect(response.status == 401 && response.header("Access-Control-Allow-Origin") == app)
        response = try request(
            bridge.ports.api, "/api/v1/receiver", method: "OPTIONS",
            headers: ["Origin: \(app)", "Access-Control-Request-Method: PUT"], authorized: false)
        #expect(response.status == 204)
        #expect(response.header("Access-Control-Allow-Origin") == app)
        #expect(response.header("Access-Control-Allow-Methods") == "GET, PUT, OPTIONS")
        #expect(response.header("Access-Control-Allow-Headers") == "Authorization, Content-Type")
        #expect(response.header("Access-Control-Max-Age") == "600")
        #expect(response.header("Access-Control-Allow-Private-Network") == "true")
        #expect(response.header("Vary") == "Origin")
        response = try request(bridge.ports.api, "/api/v1/tmmInfo", headers: ["Origin: null"])
        #expect(response.status == 200 && response.header("Access-Control-Allow-Origin") == "null")
    }

    @Test func requestsWithoutOriginAreServedWithoutAllowOrigin() throws {
        let bridge = try listBridge()
        let response = try request(bridge.ports.api, "/api/v1/tmmInfo")
        #expect(response.status == 200)
        #expect(response.header("Access-Control-Allow-Origin") == nil, "never * with a list")
        #expect(response.header("Vary") == "Origin")
        #expect(try request(bridge.ports.api, "/api/v1/tmmInfo", authorized: false).status == 401)
    }

    @Test func aRefusedOriginIsNotAskedForItsBodyAndEndsItsConnection() throws {
        let bridge = try listBridge()
        let client = try RawClient(port: bridge.ports.api)
        try client.send(
            "PUT /api/v1/receiver HTTP/1.1\r\nHost: x\r\nOrigin: \(evil)\r\nAuthorization: \(accessCode())\r\n"
                + "Content-Type: application/json\r\nContent-Length: 20\r\nExpect: 100-continue\r\n\r\n")
        let response = try client.response()
        #expect(response.status == 403, "no 100 Continue first")
        #expect(try client.isClosedByServer())
        // Pipelined behind a refused request, nothing is answered.
        let pipelined = try RawClient(port: bridge.ports.api)
        let code = accessCode()
        try pipelined.send(
            ["Origin: \(app)\r\n", "Origin: \(evil)\r\n", ""].map {
                "GET /api/v1/test/ping HTTP/1.1\r\nHost: x\r\nAuthorization: \(code)\r\n\($0)\r\n"
            }.joined())
        #expect(try pipelined.response().status == 200)
        #expect(try pipelined.response().status == 403)
        #expect(try pipelined.isClosedByServer())
        #expect(!String(decoding: pipelined.buffer, as: UTF8.self).contains("200 OK"))
    }

    @Test func refusalsAreLoggedPerOriginAndCannotFloodTheLog() throws {
        let bridge = try listBridge()
        try bridge.waitForLog("allowed-origins: https://app.example null (other web origins get 403)")
        for _ in 0..<5 {
            #expect(try request(bridge.ports.api, "/api/v1/test/ping", headers: ["Origin: \(evil)"]).status == 403)
        }
        #expect(try handshake(bridge.ports.location, "/", origin: evil)?.status == 403)
        try bridge.waitForLog(
            "refused Origin 'https://evil.example' on apiPort (not in allowed-origins): 403 (1 refused so far)")
        // Neither bytes outside printable ASCII (obs-text: controls are the parser's 400) nor the
        // length are the client's to choose.
        let long = "https://\u{E9}" + String(repeating: "a", count: 500) + ".example"
        #expect(try request(bridge.ports.api, "/api/v1/test/ping", headers: ["Origin: \(long)"]).status == 403)
        // A client making up a new origin each time gets a bounded number of lines. Each refusal is
        // logged before its 403 is sent, so the lines are all there once the last 403 is.
        for index in 0..<(RefusedOriginLog.distinctPerWindow * 3) {
            #expect(
                try request(bridge.ports.api, "/api/v1/test/ping", headers: ["Origin: https://e\(index).example"])
                    .status == 403)
        }
        let lines = bridge.logs.filter { $0.contains("refused Origin") }
        #expect(lines.count == RefusedOriginLog.distinctPerWindow, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.contains("refused Origin 'https://??aaaa") && $0.contains("aaa...' on apiPort") })
        #expect(!lines.contains { $0.contains("\u{E9}") })
        #expect(lines.allSatisfy { $0.utf8.count < 250 })
    }

    @Test func theLogLimitIsPerWindowAndKeepsEveryThousandth() {
        var log = RefusedOriginLog()
        let window = RefusedOriginLog.window
        // Mutating calls stay out of #expect (its expansion takes the value as immutable).
        var answers: [Bool] = []
        answers.append(log.shouldLog("a", count: 1, now: 0))
        answers.append(log.shouldLog("a", count: 2, now: 1))
        #expect(answers == [true, false], "an origin once per window")
        var logged = 1
        for index in 0..<100 where log.shouldLog("o\(index)", count: 3 + index, now: 2) { logged += 1 }
        #expect(logged == RefusedOriginLog.distinctPerWindow)
        answers = [
            log.shouldLog("a", count: 1000, now: 3), log.shouldLog("new", count: 1001, now: window - 1),
            log.shouldLog("a", count: 1002, now: window),
        ]
        #expect(answers == [true, false, true], "every thousandth refusal; none beyond the bound; a new window")
        #expect(RefusedOriginLog.printable("https://a\u{1B}[31m.example") == "https://a?[31m.example")
        #expect(
            RefusedOriginLog.printable(String(repeating: "x", count: 300)).utf8.count == RefusedOriginLog
                .maxLoggedLength + 3)
    }

    // MARK: - Independent clients

    @Test(.enabled(if: hasPythonWebsockets, "needs /usr/bin/python3 with websockets (python3-websockets)"))
    func pythonWebsocketsSeesTheRefusalAndTheUpgrade() throws {
        let bridge = try listBridge()
        var pairs: [String] = []
        for (port, path) in channels(bridge) {
            for origin in [evil, app, "-"] { pairs += ["ws://127.0.0.1:\(port)\(path)", origin] }
        }
        let run = try pythonHandshakes(pairs)
        #expect(run.status == 0, "\(run.output)")
        let results = run.output.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(results.count == channels(bridge).count * 3, "\(run.output)")
        for result in results where result.count == 3 {
            #expect(result[2] == (result[1] == evil ? "403" : "101"), "\(result)")
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl"), "needs curl"))
    func curlSeesTheRefusalAndTheEcho() throws {
        let bridge = try listBridge()
        let url = "http://127.0.0.1:\(bridge.ports.api)/api/v1/tmmInfo"
        func curl(_ extra: [String]) throws -> String {
            let run = try runTool(
                "/usr/bin/curl",
                [
                    "-s", "--max-time", "5", "-D", "-", "-o", "/dev/null",
                    "-H", "Authorization: \(accessCode())",
                ] + extra + [url])
            #expect(run.status == 0, "\(run.output)")
            return run.output.lowercased()
        }
        var head = try curl(["-H", "Origin: \(evil)"])
        #expect(head.hasPrefix("http/1.1 403 forbidden"), "\(head)")
        #expect(!head.contains("access-control-"), "\(head)")
        head = try curl(["-H", "Origin: \(app)"])
        #expect(head.hasPrefix("http/1.1 200 ok"), "\(head)")
        #expect(
            head.contains("access-control-allow-origin: \(app)\r\n") && head.contains("vary: origin\r\n"), "\(head)")
        head = try curl([])
        #expect(head.hasPrefix("http/1.1 200 ok") && !head.contains("access-control-allow-origin"), "\(head)")
        head = try curl(["-X", "OPTIONS", "-H", "Origin: \(evil)", "-H", "Access-Control-Request-Method: PUT"])
        #expect(head.hasPrefix("http/1.1 403 forbidden") && !head.contains("access-control-"), "\(head)")
        head = try curl(["-X", "OPTIONS", "-H", "Origin: \(app)", "-H", "Access-Control-Request-Method: PUT"])
        #expect(head.hasPrefix("http/1.1 204 no content"), "\(head)")
        #expect(head.contains("access-control-allow-origin: \(app)\r\n"), "\(head)")
        #expect(head.contains("access-control-allow-private-network: true\r\n"), "\(head)")
    }
}

extension ServerOriginTests {
    @Test(
        .enabled(
            if: hasPythonWebsockets && FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit"),
            "needs python3-websockets, curl and prlimit"))
    func theDaemonTakesTheListFromItsCommandLine() throws {
        // The real binary: option parsing, configuration and server wired together.
        let daemon = try Daemon(nofile: 1024, extraArguments: ["--allowed-origins", "HTTPS://App.Example:443, null"])
        defer { daemon.stop() }
        #expect(daemon.log().contains("allowed-origins: https://app.example null"), "\(daemon.log())")
        let run = try pythonHandshakes([
            "ws://127.0.0.1:\(daemon.ports.location)/", evil,
            "ws://127.0.0.1:\(daemon.ports.location)/", app,
            "ws://127.0.0.1:\(daemon.ports.location)/", "null",
        ])
        #expect(
            run.output.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" }
                == ["403", "101", "101"], "\(run.output)")
        let url = "http://127.0.0.1:\(daemon.ports.api)/api/v1/test/ping"
        for (origin, status) in [(evil, "403"), (app, "401")] {
            let curl = try runTool(
                "/usr/bin/curl",
                [
                    "-s", "--max-time", "5", "-o", "/dev/null", "-w", "%{http_code}",
                    "-H", "Origin: \(origin)", url,
                ])
            #expect(curl.output == status, "\(origin): \(curl.output)")
        }
        #expect(daemon.log().contains("refused Origin 'https://evil.example' on locationPort"), "\(daemon.log())")
    }
}

/// For each (url, origin) pair, the line `url origin status` (tmmtools/peers/ws_handshakes.py):
/// 101 when the upgrade succeeded, else the refusal's HTTP status. `-` sends no Origin.
private func pythonHandshakes(_ pairs: [String]) throws -> (status: Int32, output: String) {
    let peer = PythonTools.command("peers.ws_handshakes", pairs)
    return try runTool(peer.executable, peer.arguments)
}

private let hasPythonWebsockets: Bool = {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { return false }
    return (try? runTool("/usr/bin/python3", ["-c", "import websockets"]).status) == 0
}()
