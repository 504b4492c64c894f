import GNSS

/// A TMM location message format: how one `Position` is written as a JSON object.
public protocol LocationMessage {
    /// Appends the message for `position` to `writer` as one JSON object value.
    static func write(_ position: Position, identity: ReceiverIdentity, to writer: inout JSONWriter)
}

/// Encodes one location message per `Position`, built once per epoch into a reused buffer and
/// queued as is to every client. One wrapper for both formats, so V1 and V2 cannot drift apart.
public struct LocationEncoder<Message: LocationMessage>: Sendable {
    private var writer: JSONWriter

    public init(reservingCapacity capacity: Int = 16_384) {
        writer = JSONWriter(reservingCapacity: capacity)
    }

    /// Replaces the output with the message for `position`.
    public mutating func encode(_ position: Position, identity: ReceiverIdentity) {
        writer.reset()
        Message.write(position, identity: identity, to: &writer)
    }

    /// The last message's bytes (UTF-8 JSON, no trailing newline). See `JSONWriter.bytes` for
    /// the copy-on-write note.
    public var bytes: [UInt8] { writer.bytes }

    /// The last message's bytes, borrowed.
    public var span: Span<UInt8> {
        @_lifetime(borrow self)
        get { writer.span }
    }

    /// Calls `body` with the last message's bytes.
    public func withBytes<R, E: Error>(_ body: (Span<UInt8>) throws(E) -> R) throws(E) -> R {
        try writer.withBytes(body)
    }

    /// Appends the message for `position` to `writer` as one JSON object value.
    public static func write(_ position: Position, identity: ReceiverIdentity, to writer: inout JSONWriter) {
        Message.write(position, identity: identity, to: &writer)
    }
}

/// Encodes `LocationV2Data` (WebSocket V2, `/` and `/locationV2`).
public typealias LocationV2Encoder = LocationEncoder<LocationV2>
/// Encodes `LocationV1Data` (WebSocket V1, 1 Hz).
public typealias LocationV1Encoder = LocationEncoder<LocationV1>

