// Every HTTP parser rule, sent to the live REST port.
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeCore

@Suite("HTTP errors over sockets", .tags(.integration), .serialized)
struct ServerMalformedRequestTests {
    /// One row per parser rule, sent to the live REST port: status, and the connection closes.
    static let rows: [(String, String, Int)] = [
        ("method not a token", "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("method too long", String(repeating: "A", count: 40) + " / HTTP/1.1\r\nHost: x\r\n\r\n", 501),
        ("invalid request line", "GET /\r\nHost: x\r\n\r\n", 400),
        ("target character not allowed", "GET /a\u{7F}b HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("invalid target form", "GET * HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("target too long", "GET /" + String(repeating: "a", count: 3000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        ("malformed version", "GET / HTTP/1.x\r\nHost: x\r\n\r\n", 400),
        ("unsupported version", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ("bare CR", "GET / HTTP/1.1\rHost: x\r\n\r\n", 400),
        ("whitespace after request line", "GET / HTTP/1.1\r\n Host: x\r\n\r\n", 400),
        ("field name not a token", "GET / HTTP/1.1\r\nHo(st: x\r\n\r\n", 400),
        ("whitespace before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),
        ("missing colon", "GET / HTTP/1.1\r\nHost x\r\n\r\n", 400),
        ("obsolete line folding", "GET / HTTP/1.1\r\nHost: x\r\nA: b\r\n c\r\n\r\n", 400),
        ("field value character", "GET / HTTP/1.1\r\nHost: x\r\nA: b\u{01}c\r\n\r\n", 400),
        ("too many fields", "GET / HTTP/1.1\r\nHost: x\r\n" + (0..<70).map { "F\($0): v\r\n" }.joined() + "\r\n", 431),
        (
            "header section too large",
            "GET / HTTP/1.1\r\nHost: x\r\nA: " + String(repeating: "v", count: 9000) + "\r\n\r\n", 431
        ),
        ("missing host", "GET / HTTP/1.1\r\n\r\n", 400),
        ("duplicate host", "GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400),
        ("invalid content length", "PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n", 400),
        (
            "conflicting content lengths",
            "PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400
        ),
        (
            "content length with transfer encoding",
            "PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400
        ),
        ("chunked not final", "PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400),
        ("unsupported transfer coding", "PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        ("transfer encoding in HTTP/1.0", "PUT / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("unsupported expectation", "PUT / HTTP/1.1\r\nHost: x\r\nExpect: tea\r\nContent-Length: 1\r\n\r\n", 417),
        ("content too large", "PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n", 413),
        ("invalid chunk size", "PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        (
            "chunk line too long",
            "PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "e", count: 300)
                + "\r\n", 400
        ),
        (
            "chunk data not terminated", "PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
            400
        ),
    ]

    @Test func everyParserRuleHasARow() {
        #expect(Self.rows.count == 30, "HTTPRequestError has 30 cases; add a row for a new one")
    }

    @Test(arguments: rows)
    func brokenRequestsGetTheirStatusAndTheConnectionCloses(_ rule: String, _ text: String, _ status: Int) throws {
        let bridge = try TestBridge.start()
        let client = try RawClient(port: bridge.ports.api)
        try client.send(text)
        let response = try client.response()
        #expect(response.status == status, "\(rule)")
        #expect(response.header("Connection") == "close", "\(rule)")
        #expect(response.header("Content-Type") == "application/json", "\(rule)")
        #expect(try client.isClosedByServer(), "\(rule)")
    }

    @Test func aBrokenRequestAfterGoodOnesIsAnsweredAfterThem() throws {
        let bridge = try TestBridge.start()
        try bridge.register(testAppID)
        let client = try RawClient(port: bridge.ports.api)
        let code = accessCode()
        try client.send(
            "GET /api/v1/test/ping HTTP/1.1\r\nHost: x\r\nAuthorization: \(code)\r\n\r\n"
                + "GET / HTTP/9.9\r\nHost: x\r\n\r\n"
        )
        #expect(try client.response().status == 200)
        #expect(try client.response().status == 505)
        #expect(try client.isClosedByServer())
    }
}
