import ByteCoding
import FoundationEssentials
import Logging
import TMMProtocol

// The settings TMM apps change over REST (TMM-API.md §4.3): the antenna height and the
// correction source. TMM's shapes are undocumented; the ones here are written down in
// docs/protocol-choices.md. Keys of request bodies are matched case-insensitively (old clients
// sent PascalCase, §4.1); responses are camelCase.

/// `GET/PUT /api/v1/antenna`.
public struct AntennaSettings: Equatable, Sendable {
    /// Metres, to the bottom of the antenna mount (§6.4 `antennaHeight`).
    public var measuredHeight: Double = 0
    /// Whether positions are reported with the height applied.
    public var isAntennaHeightApplied = false

    public init(measuredHeight: Double = 0, isAntennaHeightApplied: Bool = false) {
        self.measuredHeight = measuredHeight
        self.isAntennaHeightApplied = isAntennaHeightApplied
    }

    /// What LocationV2's `antennaHeight` carries: the height when applied, else 0.0.
    public var appliedHeight: Double { isAntennaHeightApplied ? measuredHeight : 0 }

    /// Heights outside this are refused (metres): generous for poles and masts, and it keeps a
    /// typo (millimetres for metres) out of every position.
    public static let heightRange: ClosedRange<Double> = -100...100
}

/// `GET/PUT /api/v1/correctionSource`: `ntrip` starts the corrections client on this caster at
/// once (docs/corrections.md); `auto` and `direct` stop it (the receiver's own configuration
/// then decides).
public struct CorrectionSettings: Equatable, Sendable {
    public enum Source: String, Sendable, CaseIterable {
        case auto, ntrip, direct
    }

    public var source = Source.auto
    public var serverAddress: String?
    public var serverPort: Int?
    public var ntripMountPoint: String?
    public var ntripUserName: String?
    /// Write-only over REST: a GET says whether one is set, never what it is.
    public var ntripPassword: String?
    /// An app PUT these (kept in settings.json as `setByApp`): its choice, `auto` and `direct`
    /// included, outranks the configuration's `ntrip` until the configuration changes.
    public var wasSetByApp = false

    public init(
        source: Source = .auto, serverAddress: String? = nil, serverPort: Int? = nil, ntripMountPoint: String? = nil,
        ntripUserName: String? = nil, ntripPassword: String? = nil
    ) {
        self.source = source
        self.serverAddress = serverAddress
        self.serverPort = serverPort
        self.ntripMountPoint = ntripMountPoint
        self.ntripUserName = ntripUserName
        self.ntripPassword = ntripPassword
    }

    /// Longest text field accepted (host names are at most 253; mount points and user names
    /// are short).
    public static let maximumTextLength = 256
}

/// Everything REST can set, kept in the state directory (`settings.json`, 0600: it may hold an
/// NTRIP password) so it survives restarts.
public struct DeviceSettings: Equatable, Sendable {
    public var antenna = AntennaSettings()
    public var corrections = CorrectionSettings()

    public init(antenna: AntennaSettings = AntennaSettings(), corrections: CorrectionSettings = CorrectionSettings()) {
        self.antenna = antenna
        self.corrections = corrections
    }

    public static let fileName = "settings.json"

