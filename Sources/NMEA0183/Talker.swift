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
