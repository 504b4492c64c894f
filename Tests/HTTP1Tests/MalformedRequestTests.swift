import TestSupport
import Testing

@testable import HTTP1

/// One row per broken rule: the request, the error named after the rule, and (through
/// `HTTPRequestError.status`) the status the server answers with.
struct MalformedRequest: Sendable, CustomTestStringConvertible {
    let rule: String
    let request: String
    let error: HTTPRequestError
    let status: Int

    var testDescription: String { rule }
}

private let host = "Host: localhost:9637\r\n"
private let manyFields = (0..<65).map { "X-\($0): v\r\n" }.joined()

let malformedRequests: [MalformedRequest] = [
    // Request line.
    .init(rule: "method with a non-token byte", request: "G(T / HTTP/1.1\r\n\r\n", error: .methodNotToken, status: 400),
    .init(rule: "method with NUL", request: "G\u{0}T / HTTP/1.1\r\n\r\n", error: .methodNotToken, status: 400),
    .init(rule: "method with DEL", request: "G\u{7F}T / HTTP/1.1\r\n\r\n", error: .methodNotToken, status: 400),
    .init(rule: "tab after the method", request: "GET\t/ HTTP/1.1\r\n\r\n", error: .methodNotToken, status: 400),
    .init(
        rule: "empty method (leading space)", request: " GET / HTTP/1.1\r\n\r\n", error: .methodNotToken, status: 400),
    .init(
        rule: "method longer than the limit", request: String(repeating: "A", count: 33) + " / HTTP/1.1\r\n\r\n",
        error: .methodTooLong, status: 501),
    .init(
        rule: "two spaces after the method", request: "GET  / HTTP/1.1\r\n\r\n", error: .invalidRequestLine, status: 400
    ),
    .init(
        rule: "HTTP/0.9 request line without version", request: "GET /\r\n\r\n", error: .invalidRequestLine, status: 400
    ),
    .init(
        rule: "whitespace after the version", request: "GET / HTTP/1.1 \r\n\r\n", error: .invalidRequestLine,
        status: 400),
    .init(
        rule: "target with DEL", request: "GET /a\u{7F} HTTP/1.1\r\n\r\n", error: .targetCharacterNotAllowed,
        status: 400),
    .init(
        rule: "target with a tab", request: "GET /a\tb HTTP/1.1\r\n\r\n", error: .targetCharacterNotAllowed, status: 400
    ),
    .init(
        rule: "target with NUL", request: "GET /a\u{0} HTTP/1.1\r\n\r\n", error: .targetCharacterNotAllowed, status: 400
    ),
    .init(
        rule: "target with a fragment", request: "GET /a#b HTTP/1.1\r\n\r\n", error: .targetCharacterNotAllowed,
        status: 400),
    .init(
        rule: "target with raw UTF-8", request: "GET /caf\u{E9} HTTP/1.1\r\n\r\n", error: .targetCharacterNotAllowed,
        status: 400),
    .init(
        rule: "asterisk-form with GET", request: "GET * HTTP/1.1\r\n\(host)\r\n", error: .invalidTargetForm, status: 400
    ),
    .init(rule: "relative path", request: "GET api/v1 HTTP/1.1\r\n\(host)\r\n", error: .invalidTargetForm, status: 400),
    .init(
        rule: "absolute-form with another scheme", request: "GET ftp://h/x HTTP/1.1\r\n\(host)\r\n",
        error: .invalidTargetForm, status: 400),
    .init(
        rule: "absolute-form without a host", request: "GET http:///x HTTP/1.1\r\n\(host)\r\n",
        error: .invalidTargetForm, status: 400),
    .init(
        rule: "CONNECT with a path", request: "CONNECT h:1/x HTTP/1.1\r\n\(host)\r\n", error: .invalidTargetForm,
        status: 400),
    .init(
        rule: "target longer than the limit",
        request: "GET /" + String(repeating: "a", count: 2048) + " HTTP/1.1\r\n\r\n",
        error: .targetTooLong, status: 414),
    .init(rule: "lower-case HTTP name", request: "GET / http/1.1\r\n\r\n", error: .malformedVersion, status: 400),
    .init(rule: "version without a dot", request: "GET / HTTP/11\r\n\r\n", error: .malformedVersion, status: 400),
    .init(rule: "version with a letter", request: "GET / HTTP/1.x\r\n\r\n", error: .malformedVersion, status: 400),
    .init(rule: "two-digit minor version", request: "GET / HTTP/1.10\r\n\r\n", error: .malformedVersion, status: 400),
    .init(
        rule: "HTTP/2.0 in an HTTP/1 request line", request: "GET / HTTP/2.0\r\n\r\n", error: .unsupportedVersion,
        status: 505),
    .init(rule: "HTTP/0.9 version", request: "GET / HTTP/0.9\r\n\r\n", error: .unsupportedVersion, status: 505),
    // Field lines.
    .init(
        rule: "bare CR ending the request line", request: "GET / HTTP/1.1\rHost: a\r\n\r\n", error: .bareCarriageReturn,
        status: 400),
    .init(
        rule: "bare CR inside a value", request: "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", error: .bareCarriageReturn,
        status: 400),
    .init(
        rule: "bare CR before the request line", request: "\rGET / HTTP/1.1\r\n\r\n", error: .bareCarriageReturn,
        status: 400),
    .init(
        rule: "bare CR as the empty line", request: "GET / HTTP/1.1\r\nHost: a\r\n\rX", error: .bareCarriageReturn,
        status: 400),
    .init(
        rule: "whitespace before the first field", request: "GET / HTTP/1.1\r\n Host: a\r\n\r\n",
        error: .whitespaceAfterRequestLine, status: 400),
    .init(
        rule: "field name with a non-token byte", request: "GET / HTTP/1.1\r\nHo(st: a\r\n\r\n",
        error: .fieldNameNotToken, status: 400),
    .init(rule: "empty field name", request: "GET / HTTP/1.1\r\n: a\r\n\r\n", error: .fieldNameNotToken, status: 400),
    .init(
        rule: "field name with raw UTF-8", request: "GET / HTTP/1.1\r\nH\u{E9}: a\r\n\r\n", error: .fieldNameNotToken,
        status: 400),
    .init(
        rule: "field name with NUL", request: "GET / HTTP/1.1\r\nHo\u{0}st: a\r\n\r\n", error: .fieldNameNotToken,
        status: 400),
    .init(
        rule: "space before the colon", request: "GET / HTTP/1.1\r\nHost : a\r\n\r\n", error: .whitespaceBeforeColon,
        status: 400),
    .init(
        rule: "tab before the colon", request: "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", error: .whitespaceBeforeColon,
        status: 400),
    .init(
        rule: "name, space, no colon", request: "GET / HTTP/1.1\r\nHost a\r\n\r\n", error: .whitespaceBeforeColon,
        status: 400),
    .init(
        rule: "field line that is only a name", request: "GET / HTTP/1.1\r\nHost\r\n\r\n", error: .missingColon,
        status: 400),
    .init(
        rule: "obs-fold continuation with a space", request: "GET / HTTP/1.1\r\n\(host)X: a\r\n b\r\n\r\n",
        error: .obsoleteLineFolding, status: 400),
    .init(
        rule: "obs-fold continuation with a tab", request: "GET / HTTP/1.1\r\n\(host)X: a\r\n\tb\r\n\r\n",
        error: .obsoleteLineFolding, status: 400),
    .init(
        rule: "NUL in a value", request: "GET / HTTP/1.1\r\nHost: a\u{0}b\r\n\r\n",
        error: .fieldValueCharacterNotAllowed, status: 400),
    .init(
        rule: "control byte in a value", request: "GET / HTTP/1.1\r\nHost: a\u{1B}b\r\n\r\n",
        error: .fieldValueCharacterNotAllowed, status: 400),
    .init(
        rule: "DEL in a value", request: "GET / HTTP/1.1\r\nHost: a\u{7F}\r\n\r\n",
        error: .fieldValueCharacterNotAllowed, status: 400),
    .init(
        rule: "more fields than the limit", request: "GET / HTTP/1.1\r\n\(host)\(manyFields)\r\n",
        error: .tooManyFields, status: 431),
    .init(
        rule: "head larger than the limit",
        request: "GET / HTTP/1.1\r\n\(host)X: " + String(repeating: "v", count: 8200) + "\r\n\r\n",
        error: .headerSectionTooLarge, status: 431),
    .init(
        rule: "CRLFs forever before the request line", request: String(repeating: "\r\n", count: 4097),
        error: .headerSectionTooLarge, status: 431),
    // Semantics.
    .init(rule: "HTTP/1.1 without Host", request: "GET / HTTP/1.1\r\n\r\n", error: .missingHost, status: 400),
    .init(
        rule: "two Host fields", request: "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", error: .duplicateHost,
        status: 400),
    .init(
        rule: "Content-Length not a number", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: abc\r\n\r\n",
        error: .invalidContentLength, status: 400),
    .init(
        rule: "negative Content-Length", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: -1\r\n\r\n",
        error: .invalidContentLength, status: 400),
    .init(
        rule: "Content-Length with a plus sign", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: +5\r\n\r\n",
        error: .invalidContentLength, status: 400),
    .init(
        rule: "empty Content-Length", request: "PUT / HTTP/1.1\r\n\(host)Content-Length:\r\n\r\n",
        error: .invalidContentLength, status: 400),
    .init(
        rule: "Content-Length with inner space", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: 1 2\r\n\r\n",
        error: .invalidContentLength, status: 400),
    .init(
        rule: "differing Content-Length list", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: 5, 6\r\n\r\n",
        error: .conflictingContentLength, status: 400),
    .init(
        rule: "differing Content-Length lines",
        request: "PUT / HTTP/1.1\r\n\(host)Content-Length: 5\r\nContent-Length: 6\r\n\r\n",
        error: .conflictingContentLength, status: 400),
    .init(
        rule: "Content-Length with Transfer-Encoding",
        request: "PUT / HTTP/1.1\r\n\(host)Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
        error: .contentLengthWithTransferEncoding, status: 400),
    .init(
        rule: "chunked not the final coding",
        request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked, gzip\r\n\r\n",
        error: .chunkedNotFinal, status: 400),
    .init(
        rule: "chunked applied twice",
        request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        error: .chunkedNotFinal, status: 400),
    .init(
        rule: "empty Transfer-Encoding", request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding:\r\n\r\n",
        error: .chunkedNotFinal, status: 400),
    .init(
        rule: "unknown transfer coding", request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: gzip, chunked\r\n\r\n",
        error: .unsupportedTransferCoding, status: 501),
    .init(
        rule: "Transfer-Encoding in HTTP/1.0", request: "PUT / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
        error: .transferEncodingInHTTP10, status: 400),
    .init(
        rule: "unknown expectation", request: "PUT / HTTP/1.1\r\n\(host)Expect: 200-ok\r\n\r\n",
        error: .unsupportedExpectation, status: 417),
    .init(
        rule: "Content-Length over the body limit", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: 65537\r\n\r\n",
        error: .contentTooLarge, status: 413),
    .init(
        rule: "Content-Length beyond Int",
        request: "PUT / HTTP/1.1\r\n\(host)Content-Length: 99999999999999999999999\r\n\r\n",
        error: .contentTooLarge, status: 413),
    .init(
        rule: "chunk size over the body limit",
        request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n10001\r\n",
        error: .contentTooLarge, status: 413),
    // Chunked body.
    .init(
        rule: "chunk size not hexadecimal",
        request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\nzz\r\n",
        error: .invalidChunkSize, status: 400),
    .init(
        rule: "chunk extension without a size",
        request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n;a=b\r\n",
        error: .invalidChunkSize, status: 400),
    .init(
        rule: "junk after the chunk size", request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n5x\r\n",
        error: .invalidChunkSize, status: 400),
    .init(
        rule: "control byte in a chunk extension",
        request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n5;a\u{1}\r\n", error: .invalidChunkSize,
        status: 400),
    .init(
        rule: "chunk line longer than the limit",
        request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n5;" + String(repeating: "a", count: 300)
            + "\r\n",
        error: .chunkLineTooLong, status: 400),
    .init(
        rule: "chunk data not followed by CRLF",
        request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n5\r\nhelloX",
        error: .chunkDataNotTerminated, status: 400),
    .init(
        rule: "bare CR after chunk data",
        request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n5\r\nhello\rX", error: .bareCarriageReturn,
        status: 400),
    .init(
        rule: "obs-fold in a trailer",
        request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n0\r\nA: b\r\n c\r\n\r\n",
        error: .obsoleteLineFolding, status: 400),
    .init(
        rule: "whitespace before the colon in a trailer",
        request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n0\r\nA : b\r\n\r\n",
        error: .whitespaceBeforeColon, status: 400),
    .init(
        rule: "trailer section larger than the limit",
        request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n0\r\nA: "
            + String(repeating: "b", count: 4100) + "\r\n\r\n",
        error: .headerSectionTooLarge, status: 431),
]

