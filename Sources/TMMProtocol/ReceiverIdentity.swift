/// What the location messages say about the receiver and about us, beyond the position itself.
public struct ReceiverIdentity: Sendable, Equatable {
    /// TMM's `mockProvider` value, the same in every message.
    public static let mockProvider = "Trimble Mobile Manager"

    /// Receiver model name (`receiverModel`), e.g. "R12i"; `nil` when unknown.
    public var receiverModel: String?
    /// Receiver serial number (`receiverSerialNumber`, V2 only); `nil` when unknown.
    public var receiverSerialNumber: String?
    /// The bridge's own version, `Major.Minor.Patch` (`appVersion`), e.g. "0.1.0".
    public var appVersion: String
    /// LocationV2's `antennaHeight` (m): the height set over REST `/api/v1/antenna` when it is
    /// applied, 0.0 otherwise (docs/protocol-choices.md).
    public var antennaHeight: Double

    public init(
        receiverModel: String? = nil, receiverSerialNumber: String? = nil, appVersion: String,
        antennaHeight: Double = 0
    ) {
        self.receiverModel = receiverModel
        self.receiverSerialNumber = receiverSerialNumber
        self.appVersion = appVersion
        self.antennaHeight = antennaHeight
    }
}

/// Digits after the decimal point per location field (trailing zeros are trimmed).
/// The reasons are in docs/protocol-choices.md ("LocationV1 and LocationV2 encoding").
public enum LocationDecimals {
    /// `latitude`, `longitude`: 10 decimals of a degree is about 0.01 mm.
    public static let degrees = 10
    /// `altitude`, `mslHeight`, `undulation`: 0.1 mm.
    public static let height = 4
    /// `speed` (m/s): 1 mm/s.
    public static let speed = 3
    /// `bearing` (degrees).
    public static let bearing = 3
    /// `hrms`, `vrms`, `accuracy`, `verticalAccuracyMeters`: 1 mm.
    public static let accuracy = 3
    /// `pdop`, `hdop`, `vdop`.
    public static let dop = 2
    /// `diffAge` (seconds).
    public static let diffAge = 2
    /// `utcTime` (hhmmss.sss) and the timestamps' milliseconds.
    public static let time = 3
}
