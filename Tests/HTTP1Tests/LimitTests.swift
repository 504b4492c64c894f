import TestSupport
import Testing

@testable import HTTP1

/// Each limit at exactly its value (accepted) and one over (rejected with its status).
@Suite("Limits: at the limit and one over", .tags(.unit))
struct LimitTests {
    /// A head of exactly `length` bytes: one padding field sized to fit.
    private func head(ofLength length: Int) -> [UInt8] {
        let fixed = "GET / HTTP/1.1\r\nHost: a\r\nX: \r\n\r\n"
        return bytes(
            "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "v", count: length - fixed.utf8.count) + "\r\n\r\n")
    }

    @Test func headBytes() throws {
        let atLimit = head(ofLength: HTTPLimits.maxHeadBytes)
        #expect(atLimit.count == 8192)
        guard case .complete(_, let consumed) = try HTTPRequestHead.parse(atLimit.span) else {
            Issue.record("head at the limit not accepted")
            return
        }
        #expect(consumed == 8192)
        let over = head(ofLength: HTTPLimits.maxHeadBytes + 1)
        #expect(throws: HTTPRequestError.headerSectionTooLarge) { try HTTPRequestHead.parse(over.span) }
        // One byte short of the limit and incomplete: needs more; at the limit and incomplete: 431.
        #expect(try HTTPRequestHead.parse(Array(over[0..<8191]).span) == .needMore)
        #expect(throws: HTTPRequestError.headerSectionTooLarge) {
            try HTTPRequestHead.parse(Array(over[0..<8192]).span)
        }
        #expect(HTTPRequestError.headerSectionTooLarge.status == .requestHeaderFieldsTooLarge)
    }

    @Test func headBytesCountFromStart() throws {
        let padded = bytes(String(repeating: "x", count: 100)) + head(ofLength: HTTPLimits.maxHeadBytes)
        guard case .complete(let parsed, _) = try HTTPRequestHead.parse(padded.span, from: 100) else {
            Issue.record("head at the limit after an offset not accepted")
            return
        }
        #expect(parsed.range == 100..<8292)
    }

    private func request(fields: Int) -> [UInt8] {
        bytes("GET / HTTP/1.1\r\nHost: a\r\n" + (1..<fields).map { "X-\($0): v\r\n" }.joined() + "\r\n")
    }

    @Test func fieldCount() throws {
        let atLimit = request(fields: HTTPLimits.maxFieldCount)
        guard case .complete(let head, _) = try HTTPRequestHead.parse(atLimit.span) else {
            Issue.record("64 fields not accepted")
            return
        }
        #expect(head.fieldCount == 64)
        #expect(string(head.value(at: 63, in: atLimit.span)) == "v")
        #expect(string(head.name(at: 63, in: atLimit.span)) == "X-63")
        let over = request(fields: HTTPLimits.maxFieldCount + 1)
        #expect(throws: HTTPRequestError.tooManyFields) { try HTTPRequestHead.parse(over.span) }
        #expect(HTTPRequestError.tooManyFields.status == .requestHeaderFieldsTooLarge)
    }

