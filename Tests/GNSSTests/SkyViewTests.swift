// SkyView keeps each satellite packed in one word and finds it through a hash index: whatever
// the sequence of merges, removals and use marks, it must hold what a plain list of `Satellite`
// values with the same rules holds, in the same order.
import GNSS
import TestSupport
import Testing

/// The sky view's rules on a plain array: the reference the packed, indexed one must match.
private struct ReferenceSky {
    var satellites: [Satellite] = []
    var overflowed = 0

    mutating func merge(_ satellite: Satellite) {
        if let i = satellites.firstIndex(where: { $0.id == satellite.id && $0.constellation == satellite.constellation }
        ) {
            if let elevation = satellite.elevation { satellites[i].elevation = elevation }
            if let azimuth = satellite.azimuth { satellites[i].azimuth = azimuth }
            if let snr = satellite.snr { satellites[i].snr = max(snr, satellites[i].snr ?? 0) }
            if satellite.used { satellites[i].used = true }
        } else if satellites.count < SkyView.capacity {
            satellites.append(satellite)
        } else {
            overflowed += 1
        }
    }

    mutating func markUsed(_ id: UInt16, in constellation: Constellation) -> Bool {
        guard let i = satellites.firstIndex(where: { $0.id == id && $0.constellation == constellation }) else {
            return false
        }
        satellites[i].used = true
        return true
    }
}

@Suite("SkyView", .tags(.unit))
struct SkyViewTests {
    /// Every field survives packing, at its extremes and unknown.
    @Test func packingKeepsEveryField() {
        let cases = [
            Satellite(id: 0, constellation: .gps),
            Satellite(id: 65_535, constellation: .irnss, elevation: -32_768, azimuth: 32_767, snr: 255, used: true),
            Satellite(id: 1, constellation: .glonass, elevation: -1, azimuth: nil, snr: 0, used: false),
            Satellite(id: 300, constellation: .beidou, elevation: nil, azimuth: -32_768, snr: nil, used: true),
        ]
        for satellite in cases {
            #expect(Satellite(packed: satellite.packed) == satellite)
            #expect(Satellite.id(satellite.packed) == satellite.id)
            #expect(Satellite.snr(satellite.packed) == satellite.snr)
        }
        // Unequal satellites, unequal words; an SNR change alone is told apart.
        let a = Satellite(id: 7, constellation: .gps, elevation: 10, azimuth: 20, snr: 30)
        var b = a
        b.snr = 31
        #expect(a.packed != b.packed)
        #expect(Satellite.differInSNROnly(a.packed, b.packed))
        b.azimuth = 21
        #expect(!Satellite.differInSNROnly(a.packed, b.packed))
    }

    /// Random merges (new satellites, other signals of known ones, past the capacity), whole
    /// constellations replaced, use marks set and cleared: the same satellites, in the same
    /// order, as the plain list.
    @Test(arguments: [11, 12, 13])
    func matchesAPlainList(seed: UInt64) {
        var random = SplitMix64(state: seed)
        func below(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        var sky = SkyView()
        var reference = ReferenceSky()
        for step in 0..<20_000 {
            switch below(20) {
            case 0:
                let constellation = Constellation.allCases[below(Constellation.allCases.count)]
                sky.removeAll(of: constellation)
                reference.satellites.removeAll { $0.constellation == constellation }
            case 1:
                sky.clearUsed()
                for i in reference.satellites.indices { reference.satellites[i].used = false }
            case 2:
                let id = UInt16(below(200)), constellation = Constellation.allCases[below(4)]
                #expect(sky.markUsed(id, in: constellation) == reference.markUsed(id, in: constellation))
            case 3 where below(50) == 0:
                sky.removeAll()
                reference = ReferenceSky()
            default:
                // Few ids and constellations, so that most merges meet a satellite already there.
                let satellite = Satellite(
                    id: UInt16(below(step % 3 == 0 ? 65_536 : 200)), constellation: Constellation.allCases[below(4)],
                    elevation: below(5) == 0 ? nil : Int16(below(180) - 90),
                    azimuth: below(5) == 0 ? nil : Int16(below(360)),
                    snr: below(4) == 0 ? nil : UInt8(below(256)), used: below(3) == 0)
                sky.merge(satellite)
                reference.merge(satellite)
            }
            #expect(sky.count == reference.satellites.count, "seed \(seed), step \(step)")
            guard sky.count == reference.satellites.count else { return }
            if step % 97 == 0 || step > 19_900 {
                for i in 0..<sky.count {
                    #expect(sky[i] == reference.satellites[i], "seed \(seed), step \(step), #\(i)")
                }
                for satellite in reference.satellites.prefix(20) {
                    #expect(
                        sky.index(of: satellite.id, in: satellite.constellation)
                            == reference.satellites.firstIndex {
                                $0.id == satellite.id && $0.constellation == satellite.constellation
                            })
                }
            }
        }
        #expect(sky.overflowed == reference.overflowed)
        #expect(sky.usedCount == reference.satellites.filter(\.used).count)
    }
}
