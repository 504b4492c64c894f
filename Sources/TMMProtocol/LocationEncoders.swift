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
        writer.fragments = FragmentCache(slots: SkyView.capacity)
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
    ///
    /// Keys, the punctuation between them and the constant values (`null`s, `subscriptionType`,
    /// `imuAlignmentStatus`, `isTIP`) are written as verbatim runs, one copy each, rather than
    /// escaped one key at a time on every epoch (see `JSONWriter.verbatimKey`).
    public static func write(_ position: Position, identity: ReceiverIdentity, to writer: inout JSONWriter) {
        let fix = position.hasFix
        func ifFix(_ value: Double?) -> Double? { fix ? value : nil }

        writer.beginObject()
        writer.verbatimKey(#""latitude":"#)
        writer.number(ifFix(position.latitude), decimals: LocationDecimals.degrees)
        writer.verbatimKey(#","longitude":"#)
        writer.number(ifFix(position.longitude), decimals: LocationDecimals.degrees)
        writer.verbatimKey(#","altitude":"#)
        writer.number(ifFix(position.altitude), decimals: LocationDecimals.height)
        writer.verbatimKey(#","speed":"#)
        writer.number(ifFix(position.speed), decimals: LocationDecimals.speed)
        writer.verbatimKey(#","bearing":"#)
        writer.number(ifFix(position.bearing), decimals: LocationDecimals.bearing)
        writer.verbatimKey(#","geoidModel":null,"hrms":"#)
        writer.number(ifFix(position.hrms), decimals: LocationDecimals.accuracy)
        writer.verbatimKey(#","vrms":"#)
        writer.number(ifFix(position.vrms), decimals: LocationDecimals.accuracy)
        writer.verbatimKey(#","satellites":"#)
        writer.integer(position.satellitesInView)
        writer.verbatimKey(#","totalSatInUse":"#)
        writer.integer(position.satellitesUsed)
        writer.verbatimKey(#","totalSatInView":"#)
        writer.integer(position.satellitesInView)
        writer.verbatimKey(#","pdop":"#)
        writer.number(ifFix(position.pdop), decimals: LocationDecimals.dop)
        writer.verbatimKey(#","hdop":"#)
        writer.number(ifFix(position.hdop), decimals: LocationDecimals.dop)
        writer.verbatimKey(#","vdop":"#)
        writer.number(ifFix(position.vdop), decimals: LocationDecimals.dop)
        writer.verbatimKey(#","diffAge":"#)
        writer.number(ifFix(position.diffAge), decimals: LocationDecimals.diffAge)
        writer.verbatimKey(#","diffStatus":"#)
        writer.integer(fix ? position.quality.diffStatus : nil)
        writer.verbatimKey(#","diffID":"#)
        writer.diffIDValue(fix ? position.diffStationID : nil)
        writer.verbatimKey(#","solutionType":"#)
        writer.string(fix ? position.quality.solutionType : nil)
        writer.verbatimKey(#","receiverModel":"#)
        writer.string(identity.receiverModel)
        writer.verbatimKey(#","receiverSerialNumber":"#)
        writer.string(identity.receiverSerialNumber)
        writer.verbatimKey(#","mockProvider":"#)
        writer.string(ReceiverIdentity.mockProvider)
        writer.verbatimKey(#","appVersion":"#)
        writer.string(identity.appVersion)
        writer.verbatimKey(#","battery":null,"mslHeight":"#)
        writer.number(ifFix(position.mslHeight), decimals: LocationDecimals.height)
        writer.verbatimKey(#","undulation":"#)
        writer.number(ifFix(position.undulation), decimals: LocationDecimals.height)
        writer.verbatimKey(#","utcTime":"#)
        writer.utcTimeValue(position.time, nullWhenUnknown: true)
        writer.verbatimKey(#","utcTimeStamp":"#)
        writer.isoTimestampValue(position.time)
        writer.verbatimKey(#","gpsTimeStamp":"#)
        writer.gpsTimestampValue(position.time)
        // subscriptionType 100: a non-Catalyst receiver; imuAlignmentStatus 0: not available
        // (TMM-API.md §6.5). The reference frames, attitude and antenna are unknown to the bridge.
        writer.verbatimKey("""
            ,"subscriptionType":100,"sourceReferenceFrameName":null,"sourceReferenceFrameEpoch":null,\
            "targetReferenceFrameName":null,"targetReferenceFrameEpoch":null,"imuAlignmentStatus":0,\
            "isTIP":false,"pitch":null,"roll":null,"yaw":null,"pitchPrecision":null,"rollPrecision":null,\
            "yawPrecision":null,"igsAntenna":null,"antennaHeight":null,"satelliteView":
            """)
        writeSatelliteView(position.sky, unknownAsNull: true, to: &writer)
        writer.verbatimKey(#","accuracy":"#)
        writer.number(ifFix(position.hrms), decimals: LocationDecimals.accuracy)
        writer.verbatimKey(#","verticalAccuracyMeters":"#)
        writer.number(ifFix(position.vrms), decimals: LocationDecimals.accuracy)
        writer.verbatimKey(#","sourceReferenceEpoch":"#)
        writer.null()
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
    /// Appends the message for `position` to `writer` as one JSON object value. Keys and
    /// constants are verbatim runs, as in `LocationV2.write`.
    public static func write(_ position: Position, identity: ReceiverIdentity, to writer: inout JSONWriter) {
        let fix = position.hasFix
        /// The value with a fix when it is known and printable, else 0 (never null in V1).
        func orZero(_ value: Double?) -> Double {
            guard fix, let value, value.isFinite, value.magnitude < JSONWriter.maximumMagnitude else { return 0 }
            return value
        }
        func ifFix(_ value: Double?) -> Double? { fix ? value : nil }

        writer.beginObject()
        writer.verbatimKey(#""latitude":"#)
        writer.number(orZero(position.latitude), decimals: LocationDecimals.degrees)
        writer.verbatimKey(#","longitude":"#)
        writer.number(orZero(position.longitude), decimals: LocationDecimals.degrees)
        writer.verbatimKey(#","altitude":"#)
        writer.number(orZero(position.altitude), decimals: LocationDecimals.height)
        writer.verbatimKey(#","speed":"#)
        writer.number(orZero(position.speed), decimals: LocationDecimals.speed)
        writer.verbatimKey(#","bearing":"#)
        writer.number(orZero(position.bearing), decimals: LocationDecimals.bearing)
        writer.verbatimKey(#","accuracy":"#)
        writer.number(orZero(position.hrms), decimals: LocationDecimals.accuracy)
        writer.verbatimKey(#","verticalAccuracyMeters":"#)
        writer.number(orZero(position.vrms), decimals: LocationDecimals.accuracy)
        writer.verbatimKey(#","satellites":"#)
        writer.integer(position.satellitesInView)
        writer.verbatimKey(#","totalSatInView":"#)
        writer.integer(position.satellitesInView)
        writer.verbatimKey(#","pdop":"#)
        writer.number(orZero(position.pdop), decimals: LocationDecimals.dop)
        writer.verbatimKey(#","hdop":"#)
        writer.number(orZero(position.hdop), decimals: LocationDecimals.dop)
        writer.verbatimKey(#","vdop":"#)
        writer.number(orZero(position.vdop), decimals: LocationDecimals.dop)
        writer.verbatimKey(#","diffAge":"#)
        writer.number(orZero(position.diffAge), decimals: LocationDecimals.diffAge)
        writer.verbatimKey(#","diffStatus":"#)
        writer.integer(fix ? position.quality.diffStatus ?? 0 : 0)
        writer.verbatimKey(#","diffID":"#)
        writer.diffIDValue(fix ? position.diffStationID : nil)
        writer.verbatimKey(#","vrms":"#)
        writer.number(orZero(position.vrms), decimals: LocationDecimals.accuracy)
        writer.verbatimKey(#","hrms":"#)
        writer.number(orZero(position.hrms), decimals: LocationDecimals.accuracy)
        writer.verbatimKey(#","receiverModel":"#)
        writer.string(identity.receiverModel)
        writer.verbatimKey(#","mockProvider":"#)
        writer.string(ReceiverIdentity.mockProvider)
        writer.verbatimKey(#","appVersion":"#)
        writer.string(identity.appVersion)
        writer.verbatimKey(#","battery":null,"geoidModel":null,"mslHeight":"#)
        writer.number(ifFix(position.mslHeight), decimals: LocationDecimals.height)
        writer.verbatimKey(#","undulation":"#)
        writer.number(ifFix(position.undulation), decimals: LocationDecimals.height)
        writer.verbatimKey(#","utcTime":"#)
        writer.utcTimeValue(position.time, nullWhenUnknown: false)
        writer.verbatimKey(#","utcTimeStamp":"#)
        writer.isoTimestampValue(position.time)
        writer.verbatimKey(#","gpsTimeStamp":"#)
        writer.gpsTimestampValue(position.time)
        // subscriptionType 100: a non-Catalyst receiver (TMM-API.md §6.5).
        writer.verbatimKey(#","subscriptionType":100,"satelliteView":"#)
        writeSatelliteView(position.sky, unknownAsNull: false, to: &writer)
        writer.endObject()
    }
}

/// `satelliteView`: one `{"Id","Elv","Azm","Snr","Use","Type"}` object per satellite in view
/// (signals already merged by `SkyView`), in the sky view's order. Unknown elevation, azimuth
/// or SNR is `null` (V2) or `0` (V1).
///
/// A 30-satellite sky is most of a message, so each object's body is written in place in one
/// reservation: five verbatim runs around its integers (`Use` and the next key share one:
/// `,"Use":true,"Type":`); the `{` or `},{` in front of it is written apart, so that the body
/// can be remembered and copied the next time the satellite looks the same.
func writeSatelliteView(_ sky: SkyView, unknownAsNull: Bool, to writer: inout JSONWriter) {
    /// The longest body: the runs (5 + 7 + 7 + 7 + 20 bytes), the id (UInt16, 5 digits), two
    /// Int16 (`-32768`, 6 bytes) and two UInt8 (SNR and constellation, 3 digits). Writing more
    /// would trap; the extreme-values test writes exactly this many.
    let maximumObjectLength = 46 + 5 + 2 * 6 + 2 * 3
    func value(_ number: Int?, to out: inout OutputSpan<UInt8>) {
        if let number {
            JSONWriter.writeInteger(number, to: &out)
        } else if unknownAsNull {
            JSONWriter.writeNull(to: &out)
        } else {
            out.append(UInt8(ascii: "0"))
        }
    }
    writer.beginArray()
    let satellites = sky.satellites
    for index in satellites.indices {
        let satellite = satellites[index]
        // The object's body (after its `{`) is remembered per position in the sky view; the
        // separator in front of it is written each time.
        writer.appendInPlace(maximumCount: 3) { out in
            JSONWriter.writeVerbatim(index == 0 ? "{" : "},{", to: &out)
        }
        let key = FragmentCache.Key(satellite, unknownAsNull: unknownAsNull)
        if writer.appendRemembered(slot: index, key: key) { continue }
        let start = writer.count
        writer.appendInPlace(maximumCount: maximumObjectLength) { out in
            JSONWriter.writeVerbatim(#""Id":"#, to: &out)
            JSONWriter.writeInteger(Int(satellite.id), to: &out)
            JSONWriter.writeVerbatim(#","Elv":"#, to: &out)
            value(satellite.elevation.map { Int($0) }, to: &out)
            JSONWriter.writeVerbatim(#","Azm":"#, to: &out)
            value(satellite.azimuth.map { Int($0) }, to: &out)
            JSONWriter.writeVerbatim(#","Snr":"#, to: &out)
            value(satellite.snr.map { Int($0) }, to: &out)
            JSONWriter.writeVerbatim(satellite.used ? #","Use":true,"Type":"# : #","Use":false,"Type":"#, to: &out)
            JSONWriter.writeInteger(Int(satellite.constellation.rawValue), to: &out)
        }
        writer.remember(slot: index, key: key, since: start)
    }
    if sky.count > 0 { writer.endObject() }
    writer.endArray()
}

extension FragmentCache.Key {
    /// Every field of a satellite object, packed: id (16 bits), constellation (8), elevation,
    /// azimuth (16 each, plus a presence bit), SNR (8 plus presence), used, and the null mode.
    init(_ satellite: Satellite, unknownAsNull: Bool) {
        func field(_ value: Int16?) -> UInt64 { value.map { 1 << 16 | UInt64(UInt16(bitPattern: $0)) } ?? 0 }
        high = UInt64(satellite.id) << 48 | UInt64(satellite.constellation.rawValue) << 40
            | UInt64(satellite.snr.map { 1 << 8 | UInt16($0) } ?? 0) << 24
            | (satellite.used ? 1 << 1 : 0) | (unknownAsNull ? 1 : 0)
        low = field(satellite.elevation) << 32 | field(satellite.azimuth)
    }
}
