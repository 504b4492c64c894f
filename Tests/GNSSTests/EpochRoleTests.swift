// The epoch rules' table (`SentenceKind.epochRole`, the GNSS half of a sentence kind's row) against
// NMEA0183's (`SentenceKind.row`), and the per-kind table the assembler sizes by hand.
@testable import GNSS
import NMEA0183
import TestSupport
import Testing

@Suite("Epoch roles of the sentence kinds", .tags(.unit))
struct EpochRoleTests {
    /// Every talker slot, by a talker that lands in it.
    static let talkers: [Talker] = [
        .gps, .glonass, .galileo, .beidou, .qzss, .navic, .combined, .other(0x4949), .proprietary,
    ]

    /// Swift's InlineArray takes a literal size, so `PendingCycle.Occurrences` spells out
    /// `SentenceKind.allCases.count × TalkerSlot.count`: adding a kind or a talker slot must grow it.
    @Test func occurrenceTableHasACountForEveryKindAndTalker() {
        #expect(PendingCycle.Occurrences.count == SentenceKind.allCases.count * TalkerSlot.count)
        #expect(Set(Self.talkers.map { TalkerSlot($0).index }) == Set(0..<TalkerSlot.count))
        var indices = Set<Int>()
        for kind in SentenceKind.allCases {
            for talker in Self.talkers {
                let index = PendingCycle.occurrenceIndex(kind, TalkerSlot(talker))
                #expect((0..<PendingCycle.Occurrences.count).contains(index), "\(kind) \(talker)")
                indices.insert(index)
            }
        }
        #expect(indices.count == SentenceKind.allCases.count * TalkerSlot.count, "one count per kind and talker slot")
    }

    /// A ranked kind is ranked by its position and time, and ZDA's role is its time: each needs a
    /// time field in its NMEA0183 row. Ranks are distinct, so "most precise" is never a tie.
    @Test func rolesAgreeWithTheNMEARows() {
        var ranks: [Int: SentenceKind] = [:]
        for kind in SentenceKind.allCases {
            let role = kind.epochRole
            guard let row = kind.row else {
                let neutral = role.rank == 0 && !role.datesOnly && role.repeats == .startNextCycle
                #expect(neutral, "\(kind) is never assembled")
                continue
            }
            if role.rank > 0 || role.datesOnly {
                #expect(row.timeField != nil, "\(kind) has a role that needs its time")
            }
            #expect(!(role.rank > 0 && role.datesOnly), "\(kind): a position sentence's time places its cycle")
            if role.rank > 0 {
                #expect(ranks[role.rank] == nil, "\(kind) and \(ranks[role.rank].map { "\($0)" } ?? "") share a rank")
                ranks[role.rank] = kind
            }
        }
    }

    /// The ranks the merges use, in the order docs/nmea.md gives them.
    @Test func positionSentencesRankByPrecision() {
        let order: [SentenceKind] = [.ptnlGGK, .gga, .gns, .rmc, .gll]
        let ranks = order.map(\.epochRole.rank)
        #expect(ranks == ranks.sorted(by: >) && ranks.allSatisfy { $0 > 0 }, "\(ranks)")
        for kind in SentenceKind.allCases where !order.contains(kind) {
            #expect(kind.epochRole.rank == 0, "\(kind)")
        }
    }
}
