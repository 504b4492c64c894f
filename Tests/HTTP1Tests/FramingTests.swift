import TestSupport
import Testing

@testable import HTTP1

@Suite("Framing, persistence and expectations", .tags(.unit))
struct FramingTests {
    /// Content-Length field lines → framing or error.
    @Test(arguments: [
        (["Content-Length: 0"], HTTPBodyFraming.contentLength(0), nil as HTTPRequestError?),
        (["Content-Length: 20"], .contentLength(20), nil),
        (["Content-Length: 007"], .contentLength(7), nil),
        (["content-length:\t12 "], .contentLength(12), nil),
        (["Content-Length: 5, 5"], .contentLength(5), nil),  // identical list: RFC 9110 §8.6 MAY accept
        (["Content-Length: 5", "Content-Length: 5"], .contentLength(5), nil),
        (["Content-Length: 5,"], .contentLength(5), nil),  // empty list elements are ignored
        (["Content-Length: 65536"], .contentLength(65536), nil),
        ([], .none, nil),
        (["Content-Length: 5", "Content-Length: 6"], .none, .conflictingContentLength),
        (["Content-Length: 5, 6"], .none, .conflictingContentLength),
        (["Content-Length: 0x10"], .none, .invalidContentLength),
        (["Content-Length: 1.0"], .none, .invalidContentLength),
        (["Content-Length: 1e3"], .none, .invalidContentLength),
        (["Content-Length: -0"], .none, .invalidContentLength),
        (["Content-Length: "], .none, .invalidContentLength),
        (["Content-Length: ,"], .none, .invalidContentLength),
        (["Content-Length: 5", "Content-Length: x"], .none, .invalidContentLength),
        (["Content-Length: 65537"], .none, .contentTooLarge),
        (["Content-Length: 18446744073709551616"], .none, .contentTooLarge),
    ])
    func contentLength(_ fields: [String], _ framing: HTTPBodyFraming, _ error: HTTPRequestError?) throws {
        let request = "PUT /api/v1/receiver HTTP/1.1\r\nHost: a\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
        if let error {
            #expect(rejection(request) == error)
        } else {
            #expect(try completeHead(request).framing == framing)
        }
    }

    @Test(arguments: [
        (["Transfer-Encoding: chunked"], HTTPBodyFraming.chunked, nil as HTTPRequestError?),
        (["Transfer-Encoding: CHUNKED"], .chunked, nil),
        (["Transfer-Encoding: , chunked ,"], .chunked, nil),
        (["Transfer-Encoding: gzip, chunked"], .none, .unsupportedTransferCoding),
        (["Transfer-Encoding: gzip", "Transfer-Encoding: chunked"], .none, .unsupportedTransferCoding),
        (["Transfer-Encoding: identity"], .none, .chunkedNotFinal),
        (["Transfer-Encoding: chunked, gzip"], .none, .chunkedNotFinal),
        (["Transfer-Encoding: chunked, chunked"], .none, .chunkedNotFinal),
        (["Transfer-Encoding: chunked;q=1"], .none, .chunkedNotFinal),
        (["Transfer-Encoding: chunked", "Content-Length: 3"], .none, .contentLengthWithTransferEncoding),
    ])
    func transferEncoding(_ fields: [String], _ framing: HTTPBodyFraming, _ error: HTTPRequestError?) throws {
        let request = "PUT / HTTP/1.1\r\nHost: a\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
        if let error {
            #expect(rejection(request) == error)
        } else {
            #expect(try completeHead(request).framing == framing)
        }
    }

    /// RFC 9112 §9.3: HTTP/1.1 persists unless `close`; HTTP/1.0 only with `keep-alive`.
    @Test(arguments: [
        ("HTTP/1.1", [String](), true),
        ("HTTP/1.1", ["Connection: close"], false),
        ("HTTP/1.1", ["Connection: Close"], false),
        ("HTTP/1.1", ["Connection: keep-alive"], true),
        ("HTTP/1.1", ["Connection: keep-alive, close"], false),
        ("HTTP/1.1", ["Connection: keep-alive", "Connection: close"], false),
        ("HTTP/1.1", ["Connection: upgrade"], true),
        ("HTTP/1.1", ["Connection: closed"], true),
        ("HTTP/1.1", ["X-Connection: close"], true),
        ("HTTP/1.0", [], false),
        ("HTTP/1.0", ["Connection: keep-alive"], true),
        ("HTTP/1.0", ["Connection: Keep-Alive"], true),
        ("HTTP/1.0", ["Connection: keep-alive, close"], false),
        ("HTTP/1.0", ["Connection: close"], false),
    ])
    func keepAlive(_ version: String, _ fields: [String], _ keepAlive: Bool) throws {
        let request = "GET / \(version)\r\nHost: a\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
        #expect(try completeHead(request).keepAlive == keepAlive)
    }

    @Test(arguments: [
        ("HTTP/1.1", ["Expect: 100-continue"], true, nil as HTTPRequestError?),
        ("HTTP/1.1", ["Expect: 100-Continue"], true, nil),
        ("HTTP/1.1", [], false, nil),
        ("HTTP/1.1", ["Expect:"], false, nil),
        ("HTTP/1.0", ["Expect: 100-continue"], false, nil),  // RFC 9110 §10.1.1: MUST ignore in 1.0
        ("HTTP/1.0", ["Expect: 200-ok"], false, nil),
        ("HTTP/1.1", ["Expect: 100-continue, x"], false, .unsupportedExpectation),
        ("HTTP/1.1", ["Expect: 200-ok"], false, .unsupportedExpectation),
    ])
    func expect(_ version: String, _ fields: [String], _ expects: Bool, _ error: HTTPRequestError?) throws {
        let request =
            "PUT / \(version)\r\nHost: a\r\nContent-Length: 2\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
        if let error {
            #expect(rejection(request) == error)
            #expect(error.status == .expectationFailed)
        } else {
            #expect(try completeHead(request).expectsContinue == expects)
        }
    }

    @Test(arguments: [
        ("GET", "HTTP/1.1", ["Connection: Upgrade", "Upgrade: websocket"], true),
        ("GET", "HTTP/1.1", ["Connection: keep-alive, Upgrade", "Upgrade: WebSocket"], true),  // Firefox
        ("GET", "HTTP/1.1", ["Upgrade: websocket", "Connection: upgrade"], true),
        ("GET", "HTTP/1.1", ["Connection: Upgrade", "Upgrade: h2c"], false),
        ("GET", "HTTP/1.1", ["Upgrade: websocket"], false),
        ("GET", "HTTP/1.1", ["Connection: Upgrade"], false),
        ("POST", "HTTP/1.1", ["Connection: Upgrade", "Upgrade: websocket"], false),
        ("GET", "HTTP/1.0", ["Connection: Upgrade", "Upgrade: websocket"], false),
    ])
    func webSocketUpgrade(_ method: String, _ version: String, _ fields: [String], _ upgrade: Bool) throws {
        let request = "\(method) /locationV2 \(version)\r\nHost: a\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
        #expect(try completeHead(request).isWebSocketUpgrade == upgrade)
    }

    @Test func hostIsOptionalInHTTP10() throws {
        let head = try completeHead("GET / HTTP/1.0\r\n\r\n")
        #expect(head.version == .http1_0 && head.fieldCount == 0)
        #expect(rejection("GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n") == .duplicateHost)
    }
}
