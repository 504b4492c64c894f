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

    /// Decodes a validated sentence with the decoder its kind selects.
    /// - Throws: `NMEAError.unsupportedSentence` for kinds without a decoder (callers count
    ///   these), or the decoder's error for a malformed field.
    public init(_ s: borrowing NMEASentence) throws(NMEAError) {
        switch s.kind {
        case .gga: self = .gga(try GGA(s))
        case .gns: self = .gns(try GNS(s))
        case .rmc: self = .rmc(try RMC(s))
        case .gll: self = .gll(try GLL(s))
        case .vtg: self = .vtg(try VTG(s))
        case .gsa: self = .gsa(try GSA(s))
        case .gsv: self = .gsv(try GSV(s))
        case .gst: self = .gst(try GST(s))
        case .zda: self = .zda(try ZDA(s))
        case .hdt: self = .hdt(try HDT(s))
        case .ptnlGGK: self = .ptnlGGK(try PTNLGGK(s))
        case .unknown: throw .unsupportedSentence
        }
    }
}
