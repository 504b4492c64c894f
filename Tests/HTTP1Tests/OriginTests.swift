// Origins (RFC 6454) as `allowed-origins` entries and `Origin` fields: one normal form for both,
// strict refusals with the reason, the decision per request and the CORS headers it leads to.
import TestSupport
import Testing

@testable import HTTP1

@Suite("Origins and the origin policy", .tags(.unit))
struct OriginTests {
    @Test(arguments: [
        ("https://app.example", "https://app.example"),
        ("HTTPS://App.Example", "https://app.example"),
        ("https://app.example:443", "https://app.example"),
        ("http://app.example:80", "http://app.example"),
        ("http://app.example:443", "http://app.example:443"),
        ("https://app.example:8443", "https://app.example:8443"),
        ("wss://a.example:443", "wss://a.example"),
        ("ws://a.example:80", "ws://a.example"),
        ("http://localhost:8080", "http://localhost:8080"),
        ("http://127.0.0.1:3000", "http://127.0.0.1:3000"),
        ("http://[::1]:8080", "http://[::1]:8080"),
        ("http://[FE80::1]", "http://[fe80::1]"),
        ("chrome-extension://abcdefghijklmnop", "chrome-extension://abcdefghijklmnop"),
        ("moz-extension://2e6f-4c1a", "moz-extension://2e6f-4c1a"),
        ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example"),
        ("null", "null"),
    ])
    func originsParseToTheirSerialization(_ text: String, _ normal: String) throws {
        #expect(try HTTPOrigin(text).serialization == normal)
    }

    @Test(arguments: [
        ("", HTTPOriginError.notSchemeHostPort),
        ("app.example", .notSchemeHostPort),
        ("localhost:8080", .notSchemeHostPort),
        ("https:/app.example", .notSchemeHostPort),
        ("https:app.example", .notSchemeHostPort),
        ("NULL", .notSchemeHostPort),
        ("*", .notSchemeHostPort),
        ("1http://a.example", .invalidScheme),
        ("ht tp://a.example", .invalidScheme),
        ("://a.example", .invalidScheme),
        ("https://app.example/", .hasPath),
        ("https://app.example/index.html", .hasPath),
        ("https://app.example?x=1", .hasPath),
        ("https://app.example#top", .hasPath),
        ("https://user:pw@app.example", .hasUserinfo),
        ("file:///home/me/page.html", .fileScheme),
        ("file://", .fileScheme),
        ("https://", .emptyHost),
        ("https://:443", .emptyHost),
        ("https://app example", .invalidHost),
        ("https://bücher.example", .invalidHost),
        ("https://a%2eexample", .invalidHost),
        ("http://[::1", .invalidHost),
        ("http://[]", .invalidHost),
        ("http://[::g]", .invalidHost),
        ("http://[::1]x", .invalidHost),
        ("https://app.example:", .invalidPort),
        ("https://app.example:0", .invalidPort),
        ("https://app.example:0443", .invalidPort),
        ("https://app.example:65536", .invalidPort),
        ("https://app.example:123456", .invalidPort),
        ("https://app.example:44a", .invalidPort),
        ("https://app.example:-1", .invalidPort),
    ])
    func malformedOriginsAreRefusedWithTheReason(_ text: String, _ expected: HTTPOriginError) {
        #expect(throws: expected) { try HTTPOrigin(text) }
    }

    @Test func everyRefusalSaysWhatAnOriginLooksLike() {
        let all: [HTTPOriginError] = [
            .notSchemeHostPort, .invalidScheme, .hasPath, .hasUserinfo, .fileScheme, .emptyHost,
            .invalidHost, .invalidPort,
        ]
        #expect(Set(all.map(\.description)).count == all.count)
        #expect(HTTPOriginError.fileScheme.description.contains("null"))
    }

    private let listed = HTTPOriginPolicy.only([
        try! HTTPOrigin("https://app.example"), try! HTTPOrigin("http://localhost:8080"),
    ])

    private func decision(_ policy: HTTPOriginPolicy, _ fields: String) throws -> HTTPOriginDecision {
        let text = "GET /api/v1/tmmInfo HTTP/1.1\r\nHost: localhost\r\n" + fields + "\r\n"
        let input = bytes(text)
        guard case .complete(let head, _) = try HTTPRequestHead.parse(input.span) else { throw Incomplete() }
        return policy.decide(head, in: input.span)
    }

    @Test func anyOriginReadsNothing() throws {
        #expect(try decision(.any, "") == .any)
        #expect(try decision(.any, "Origin: https://evil.example\r\n") == .any)
        #expect(try decision(.any, "Origin: not an origin\r\nOrigin: x\r\n") == .any)
        #expect(HTTPOriginPolicy.any.allows(.null))
    }

    @Test func aListAllowsItsOriginsInAnySpellingAndEchoesWhatWasSent() throws {
        #expect(try decision(listed, "") == .absent, "no Origin: a native app or curl")
        #expect(try decision(listed, "Origin: https://app.example\r\n") == .allowed("https://app.example"))
        #expect(try decision(listed, "origin:   HTTPS://APP.example:443  \r\n") == .allowed("HTTPS://APP.example:443"))
        #expect(try decision(listed, "Origin: http://localhost:8080\r\n") == .allowed("http://localhost:8080"))
        #expect(listed.allows(try HTTPOrigin("https://App.Example:443")))
        #expect(!listed.allows(.null), "null only when listed")
        #expect(HTTPOriginPolicy.only([.null]).allows(try HTTPOrigin("null")))
    }

    @Test(arguments: [
        "Origin: https://evil.example\r\n",
        "Origin: http://app.example\r\n",  // another scheme
        "Origin: https://app.example:8443\r\n",  // another port
        "Origin: http://localhost\r\n",
        "Origin: https://app.example.evil.example\r\n",
        "Origin: https://app.example/\r\n",
        "Origin: null\r\n",
        "Origin: \r\n",
        "Origin: https://app.example https://evil.example\r\n",  // RFC 6454's origin-list
        "Origin: https://app.example\r\nOrigin: https://app.example\r\n",  // RFC 6454 §7.3: at most one
    ])
    func aListRefusesEverythingElse(_ fields: String) throws {
        #expect(try decision(listed, fields).isRefused, "\(fields)")
    }

    @Test func decisionsGiveTheirCORSHeaders() {
        #expect(HTTPOriginDecision.any.corsHeaders == .allowAnyOrigin)
        #expect(HTTPOriginDecision.any.preflightHeaders(maxAgeSeconds: 600) == .preflight(maxAgeSeconds: 600))
        #expect(HTTPOriginDecision.allowed("https://a.example").corsHeaders == .allowOrigin("https://a.example"))
        #expect(
            HTTPOriginDecision.allowed("https://a.example").preflightHeaders(maxAgeSeconds: 600)
                == .preflightForOrigin("https://a.example", maxAgeSeconds: 600))
        for decision in [HTTPOriginDecision.absent, .refused("https://evil.example")] {
            #expect(decision.corsHeaders == .varyOrigin)
            #expect(decision.preflightHeaders(maxAgeSeconds: 600) == .varyOrigin)
        }
    }
}
