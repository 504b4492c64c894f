/// GSV: satellites in view, up to four per sentence, in a numbered group.
///
/// `$GPGSV,3,1,12,01,24,300,31,03,50,061,38,04,05,152,,06,29,117,29,1*6C`
/// Fields: 1 number of sentences in the group, 2 this sentence's number, 3 satellites in view,
/// then per satellite: id, elevation, azimuth, SNR; a trailing odd field is the NMEA 4.10
/// signal id.
public struct GSV: Sendable, Equatable, SentenceDecoder {
    public struct Entry: Sendable, Equatable {
        public var id: UInt16
        public var elevation: Int16?
        public var azimuth: Int16?
        public var snr: UInt8?
    }

    public var totalSentences: Int
    public var sentenceNumber: Int
    public var satellitesInView: Int?
    public var signalID: UInt8?
    private var storage = InlineArray<4, Entry>(repeating: Entry(id: 0))
    public private(set) var count = 0

    /// Reads the fields of `s`, which has its row's `minimumFields` (`NMEAMessage(_:)` checks).
    init(_ s: borrowing NMEASentence) throws(NMEAError) {
        var c = s.cursor()
        guard let total = try c.integer(), total >= 1, total <= 99 else { throw .invalidField(index: 1) }
        guard let number = try c.integer(), number >= 1, number <= total else { throw .invalidField(index: 2) }
        totalSentences = total
        sentenceNumber = number
        satellitesInView = try c.integer()  // 3

        let satelliteFields = s.fieldCount - 4
        var blocks = satelliteFields / 4
        switch satelliteFields % 4 {
        case 0: break
        case 1:
            let last = s.lastField()
            if let signal = try FieldScan.integer(last, 0, last.count, s.fieldCount - 1).0 {
                guard signal <= 15 else { throw .invalidField(index: s.fieldCount - 1) }
                signalID = UInt8(signal)
            }
        default:
            throw .tooFewFields(needed: 4 + (blocks + 1) * 4, found: s.fieldCount)
        }
        guard blocks <= 4 else { throw .tooManyFields }
        var index = 4
        while blocks > 0 {
            defer {
                index += 4
                blocks -= 1
            }
            guard let id = try c.integer() else {  // empty slot (u-blox pads)
                c.skip()
                c.skip()
                c.skip()
                continue
            }
            guard id <= 999 else { throw .invalidField(index: index) }
            var entry = Entry(id: UInt16(id))
            // Elevation may be negative (below the horizon) on some receivers; whole degrees.
            if let elevation = try c.decimal() {
                guard elevation.scale == 0, elevation.value >= -90, elevation.value <= 90 else {
                    throw .invalidField(index: index + 1)
                }
                entry.elevation = Int16(elevation.value)
            }
            if let azimuth = try c.integer() {
                guard azimuth <= 360 else { throw .invalidField(index: index + 2) }
                entry.azimuth = Int16(azimuth)
            }
            if let snr = try c.integer() {
                guard snr <= 99 else { throw .invalidField(index: index + 3) }
                entry.snr = UInt8(snr)
            }
            storage[count] = entry
            count += 1
        }
    }

    var message: NMEAMessage { .gsv(self) }

    public subscript(i: Int) -> Entry {
        precondition(i >= 0 && i < count, "GSV entry out of range")
        return storage[i]
    }

    public var isLastOfGroup: Bool { sentenceNumber == totalSentences }

    public static func == (a: GSV, b: GSV) -> Bool {
        guard a.totalSentences == b.totalSentences, a.sentenceNumber == b.sentenceNumber,
            a.satellitesInView == b.satellitesInView, a.signalID == b.signalID, a.count == b.count
        else { return false }
        for i in 0..<a.count where a.storage[i] != b.storage[i] { return false }
        return true
    }
}
