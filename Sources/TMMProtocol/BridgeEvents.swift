import GNSS
import Input

// The messages of the V2 `/events` channel. TMM's own schema is not published (TMM-API.md §6.7,
// §10 item 3), so this is ours, documented in docs/events.md: one JSON object per text frame,
// always with `event` (the kind) and `time` (when the bridge saw it happen, ISO 8601 UTC), plus
// the members of that kind. Names are camelCase like the rest of TMM's JSON; values that are
// unknown are `null`, never left out, as in LocationV2.

/// One `/events` message.
public enum BridgeEvent: Sendable, Equatable {
    /// The first message on every `/events` connection: the state at the moment it connected.
    case status(BridgeStatus)
    /// A receiver started delivering data (gpsd opened it). `device` is its path, if known.
    case receiverConnected(device: String?, receiver: ReceiverInfo)
    /// A receiver went away (unplugged, or removed from gpsd).
    case receiverDisconnected(device: String?, receiver: ReceiverInfo)
    /// The solution type changed between two epochs (including to and from no fix).
    case fixQualityChanged(previous: FixQuality, current: FixQuality)
    /// Positions stopped flowing. The message's `reason` is the reason's code
    /// (`InputLossReason.Code`, the one list of them), its `message` the reason's description.
    case inputLost(InputLossReason)
    /// Positions flow again after `inputLost`.
    case inputRestored
    /// A registration request was answered. The application's id is deliberately not part of it:
    /// Access Code V1 is computable from the id and the clock, so any reader of `/events` (a local
    /// process, or a web page once V2 is unlocked) could otherwise authenticate as that app.
    case registration(result: RegistrationResult)
    /// The NTRIP client began streaming corrections from `caster` (`host:port`, never a login)
    /// and `mountPoint`, with NTRIP `revision` 1 or 2.
    case correctionsConnected(caster: String, mountPoint: String, revision: Int?)
    /// Corrections stopped: `reason` is the corrections state's code (`no-data`, `unreachable`,
    /// `protocol-error`, `no-such-mount-point`, `off`, ...), `message` its description.
    case correctionsLost(reason: String, message: String)
    /// The caster refused the login (401/403): the user name or password is wrong.
    case correctionsLoginRefused(caster: String, mountPoint: String)

    /// The `event` member's value.
    public var name: String {
        switch self {
        case .status: "status"
        case .receiverConnected: "receiverConnected"
        case .receiverDisconnected: "receiverDisconnected"
        case .fixQualityChanged: "fixQualityChanged"
        case .inputLost: "inputLost"
        case .inputRestored: "inputRestored"
        case .registration: "registration"
        case .correctionsConnected: "correctionsConnected"
        case .correctionsLost: "correctionsLost"
        case .correctionsLoginRefused: "correctionsLoginRefused"
        }
    }
}

/// What `status` reports.
public struct BridgeStatus: Sendable, Equatable {
    /// `live` while positions flow, `lost` after an input loss, `waiting` before the first data.
    public var input: InputState
    public var receiver: ReceiverInfo
    /// The solution type of the latest epoch (`.noFix` before any).
    public var quality: FixQuality

    public init(input: InputState, receiver: ReceiverInfo, quality: FixQuality) {
        self.input = input
        self.receiver = receiver
        self.quality = quality
    }
}

/// Writes `/events` messages.
public enum BridgeEventEncoder {
    /// Appends `event` as one JSON object, stamped with the wall-clock time `unixMilliseconds`.
    public static func write(_ event: BridgeEvent, unixMilliseconds: Int64, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("event", string: event.name)
        writer.key("time")
        writer.isoTimestampValue(wallClock(unixMilliseconds))
        switch event {
        case .status(let status):
            writer.field("input", string: status.input.rawValue)
            writeQuality(status.quality, prefix: nil, to: &writer)
            writer.key("receiver")
            RESTBodies.writeReceiverInfo(status.receiver, to: &writer)
        case .receiverConnected(let device, let receiver), .receiverDisconnected(let device, let receiver):
            writer.field("device", string: device)
            writer.key("receiver")
            RESTBodies.writeReceiverInfo(receiver, to: &writer)
        case .fixQualityChanged(let previous, let current):
            writeQuality(current, prefix: nil, to: &writer)
            writeQuality(previous, prefix: "previous", to: &writer)
        case .inputLost(let reason):
            writer.field("reason", string: reason.code.rawValue)
            writer.field("message", string: reason.description)
        case .inputRestored:
            break
        case .registration(let result):
            writer.field("registrationResult", string: result.rawValue)
        case .correctionsConnected(let caster, let mountPoint, let revision):
            writer.field("caster", string: caster)
            writer.field("mountPoint", string: mountPoint)
            writer.field("ntripRevision", integer: revision)
        case .correctionsLost(let reason, let message):
            writer.field("reason", string: reason)
            writer.field("message", string: message)
        case .correctionsLoginRefused(let caster, let mountPoint):
            writer.field("caster", string: caster)
            writer.field("mountPoint", string: mountPoint)
        }
        writer.endObject()
    }

    /// The message as bytes.
    public static func bytes(_ event: BridgeEvent, unixMilliseconds: Int64) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 512)
        write(event, unixMilliseconds: unixMilliseconds, to: &writer)
        return writer.bytes
    }

    /// `diffStatus` and `solutionType` with LocationV2's meaning (`null` without a fix).
    private static func writeQuality(_ quality: FixQuality, prefix: String?, to writer: inout JSONWriter) {
        writer.field(prefix.map { $0 + "DiffStatus" } ?? "diffStatus", integer: quality.diffStatus)
        writer.field(prefix.map { $0 + "SolutionType" } ?? "solutionType", string: quality.solutionType)
    }

    /// The UTC calendar instant of a Unix time in milliseconds (floor division for times before 1970).
    static func wallClock(_ unixMilliseconds: Int64) -> UTCTimestamp {
        let millisecondsPerDay: Int64 = 86_400_000
        var days = unixMilliseconds / millisecondsPerDay
        var rest = unixMilliseconds % millisecondsPerDay
        if rest < 0 {
            days -= 1
            rest += millisecondsPerDay
        }
        return UTCTimestamp(date: CalendarDate(daysSinceEpoch: Int(days)), nanosecondsOfDay: rest * 1_000_000)
    }
}
