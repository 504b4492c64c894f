import Testing

@testable import HTTP1

/// The UTF-8 bytes of `text` (requests in tests are written with explicit `\r\n`).
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Parses `text` as a request head from its first byte.
func parseHead(_ text: String) throws(HTTPRequestError) -> HTTPRequestHead.ParseResult {
    let input = bytes(text)
    return try HTTPRequestHead.parse(input.span)
}

/// Parses `text`, requiring a complete head.
func completeHead(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPRequestHead {
    let result = try parseHead(text)
    guard case .complete(let head, _) = result else {
        Issue.record("expected a complete head, got \(result)", sourceLocation: sourceLocation)
        throw Incomplete()
    }
    return head
}

struct Incomplete: Error {}

/// The error `text` is rejected with, or nil if it parses (or needs more).
func rejection(_ text: String) -> HTTPRequestError? {
    do {
        _ = try parseHead(text)
        return nil
    } catch {
        return error
    }
}

/// The bytes of `span` as a String.
func string(_ span: Span<UInt8>) -> String {
    var copy: [UInt8] = []
    for i in span.indices { copy.append(span[i]) }
    return String(decoding: copy, as: UTF8.self)
}

/// The bytes of an optional span as a String, or nil.
func optionalString(_ span: Span<UInt8>?) -> String? {
    guard let span else { return nil }
    return string(span)
}

/// A typical TMM REST request, as the MAUI sample sends it.
let tmmGet =
    "GET /api/v1/positionStream?format=locationV2 HTTP/1.1\r\n"
    + "Host: localhost:9637\r\n"
    + "Authorization: Basic /T6VQF4SQ/Ix/H8ZfFOrSEzj8qpHsFmA3ug569bPpV0=\r\n"
    + "Accept: application/json\r\n"
    + "\r\n"