/// The `LocationV2Data` message (WebSocket V2, `/` and `/locationV2`): one JSON object per
/// `Position`, sent for every epoch.
///
/// Field order is that of TMM-API.md §8.7, followed by the further documented fields
/// `accuracy`, `verticalAccuracyMeters` and `sourceReferenceEpoch`. Null rule: every value that
/// is unknown is `null`; without a fix (`Position.hasFix` false) the position, accuracy, DOP and
/// differential fields are `null` as well, while the satellite counts stay integers.
/// Choices are recorded in docs/protocol-choices.md.
public enum LocationV2: LocationMessage {
    /// Appends the message for `position` to `writer` as one JSON object value.
    public static func write(_ position: Position, identity: ReceiverIdentity, to writer: inout JSONWriter) {
        let fix = position.hasFix
        func ifFix(_ value: Double?) -> Double? { fix ? value : nil }

        writer.beginObject()
        writer.field("latitude", number: ifFix(position.latitude), decimals: LocationDecimals.degrees)
        writer.field("longitude", number: ifFix(position.longitude), decimals: LocationDecimals.degrees)
        writer.field("altitude", number: ifFix(position.altitude), decimals: LocationDecimals.height)
        writer.field("speed", number: ifFix(position.speed), decimals: LocationDecimals.speed)
        writer.field("bearing", number: ifFix(position.bearing), decimals: LocationDecimals.bearing)
        writer.nullField("geoidModel")
        writer.field("hrms", number: ifFix(position.hrms), decimals: LocationDecimals.accuracy)
        writer.field("vrms", number: ifFix(position.vrms), decimals: LocationDecimals.accuracy)
        writer.field("satellites", integer: position.satellitesInView)
        writer.field("totalSatInUse", integer: position.satellitesUsed)
        writer.field("totalSatInView", integer: position.satellitesInView)
        writer.field("pdop", number: ifFix(position.pdop), decimals: LocationDecimals.dop)
        writer.field("hdop", number: ifFix(position.hdop), decimals: LocationDecimals.dop)
        writer.field("vdop", number: ifFix(position.vdop), decimals: LocationDecimals.dop)
        writer.field("diffAge", number: ifFix(position.diffAge), decimals: LocationDecimals.diffAge)
        writer.field("diffStatus", integer: fix ? position.quality.diffStatus : nil)
        writer.key("diffID")
        writer.diffIDValue(fix ? position.diffStationID : nil)
        writer.field("solutionType", string: fix ? position.quality.solutionType : nil)
        writer.field("receiverModel", string: identity.receiverModel)
        writer.field("receiverSerialNumber", string: identity.receiverSerialNumber)
        writer.field("mockProvider", string: ReceiverIdentity.mockProvider)
        writer.field("appVersion", string: identity.appVersion)
        writer.nullField("battery")
        writer.field("mslHeight", number: ifFix(position.mslHeight), decimals: LocationDecimals.height)
        writer.field("undulation", number: ifFix(position.undulation), decimals: LocationDecimals.height)
        writer.key("utcTime")
        writer.utcTimeValue(position.time, nullWhenUnknown: true)
        writer.key("utcTimeStamp")
        writer.isoTimestampValue(position.time)
        writer.key("gpsTimeStamp")
        writer.gpsTimestampValue(position.time)
        writer.field("subscriptionType", integer: nonCatalystSubscription)
        writer.nullField("sourceReferenceFrameName")
        writer.nullField("sourceReferenceFrameEpoch")
        writer.nullField("targetReferenceFrameName")
        writer.nullField("targetReferenceFrameEpoch")
        writer.field("imuAlignmentStatus", integer: imuNotAvailable)
        writer.field("isTIP", bool: false)
        writer.nullField("pitch")
        writer.nullField("roll")
        writer.nullField("yaw")
        writer.nullField("pitchPrecision")
        writer.nullField("rollPrecision")
        writer.nullField("yawPrecision")
        writer.nullField("igsAntenna")
        writer.nullField("antennaHeight")
        writer.key("satelliteView")
        writeSatelliteView(position.sky, unknownAsNull: true, to: &writer)
        writer.field("accuracy", number: ifFix(position.hrms), decimals: LocationDecimals.accuracy)
        writer.field("verticalAccuracyMeters", number: ifFix(position.vrms), decimals: LocationDecimals.accuracy)
        writer.nullField("sourceReferenceEpoch")
        writer.endObject()
    }
}

