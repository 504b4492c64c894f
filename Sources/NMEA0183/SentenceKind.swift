// The sentence kinds NMEA0183 decodes, one row each: how the kind is recognised, how many fields
// it needs, which field holds its UTC time, and its decoder. gpsd keeps the same facts in one
// table (`nmea_phrase[]` in driver_nmea0183.c: name, field count, decoder), minmea in one scan
// format per sentence. What a kind is to an epoch (whose time stamps it, what ends a cycle) is not
// here: that is the GNSS tier's rule, in its own table keyed by the same kind (`EpochRole`).
//
// Adding a kind: its `case` in `SentenceKind`, its row in `row` and its payload in `NMEAMessage`
// (all in this file; once the case exists the compiler asks for the row, and GNSS's switches ask
// for its epoch role and its merge), and its decoder in `Sentences/`, a `SentenceDecoder`.

/// The sentences with typed decoders. Everything else is `.unknown`: counted, not an error.
///
/// The raw value is the kind's index, in declaration order: tables kept per kind elsewhere (the
/// epoch assembler's occurrence counts) are indexed by it and sized by `allCases.count`.
public enum SentenceKind: Int, Sendable, Equatable, Hashable, CaseIterable {
    case gga, gns, rmc, gll, vtg, gsa, gsv, gst, zda, hdt
    /// Trimble `$PTNL,GGK`: time, position, quality and ellipsoidal height.
    case ptnlGGK
    case unknown

    /// The kind's row: nil for `.unknown`, the one kind without a decoder.
    public var row: SentenceRow? { withRow { $0 } }

    /// The table: hands `use` the kind's row (nil for `.unknown`). A function of its user rather
    /// than a property, so that where `use` decodes, each row's decoder is called directly, as the
    /// switch on kinds that decoded before the table did, instead of through its type.
    ///
    /// `minimumFields` counts the address: fields through the last one every receiver sends must be
    /// there, trailing optional ones may be left off (GGA: through the altitude).
    @inline(__always)
    func withRow<Result, Failure: Error>(_ use: (SentenceRow?) throws(Failure) -> Result) throws(Failure) -> Result {
        switch self {
        case .gga: try use(SentenceRow(.standard("GGA"), minimumFields: 10, timeField: 1, GGA.self))
        case .gns: try use(SentenceRow(.standard("GNS"), minimumFields: 10, timeField: 1, GNS.self))
        case .rmc: try use(SentenceRow(.standard("RMC"), minimumFields: 10, timeField: 1, RMC.self))
        case .gll: try use(SentenceRow(.standard("GLL"), minimumFields: 5, timeField: 5, GLL.self))
        case .vtg: try use(SentenceRow(.standard("VTG"), minimumFields: 5, timeField: nil, VTG.self))
        case .gsa: try use(SentenceRow(.standard("GSA"), minimumFields: 18, timeField: nil, GSA.self))
        case .gsv: try use(SentenceRow(.standard("GSV"), minimumFields: 4, timeField: nil, GSV.self))
        case .gst: try use(SentenceRow(.standard("GST"), minimumFields: 9, timeField: 1, GST.self))
        case .zda: try use(SentenceRow(.standard("ZDA"), minimumFields: 5, timeField: 1, ZDA.self))
        case .hdt: try use(SentenceRow(.standard("HDT"), minimumFields: 2, timeField: nil, HDT.self))
        case .ptnlGGK:
            try use(SentenceRow(.proprietary("PTNL", id: "GGK"), minimumFields: 12, timeField: 2, PTNLGGK.self))
        case .unknown: try use(nil)
        }
    }
}

/// A decoded sentence of one of the supported kinds.
public enum NMEAMessage: Sendable, Equatable {
    case gga(GGA)
    case gns(GNS)
    case rmc(RMC)
    case gll(GLL)
    case vtg(VTG)
    case gsa(GSA)
    case gsv(GSV)
    case gst(GST)
    case zda(ZDA)
    case hdt(HDT)
    case ptnlGGK(PTNLGGK)

    /// Decodes a validated sentence with its kind's row.
    /// - Throws: `NMEAError.unsupportedSentence` for kinds without a decoder (callers count
    ///   these), `tooFewFields` below the row's `minimumFields`, or the decoder's error for a
    ///   malformed field.
    public init(_ s: borrowing NMEASentence) throws(NMEAError) {
        self = try s.kind.withRow { row throws(NMEAError) in
            guard let row else { throw .unsupportedSentence }
            return try row.decode(s)
        }
    }
}

