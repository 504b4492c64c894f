import TestSupport
import Testing

@testable import HTTP1

@Suite("Query parameters and path normalisation", .tags(.unit))
struct QueryAndPathTests {
    /// (query, key, expected decoded value or nil).
    @Test(arguments: [
        ("format=locationV2", "format", "locationV2" as String?),
        ("format=locationV1", "format", "locationV1"),
        ("a=1&format=locationV2&b=2", "format", "locationV2"),
        ("format=first&format=second", "format", "first"),
        ("format=location%56%32", "format", "locationV2"),
        ("format=location%562", "format", "locationV2"),
        ("for%6Dat=locationV2", "format", "locationV2"),  // keys are decoded before comparing
        ("q=a+b", "q", "a b"),
        ("q=a%2Bb", "q", "a+b"),
        ("q=%20%2f%2F", "q", " //"),
        ("q=100%", "q", "100%"),  // bad escapes stay literal (WHATWG)
        ("q=%zz", "q", "%zz"),
        ("q=%4", "q", "%4"),
        ("q=%4g", "q", "%4g"),
        ("q=%%41", "q", "%A"),
        ("q=caf%C3%A9", "q", "caf\u{E9}"),
        ("q=%FF", "q", "\u{FFFD}"),  // not UTF-8: replacement character
        ("q=a=b", "q", "a=b"),  // only the first `=` separates
        ("q", "q", ""),
        ("q=", "q", ""),
        ("&&q=1&&", "q", "1"),
        ("Format=locationV2", "format", nil),  // case-sensitive, as WHATWG
        ("formats=x", "format", nil),
        ("", "format", nil),
        ("=x", "", "x"),
    ])
    func queryValue(_ query: String, _ key: String, _ expected: String?) {
        let input = bytes(query)
        #expect(HTTPQuery.string(of: key, in: input.span) == expected)
    }

    @Test func decodeComponent() {
        #expect(HTTPQuery.decode(bytes("a+b%41%zz%").span) == bytes("a bA%zz%"))
        #expect(HTTPQuery.decode(bytes("").span).isEmpty)
    }

    @Test func headQueryValueWithoutQuery() throws {
        let input = bytes("GET /api/v1/positionStream HTTP/1.1\r\nHost: a\r\n\r\n")
        guard case .complete(let head, _) = try HTTPRequestHead.parse(input.span) else {
            Issue.record("incomplete")
            return
        }
        #expect(head.queryValue("format", in: input.span) == nil)
    }

    /// (path as sent, normalised).
    @Test(arguments: [
        ("/api/v1/receiver", "/api/v1/receiver"),
        ("/api/v1/receiver/", "/api/v1/receiver"),
        ("/API/V1/Receiver", "/api/v1/receiver"),
        ("/api/v1/positionStream", "/api/v1/positionstream"),
        ("/api/v1/receiver//", "/api/v1/receiver/"),  // only one trailing slash is dropped
        ("/", "/"),
        ("", "/"),
        ("//", "/"),
        ("/api/v1/%72eceiver", "/api/v1/receiver"),  // unreserved escapes are decoded
        ("/api/v1/%7Etilde", "/api/v1/~tilde"),
        ("/a%2Fb", "/a%2fb"),  // reserved escapes are not
        ("/a%2fb/", "/a%2fb"),
        ("/a%2F", "/a%2f"),  // an escaped slash at the end is not a trailing slash
        ("/a%zz", "/a%zz"),
        ("/a/../b", "/a/../b"),  // dot segments are not resolved
    ])
    func normalisation(_ raw: String, _ normalized: String) {
        let input = bytes(raw)
        #expect(HTTPPath(normalizing: input.span).description == normalized)
        let selfMatch = HTTPPath(normalizing: input.span).matches(input.span)
        #expect(selfMatch)
    }

    @Test(arguments: [
        ("/api/v1/receiver", "/api/v1/receiver", true),
        ("/api/v1/receiver", "/api/v1/receiver/", true),
        ("/api/v1/receiver/", "/API/V1/RECEIVER", true),
        ("/api/v1/positionStream", "/api/v1/positionstream/", true),
        ("/api/v1/tmmInfo", "/api/v1/tmm%49nfo", true),
        ("/api/v1/receiver", "/api/v1/receivers", false),
        ("/api/v1/receiver", "/api/v1/receive", false),
        ("/api/v1/receiver", "/api/v1/receiver//", false),
        ("/api/v1/receiver", "/api/v1/receiver/x", false),
        ("/api/v1/receiver", "/api/v1%2Freceiver", false),
        ("/", "", true),
        ("/", "/", true),
        ("/", "//", true),
    ])
    func matching(_ route: String, _ raw: String, _ matches: Bool) {
        let input = bytes(raw)
        #expect(HTTPPath(route).matches(input.span) == matches)
        #expect((HTTPPath(route) == HTTPPath(normalizing: input.span)) == matches)
    }
}
