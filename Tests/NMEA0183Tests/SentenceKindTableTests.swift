// The sentence kind table (`SentenceKind.row`): every kind but `.unknown` has one row, the rows
// recognise their own tags and no other's, the dispatcher applies each row's minimum field count,
// and each row's time field is where its decoder finds the time.
@testable import NMEA0183
import TestSupport
import Testing

extension NMEAMessage {
    /// The time the decoder read: `.some(time)` for kinds whose payload has a time field, `nil`
    /// for the others.
    var decodedTime: NMEATime?? {
        switch self {
        case .gga(let m): .some(m.time)
        case .gns(let m): .some(m.time)
        case .rmc(let m): .some(m.time)
        case .gll(let m): .some(m.time)
        case .gst(let m): .some(m.time)
        case .zda(let m): .some(m.time)
        case .ptnlGGK(let m): .some(m.time)
        case .vtg, .gsa, .gsv, .hdt: nil
        }
    }
}

@Suite("Sentence kind table", .tags(.unit))
struct SentenceKindTableTests {
    /// A sentence with the row's tag and `fields` fields in all (empty ones after the tag).
    static func line(_ tag: SentenceTag, fields: Int) -> [UInt8] {
        let head: String
        var tagFields: Int
        switch tag {
        case .standard(let formatter):
            head = "GP\(formatter)"
            tagFields = 1
        case .proprietary(let address, let id?):
            head = "\(address),\(id)"
            tagFields = 2
        case .proprietary(let address, nil):
            head = "\(address)"
            tagFields = 1
        }
        precondition(fields >= tagFields)
        return TestLine.sentence(head + String(repeating: ",", count: fields - tagFields))
    }

    @Test func everyKindButUnknownHasARow() {
        for kind in SentenceKind.allCases {
            #expect((kind.row == nil) == (kind == .unknown), "\(kind)")
        }
    }

    /// Other tables index by the raw value and size by `allCases.count` (GNSS's occurrences).
    @Test func rawValuesAreThePositionsInAllCases() {
        for (index, kind) in SentenceKind.allCases.enumerated() {
            #expect(kind.rawValue == index, "\(kind)")
        }
    }

    @Test func tagsAreDistinct() {
        let tags = SentenceKind.allCases.compactMap { $0.row.map { "\($0.tag)" } }
        #expect(Set(tags).count == tags.count, "\(tags)")
    }

    @Test(arguments: SentenceKind.allCases.filter { $0 != .unknown })
    func eachRowRecognisesItsTag(_ kind: SentenceKind) throws {
        let row = try #require(kind.row)
        let line = Self.line(row.tag, fields: row.minimumFields)
        let sentence = try NMEASentence(validating: line.span)
        #expect(sentence.kind == kind, "\(TestLine.text(line))")
    }

    @Test(arguments: SentenceKind.allCases.filter { $0 != .unknown })
    func fewerFieldsThanTheRowsMinimumAreRefused(_ kind: SentenceKind) throws {
        let row = try #require(kind.row)
        let line = Self.line(row.tag, fields: row.minimumFields - 1)
        let sentence = try NMEASentence(validating: line.span)
        #expect(sentence.kind == kind)
        #expect(throws: NMEAError.tooFewFields(needed: row.minimumFields, found: row.minimumFields - 1)) {
            _ = try NMEAMessage(sentence)
        }
    }

    /// A real sentence of every kind with a row (DecoderTests' base rows).
    static let samples: [(String, SentenceKind)] = [
        (DecoderTests.ggaBody, .gga), (DecoderTests.gnsBody, .gns), (DecoderTests.rmcBody, .rmc),
        (DecoderTests.gllBody, .gll), (DecoderTests.vtgBody, .vtg), (DecoderTests.gsaBody, .gsa),
        (DecoderTests.gsvBody, .gsv), (DecoderTests.gstBody, .gst), (DecoderTests.zdaBody, .zda),
        (DecoderTests.hdtBody, .hdt), (DecoderTests.ggkBody, .ptnlGGK),
    ]

    @Test func everyRowHasASample() {
        let sampled = Set(Self.samples.map(\.1))
        for kind in SentenceKind.allCases where kind.row != nil {
            #expect(sampled.contains(kind), "add a sentence of \(kind) to `samples`")
        }
    }

    /// What the row's time field holds is what the decoder read as the time, and kinds without a
    /// time field decode none.
    @Test(arguments: samples)
    func timeFieldIsWhereTheDecoderReadsTheTime(_ body: String, _ kind: SentenceKind) throws {
        let line = TestLine.sentence(body)
        let sentence = try NMEASentence(validating: line.span)
        #expect(sentence.kind == kind)
        let row = try #require(kind.row)
        let message = try NMEAMessage(sentence)
        if let timeField = row.timeField {
            let time = try #require(try sentence.time(timeField), "the sample must carry a time")
            #expect(message.decodedTime == .some(time))
        } else {
            #expect(message.decodedTime == nil)
        }
    }
}
