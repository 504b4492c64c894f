// Every difference between our epochs and gpsd 3.22's reports on the NMEA captures of gpsd's
// regression suite, with its cause (GPSDSuiteComparisonTests asserts them exactly). Regenerate
// the groups with `GPSD_SUITE_PRINT=1 swift test --filter GPSDSuiteComparisonTests/printKnownDifferences`
// after an assembler change; new differences come out as `.todo` and must be given a cause.

/// Why a difference exists: an assembler defect to fix, or an explained, legitimate one.
enum SuiteCause: String, Sendable {
    case todo

    /// Epoch boundary and merge problems of the current EpochAssembler (issue 8).
    var isAssemblerDefect: Bool {
        switch self {
        case .todo: false
        }
    }
}

/// The 100 captures scripts/fetch-gpsd-suite.sh selects (rule 2).
let gpsdSuiteCaptures: [String] = []

/// Captures for which gpsd reports no fix with a time (nothing to compare positions with).
let gpsdSuiteCapturesWithoutFixes: [String: String] = [:]

let gpsdSuiteKnownDifferences = expand(gpsdSuiteDifferenceGroups)

let gpsdSuiteDifferenceGroups: [SuiteDifferenceGroup] = []