@Suite("Malformed requests: one row per broken rule", .tags(.unit))
struct MalformedRequestTests {
    @Test(arguments: malformedRequests)
    func isRejectedWithTheRuleAndStatus(_ row: MalformedRequest) {
        let input = bytes(row.request)
        var reader = HTTPRequestReader()
        let batch = reader.readAll(in: input.span)
        #expect(batch.requests.isEmpty)
        #expect(batch.error == row.error)
        #expect(row.error.status.code == row.status)
    }

    /// Every error case has at least one row, so each rule is pinned by a request.
    @Test func everyErrorHasARow() {
        let covered = Set(malformedRequests.map(\.error))
        let missing = HTTPRequestError.allCases.filter { !covered.contains($0) }
        #expect(missing.isEmpty, "no malformed-request row for \(missing)")
    }

    /// The head-only rows are rejected the same way byte by byte: a prefix never throws a
    /// different error, and the first prefix that throws throws the row's error.
    @Test(arguments: malformedRequests)
    func prefixesNeedMoreOrThrowTheSameError(_ row: MalformedRequest) {
        let input = bytes(row.request)
        guard input.count < 600 else { return }
        for length in 0...input.count {
            let prefix = Array(input[0..<length])
            var reader = HTTPRequestReader()
            let batch = reader.readAll(in: prefix.span)
            if let error = batch.error {
                #expect(error == row.error, "prefix of \(length) bytes")
                return
            }
        }
    }

    @Test func everyErrorHasAMessage() {
        for error in HTTPRequestError.allCases {
            #expect(!error.message.isEmpty)
            #expect([400, 413, 414, 417, 431, 501, 505].contains(error.status.code))
        }
    }
}
