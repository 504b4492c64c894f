// Opening handshake (RFC 6455 §4.2): the §1.3 accept key, the 101 response, real browser and
// library requests, and one row per broken rule with its HTTP answer (Base64: ByteCodingTests).
import HTTP1
import TestSupport
import Testing
import WebSocket

@Suite("Handshake", .tags(.unit))
struct HandshakeTests {
    static let exampleKey = "dGhlIHNhbXBsZSBub25jZQ=="

    static func request(
        method: String = "GET", minor: Int = 1, _ headers: [(String, String)]? = nil
    ) -> WebSocketUpgradeRequest {
        WebSocketUpgradeRequest(
            method: method, versionMajor: 1, versionMinor: minor,
            headers: (headers ?? [
                ("Host", "127.0.0.1:9639"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                ("Sec-WebSocket-Key", exampleKey), ("Sec-WebSocket-Version", "13"),
            ]).map { (name: $0.0, value: $0.1) })
    }

    @Test func referenceSHA1MatchesFIPSVectors() {
        #expect(hexString(referenceSHA1([])) == "da 39 a3 ee 5e 6b 4b 0d 32 55 bf ef 95 60 18 90 af d8 07 09")
        #expect(
            hexString(referenceSHA1(Array("abc".utf8))) == "a9 99 3e 36 47 06 81 6a ba 3e 25 71 78 50 c2 6c 9c d0 d8 9d"
        )
        let twoBlocks = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(hexString(referenceSHA1(twoBlocks)) == "84 98 3e 44 1c 3b d2 6e ba ae 4a a1 f9 51 29 e5 e5 46 70 f1")
    }

