import TestSupport
import Testing

@testable import HTTP1

@Suite("Response writer and status codes", .tags(.unit))
struct ResponseWriterTests {
    private let date = "Thu, 22 Feb 2024 18:00:00 GMT"

    private func text(_ writer: HTTPResponseWriter) -> String { String(decoding: writer.bytes, as: UTF8.self) }

    @Test func jsonResponseKeptAlive() {
        var writer = HTTPResponseWriter()
        let body = bytes("{\"port\":9639}")
        writer.writeResponse(
            .ok, date: date, contentType: "application/json", body: body.span, keepAlive: true,
            cors: .allowAnyOrigin)
        #expect(
            text(writer) == "HTTP/1.1 200 OK\r\n"
                + "Date: Thu, 22 Feb 2024 18:00:00 GMT\r\n"
                + "Access-Control-Allow-Origin: *\r\n"
                + "Content-Type: application/json\r\n"
                + "Content-Length: 13\r\n"
                + "\r\n"
                + "{\"port\":9639}")
    }

    @Test func preflight() {
        var writer = HTTPResponseWriter()
        writer.writeResponse(
            .noContent, date: date, body: Span(), keepAlive: true,
            cors: .preflight(maxAgeSeconds: HTTPCORSHeaders.defaultMaxAge))
        #expect(
            text(writer) == "HTTP/1.1 204 No Content\r\n"
                + "Date: Thu, 22 Feb 2024 18:00:00 GMT\r\n"
                + "Access-Control-Allow-Origin: *\r\n"
                + "Access-Control-Allow-Methods: GET, PUT, OPTIONS\r\n"
                + "Access-Control-Allow-Headers: Authorization, Content-Type\r\n"
                + "Access-Control-Max-Age: 600\r\n"
                + "Access-Control-Allow-Private-Network: true\r\n"
                + "\r\n")
    }

    @Test func aListedOriginIsEchoedWithVary() {
        var writer = HTTPResponseWriter()
        writer.writeResponse(
            .ok, date: date, body: bytes("pong").span, keepAlive: true,
            cors: .allowOrigin("https://app.example"))
        #expect(
            text(writer) == "HTTP/1.1 200 OK\r\n"
                + "Date: Thu, 22 Feb 2024 18:00:00 GMT\r\n"
                + "Access-Control-Allow-Origin: https://app.example\r\n"
                + "Vary: Origin\r\n"
                + "Content-Length: 4\r\n"
                + "\r\n"
                + "pong")
        writer.removeAll()
        writer.writeResponse(
            .noContent, date: date, body: Span(), keepAlive: true,
            cors: .preflightForOrigin("http://localhost:8080", maxAgeSeconds: 600))
        #expect(
            text(writer) == "HTTP/1.1 204 No Content\r\n"
                + "Date: Thu, 22 Feb 2024 18:00:00 GMT\r\n"
                + "Access-Control-Allow-Origin: http://localhost:8080\r\n"
                + "Access-Control-Allow-Methods: GET, PUT, OPTIONS\r\n"
                + "Access-Control-Allow-Headers: Authorization, Content-Type\r\n"
                + "Access-Control-Max-Age: 600\r\n"
                + "Access-Control-Allow-Private-Network: true\r\n"
                + "Vary: Origin\r\n"
                + "\r\n")
        writer.removeAll()
        writer.writeResponse(.forbidden, date: nil, body: Span(), keepAlive: false, cors: .varyOrigin)
        #expect(
            text(writer) == "HTTP/1.1 403 Forbidden\r\nVary: Origin\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    }

    @Test func closeAndHTTP10KeepAlive() {
        var writer = HTTPResponseWriter()
        writer.writeResponse(.ok, date: nil, body: bytes("pong").span, keepAlive: false)
        #expect(text(writer) == "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\npong")
        writer.removeAll()
        writer.writeResponse(
            .ok, date: nil, contentType: "text/plain", body: bytes("pong").span, keepAlive: true,
            requestVersion: .http1_0)
        #expect(
            text(writer)
                == """
                HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\
                Connection: keep-alive\r\n\r\npong
                """
        )
    }

    @Test func headResponseHasTheLengthButNoBody() {
        var writer = HTTPResponseWriter()
        writer.writeResponse(
            .ok, date: nil, contentType: "application/json", body: bytes("{}").span, keepAlive: true,
            isHeadRequest: true)
        #expect(text(writer) == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n")
    }

    @Test func emptyBodyHasNoContentType() {
        var writer = HTTPResponseWriter()
        writer.writeResponse(.ok, date: nil, contentType: "application/json", body: Span(), keepAlive: true)
        #expect(text(writer) == "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    }

    @Test func methodNotAllowedWithAllow() {
        var writer = HTTPResponseWriter()
        writer.writeError(
            .methodNotAllowed, message: "use GET or PUT", date: date, keepAlive: true,
            cors: .allowAnyOrigin, extraHeaders: [("Allow", "GET, PUT, OPTIONS")])
        let body = "{\"error\":\"use GET or PUT\",\"Reason\":\"use GET or PUT\"}"
        #expect(
            text(writer) == "HTTP/1.1 405 Method Not Allowed\r\n"
                + "Date: Thu, 22 Feb 2024 18:00:00 GMT\r\n"
                + "Access-Control-Allow-Origin: *\r\n"
                + "Allow: GET, PUT, OPTIONS\r\n"
                + "Content-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n"
                + "\r\n" + body)
    }

    @Test func parserErrorClosesTheConnection() {
        var writer = HTTPResponseWriter()
        writer.writeError(.whitespaceBeforeColon, date: date)
        let message = HTTPRequestError.whitespaceBeforeColon.message
        let body = "{\"error\":\"\(message)\",\"Reason\":\"\(message)\"}"
        #expect(
            text(writer) == "HTTP/1.1 400 Bad Request\r\n"
                + "Date: Thu, 22 Feb 2024 18:00:00 GMT\r\n"
                + "Content-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n"
                + "\r\n" + body)
    }

    @Test func statusesOfParserErrors() {
        var writer = HTTPResponseWriter()
        writer.writeError(.headerSectionTooLarge, date: nil)
        #expect(text(writer).hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
        writer.removeAll()
        writer.writeError(.unsupportedVersion, date: nil)
        #expect(text(writer).hasPrefix("HTTP/1.1 505 HTTP Version Not Supported\r\n"))
        writer.removeAll()
        writer.writeError(.targetTooLong, date: nil)
        #expect(text(writer).hasPrefix("HTTP/1.1 414 URI Too Long\r\n"))
    }

    @Test func jsonEscaping() {
        #expect(HTTPResponseWriter.jsonEscaped("a\"b\\c\nd\u{1}é") == "a\\\"b\\\\c\\nd\\u0001é")
    }

    @Test func continueAndSwitchingProtocols() {
        var writer = HTTPResponseWriter()
        writer.writeContinue()
        #expect(text(writer) == "HTTP/1.1 100 Continue\r\n\r\n")
        writer.removeAll()
        writer.writeStatusLine(.switchingProtocols)
        writer.writeHeader("Upgrade", "websocket")
        writer.writeHeader("Connection", "Upgrade")
        writer.writeHeader("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        writer.endHead()
        #expect(
            text(writer) == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
        // 1xx never gets Content-Length, even through writeResponse.
        writer.removeAll()
        writer.writeResponse(.switchingProtocols, date: nil, body: bytes("x").span, keepAlive: true)
        #expect(text(writer) == "HTTP/1.1 101 Switching Protocols\r\n\r\n")
    }

    @Test func bufferIsReused() {
        var writer = HTTPResponseWriter(capacity: 256)
        writer.writeResponse(.ok, date: date, body: bytes("x").span, keepAlive: true)
        let capacity = writer.bytes.capacity
        writer.removeAll()
        #expect(writer.bytes.isEmpty && writer.bytes.capacity == capacity)
    }

    @Test(arguments: [
        (HTTPStatus.continue, "Continue"), (.switchingProtocols, "Switching Protocols"), (.ok, "OK"),
        (.created, "Created"), (.noContent, "No Content"), (.badRequest, "Bad Request"),
        (.unauthorized, "Unauthorized"), (.forbidden, "Forbidden"), (.notFound, "Not Found"),
        (.methodNotAllowed, "Method Not Allowed"), (.requestTimeout, "Request Timeout"), (.conflict, "Conflict"),
        (.lengthRequired, "Length Required"), (.contentTooLarge, "Content Too Large"), (.uriTooLong, "URI Too Long"),
        (.unsupportedMediaType, "Unsupported Media Type"), (.expectationFailed, "Expectation Failed"),
        (.upgradeRequired, "Upgrade Required"), (.requestHeaderFieldsTooLarge, "Request Header Fields Too Large"),
        (.internalServerError, "Internal Server Error"), (.notImplemented, "Not Implemented"),
        (.serviceUnavailable, "Service Unavailable"), (.httpVersionNotSupported, "HTTP Version Not Supported"),
    ])
    func reasonPhrase(_ status: HTTPStatus, _ phrase: String) {
        #expect(status.reasonPhrase == phrase)
        var writer = HTTPResponseWriter()
        writer.writeStatusLine(status)
        #expect(text(writer) == "HTTP/1.1 \(status.code) \(phrase)\r\n")
    }

    @Test func everyStatusIsInTheReasonTable() {
        #expect(HTTPStatus.allCases.count == 23)
        #expect(HTTPStatus.requestTimeout.code == 408 && HTTPStatus.notFound.code == 404)
    }

    @Test(arguments: [
        (Int64(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT"),  // RFC 9110 §5.6.7's example
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (1_708_624_800, "Thu, 22 Feb 2024 18:00:00 GMT"),  // TMM-API.md access-code test vector time
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (4_102_444_799, "Thu, 31 Dec 2099 23:59:59 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
        (253_402_300_799, "Fri, 31 Dec 9999 23:59:59 GMT"),
    ])
    func imfFixdate(_ seconds: Int64, _ text: String) {
        #expect(HTTPDate.imfFixdate(unixSeconds: seconds) == text)
    }
}
