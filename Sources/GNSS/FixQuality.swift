/// The kind of solution a receiver reports, normalised across GGA, GNS and Trimble GGK.
///
/// GGA and GGK number their qualities differently (GGK: 3 is RTK fixed, 2 is RTK float), so both
/// are mapped onto this one enum, and TMM's `diffStatus` is derived from it in one place.
public enum FixQuality: UInt8, Sendable, Equatable, CaseIterable {
    case noFix
    case autonomous
    case dgps
    case pps
    case rtkFixed
    case rtkFloat
    case estimated
    case manual
    case simulated

    /// GGA field 6 (NMEA 0183 4.11): 0 invalid, 1 GPS, 2 DGPS, 3 PPS, 4 RTK fixed, 5 RTK float,
    /// 6 estimated (dead reckoning), 7 manual input, 8 simulator. Unknown values are `nil`.
    public init?(ggaQuality: UInt8) {
        switch ggaQuality {
        case 0: self = .noFix
        case 1: self = .autonomous
        case 2: self = .dgps
        case 3: self = .pps
        case 4: self = .rtkFixed
        case 5: self = .rtkFloat
        case 6: self = .estimated
        case 7: self = .manual
        case 8: self = .simulated
        default: return nil
        }
    }

    /// Trimble `$PTNL,GGK` field 8: 0 none, 1 autonomous, 2 RTK float, 3 RTK fixed, 4 DGPS,
    /// 5 SBAS, 6 network RTK float 3D, 7 network RTK fixed 3D, 8 network RTK float 2D,
    /// 9 network RTK fixed 2D, 10 OmniSTAR HP/XP, 11 OmniSTAR VBS, 12 location RTK,
    /// 13 beacon DGPS. SBAS, VBS and beacon are differential code solutions (DGPS); OmniSTAR
    /// HP/XP converges like a float solution; location RTK is an RTK fixed solution.
    public init?(ggkQuality: UInt8) {
        switch ggkQuality {
        case 0: self = .noFix
        case 1: self = .autonomous
        case 2, 6, 8, 10: self = .rtkFloat
        case 3, 7, 9, 12: self = .rtkFixed
        case 4, 5, 11, 13: self = .dgps
        default: return nil
        }
    }

    /// TMM `diffStatus`: 1 autonomous, 2 DGPS, 4 RTK fixed, 5 RTK float; `nil` without a fix.
    /// PPS, dead-reckoning, manual and simulated solutions carry no differential correction,
    /// so they report as autonomous (1); `solutionType` still tells them apart.
    public var diffStatus: Int? {
        switch self {
        case .noFix: nil
        case .autonomous, .pps, .estimated, .manual, .simulated: 1
        case .dgps: 2
        case .rtkFixed: 4
        case .rtkFloat: 5
        }
    }

    /// TMM `solutionType`. Trimble has not published the enumeration; these are descriptive
    /// names in the style of its example ("RTK Fixed"), documented in docs/protocol-choices.md.
    public var solutionType: String? {
        switch self {
        case .noFix: nil
        case .autonomous: "Autonomous"
        case .dgps: "DGPS"
        case .pps: "PPS"
        case .rtkFixed: "RTK Fixed"
        case .rtkFloat: "RTK Float"
        case .estimated: "Dead Reckoning"
        case .manual: "Manual"
        case .simulated: "Simulated"
        }
    }
}

extension FixQuality {
    /// gpsd's TPV `mode` and `status` (gpsd 3.22, gps.h): no fix below mode 2; status 0 (gpsd
    /// leaves a plain fix's out) and 1 GPS → autonomous, 2 DGPS, 3 RTK fixed, 4 RTK float,
    /// 5 dead reckoning → estimated, 6 GNSS plus dead reckoning → autonomous (a GNSS fix, aided),
    /// 7 time only (surveyed-in position) → manual, 8 simulated, 9 P(Y) code → PPS. Any other
    /// status with a fix is autonomous. docs/input.md has the table.
    public init(gpsdMode mode: Int, status: Int) {
        guard mode >= 2 else {
            self = .noFix
            return
        }
        switch status {
        case 2: self = .dgps
        case 3: self = .rtkFixed
        case 4: self = .rtkFloat
        case 5: self = .estimated
        case 7: self = .manual
        case 8: self = .simulated
        case 9: self = .pps
        default: self = .autonomous
        }
    }
}