    @Test func targetLength() throws {
        let target = { (n: Int) in "/" + String(repeating: "a", count: n - 1) }
        let atLimit = bytes("GET \(target(HTTPLimits.maxTargetLength)) HTTP/1.1\r\nHost: a\r\n\r\n")
        guard case .complete(let head, _) = try HTTPRequestHead.parse(atLimit.span) else {
            Issue.record("target at the limit not accepted")
            return
        }
        #expect(head.targetRange.count == 2048)
        let over = bytes("GET \(target(HTTPLimits.maxTargetLength + 1)) HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(throws: HTTPRequestError.targetTooLong) { try HTTPRequestHead.parse(over.span) }
        // Detected before the request line ends.
        #expect(throws: HTTPRequestError.targetTooLong) { try HTTPRequestHead.parse(Array(over[0..<2053]).span) }
        #expect(HTTPRequestError.targetTooLong.status == .uriTooLong)
    }

    @Test func methodLength() throws {
        let atLimit = try completeHead(
            String(repeating: "M", count: HTTPLimits.maxMethodLength) + " / HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(atLimit.method == .other)
        #expect(atLimit.methodRange.count == 32)
        #expect(rejection(String(repeating: "M", count: HTTPLimits.maxMethodLength + 1)) == .methodTooLong)
        #expect(HTTPRequestError.methodTooLong.status == .notImplemented)
    }

    @Test func contentLengthBody() throws {
        let atLimit = try completeHead("PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 65536\r\n\r\n")
        #expect(atLimit.framing == .contentLength(HTTPLimits.maxBodyBytes))
        #expect(rejection("PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 65537\r\n\r\n") == .contentTooLarge)
        #expect(HTTPRequestError.contentTooLarge.status == .contentTooLarge)
    }

    @Test func chunkedBody() throws {
        // 0x8000 + 0x8000 = 65536 bytes: accepted; one more byte in a third chunk: 413.
        let chunk = "8000\r\n" + String(repeating: "a", count: 0x8000) + "\r\n"
        var decoder = HTTPChunkedDecoder()
        var body: [UInt8] = []
        let atLimit = bytes(chunk + chunk + "0\r\n\r\n")
        #expect(try decoder.decode(atLimit.span, into: &body) == atLimit.count)
        #expect(decoder.isComplete && body.count == HTTPLimits.maxBodyBytes)

        var overDecoder = HTTPChunkedDecoder()
        var overBody: [UInt8] = []
        let over = bytes(chunk + chunk + "1\r\na\r\n0\r\n\r\n")
        #expect(throws: HTTPRequestError.contentTooLarge) { try overDecoder.decode(over.span, into: &overBody) }
        #expect(overBody.count == HTTPLimits.maxBodyBytes)  // rejected at the size line, before its data
    }

    @Test func chunkLine() throws {
        let line = { (n: Int) in "1;" + String(repeating: "e", count: n - 2) + "\r\na\r\n0\r\n\r\n" }
        var decoder = HTTPChunkedDecoder()
        var body: [UInt8] = []
        let atLimit = bytes(line(HTTPLimits.maxChunkLineBytes))
        _ = try decoder.decode(atLimit.span, into: &body)
        #expect(decoder.isComplete && body == [UInt8(ascii: "a")])
        var overDecoder = HTTPChunkedDecoder()
        let over = bytes(line(HTTPLimits.maxChunkLineBytes + 1))
        #expect(throws: HTTPRequestError.chunkLineTooLong) { try overDecoder.decode(over.span, into: &body) }
    }

    @Test func trailerSection() throws {
        // The trailer section counts its field lines and the final empty line.
        let trailer = { (n: Int) in "0\r\nT: " + String(repeating: "t", count: n - 7) + "\r\n\r\n" }
        var decoder = HTTPChunkedDecoder()
        var body: [UInt8] = []
        let atLimit = bytes(trailer(HTTPLimits.maxTrailerBytes))
        #expect(atLimit.count - 3 == 4096)
        #expect(try decoder.decode(atLimit.span, into: &body) == atLimit.count)
        #expect(decoder.isComplete)
        var overDecoder = HTTPChunkedDecoder()
        let over = bytes(trailer(HTTPLimits.maxTrailerBytes + 1))
        #expect(throws: HTTPRequestError.headerSectionTooLarge) { try overDecoder.decode(over.span, into: &body) }
    }

    /// The head stores offsets as UInt16 and has an inline table sized by the field limit.
    @Test func limitsFitTheInlineRepresentation() {
        #expect(HTTPLimits.maxHeadBytes <= Int(UInt16.max))
        #expect(InlineArray<64, HTTPRequestHead.Field>(repeating: .empty).count == HTTPLimits.maxFieldCount)
        #expect(HTTPLimits.maxTargetLength < HTTPLimits.maxHeadBytes)
    }
}