/// The `LocationV1Data` message (WebSocket V1, deprecated, root path): one JSON object per
/// `Position`, sent once per second.
///
/// Field order is that of TMM-API.md §8.6 (which lists every documented V1 field). V1 documents
/// plain numbers and old .NET clients bind them to non-nullable doubles, so an unknown number
/// (or a non-finite or unprintably large one) is written as `0` (`0.0` for doubles), `diffStatus`
/// is 0 without a fix, and `null` appears only where V1 documents `| null` (`battery`,
/// `mslHeight`, `undulation`) and for unknown strings (`receiverModel`, `geoidModel`,
/// `utcTimeStamp`, `gpsTimeStamp`).
/// Choices are recorded in docs/protocol-choices.md.
public enum LocationV1: LocationMessage {
    /// Appends the message for `position` to `writer` as one JSON object value.
    public static func write(_ position: Position, identity: ReceiverIdentity, to writer: inout JSONWriter) {
        let fix = position.hasFix
        /// The value with a fix when it is known and printable, else 0 (never null in V1).
        func orZero(_ value: Double?) -> Double {
            guard fix, let value, value.isFinite, value.magnitude < JSONWriter.maximumMagnitude else { return 0 }
            return value
        }
        func ifFix(_ value: Double?) -> Double? { fix ? value : nil }

        writer.beginObject()
        writer.field("latitude", number: orZero(position.latitude), decimals: LocationDecimals.degrees)
        writer.field("longitude", number: orZero(position.longitude), decimals: LocationDecimals.degrees)
        writer.field("altitude", number: orZero(position.altitude), decimals: LocationDecimals.height)
        writer.field("speed", number: orZero(position.speed), decimals: LocationDecimals.speed)
        writer.field("bearing", number: orZero(position.bearing), decimals: LocationDecimals.bearing)
        writer.field("accuracy", number: orZero(position.hrms), decimals: LocationDecimals.accuracy)
        writer.field("verticalAccuracyMeters", number: orZero(position.vrms), decimals: LocationDecimals.accuracy)
        writer.field("satellites", integer: position.satellitesInView)
        writer.field("totalSatInView", integer: position.satellitesInView)
        writer.field("pdop", number: orZero(position.pdop), decimals: LocationDecimals.dop)
        writer.field("hdop", number: orZero(position.hdop), decimals: LocationDecimals.dop)
        writer.field("vdop", number: orZero(position.vdop), decimals: LocationDecimals.dop)
        writer.field("diffAge", number: orZero(position.diffAge), decimals: LocationDecimals.diffAge)
        writer.field("diffStatus", integer: fix ? position.quality.diffStatus ?? 0 : 0)
        writer.key("diffID")
        writer.diffIDValue(fix ? position.diffStationID : nil)
        writer.field("vrms", number: orZero(position.vrms), decimals: LocationDecimals.accuracy)
        writer.field("hrms", number: orZero(position.hrms), decimals: LocationDecimals.accuracy)
        writer.field("receiverModel", string: identity.receiverModel)
        writer.field("mockProvider", string: ReceiverIdentity.mockProvider)
        writer.field("appVersion", string: identity.appVersion)
        writer.nullField("battery")
        writer.nullField("geoidModel")
        writer.field("mslHeight", number: ifFix(position.mslHeight), decimals: LocationDecimals.height)
        writer.field("undulation", number: ifFix(position.undulation), decimals: LocationDecimals.height)
        writer.key("utcTime")
        writer.utcTimeValue(position.time, nullWhenUnknown: false)
        writer.key("utcTimeStamp")
        writer.isoTimestampValue(position.time)
        writer.key("gpsTimeStamp")
        writer.gpsTimestampValue(position.time)
        writer.field("subscriptionType", integer: nonCatalystSubscription)
        writer.key("satelliteView")
        writeSatelliteView(position.sky, unknownAsNull: false, to: &writer)
        writer.endObject()
    }
}

/// `subscriptionType` 100: a non-Catalyst receiver (TMM-API.md §6.5).
let nonCatalystSubscription = 100
/// `imuAlignmentStatus` 0: not available (TMM-API.md §6.5).
let imuNotAvailable = 0

/// `satelliteView`: one `{"Id","Elv","Azm","Snr","Use","Type"}` object per satellite in view
/// (signals already merged by `SkyView`), in the sky view's order. Unknown elevation, azimuth
/// or SNR is `null` (V2) or `0` (V1).
func writeSatelliteView(_ sky: SkyView, unknownAsNull: Bool, to writer: inout JSONWriter) {
    func value(_ number: Int?) -> Int? { unknownAsNull ? number : number ?? 0 }
    writer.beginArray()
    for index in 0..<sky.count {
        let satellite = sky[index]
        writer.beginObject()
        writer.field("Id", integer: Int(satellite.id))
        writer.field("Elv", integer: value(satellite.elevation.map { Int($0) }))
        writer.field("Azm", integer: value(satellite.azimuth.map { Int($0) }))
        writer.field("Snr", integer: value(satellite.snr.map { Int($0) }))
        writer.field("Use", bool: satellite.used)
        writer.field("Type", integer: Int(satellite.constellation.rawValue))
        writer.endObject()
    }
    writer.endArray()
}