    /// The file's contents: `{"antenna":{...},"correctionSource":{...}}` with the REST bodies'
    /// keys (the password included: the file is the daemon's own, mode 0600).
    public func fileBytes() -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 512)
        writer.beginObject()
        writer.key("antenna")
        DeviceSettings.writeAntenna(antenna, to: &writer)
        writer.key("correctionSource")
        DeviceSettings.writeCorrections(corrections, includingPassword: true, to: &writer)
        writer.endObject()
        return writer.bytes + [UInt8(ascii: "\n")]
    }

    /// Reads what `fileBytes` wrote; a member that is missing keeps its default.
    public static func parseFile(_ bytes: [UInt8]) -> Result<DeviceSettings, RESTRouter.BodyFailure> {
        let members: [String: JSONValue]
        do {
            members = try JSONDecoder().decode([String: JSONValue].self, from: Data(bytes))
        } catch {
            return .failure(.init(message: "not a JSON object"))
        }
        var settings = DeviceSettings()
        if case .object(let antenna)? = members["antenna"] {
            switch settings.antenna.updated(with: antenna) {
            case .success(let value): settings.antenna = value
            case .failure(let failure): return .failure(.init(message: "antenna: " + failure.message))
            }
        }
        if case .object(let corrections)? = members["correctionSource"] {
            switch settings.corrections.updated(with: corrections) {
            case .success(let value): settings.corrections = value
            case .failure(let failure): return .failure(.init(message: "correctionSource: " + failure.message))
            }
            if case .bool(let flag)? = corrections["setByApp"] { settings.corrections.wasSetByApp = flag }
        }
        return .success(settings)
    }

    // MARK: Response bodies

    /// `{"measuredHeight":1.8,"isAntennaHeightApplied":true}`.
    public static func writeAntenna(_ antenna: AntennaSettings, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("measuredHeight", number: antenna.measuredHeight, decimals: 4)
        writer.field("isAntennaHeightApplied", bool: antenna.isAntennaHeightApplied)
        writer.endObject()
    }

    /// `{"correctionSource":"ntrip","serverAddress":…,"serverPort":2101,"ntripMountPoint":…,
    /// "ntripUserName":…,"hasNtripPassword":true}`; the password itself only in the file.
    /// With `state` (GET), a read-only `status` member says what the corrections client does now:
    /// `{"state":"streaming","message":…,"ntripRevision":2,"frames":N,"lastFrameAge":0.4,
    /// "stationId":1234,"ggaSent":3}`.
    public static func writeCorrections(
        _ settings: CorrectionSettings, includingPassword: Bool, state: DaemonStatus.Corrections? = nil,
        to writer: inout JSONWriter
    ) {
        writer.beginObject()
        writer.field("correctionSource", string: settings.source.rawValue)
        writer.field("serverAddress", string: settings.serverAddress)
        writer.field("serverPort", integer: settings.serverPort)
        writer.field("ntripMountPoint", string: settings.ntripMountPoint)
        writer.field("ntripUserName", string: settings.ntripUserName)
        if includingPassword {
            writer.field("ntripPassword", string: settings.ntripPassword)
            writer.field("setByApp", bool: settings.wasSetByApp)
        } else {
            writer.field("hasNtripPassword", bool: settings.ntripPassword != nil)
        }
        if let state {
            writer.key("status")
            writer.beginObject()
            writer.field("state", string: state.state)
            writer.field("message", string: state.message)
            writer.field("ntripRevision", integer: state.revision)
            writer.field("frames", integer: state.frames)
            writer.field("lastFrameAge", number: state.lastFrameAgeSeconds, decimals: 1)
            writer.field("stationId", integer: state.stationID)
            writer.field("ggaSent", integer: state.ggaSent)
            writer.endObject()
        }
        writer.endObject()
    }

    /// `GET /api/v1/userInfo`: a local bridge has no Trimble ID; it says so rather than invent
    /// a user (`isSigninRequired` false: nothing here needs a sign-in).
    public static func writeUserInfo(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("isSignedIn", bool: false)
        writer.field("isSigninRequired", bool: false)
        writer.field("userName", string: nil)
        writer.field("email", string: nil)
        writer.field("trimbleId", string: nil)
        writer.endObject()
    }
}

// MARK: Updates from request bodies

/// Members by lower-cased key; a key given twice in different cases is refused (it would be
/// ambiguous which one counts).
private func caseFolded(_ members: [String: JSONValue]) -> Result<[String: JSONValue], RESTRouter.BodyFailure> {
    var folded: [String: JSONValue] = [:]
    for (key, value) in members {
        let lower = ASCII.lowercased(key)
        guard folded.updateValue(value, forKey: lower) == nil else {
            return .failure(.init(message: "\(key) is given twice"))
        }
    }
    return .success(folded)
}

extension AntennaSettings {
    static let expected = #"expected {"measuredHeight": metres, "isAntennaHeightApplied": true or false}"#