/// What NMEA0183 knows of one sentence kind (`SentenceKind.row`).
public struct SentenceRow: Sendable {
    /// How a sentence is recognised as this kind.
    public let tag: SentenceTag
    /// Fields, the address included, below which a sentence of this kind is `tooFewFields`.
    public let minimumFields: Int
    /// The field that holds the UTC time of day (`hhmmss.ss`), nil for kinds without one. Read
    /// without decoding the sentence where only the time is wanted (replay pacing).
    public let timeField: Int?
    /// The kind's decoder. A type rather than a closure, so that a row holds nothing to retain or
    /// release.
    let decoder: any SentenceDecoder.Type

    init(_ tag: SentenceTag, minimumFields: Int, timeField: Int?, _ decoder: any SentenceDecoder.Type) {
        self.tag = tag
        self.minimumFields = minimumFields
        self.timeField = timeField
        self.decoder = decoder
    }

    /// The field count checked, then the decoder.
    @inline(__always)
    func decode(_ s: borrowing NMEASentence) throws(NMEAError) -> NMEAMessage {
        guard s.fieldCount >= minimumFields else { throw .tooFewFields(needed: minimumFields, found: s.fieldCount) }
        return try decoder.message(decoding: s)
    }
}

/// A kind's decoder (`Sentences/`): its payload type, which reads the fields of a sentence whose
/// field count its row has checked.
protocol SentenceDecoder: Sendable {
    /// Reads the fields of `s`, which has its row's `minimumFields`.
    init(_ s: borrowing NMEASentence) throws(NMEAError)
    /// The decoded sentence as the message case that carries it.
    var message: NMEAMessage { get }
    /// `Self(s).message`. A requirement, not only an extension method, so that each decoder's
    /// witness is compiled for its own type (an extension method alone runs generic code).
    static func message(decoding s: borrowing NMEASentence) throws(NMEAError) -> NMEAMessage
}

extension SentenceDecoder {
    @inline(__always)
    static func message(decoding s: borrowing NMEASentence) throws(NMEAError) -> NMEAMessage {
        try Self(s).message
    }
}

/// How a sentence is recognised as a kind, from its address and, for proprietary sentences that
/// carry their sentence id in a field, that field.
public enum SentenceTag: Sendable, CustomStringConvertible {
    /// The three-letter sentence formatter after any two-letter talker: `GGA` in `$GPGGA` and
    /// `$GNGGA`.
    case standard(StaticString)
    /// A proprietary address (`P` and the maker's letters) and, when the maker puts the sentence
    /// id in field 1, that id: Trimble's `$PTNL,GGK`.
    case proprietary(StaticString, id: StaticString?)

    public var description: String {
        switch self {
        case .standard(let formatter): "\(formatter)"
        case .proprietary(let address, let id?): "\(address),\(id)"
        case .proprietary(let address, nil): "\(address)"
        }
    }
}

// MARK: - Recognition

extension SentenceKind {
    /// Kind from the three-letter formatter of a standard address.
    @inline(__always)
    init(formatter a: UInt8, _ b: UInt8, _ c: UInt8) {
        self = Self.tags.kind(formatter: UInt32(a) << 16 | UInt32(b) << 8 | UInt32(c))
    }

    /// Kind of a proprietary sentence from its address (`PTNL`, with the `P`) and its field 1
    /// packed by `SentenceTags.packed` (`id`, asked only when a row has that address and an id).
    static func proprietary(address: Span<UInt8>, id: () -> UInt64?) -> SentenceKind {
        guard let address = SentenceTags.packed(address) else { return .unknown }
        return tags.kind(address: address, id: id)
    }

    /// The rows' tags, packed, built once.
    private static let tags = SentenceTags()
}

