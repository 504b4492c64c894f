import TestSupport
import Testing

@testable import HTTP1

@Suite("Request reader: bodies, pipelining, 100-continue", .tags(.unit))
struct RequestReaderTests {
    private let put =
        "PUT /api/v1/receiver HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n"
        + "{\"isConnected\":true}"
    private let chunkedPut =
        "PUT /api/v1/receiver/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "f\r\n{\"isConnected\":\r\n6\r\n false\r\n1\r\n}\r\n0\r\n\r\n"
    private let get = "GET /api/v1/receiver HTTP/1.1\r\nHost: a\r\n\r\n"

    @Test func contentLengthBodyIsAViewIntoTheBuffer() throws {
        let input = bytes(put)
        var reader = HTTPRequestReader()
        guard case .request(let request) = try reader.next(in: input.span, from: 0) else {
            Issue.record("incomplete")
            return
        }
        #expect(request.range == 0..<input.count)
        #expect(request.head.method == .put)
        #expect(string(request.body(in: input.span)) == "{\"isConnected\":true}")
        #expect(request.bodyBytes(in: input.span) == bytes("{\"isConnected\":true}"))
        #expect(request.bodyCount == 20)
        #expect(!request.endsConnection)
        #expect(reader.isBetweenRequests)
    }

    @Test func chunkedBodyIsDecoded() throws {
        let input = bytes(chunkedPut)
        var reader = HTTPRequestReader()
        guard case .request(let request) = try reader.next(in: input.span, from: 0) else {
            Issue.record("incomplete")
            return
        }
        #expect(request.range == 0..<input.count)
        #expect(request.head.framing == .chunked)
        #expect(string(request.body(in: input.span)) == "{\"isConnected\": false}")
        #expect(request.bodyCount == 22)
    }

    /// Byte by byte, as a slow client sends, with the caller compacting its buffer as it goes
    /// (the bytes from `start` stay; the request arrives whole at the end).
    @Test(arguments: [0, 1, 2])
    func oneByteAtATime(_ which: Int) throws {
        let text = [put, chunkedPut, get][which]
        let input = bytes(text)
        var reader = HTTPRequestReader()
        var buffer: [UInt8] = bytes("junk")  // bytes before `start` the caller has not dropped yet
        var start = 4
        var result: HTTPRequest?
        for (index, byte) in input.enumerated() {
            buffer.append(byte)
            if index == input.count / 2 {
                buffer.removeFirst(start)  // compaction: `start` moves, the request's bytes do not change
                start = 0
            }
            switch try reader.next(in: buffer.span, from: start) {
            case .needMore(let sendContinue):
                #expect(!sendContinue)
                #expect(!reader.isBetweenRequests)
            case .request(let request):
                #expect(index == input.count - 1, "complete before the last byte")
                #expect(request.range == start..<buffer.count)
                result = request
            }
        }
        let request = try #require(result)
        var whole = HTTPRequestReader()
        guard case .request(let reference) = try whole.next(in: input.span, from: 0) else {
            Issue.record("incomplete")
            return
        }
        #expect(request.head == reference.head)
        #expect(request.bodyBytes(in: buffer.span) == reference.bodyBytes(in: input.span))
    }

    @Test func pipelinedRequestsComeOutInOrder() throws {
        let input = bytes(
            get + put + chunkedPut + "OPTIONS /api/v1/receiver HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /api/v1/te")
        var reader = HTTPRequestReader()
        let batch = reader.readAll(in: input.span)
        #expect(batch.error == nil && !batch.endsConnection && !batch.sendContinue)
        #expect(batch.requests.map(\.head.method) == [.get, .put, .put, .options])
        #expect(
            batch.requests.map { string($0.body(in: input.span)) }
                == ["", "{\"isConnected\":true}", "{\"isConnected\": false}", ""])
        #expect(
            batch.requests.map { $0.head.normalizedPath(in: input.span) }
                == Array(repeating: "/api/v1/receiver", count: 4))
        // Each request starts where the previous one ended.
        for (a, b) in zip(batch.requests, batch.requests.dropFirst()) {
            #expect(a.range.upperBound == b.range.lowerBound)
        }
        #expect(batch.end == input.count - "GET /api/v1/te".utf8.count)
        // The rest arrives; reading continues from `end`.
        let more = input + bytes("stInfo HTTP/1.1\r\nHost: a\r\n\r\n")
        let next = reader.readAll(in: more.span, from: batch.end)
        #expect(next.requests.count == 1)
        #expect(next.requests.first.map { string($0.head.path(in: more.span)) } == "/api/v1/testInfo")
        #expect(next.end == more.count)
    }

    @Test func readingStopsAfterConnectionClose() {
        let input = bytes(get + "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" + get)
        var reader = HTTPRequestReader()
        let batch = reader.readAll(in: input.span)
        #expect(batch.requests.count == 2)
        #expect(batch.endsConnection)
        #expect(batch.end == input.count - get.utf8.count)
    }

    @Test func readingStopsAfterAWebSocketUpgrade() {
        let upgrade =
            "GET /locationV2 HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        let input = bytes(upgrade) + [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D]  // a masked frame follows
        var reader = HTTPRequestReader()
        let batch = reader.readAll(in: input.span)
        #expect(batch.requests.count == 1)
        #expect(batch.requests.first?.head.isWebSocketUpgrade == true)
        #expect(batch.endsConnection && batch.error == nil)
        #expect(batch.end == upgrade.utf8.count)
    }

    @Test func goodRequestsBeforeAnErrorAreKept() {
        let input = bytes(get + get + "GET / HTTP/1.1\r\nHost : a\r\n\r\n" + get)
        var reader = HTTPRequestReader()
        let batch = reader.readAll(in: input.span)
        #expect(batch.requests.count == 2)
        #expect(batch.error == .whitespaceBeforeColon)
        #expect(batch.end == 2 * get.utf8.count)
    }

    @Test func continueIsSignalledOnceWhenTheBodyIsPending() throws {
        let head = "PUT /api/v1/receiver HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 20\r\n\r\n"
        var reader = HTTPRequestReader()
        var buffer = bytes(head)
        #expect(try reader.next(in: buffer.span, from: 0) == .needMore(sendContinue: true))
        #expect(reader.pendingHead?.expectsContinue == true)
        #expect(reader.pendingHead?.contentLength == 20)
        buffer += bytes("{\"isConnected\"")
        #expect(try reader.next(in: buffer.span, from: 0) == .needMore(sendContinue: false))
        buffer += bytes(":true}")
        guard case .request(let request) = try reader.next(in: buffer.span, from: 0) else {
            Issue.record("incomplete")
            return
        }
        #expect(request.bodyCount == 20)

        // The body already there: no 100 Continue.
        var eager = HTTPRequestReader()
        let whole = bytes(head + "{\"isConnected\":true}")
        guard case .request = try eager.next(in: whole.span, from: 0) else {
            Issue.record("incomplete")
            return
        }
        // Chunked, via the batch helper.
        var chunked = HTTPRequestReader()
        let chunkedHead = bytes(
            "PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(chunked.readAll(in: chunkedHead.span).sendContinue)
    }

    @Test func emptyContentLengthBodyCompletesWithTheHead() throws {
        let input = bytes("PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
        var reader = HTTPRequestReader()
        guard case .request(let request) = try reader.next(in: input.span, from: 0) else {
            Issue.record("incomplete")
            return
        }
        #expect(request.bodyCount == 0 && request.range == 0..<input.count)
    }

    @Test func http10KeepAliveAndClose() {
        let input = bytes(
            "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\n\r\n")
        var reader = HTTPRequestReader()
        let batch = reader.readAll(in: input.span)
        #expect(batch.requests.count == 2)
        #expect(batch.endsConnection)
    }
}
