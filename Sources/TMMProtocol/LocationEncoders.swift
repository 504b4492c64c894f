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
        writer.memory = LocationMemory()
    }

    /// Replaces the output with the message for `position`.
    public mutating func encode(_ position: Position, identity: ReceiverIdentity) {
        writer.reset()
        Message.write(position, identity: identity, to: &writer)
    }

    /// Appends the message for `position` and a line feed to what the encoder holds (JSON Lines),
    /// for a writer of many messages at once (`tmm-bridge decode`): they are written out from
    /// `span` together and `removeAll()` starts the next batch, with no copy per message.
    public mutating func appendLine(_ position: Position, identity: ReceiverIdentity) {
        Message.write(position, identity: identity, to: &writer)
        writer.endLine()
    }

    /// Empties the encoder's bytes, keeping its capacity and what it remembers between messages.
    public mutating func removeAll() {
        writer.reset()
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
    /// The message is built in eight copies into the writer rather than one per key and value:
    /// the fields that change every epoch are written in place in two reservations (keys as
    /// verbatim runs, see `JSONWriter.verbatimKey`); the identity fields, the fields that change
    /// now and then (accuracies, satellite counts, DOPs, differential fields) and the satellite
    /// view are copied from the writer's `LocationMemory` when they are what the last message
    /// had; the constant fields are one run.
    public static func write(_ position: Position, identity: ReceiverIdentity, to writer: inout JSONWriter) {
        let fix = position.hasFix
        func ifFix(_ value: Double?) -> Double? { fix ? value : nil }
        let hrms = ifFix(position.hrms), vrms = ifFix(position.vrms)

        writer.separate()
        let latitude = ifFix(position.latitude), longitude = ifFix(position.longitude)
        let altitude = ifFix(position.altitude), speed = ifFix(position.speed), bearing = ifFix(position.bearing)
        writer.appendInPlace(maximumCount: headLength) { out in
            JSONWriter.writeVerbatim(LocationV2.Runs.latitude, to: &out)
            JSONWriter.writeNumber(latitude, decimals: LocationDecimals.degrees, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.longitude, to: &out)
            JSONWriter.writeNumber(longitude, decimals: LocationDecimals.degrees, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.altitude, to: &out)
            JSONWriter.writeNumber(altitude, decimals: LocationDecimals.height, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.speed, to: &out)
            JSONWriter.writeNumber(speed, decimals: LocationDecimals.speed, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.bearing, to: &out)
            JSONWriter.writeNumber(bearing, decimals: LocationDecimals.bearing, to: &out)
        }
        // `,"geoidModel":null,"hrms":` to `,"receiverModel":`: what it is written from.
        let pdop = ifFix(position.pdop), hdop = ifFix(position.hdop), vdop = ifFix(position.vdop)
        let diffAge = ifFix(position.diffAge), diffID = fix ? position.diffStationID : nil
        let satellitesInView = position.satellitesInView, satellitesUsed = position.satellitesUsed
        let quality: FixQuality? = fix ? position.quality : nil
        var key = PartKey()
        key.append(hrms)
        key.append(vrms)
        key.append(satellitesInView)
        key.append(satellitesUsed)
        key.append(pdop)
        key.append(hdop)
        key.append(vdop)
        key.append(diffAge)
        key.append(diffID)
        key.append(quality.map { Int($0.rawValue) })
        writer.appendRemembered(part: Parts.values, key: key, maximumCount: valuesLength, endingInKey: true) { out in
            JSONWriter.writeVerbatim(LocationV2.Runs.hrms, to: &out)
            JSONWriter.writeNumber(hrms, decimals: LocationDecimals.accuracy, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.vrms, to: &out)
            JSONWriter.writeNumber(vrms, decimals: LocationDecimals.accuracy, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.satellites, to: &out)
            JSONWriter.writeInteger(satellitesInView, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.totalSatInUse, to: &out)
            JSONWriter.writeInteger(satellitesUsed, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.totalSatInView, to: &out)
            JSONWriter.writeInteger(satellitesInView, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.pdop, to: &out)
            JSONWriter.writeNumber(pdop, decimals: LocationDecimals.dop, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.hdop, to: &out)
            JSONWriter.writeNumber(hdop, decimals: LocationDecimals.dop, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.vdop, to: &out)
            JSONWriter.writeNumber(vdop, decimals: LocationDecimals.dop, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.diffAge, to: &out)
            JSONWriter.writeNumber(diffAge, decimals: LocationDecimals.diffAge, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.diffStatus, to: &out)
            JSONWriter.writeInteger(quality?.diffStatus, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.diffID, to: &out)
            JSONWriter.writeDiffID(diffID, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.solutionType, to: &out)
            JSONWriter.writeString(quality?.solutionType, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.receiverModel, to: &out)
        }
        writer.appendRemembered(identity) { writer in
            writer.string(identity.receiverModel)
            writer.verbatimKey(#","receiverSerialNumber":"#)
            writer.string(identity.receiverSerialNumber)
            writer.verbatimKey(#","mockProvider":"#)
            writer.string(ReceiverIdentity.mockProvider)
            writer.verbatimKey(#","appVersion":"#)
            writer.string(identity.appVersion)
        }
        let mslHeight = ifFix(position.mslHeight), undulation = ifFix(position.undulation)
        var heightsKey = PartKey()
        heightsKey.append(mslHeight)
        heightsKey.append(undulation)
        writer.appendRemembered(part: Parts.heights, key: heightsKey, maximumCount: heightsLength) { out in
            JSONWriter.writeVerbatim(LocationV2.Runs.mslHeight, to: &out)
            JSONWriter.writeNumber(mslHeight, decimals: LocationDecimals.height, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.undulation, to: &out)
            JSONWriter.writeNumber(undulation, decimals: LocationDecimals.height, to: &out)
        }
        writer.appendInPlace(maximumCount: timesLength, endingInKey: true) { out in
            JSONWriter.writeVerbatim(LocationV2.Runs.utcTime, to: &out)
            JSONWriter.writeUTCTime(position.time, nullWhenUnknown: true, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.utcTimeStamp, to: &out)
            JSONWriter.writeISOTimestamp(position.time, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.gpsTimeStamp, to: &out)
            JSONWriter.writeGPSTimestamp(position.time, to: &out)
        }
        // subscriptionType 100: a non-Catalyst receiver; imuAlignmentStatus 0: not available
        // (TMM-API.md §6.5). The reference frames and attitude are unknown to the bridge; the
        // antenna height is the applied one (REST /antenna), 0.0 when none is applied. One run,
        // re-written only when the height changes.
        var antennaKey = PartKey()
        antennaKey.append(identity.antennaHeight)
        writer.appendRemembered(
            part: Parts.constants, key: antennaKey, maximumCount: constantsLength, endingInKey: true
        ) { out in
            JSONWriter.writeVerbatim(LocationV2.constants, to: &out)
            JSONWriter.writeNumber(identity.antennaHeight, decimals: LocationDecimals.height, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.satelliteView, to: &out)
        }
        writeSatelliteView(position.sky, unknownAsNull: true, to: &writer)
        var tailKey = PartKey()
        tailKey.append(hrms)
        tailKey.append(vrms)
        writer.appendRemembered(part: Parts.tail, key: tailKey, maximumCount: tailLength) { out in
            JSONWriter.writeVerbatim(LocationV2.Runs.accuracy, to: &out)
            JSONWriter.writeNumber(hrms, decimals: LocationDecimals.accuracy, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.verticalAccuracyMeters, to: &out)
            JSONWriter.writeNumber(vrms, decimals: LocationDecimals.accuracy, to: &out)
            JSONWriter.writeVerbatim(LocationV2.Runs.sourceReferenceEpoch, to: &out)
        }
    }

    /// The parts of the message a writer's memory keeps (`LocationMemory.parts`).
    enum Parts {
        static let values = 0
        static let heights = 1
        static let tail = 2
        static let constants = 3
    }

    /// The verbatim runs of the message, each named by the key it ends with, as bytes: a run
    /// held as `[UInt8]` is written without asking the string for its UTF-8 view each time,
    /// which cost more than writing the run itself.
    enum Runs {
        static let latitude: [UInt8] = Array(#"{"latitude":"#.utf8)
        static let longitude: [UInt8] = Array(#","longitude":"#.utf8)
        static let altitude: [UInt8] = Array(#","altitude":"#.utf8)
        static let speed: [UInt8] = Array(#","speed":"#.utf8)
        static let bearing: [UInt8] = Array(#","bearing":"#.utf8)
        static let hrms: [UInt8] = Array(#","geoidModel":null,"hrms":"#.utf8)
        static let vrms: [UInt8] = Array(#","vrms":"#.utf8)
        static let satellites: [UInt8] = Array(#","satellites":"#.utf8)
        static let totalSatInUse: [UInt8] = Array(#","totalSatInUse":"#.utf8)
        static let totalSatInView: [UInt8] = Array(#","totalSatInView":"#.utf8)
        static let pdop: [UInt8] = Array(#","pdop":"#.utf8)
        static let hdop: [UInt8] = Array(#","hdop":"#.utf8)
        static let vdop: [UInt8] = Array(#","vdop":"#.utf8)
        static let diffAge: [UInt8] = Array(#","diffAge":"#.utf8)
        static let diffStatus: [UInt8] = Array(#","diffStatus":"#.utf8)
        static let diffID: [UInt8] = Array(#","diffID":"#.utf8)
        static let solutionType: [UInt8] = Array(#","solutionType":"#.utf8)
        static let receiverModel: [UInt8] = Array(#","receiverModel":"#.utf8)
        static let mslHeight: [UInt8] = Array(#","battery":null,"mslHeight":"#.utf8)
        static let undulation: [UInt8] = Array(#","undulation":"#.utf8)
        static let utcTime: [UInt8] = Array(#","utcTime":"#.utf8)
        static let utcTimeStamp: [UInt8] = Array(#","utcTimeStamp":"#.utf8)
        static let gpsTimeStamp: [UInt8] = Array(#","gpsTimeStamp":"#.utf8)
        static let accuracy: [UInt8] = Array(#","accuracy":"#.utf8)
        static let verticalAccuracyMeters: [UInt8] = Array(#","verticalAccuracyMeters":"#.utf8)
        static let sourceReferenceEpoch: [UInt8] = Array(#","sourceReferenceEpoch":null}"#.utf8)
        static let satelliteView: [UInt8] = Array(#","satelliteView":"#.utf8)
    }

    /// The constant fields between `gpsTimeStamp` and the antenna height, as one run.
    static let constants = Array(
        """
        ,"subscriptionType":100,"sourceReferenceFrameName":null,"sourceReferenceFrameEpoch":null,\
        "targetReferenceFrameName":null,"targetReferenceFrameEpoch":null,"imuAlignmentStatus":0,\
        "isTIP":false,"pitch":null,"roll":null,"yaw":null,"pitchPrecision":null,"rollPrecision":null,\
        "yawPrecision":null,"igsAntenna":null,"antennaHeight":
        """.utf8)

    /// The constants, the antenna height and `,"satelliteView":`.
    static let constantsLength = runLength(constants, Runs.satelliteView) + JSONWriter.maximumNumberLength

    /// `{"latitude":` to the bearing: its runs and five numbers. The widest-message test writes
    /// every field at its widest.
    static let headLength =
        runLength(Runs.latitude, Runs.longitude, Runs.altitude, Runs.speed, Runs.bearing)
        + 5 * JSONWriter.maximumNumberLength

    /// `,"geoidModel":null,"hrms":` to `,"receiverModel":`: its runs, six numbers, three
    /// integers, `diffStatus` (an integer or null), `diffID` and the longest `solutionType`.
    static let valuesLength =
        runLength(
            Runs.hrms, Runs.vrms, Runs.satellites, Runs.totalSatInUse, Runs.totalSatInView, Runs.pdop, Runs.hdop,
            Runs.vdop, Runs.diffAge, Runs.diffStatus, Runs.diffID, Runs.solutionType, Runs.receiverModel)
        + 6 * JSONWriter.maximumNumberLength + 4 * JSONWriter.maximumIntegerLength + JSONWriter.maximumDiffIDLength
        + FixQuality.allCases.map { JSONWriter.maximumStringLength($0.solutionType) }.reduce(4, max)

    /// `,"battery":null,"mslHeight":` to the undulation: its runs and two numbers.
    static let heightsLength = runLength(Runs.mslHeight, Runs.undulation) + 2 * JSONWriter.maximumNumberLength

    /// `,"utcTime":` to `gpsTimeStamp`'s value: its runs, a number, two timestamps.
    static let timesLength =
        runLength(Runs.utcTime, Runs.utcTimeStamp, Runs.gpsTimeStamp)
        + JSONWriter.maximumNumberLength + 2 * JSONWriter.maximumTimestampLength

    /// `,"accuracy":` to the closing brace: its runs and two numbers.
    static let tailLength =
        runLength(Runs.accuracy, Runs.verticalAccuracyMeters, Runs.sourceReferenceEpoch)
        + 2 * JSONWriter.maximumNumberLength
}

/// The total length of some verbatim runs: reservations are counted from the runs themselves.
func runLength(_ runs: [UInt8]...) -> Int {
    runs.reduce(0) { $0 + $1.count }
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
    /// Appends the message for `position` to `writer` as one JSON object value, in the same
    /// few copies as `LocationV2.write`.
    public static func write(_ position: Position, identity: ReceiverIdentity, to writer: inout JSONWriter) {
        let fix = position.hasFix
        /// The value with a fix when it is known and printable, else 0 (never null in V1).
        func orZero(_ value: Double?) -> Double {
            guard fix, let value, value.isFinite, value.magnitude < JSONWriter.maximumMagnitude else { return 0 }
            return value
        }
        func ifFix(_ value: Double?) -> Double? { fix ? value : nil }
        let hrms = orZero(position.hrms), vrms = orZero(position.vrms)

        writer.separate()
        writer.appendInPlace(maximumCount: headLength, endingInKey: true) { out in
            JSONWriter.writeVerbatim(#"{"latitude":"#, to: &out)
            JSONWriter.writeNumber(orZero(position.latitude), decimals: LocationDecimals.degrees, to: &out)
            JSONWriter.writeVerbatim(#","longitude":"#, to: &out)
            JSONWriter.writeNumber(orZero(position.longitude), decimals: LocationDecimals.degrees, to: &out)
            JSONWriter.writeVerbatim(#","altitude":"#, to: &out)
            JSONWriter.writeNumber(orZero(position.altitude), decimals: LocationDecimals.height, to: &out)
            JSONWriter.writeVerbatim(#","speed":"#, to: &out)
            JSONWriter.writeNumber(orZero(position.speed), decimals: LocationDecimals.speed, to: &out)
            JSONWriter.writeVerbatim(#","bearing":"#, to: &out)
            JSONWriter.writeNumber(orZero(position.bearing), decimals: LocationDecimals.bearing, to: &out)
            JSONWriter.writeVerbatim(#","accuracy":"#, to: &out)
            JSONWriter.writeNumber(hrms, decimals: LocationDecimals.accuracy, to: &out)
            JSONWriter.writeVerbatim(#","verticalAccuracyMeters":"#, to: &out)
            JSONWriter.writeNumber(vrms, decimals: LocationDecimals.accuracy, to: &out)
            JSONWriter.writeVerbatim(#","satellites":"#, to: &out)
            JSONWriter.writeInteger(position.satellitesInView, to: &out)
            JSONWriter.writeVerbatim(#","totalSatInView":"#, to: &out)
            JSONWriter.writeInteger(position.satellitesInView, to: &out)
            JSONWriter.writeVerbatim(#","pdop":"#, to: &out)
            JSONWriter.writeNumber(orZero(position.pdop), decimals: LocationDecimals.dop, to: &out)
            JSONWriter.writeVerbatim(#","hdop":"#, to: &out)
            JSONWriter.writeNumber(orZero(position.hdop), decimals: LocationDecimals.dop, to: &out)
            JSONWriter.writeVerbatim(#","vdop":"#, to: &out)
            JSONWriter.writeNumber(orZero(position.vdop), decimals: LocationDecimals.dop, to: &out)
            JSONWriter.writeVerbatim(#","diffAge":"#, to: &out)
            JSONWriter.writeNumber(orZero(position.diffAge), decimals: LocationDecimals.diffAge, to: &out)
            JSONWriter.writeVerbatim(#","diffStatus":"#, to: &out)
            JSONWriter.writeInteger(fix ? position.quality.diffStatus ?? 0 : 0, to: &out)
            JSONWriter.writeVerbatim(#","diffID":"#, to: &out)
            JSONWriter.writeDiffID(fix ? position.diffStationID : nil, to: &out)
            JSONWriter.writeVerbatim(#","vrms":"#, to: &out)
            JSONWriter.writeNumber(vrms, decimals: LocationDecimals.accuracy, to: &out)
            JSONWriter.writeVerbatim(#","hrms":"#, to: &out)
            JSONWriter.writeNumber(hrms, decimals: LocationDecimals.accuracy, to: &out)
            JSONWriter.writeVerbatim(#","receiverModel":"#, to: &out)
        }
        writer.appendRemembered(identity) { writer in
            writer.string(identity.receiverModel)
            writer.verbatimKey(#","mockProvider":"#)
            writer.string(ReceiverIdentity.mockProvider)
            writer.verbatimKey(#","appVersion":"#)
            writer.string(identity.appVersion)
        }
        writer.appendInPlace(maximumCount: timesLength, endingInKey: true) { out in
            JSONWriter.writeVerbatim(#","battery":null,"geoidModel":null,"mslHeight":"#, to: &out)
            JSONWriter.writeNumber(ifFix(position.mslHeight), decimals: LocationDecimals.height, to: &out)
            JSONWriter.writeVerbatim(#","undulation":"#, to: &out)
            JSONWriter.writeNumber(ifFix(position.undulation), decimals: LocationDecimals.height, to: &out)
            JSONWriter.writeVerbatim(#","utcTime":"#, to: &out)
            JSONWriter.writeUTCTime(position.time, nullWhenUnknown: false, to: &out)
            JSONWriter.writeVerbatim(#","utcTimeStamp":"#, to: &out)
            JSONWriter.writeISOTimestamp(position.time, to: &out)
            JSONWriter.writeVerbatim(#","gpsTimeStamp":"#, to: &out)
            JSONWriter.writeGPSTimestamp(position.time, to: &out)
            // subscriptionType 100: a non-Catalyst receiver (TMM-API.md §6.5).
            JSONWriter.writeVerbatim(#","subscriptionType":100,"satelliteView":"#, to: &out)
        }
        writeSatelliteView(position.sky, unknownAsNull: false, to: &writer)
        writer.endObject()
    }

    /// The most the first reservation writes: its runs (219 bytes, `{"latitude":` to
    /// `,"receiverModel":`), thirteen numbers, three integers and `diffID`.
    static let headLength =
        219 + 13 * JSONWriter.maximumNumberLength + 3 * JSONWriter.maximumIntegerLength
        + JSONWriter.maximumDiffIDLength

    /// `,"battery":null,"geoidModel":null,"mslHeight":` to `,"satelliteView":`: 143 bytes of
    /// runs, three numbers, two timestamps.
    static let timesLength = 143 + 3 * JSONWriter.maximumNumberLength + 2 * JSONWriter.maximumTimestampLength
}

/// `satelliteView`: one `{"Id","Elv","Azm","Snr","Use","Type"}` object per satellite in view
/// (signals already merged by `SkyView`), in the sky view's order. Unknown elevation, azimuth
/// or SNR is `null` (V2) or `0` (V1).
///
/// A 30-satellite sky is most of a message. An encoder's writer remembers the last view
/// (`SatelliteViewMemory`), so the view is copied whole when nothing in it changed, and only
/// the satellites that changed are formatted otherwise; a writer without memory formats every
/// object.
func writeSatelliteView(_ sky: SkyView, unknownAsNull: Bool, to writer: inout JSONWriter) {
    if writer.memory != nil {
        // Updated where it is: a local copy of the memory retained and released its arrays.
        writer.memory!.satelliteView.update(sky, unknownAsNull: unknownAsNull)
        writer.appendBytes(writer.memory!.satelliteView.bytes)
        return
    }
    let satellites = sky.packedSatellites
    writer.beginArray()
    for index in satellites.indices {
        writer.appendInPlace(maximumCount: SatelliteObject.maximumLength + 1) { out in
            if index > 0 { out.append(UInt8(ascii: ",")) }
            SatelliteObject.write(satellites[index], unknownAsNull: unknownAsNull, to: &out)
        }
    }
    writer.endArray()
}

/// One `satelliteView` element, written in place.
enum SatelliteObject {
    /// The verbatim runs, as bytes (see `LocationV2.Runs`).
    enum Runs {
        static let id: [UInt8] = Array(#"{"Id":"#.utf8)
        static let elevation: [UInt8] = Array(#","Elv":"#.utf8)
        static let azimuth: [UInt8] = Array(#","Azm":"#.utf8)
        static let snr: [UInt8] = Array(#","Snr":"#.utf8)
        static let usedType: [UInt8] = Array(#","Use":true,"Type":"#.utf8)
        static let unusedType: [UInt8] = Array(#","Use":false,"Type":"#.utf8)
    }

    /// The longest object: the runs (6 + 7 + 7 + 7 + 20 bytes and the closing brace), the id
    /// (UInt16, 5 digits), two Int16 (`-32768`, 6 bytes) and two UInt8 (SNR and constellation,
    /// 3 digits). Writing more would trap; the extreme-values test writes exactly this many.
    static let maximumLength = 48 + 5 + 2 * 6 + 2 * 3

    /// The longest value `writeValue` writes: `null`, or an SNR of three digits.
    static let maximumValueLength = 4

    /// Appends an elevation, azimuth or SNR: the number, else `null` (V2) or `0` (V1).
    @inline(__always)
    static func writeValue(_ number: Int?, unknownAsNull: Bool, to out: inout OutputSpan<UInt8>) {
        if let number {
            JSONWriter.writeInteger(number, to: &out)
        } else if unknownAsNull {
            JSONWriter.writeNull(to: &out)
        } else {
            out.append(UInt8(ascii: "0"))
        }
    }

    /// Appends `{"Id":...,"Type":...}` for the satellite packed in `word` (`Satellite.packed`):
    /// five verbatim runs around its integers (`Use` and the next key share one:
    /// `,"Use":true,"Type":`). Returns where the SNR value starts and ends in `out`.
    @discardableResult
    static func write(_ word: UInt64, unknownAsNull: Bool, to out: inout OutputSpan<UInt8>) -> (start: Int, end: Int) {
        JSONWriter.writeVerbatim(Runs.id, to: &out)
        JSONWriter.writeInteger(Int(Satellite.id(word)), to: &out)
        JSONWriter.writeVerbatim(Runs.elevation, to: &out)
        writeValue(Satellite.elevation(word).map { Int($0) }, unknownAsNull: unknownAsNull, to: &out)
        JSONWriter.writeVerbatim(Runs.azimuth, to: &out)
        writeValue(Satellite.azimuth(word).map { Int($0) }, unknownAsNull: unknownAsNull, to: &out)
        JSONWriter.writeVerbatim(Runs.snr, to: &out)
        let snrStart = out.count
        writeValue(Satellite.snr(word).map { Int($0) }, unknownAsNull: unknownAsNull, to: &out)
        let snrEnd = out.count
        JSONWriter.writeVerbatim(Satellite.used(word) ? Runs.usedType : Runs.unusedType, to: &out)
        JSONWriter.writeInteger(Int(Satellite.constellation(word).rawValue), to: &out)
        out.append(UInt8(ascii: "}"))
        return (snrStart, snrEnd)
    }
}