    /// These settings with what `members` sets (`measuredHeight`, `isAntennaHeightApplied`, any
    /// case); members not given keep their value, unknown members are ignored.
    public func updated(with members: [String: JSONValue]) -> Result<AntennaSettings, RESTRouter.BodyFailure> {
        let folded: [String: JSONValue]
        switch caseFolded(members) {
        case .success(let value): folded = value
        case .failure(let failure): return .failure(failure)
        }
        var settings = self
        var known = false
        if let value = folded["measuredheight"] {
            guard case .number(let height) = value, height.isFinite, Self.heightRange.contains(height) else {
                return .failure(
                    .init(
                        message:
                            "measuredHeight must be a number of metres "
                            + "from \(Int(Self.heightRange.lowerBound)) to \(Int(Self.heightRange.upperBound))"
                    ))
            }
            settings.measuredHeight = height
            known = true
        }
        if let value = folded["isantennaheightapplied"] {
            guard case .bool(let flag) = value else {
                return .failure(.init(message: "isAntennaHeightApplied must be true or false"))
            }
            settings.isAntennaHeightApplied = flag
            known = true
        }
        guard known else { return .failure(.init(message: "no antenna setting in the body: \(Self.expected)")) }
        return .success(settings)
    }

    /// The settings a `PUT /api/v1/antenna` body makes of these.
    public func updated(withBody body: [UInt8]) -> Result<AntennaSettings, RESTRouter.BodyFailure> {
        JSONValue.object(body, expected: Self.expected).flatMap { updated(with: $0) }
    }
}

extension CorrectionSettings {
    static let expected = #"""
        expected {"correctionSource": "auto", "ntrip" or "direct", "serverAddress", "serverPort", \#
        "ntripMountPoint", "ntripUserName", "ntripPassword"}
        """#

    /// These settings with what `members` sets (the documented keys, any case; `null` clears a
    /// text or the port); members not given keep their value, unknown members are ignored.
    public func updated(with members: [String: JSONValue]) -> Result<CorrectionSettings, RESTRouter.BodyFailure> {
        let folded: [String: JSONValue]
        switch caseFolded(members) {
        case .success(let value): folded = value
        case .failure(let failure): return .failure(failure)
        }
        var settings = self
        var known = false
        if let value = folded["correctionsource"] {
            guard case .string(let text) = value, let source = Source(rawValue: ASCII.lowercased(text)) else {
                return .failure(.init(message: "correctionSource must be \"auto\", \"ntrip\" or \"direct\""))
            }
            settings.source = source
            known = true
        }
        if let value = folded["serverport"] {
            switch value {
            case .null: settings.serverPort = nil
            case .number(let number) where number == number.rounded() && (1...65_535).contains(number):
                settings.serverPort = Int(number)
            default: return .failure(.init(message: "serverPort must be a port number 1-65535 or null"))
            }
            known = true
        }
        let texts: [(String, String, WritableKeyPath<CorrectionSettings, String?>)] = [
            ("serveraddress", "serverAddress", \.serverAddress),
            ("ntripmountpoint", "ntripMountPoint", \.ntripMountPoint),
            ("ntripusername", "ntripUserName", \.ntripUserName), ("ntrippassword", "ntripPassword", \.ntripPassword),
        ]
        for (key, name, path) in texts {
            guard let value = folded[key] else { continue }
            switch value {
            case .null: settings[keyPath: path] = nil
            case .string(let text)
            where text.utf8.count <= Self.maximumTextLength
                && !text.unicodeScalars.contains(where: \.isTextControl):
                settings[keyPath: path] = text.isEmpty ? nil : text
            default:
                return .failure(
                    .init(
                        message:
                            "\(name) must be a string of at most \(Self.maximumTextLength) bytes "
                            + "without control or bidirectional formatting characters, or null"
                    ))
            }
            known = true
        }
        guard known else { return .failure(.init(message: "no correction setting in the body: \(Self.expected)")) }
        return .success(settings)
    }

    /// The settings a `PUT /api/v1/correctionSource` body makes of these.
    public func updated(withBody body: [UInt8]) -> Result<CorrectionSettings, RESTRouter.BodyFailure> {
        JSONValue.object(body, expected: Self.expected).flatMap { updated(with: $0) }
    }
}
