import Corrections

// The corrections client's settings from the configuration (`ntrip`, `ntrip-gga-interval`,
// `ntrip-receiver`, `ntrip-ca`; docs/configuration.md, docs/corrections.md) and from REST
// (`correctionSource`, kept in settings.json). Which one is in force is the client's rule
// (Sources/Bridge/Corrections): an app's choice, else the configuration's, and a reload that
// changes `ntrip` takes precedence over what an app chose before it.

/// `ntrip = ntrip://USER:PASS@HOST:PORT/MOUNT` and its companions.
public struct CorrectionsConfiguration: Equatable, Sendable {
    /// The caster; nil: none configured (an app may still set one over REST).
    public var source: NTRIPSource?
    /// Seconds between GGA sentences sent to the caster (0: none).
    public var ggaIntervalSeconds = 10
    /// The receiver the frames go to when several are present; nil: the served one.
    public var receiver: String?
    /// A PEM file of certificate authorities trusted for `ntrips://` besides the system's.
    public var authorityFile: String?

    public init() {}

    /// Longest GGA interval accepted (an hour: a VRS network wants one every few seconds).
    public static let ggaIntervalRange = 0...3600
}

extension CorrectionSettings {
    /// The caster these REST settings name: when the source is `ntrip` with an address and a mount
    /// point (the port 2101 when not given). TMM's fields have no TLS switch: REST casters are
    /// plain NTRIP; `ntrips://` is for the configuration.
    public var ntripSource: NTRIPSource? {
        guard source == .ntrip, let host = serverAddress, let mountPoint = ntripMountPoint else { return nil }
        return NTRIPSource(
            host: host, port: serverPort.map { UInt16($0) } ?? NTRIPSource.defaultPort, mountPoint: mountPoint,
            user: ntripUserName, password: ntripPassword, usesTLS: false)
    }

    /// Why settings that choose `ntrip` cannot be used, for the PUT's 400; nil when they can.
    public var ntripIncompleteReason: String? {
        guard source == .ntrip else { return nil }
        var missing: [String] = []
        if serverAddress == nil { missing.append("serverAddress") }
        if ntripMountPoint == nil { missing.append("ntripMountPoint") }
        guard !missing.isEmpty else { return nil }
        return "correctionSource \"ntrip\" needs " + missing.joined(separator: " and ")
    }
}