    @Test func acceptKeyOfRFC6455Section1_3() {
        // §1.3: "dGhlIHNhbXBsZSBub25jZQ==" + GUID, SHA-1, Base64 -> "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".
        #expect(
            WebSocketHandshake.acceptValue(forKey: Self.exampleKey, sha1: testSHA1) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(
            WebSocketHandshake.acceptValue(forKey: " \(Self.exampleKey)\t", sha1: testSHA1)
                == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func switchingProtocolsResponseIsPinned() throws {
        let response = try WebSocketHandshake.response(to: Self.request(), sha1: testSHA1)
        #expect(
            String(decoding: response, as: UTF8.self)
                == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
    }

    /// Requests as real clients send them.
    static let realClients: [(String, [(String, String)])] = [
        (
            "python3-websockets 10 (Debian 12)",
            [
                ("Host", "127.0.0.1:9639"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                ("Sec-WebSocket-Key", exampleKey), ("Sec-WebSocket-Version", "13"),
                ("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits"),
                ("User-Agent", "Python/3.11 websockets/10.4"),
            ]
        ),
        (
            "Chromium",
            [
                ("Host", "localhost:9639"), ("Connection", "Upgrade"), ("Pragma", "no-cache"), ("Upgrade", "websocket"),
                ("Origin", "http://localhost:8000"), ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Key", exampleKey),
                ("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits"),
            ]
        ),
        (
            "Firefox: Connection lists keep-alive first",
            [
                ("Host", "localhost:9639"), ("Connection", "keep-alive, Upgrade"), ("Upgrade", "websocket"),
                ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Key", exampleKey),
            ]
        ),
        (
            "lower-case names, mixed-case tokens, spaces",
            [
                ("host", "x"), ("upgrade", " WebSocket "), ("connection", "UPGRADE"),
                ("sec-websocket-key", " \(exampleKey) "),
                ("SEC-WEBSOCKET-VERSION", " 13"),
            ]
        ),
        (
            "Connection split over two fields",
            [
                ("Host", "x"), ("Upgrade", "websocket"), ("Connection", "keep-alive"), ("Connection", "Upgrade"),
                ("Sec-WebSocket-Key", exampleKey), ("Sec-WebSocket-Version", "13"),
            ]
        ),
        (
            "Upgrade listing two protocols",
            [
                ("Host", "x"), ("Upgrade", "h2c, websocket"), ("Connection", "Upgrade, HTTP2-Settings"),
                ("Sec-WebSocket-Key", exampleKey), ("Sec-WebSocket-Version", "13"),
            ]
        ),
    ]

    @Test(arguments: realClients)
    func acceptsRealClients(name: String, headers: [(String, String)]) throws {
        let response = try WebSocketHandshake.response(to: Self.request(headers), sha1: testSHA1)
        let text = String(decoding: response, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"), "\(name)")
        #expect(text.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), "\(name)")
        // No extension and no subprotocol is ever selected.
        #expect(!text.contains("Extensions") && !text.contains("Protocol:"), "\(name)")
    }

    @Test func acceptsHTTP1_2AndTheErratumKey() throws {
        #expect(try WebSocketHandshake.validate(Self.request(minor: 2)) == Self.exampleKey)
        var request = Self.request()
        request.headers[3].value = "AQIDBAUGBwgJCgsMDQ4PEC=="  // §4.1's key, non-zero pad bits
        #expect(try WebSocketHandshake.validate(request) == "AQIDBAUGBwgJCgsMDQ4PEC==")
    }

    /// One row per rule of §4.2.1, with the status and headers the client gets.
    static let broken: [(String, WebSocketUpgradeRequest, WebSocketHandshakeError, Int)] = {
        func replacing(_ name: String, with value: String?) -> WebSocketUpgradeRequest {
            var request = HandshakeTests.request()
            request.headers.removeAll { $0.name == name }
            if let value { request.headers.append((name: name, value: value)) }
            return request
        }
        func adding(_ name: String, _ value: String) -> WebSocketUpgradeRequest {
            var request = HandshakeTests.request()
            request.headers.append((name: name, value: value))
            return request
        }
        return [
            ("POST", request(method: "POST"), .methodNotGET, 405),
            ("lower-case get", request(method: "get"), .methodNotGET, 405),
            ("HTTP/1.0", request(minor: 0), .httpVersionTooOld, 400),
            ("no Upgrade", replacing("Upgrade", with: nil), .missingUpgradeWebSocket, 426),
            ("Upgrade: h2c", replacing("Upgrade", with: "h2c"), .missingUpgradeWebSocket, 426),
            ("Upgrade: websockets", replacing("Upgrade", with: "websockets"), .missingUpgradeWebSocket, 426),
            ("no Connection", replacing("Connection", with: nil), .missingConnectionUpgrade, 426),
            ("Connection: keep-alive", replacing("Connection", with: "keep-alive"), .missingConnectionUpgrade, 426),
            ("Connection: upgraded", replacing("Connection", with: "upgraded"), .missingConnectionUpgrade, 426),
            ("no version", replacing("Sec-WebSocket-Version", with: nil), .unsupportedVersion, 426),
            ("version 8", replacing("Sec-WebSocket-Version", with: "8"), .unsupportedVersion, 426),
            ("version 13, 8", replacing("Sec-WebSocket-Version", with: "13, 8"), .unsupportedVersion, 426),
            ("version twice", adding("Sec-WebSocket-Version", "13"), .duplicateVersion, 400),
            ("no key", replacing("Sec-WebSocket-Key", with: nil), .missingKey, 400),
            ("key twice", adding("Sec-WebSocket-Key", exampleKey), .duplicateKey, 400),
            ("key of 15 bytes", replacing("Sec-WebSocket-Key", with: "AQIDBAUGBwgJCgsMDQ4P"), .invalidKey, 400),
            ("key of 17 bytes", replacing("Sec-WebSocket-Key", with: "AQIDBAUGBwgJCgsMDQ4PEBE="), .invalidKey, 400),
            ("key not Base64", replacing("Sec-WebSocket-Key", with: "dGhlIHNhbXBsZSBub25jZQ!!"), .invalidKey, 400),
            ("key unpadded", replacing("Sec-WebSocket-Key", with: "dGhlIHNhbXBsZSBub25jZQ"), .invalidKey, 400),
            ("key URL-safe", replacing("Sec-WebSocket-Key", with: "dGhlIHNhbXBsZSBub25jZQ-_"), .invalidKey, 400),
            ("key empty", replacing("Sec-WebSocket-Key", with: ""), .invalidKey, 400),
        ]
    }()

    /// A table row, shown in test output by its name only.
    struct Row: CustomTestStringConvertible, Sendable {
        var name: String
        var request: WebSocketUpgradeRequest
        var error: WebSocketHandshakeError
        var status: Int
        var testDescription: String { name }
    }

    @Test(arguments: broken.map { Row(name: $0.0, request: $0.1, error: $0.2, status: $0.3) })
    func refusesBrokenRequests(row: Row) {
        let (name, request, error, status) = (row.name, row.request, row.error, row.status)
        #expect(throws: error, "\(name)") { try WebSocketHandshake.response(to: request, sha1: testSHA1) }
        #expect(error.status.code == status)
        let response = String(decoding: error.responseBytes, as: UTF8.self)
        #expect(response.hasPrefix("HTTP/1.1 \(status) \(error.status.reasonPhrase)\r\n"))
        #expect(response.contains(status == 426 ? "\r\nConnection: Upgrade, close\r\n" : "\r\nConnection: close\r\n"))
        switch status {
        case 405: #expect(response.contains("\r\nAllow: GET\r\n"))
        case 426: #expect(response.contains("\r\nUpgrade: websocket\r\n"))
        default: break
        }
        if error == .unsupportedVersion {
            // §4.4: the refusal names the version the server understands.
            #expect(response.contains("\r\nSec-WebSocket-Version: 13\r\n"))
        }
    }

    @Test func versionRefusalBytesArePinned() {
        let body = "only WebSocket version 13 (RFC 6455) is supported\n"
        #expect(
            String(decoding: WebSocketHandshakeError.unsupportedVersion.responseBytes, as: UTF8.self)
                == "HTTP/1.1 426 Upgrade Required\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                + "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: Upgrade, close\r\n\r\n" + body)
    }
}
