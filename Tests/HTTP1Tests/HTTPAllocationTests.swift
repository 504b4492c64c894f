// The head parser and the request reader allocate nothing for a request with a Content-Length
// body (the head is an inline table of offsets; the body is a view into the caller's buffer).
// Counted with the malloc interposer in an optimized build (`make test` runs suites whose name
// contains "Allocation" with -c release).
import TestSupport
import Testing

@testable import HTTP1

@Suite(
    "HTTP parsing allocates nothing", .tags(.unit),
    .enabled(if: isOptimizedBuild, Comment(rawValue: allocationTestsNeedOptimizedBuild)))
struct HTTPAllocationTests {
    private let pipeline = bytes(
        tmmGet
            + "PUT /api/v1/receiver/ HTTP/1.1\r\nHost: a\r\n"
            + "Content-Type: application/json\r\nContent-Length: 20\r\n\r\n"
            + "{\"isConnected\":true}"
            + "OPTIONS /api/v1/receiver HTTP/1.1\r\nHost: a\r\nOrigin: http://localhost:5173\r\n"
            + "Access-Control-Request-Method: PUT\r\n\r\n")
    private let route = HTTPPath("/api/v1/receiver")

    @Test func parsingRoutingAndReadingAllocateNothing() {
        var requests = 0
        var matched = 0
        var failures = 0
        func pass() {
            var reader = HTTPRequestReader()
            var start = 0
            while true {
                do {
                    guard case .request(let request) = try reader.next(in: pipeline.span, from: start) else { break }
                    requests += 1
                    let head = request.head
                    if head.pathMatches(route, in: pipeline.span) { matched += 1 }
                    if head.value(of: "authorization", in: pipeline.span) != nil { matched += 1 }
                    if head.listContains("close", inField: "connection", in: pipeline.span) { matched += 1 }
                    matched += request.body(in: pipeline.span).count
                    start = request.range.upperBound
                } catch {
                    failures += 1
                    break
                }
            }
        }
        pass()  // warm up: lazy globals, metadata
        let allocations = countAllocations {
            for _ in 0..<1000 { pass() }
        }
        #expect(allocations == 0)
        #expect(requests == 3003 && failures == 0)
        #expect(matched == 1001 * (2 + 1 + 20))
    }
}
