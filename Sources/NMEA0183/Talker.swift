/// The talker of a sentence: the first two letters of a standard address.
public enum Talker: Sendable, Equatable, Hashable {
    case gps  // GP
    case glonass  // GL
    case galileo  // GA
    case beidou  // GB, or BD before NMEA 4.11
    case qzss  // GQ, or QZ in older receivers
    case navic  // GI (IRNSS)
    case combined  // GN: a multi-constellation solution
    /// Any other two-letter talker, packed as first << 8 | second (e.g. `II`, `EC`).
    case other(UInt16)
    /// Proprietary sentences: the address starts with `P` (`PTNL`, `PGRME`, `PUBX`).
    case proprietary

    public init(first: UInt8, second: UInt8) {
        switch (first, second) {
        case (UInt8(ascii: "G"), UInt8(ascii: "P")): self = .gps
        case (UInt8(ascii: "G"), UInt8(ascii: "L")): self = .glonass
        case (UInt8(ascii: "G"), UInt8(ascii: "A")): self = .galileo
        case (UInt8(ascii: "G"), UInt8(ascii: "B")), (UInt8(ascii: "B"), UInt8(ascii: "D")): self = .beidou
        case (UInt8(ascii: "G"), UInt8(ascii: "Q")), (UInt8(ascii: "Q"), UInt8(ascii: "Z")): self = .qzss
        case (UInt8(ascii: "G"), UInt8(ascii: "I")): self = .navic
        case (UInt8(ascii: "G"), UInt8(ascii: "N")): self = .combined
        default: self = .other(UInt16(first) << 8 | UInt16(second))
        }
    }
}

/// The sentences with typed decoders. Everything else is `.unknown`: counted, not an error.
public enum SentenceKind: Sendable, Equatable, Hashable, CaseIterable {
    case gga, gns, rmc, gll, vtg, gsa, gsv, gst, zda, hdt
    /// Trimble `$PTNL,GGK`: time, position, quality and ellipsoidal height.
    case ptnlGGK
    case unknown

    /// Kind from the three-letter sentence formatter of a standard address.
    init(formatter a: UInt8, _ b: UInt8, _ c: UInt8) {
        switch (a, b, c) {
        case (UInt8(ascii: "G"), UInt8(ascii: "G"), UInt8(ascii: "A")): self = .gga
        case (UInt8(ascii: "G"), UInt8(ascii: "N"), UInt8(ascii: "S")): self = .gns
        case (UInt8(ascii: "R"), UInt8(ascii: "M"), UInt8(ascii: "C")): self = .rmc
        case (UInt8(ascii: "G"), UInt8(ascii: "L"), UInt8(ascii: "L")): self = .gll
        case (UInt8(ascii: "V"), UInt8(ascii: "T"), UInt8(ascii: "G")): self = .vtg
        case (UInt8(ascii: "G"), UInt8(ascii: "S"), UInt8(ascii: "A")): self = .gsa
        case (UInt8(ascii: "G"), UInt8(ascii: "S"), UInt8(ascii: "V")): self = .gsv
        case (UInt8(ascii: "G"), UInt8(ascii: "S"), UInt8(ascii: "T")): self = .gst
        case (UInt8(ascii: "Z"), UInt8(ascii: "D"), UInt8(ascii: "A")): self = .zda
        case (UInt8(ascii: "H"), UInt8(ascii: "D"), UInt8(ascii: "T")): self = .hdt
        default: self = .unknown
        }
    }
}