/// The rows' tags as integers, for `NMEASentence.kind`, built once from the rows. A standard
/// formatter is found by hashing: one multiply and, almost always, one probe of a small inline
/// table, fewer instructions than the switch on three letters it replaced (a scan of the rows
/// cost more than that switch). A class, so that reading the shared table never copies it (a
/// struct in a global `let` was copied whole for every sentence).
final class SentenceTags: Sendable {
    /// Open addressing with linear probing: a packed formatter (0: empty slot) and its kind. At
    /// most half full (checked when built), so a probe for an unknown formatter soon meets an
    /// empty slot. The slot count must stay a power of two (`slot(_:slots:)`).
    private let keys: InlineArray<64, UInt32>
    private let kinds: InlineArray<64, SentenceKind>
    /// The proprietary rows, in row order: packed address (`PTNL`), packed id (`GGK`; 0: none),
    /// kind.
    private let addresses: InlineArray<8, UInt64>
    private let ids: InlineArray<8, UInt64>
    private let proprietaryKinds: InlineArray<8, SentenceKind>
    private let proprietaryCount: Int

    init() {
        var keys = InlineArray<64, UInt32>(repeating: 0)
        var kinds = InlineArray<64, SentenceKind>(repeating: .unknown)
        var addresses = InlineArray<8, UInt64>(repeating: 0)
        var ids = InlineArray<8, UInt64>(repeating: 0)
        var proprietaryKinds = InlineArray<8, SentenceKind>(repeating: .unknown)
        var proprietaryCount = 0
        var standard = 0
        for kind in SentenceKind.allCases {
            switch kind.row?.tag {
            case .standard(let formatter)?:
                guard let packed = Self.packed(formatter), packed <= 0xFF_FFFF else {
                    preconditionFailure("\(kind): a standard tag is three letters")
                }
                let key = UInt32(packed)
                standard += 1
                precondition(standard * 2 <= keys.count, "SentenceTags: more slots needed for \(kind)")
                var slot = Self.slot(key, slots: keys.count)
                while keys[slot] != 0 {
                    precondition(keys[slot] != key, "\(kind) and \(kinds[slot]) have the same tag")
                    slot = (slot + 1) & (keys.count - 1)
                }
                keys[slot] = key
                kinds[slot] = kind
            case .proprietary(let address, let id)?:
                var idKey: UInt64? = 0  // 0: no id
                if let id { idKey = Self.packed(id) }
                guard let addressKey = Self.packed(address), let idKey else {
                    preconditionFailure("\(kind): a proprietary address or id is at most 8 letters")
                }
                precondition(proprietaryCount < addresses.count, "SentenceTags: more room needed for \(kind)")
                addresses[proprietaryCount] = addressKey
                ids[proprietaryCount] = idKey
                proprietaryKinds[proprietaryCount] = kind
                proprietaryCount += 1
            case nil:
                break
            }
        }
        self.keys = keys
        self.kinds = kinds
        self.addresses = addresses
        self.ids = ids
        self.proprietaryKinds = proprietaryKinds
        self.proprietaryCount = proprietaryCount
    }

    /// The slot a packed formatter hashes to: the top bits of a Fibonacci hash.
    @inline(__always)
    static func slot(_ key: UInt32, slots: Int) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B1) >> UInt32(UInt32.bitWidth - slots.trailingZeroBitCount))
    }

    @inline(__always)
    func kind(formatter key: UInt32) -> SentenceKind {
        var slot = Self.slot(key, slots: keys.count)
        while true {
            let stored = keys[slot]
            if stored == key { return kinds[slot] }
            if stored == 0 { return .unknown }
            slot = (slot &+ 1) & (keys.count &- 1)
        }
    }

    func kind(address: UInt64, id: () -> UInt64?) -> SentenceKind {
        var idKey: UInt64?
        var idRead = false
        for i in 0..<proprietaryCount where addresses[i] == address {
            if ids[i] == 0 { return proprietaryKinds[i] }
            if !idRead {
                idKey = id()
                idRead = true
            }
            if idKey == ids[i] { return proprietaryKinds[i] }
        }
        return .unknown
    }

    /// Up to eight bytes, big-endian in a `UInt64`; nil when longer. Sentence bytes are printable
    /// ASCII (never 0), so two different texts never pack alike, and none packs to 0.
    static func packed(_ bytes: Span<UInt8>) -> UInt64? {
        guard bytes.count <= 8 else { return nil }
        var key: UInt64 = 0
        for i in bytes.indices { key = key << 8 | UInt64(bytes[i]) }
        return key
    }

    static func packed(_ text: StaticString) -> UInt64? {
        let bytes = Array("\(text)".utf8)
        return packed(bytes.span)
    }
}
