import TestSupport
import Testing

@testable import HTTP1

@Suite("Request head: parsing and accessors", .tags(.unit))
struct RequestHeadTests {
    @Test func parsesATMMRequest() throws {
        let input = bytes(tmmGet)
        let result = try HTTPRequestHead.parse(input.span)
        guard case .complete(let head, let consumed) = result else {
            Issue.record("incomplete")
            return
        }
        #expect(consumed == input.count)
        #expect(head.start == 0 && head.length == input.count && head.end == input.count)
        #expect(head.method == .get)
        #expect(head.version == .http1_1)
        #expect(head.targetForm == .origin)
        #expect(head.framing == .none && head.contentLength == 0)
        #expect(head.keepAlive && !head.expectsContinue && !head.isWebSocketUpgrade)
        #expect(head.fieldCount == 3)
        let span = input.span
        #expect(string(head.method(in: span)) == "GET")
        #expect(string(head.target(in: span)) == "/api/v1/positionStream?format=locationV2")
        #expect(string(head.path(in: span)) == "/api/v1/positionStream")
        #expect(optionalString(head.query(in: span)) == "format=locationV2")
        #expect(string(head.name(at: 1, in: span)) == "Authorization")
        #expect(string(head.value(at: 1, in: span)) == "Basic /T6VQF4SQ/Ix/H8ZfFOrSEzj8qpHsFmA3ug569bPpV0=")
        #expect(
            optionalString(head.value(of: "authorization", in: span))
                == "Basic /T6VQF4SQ/Ix/H8ZfFOrSEzj8qpHsFmA3ug569bPpV0=")
        #expect(head.string(of: "HOST", in: span) == "localhost:9637")
        #expect(optionalString(head.value(of: "Cookie", in: span)) == nil)
        #expect(head.count(of: "accept", in: span) == 1)
        #expect(head.queryValue("format", in: span) == "locationV2")
        #expect(head.queryValue("Format", in: span) == nil)
        #expect(head.normalizedPath(in: span) == "/api/v1/positionstream")
        let matchesStream = head.pathMatches(HTTPPath("/api/v1/positionStream"), in: span)
        let matchesReceiver = head.pathMatches(HTTPPath("/api/v1/receiver"), in: span)
        #expect(matchesStream && !matchesReceiver)
    }

    /// picohttpparser's "incomplete 1..N": every proper prefix of a valid request needs more.
    @Test(arguments: [
        tmmGet,
        "GET / HTTP/1.0\r\n\r\n",
        "PUT /api/v1/receiver/ HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n",
        "\r\n\nOPTIONS * HTTP/1.1\nHost: x\n\n",
        "GET http://localhost:9637/api/v1/tmmInfo HTTP/1.1\r\nHost: localhost\r\n"
            + "X-Empty:\r\nX-Spaces: \t a b \t\r\n\r\n",
    ])
    func everyProperPrefixNeedsMore(_ request: String) throws {
        let input = bytes(request)
        let whole = try HTTPRequestHead.parse(input.span)
        guard case .complete(_, let consumed) = whole else {
            Issue.record("whole request incomplete")
            return
        }
        #expect(consumed == input.count)
        for length in 0..<input.count {
            let prefix = Array(input[0..<length])
            #expect(try HTTPRequestHead.parse(prefix.span) == .needMore, "prefix of \(length) bytes")
        }
    }

    /// Fed one byte at a time with `previousLength` (picohttpparser's `last_len`), the parser
    /// finds the same head as in one piece.
    @Test func oneByteAtATimeWithPreviousLength() throws {
        let input = bytes(tmmGet)
        var previous = 0
        var result = HTTPRequestHead.ParseResult.needMore
        for length in 1...input.count {
            let prefix = Array(input[0..<length])
            result = try HTTPRequestHead.parse(prefix.span, previousLength: previous)
            if case .complete = result { #expect(length == input.count) }
            previous = length
        }
        #expect(result == (try HTTPRequestHead.parse(input.span)))
    }

    @Test func previousLengthStillFindsErrorsOnceTheHeadIsComplete() throws {
        let input = bytes("GET / HTTP/1.1\r\nHo st: x\r\n\r\n")
        #expect(throws: HTTPRequestError.whitespaceBeforeColon) {
            try HTTPRequestHead.parse(input.span, previousLength: input.count - 1)
        }
        // Incomplete, the quick scan only looks for the empty line.
        let partial = Array(input[0..<(input.count - 2)])
        let quick = try HTTPRequestHead.parse(partial.span, previousLength: 20)
        #expect(quick == .needMore)
    }

    @Test func parsesFromAnOffsetAndReportsAbsoluteIndices() throws {
        let input = bytes("garbage" + tmmGet + "tail")
        guard case .complete(let head, let consumed) = try HTTPRequestHead.parse(input.span, from: 7) else {
            Issue.record("incomplete")
            return
        }
        #expect(head.start == 7)
        #expect(consumed == tmmGet.utf8.count)
        #expect(head.end == 7 + consumed)
        #expect(head.methodRange == 7..<10)
        #expect(string(head.path(in: input.span)) == "/api/v1/positionStream")
        #expect(head.queryValue("format", in: input.span) == "locationV2")
    }

    @Test func emptyLinesBeforeTheRequestLineAreSkipped() throws {
        let head = try completeHead("\r\n\r\n\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(head.methodRange == 5..<8)
        #expect(head.start == 0)
    }

    /// RFC 9112 §2.2 allows a bare LF as line end; we accept it (documented in docs/http.md).
    @Test func bareLineFeedsAreAccepted() throws {
        let head = try completeHead("GET /x HTTP/1.1\nHost: a\nConnection: close\n\n")
        #expect(head.fieldCount == 2)
        #expect(!head.keepAlive)
        let mixed = try completeHead("GET /x HTTP/1.1\r\nHost: a\n\r\n")
        #expect(mixed.fieldCount == 1)
    }

    @Test func fieldValuesAreTrimmedAndMayBeEmpty() throws {
        let input = bytes("GET / HTTP/1.1\r\nHost: a\r\nX-A:\r\nX-B: \t \r\nX-C:\t v  w \t\r\nX-D: caf\u{E9}\r\n\r\n")
        guard case .complete(let head, _) = try HTTPRequestHead.parse(input.span) else {
            Issue.record("incomplete")
            return
        }
        let span = input.span
        #expect(optionalString(head.value(of: "x-a", in: span)) == "")
        #expect(optionalString(head.value(of: "x-b", in: span)) == "")
        #expect(optionalString(head.value(of: "x-c", in: span)) == "v  w")
        #expect(head.string(of: "x-d", in: span) == "caf\u{E9}")  // obs-text passes through
    }

    @Test(arguments: [
        ("GET", HTTPMethod.get), ("HEAD", .head), ("POST", .post), ("PUT", .put), ("DELETE", .delete),
        ("OPTIONS", .options), ("PATCH", .patch), ("TRACE", .trace), ("get", .other), ("PROPFIND", .other),
        ("M-SEARCH", .other), ("GETS", .other),
    ])
    func methods(_ name: String, _ method: HTTPMethod) throws {
        let head = try completeHead("\(name) / HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(head.method == method)
    }

    @Test func connectUsesAuthorityForm() throws {
        let input = bytes("CONNECT localhost:9637 HTTP/1.1\r\nHost: localhost:9637\r\n\r\n")
        guard case .complete(let head, _) = try HTTPRequestHead.parse(input.span) else {
            Issue.record("incomplete")
            return
        }
        #expect(head.method == .connect && head.targetForm == .authority)
        let pathIsEmpty = head.path(in: input.span).isEmpty
        #expect(pathIsEmpty)
        #expect(optionalString(head.query(in: input.span)) == nil)
    }

    @Test func absoluteFormExposesThePathAfterTheAuthority() throws {
        let input = bytes("GET HTTP://localhost:9637/api/v1/receiver/?a=b HTTP/1.1\r\nHost: localhost\r\n\r\n")
        guard case .complete(let head, _) = try HTTPRequestHead.parse(input.span) else {
            Issue.record("incomplete")
            return
        }
        #expect(head.targetForm == .absolute)
        #expect(string(head.path(in: input.span)) == "/api/v1/receiver/")
        #expect(head.queryValue("a", in: input.span) == "b")
        let matches = head.pathMatches(HTTPPath("/api/v1/receiver"), in: input.span)
        #expect(matches)

        let bare = bytes("GET https://h HTTP/1.1\r\nHost: h\r\n\r\n")
        guard case .complete(let noPath, _) = try HTTPRequestHead.parse(bare.span) else {
            Issue.record("incomplete")
            return
        }
        let noPathIsEmpty = noPath.path(in: bare.span).isEmpty
        #expect(noPathIsEmpty)
        #expect(noPath.normalizedPath(in: bare.span) == "/")
    }

    @Test func asteriskFormForOptions() throws {
        let input = bytes("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n")
        guard case .complete(let head, _) = try HTTPRequestHead.parse(input.span) else {
            Issue.record("incomplete")
            return
        }
        #expect(head.targetForm == .asterisk)
        #expect(string(head.path(in: input.span)) == "*")
    }

    @Test(arguments: [
        ("HTTP/1.0", HTTPVersion.http1_0), ("HTTP/1.1", .http1_1), ("HTTP/1.2", .http1_1), ("HTTP/1.9", .http1_1),
    ])
    func versions(_ text: String, _ version: HTTPVersion) throws {
        let head = try completeHead("GET / \(text)\r\nHost: a\r\n\r\n")
        #expect(head.version == version)
    }

    @Test func emptyQueryAndRepeatedQuestionMarks() throws {
        let input = bytes("GET /a??b=c? HTTP/1.1\r\nHost: a\r\n\r\n")
        guard case .complete(let head, _) = try HTTPRequestHead.parse(input.span) else {
            Issue.record("incomplete")
            return
        }
        #expect(string(head.path(in: input.span)) == "/a")
        #expect(optionalString(head.query(in: input.span)) == "?b=c?")
        #expect(head.queryValue("?b", in: input.span) == "c?")

        let empty = bytes("GET /a? HTTP/1.1\r\nHost: a\r\n\r\n")
        guard case .complete(let emptyHead, _) = try HTTPRequestHead.parse(empty.span) else {
            Issue.record("incomplete")
            return
        }
        #expect(optionalString(emptyHead.query(in: empty.span)) == "")
    }

    @Test func listContainsLooksAcrossFieldLines() throws {
        let input = bytes("GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\nconnection: , Upgrade ,\r\n\r\n")
        guard case .complete(let head, _) = try HTTPRequestHead.parse(input.span) else {
            Issue.record("incomplete")
            return
        }
        let upgrade = head.listContains("upgrade", inField: "Connection", in: input.span)
        let keepAlive = head.listContains("KEEP-ALIVE", inField: "connection", in: input.span)
        let close = head.listContains("close", inField: "Connection", in: input.span)
        let upgradeInUpgrade = head.listContains("upgrade", inField: "Upgrade", in: input.span)
        #expect(upgrade && keepAlive && !close && !upgradeInUpgrade)
        #expect(head.index(of: "connection", in: input.span) == 1)
        #expect(head.index(of: "connection", from: 2, in: input.span) == 2)
        #expect(head.index(of: "connection", from: 3, in: input.span) == nil)
    }

    @Test func theHeadIsIndependentOfWhatFollows() throws {
        let head = bytes(tmmGet)
        let followed = head + bytes("GET / HTTP/1.1\r\n")
        #expect(try HTTPRequestHead.parse(head.span) == (try HTTPRequestHead.parse(followed.span)))
    }
}
