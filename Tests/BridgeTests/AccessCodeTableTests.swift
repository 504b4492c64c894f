// The access-code table on its own, with a clock the test moves: the window, a registration
// taking effect at once, the worker keeping up as seconds pass, and a clock jump.
import Posix
import Synchronization
import TLS
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeCore

@Suite("Access-code table", .tags(.integration))
struct AccessCodeTableTests {
    private static let start: Int64 = 1_764_547_200  // 2025-12-01T00:00:00Z

    private func header(_ id: String, _ second: Int64) -> String {
        "Basic " + AccessCodeV1.code(applicationID: id, unixSeconds: second, sha256: Digest.sha256)
    }

    /// Waits until the worker has published the window around `second` (tables for second-1 ... second+2).
    private func waitForWindow(_ table: AccessCodeTable, around second: Int64) -> Bool {
        waitUntil { table.publishedSeconds == Array((second - 1)...(second + 2)) }
    }

    @Test func acceptsTheNeighbouringSecondsOfEveryIdAndNothingElse() throws {
        let ids = generatedIDs(500).map { GUID($0)! }
        let clock = Atomic<Int64>(Self.start * 1000 + 500)
        let table = try AccessCodeTable(ids: ids) { clock.load(ordering: .relaxed) }
        defer { table.stop() }
        #expect(table.publishedSeconds == Array((Self.start - 1)...(Self.start + 2)), "computed before init returns")
        for id in [ids[0], ids[499]] {
            for offset: Int64 in -1...1 {
                #expect(table.verify(headerValue: header(id.canonical, Self.start + offset)) == id)
            }
            #expect(table.verify(headerValue: header(id.canonical, Self.start - 2)) == nil)
            #expect(table.verify(headerValue: header(id.canonical, Self.start + 2)) == nil)
        }
        #expect(table.verify(headerValue: header(testAppID, Self.start)) == nil, "not registered")

        // A registration counts at once, for every second already published.
        let added = GUID(testAppID)!
        table.add(added)
        #expect(table.verify(headerValue: header(testAppID, Self.start + 1)) == added)

        // Time passes: the worker moves the window on; the old second is gone.
        clock.store((Self.start + 1) * 1000 + 500, ordering: .relaxed)
        #expect(waitForWindow(table, around: Self.start + 1))
        #expect(table.verify(headerValue: header(ids[7].canonical, Self.start + 2)) == ids[7])
        #expect(table.verify(headerValue: header(testAppID, Self.start + 2)) == added, "the worker kept the added id")
        #expect(table.verify(headerValue: header(ids[7].canonical, Self.start - 1)) == nil)
    }

    /// After a clock jump the worker catches up within a second; meanwhile a small registry is
    /// checked inline, a large one refused (never 3 × N digests on the io thread).
    @Test func aClockJumpIsCaughtUp() throws {
        let few = [GUID(testAppID)!]
        let clock = Atomic<Int64>(Self.start * 1000)
        let small = try AccessCodeTable(ids: few) { clock.load(ordering: .relaxed) }
        defer { small.stop() }
        let jumped = Self.start + 3600
        clock.store(jumped * 1000, ordering: .relaxed)
        #expect(small.verify(headerValue: header(testAppID, jumped)) == few[0])
        #expect(waitForWindow(small, around: jumped))

        let many = generatedIDs(AccessCodeTable.inlineLimit + 1).map { GUID($0)! }
        let largeClock = Atomic<Int64>(Self.start * 1000)
        let large = try AccessCodeTable(ids: many) { largeClock.load(ordering: .relaxed) }
        defer { large.stop() }
        largeClock.store(jumped * 1000, ordering: .relaxed)
        #expect(waitForWindow(large, around: jumped))
        #expect(large.verify(headerValue: header(many[3].canonical, jumped)) == many[3])
    }
}
