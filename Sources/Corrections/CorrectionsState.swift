// What the NTRIP client is doing, in the words `status`, STATUS=, REST and /events use. The codes
// are the API's: one place spells them.

/// The corrections client's state.
public enum CorrectionsState: Equatable, Sendable, CustomStringConvertible {
    /// Not configured, or stopped.
    case off
    /// Resolving, connecting, TLS, request sent, or waiting to retry after a failure that has no
    /// state of its own.
    case connecting
    /// RTCM frames are arriving and go to the receiver.
    case streaming
    /// The caster refused the credentials (401, 403, or a Rev 1 `ERROR - Bad Password`).
    case loginRefused
    /// The caster answered with its sourcetable (or 404): the mount point is not there now.
    /// `offered` lists the mount points the sourcetable named, in its order.
    case noSuchMountPoint(offered: [String])
    /// No connection or no answer: DNS, refused, connect or TLS failure, nothing within the time-out.
    case unreachable(reason: String)
    /// The stream stopped yielding valid RTCM: nothing for `NTRIPSession.silenceLimit`, only garbage,
    /// or the caster ended the stream before any frame.
    case noData
    /// The answer is not NTRIP: an endless or oversized head, a bad status line, broken chunking.
    case protocolError(reason: String)

    /// How many offered mount points `description` names before "and N more".
    public static let mountPointsNamed = 10

    /// The state's code: `off`, `connecting`, `streaming`, `login-refused`, `no-such-mount-point`,
    /// `unreachable`, `no-data`, `protocol-error`.
    public var code: String {
        switch self {
        case .off: "off"
        case .connecting: "connecting"
        case .streaming: "streaming"
        case .loginRefused: "login-refused"
        case .noSuchMountPoint: "no-such-mount-point"
        case .unreachable: "unreachable"
        case .noData: "no-data"
        case .protocolError: "protocol-error"
        }
    }

    /// One human sentence, e.g. "no such mount point; the caster offers: A, B, C".
    public var description: String {
        switch self {
        case .off: return "corrections are off"
        case .connecting: return "connecting to the caster"
        case .streaming: return "receiving RTCM corrections"
        case .loginRefused: return "the caster refused the user name or password"
        case .noSuchMountPoint(let offered):
            guard !offered.isEmpty else { return "no such mount point; the caster named no other" }
            let named = offered.prefix(Self.mountPointsNamed).joined(separator: ", ")
            let more = offered.count - Self.mountPointsNamed
            return "no such mount point; the caster offers: " + named + (more > 0 ? " and \(more) more" : "")
        case .unreachable(let reason): return "the caster is unreachable: " + reason
        case .noData: return "no valid RTCM data from the caster"
        case .protocolError(let reason): return "the caster's answer is not NTRIP: " + reason
        }
    }

    /// True for the states that report a failure (everything but off, connecting and streaming).
    public var isFailure: Bool {
        switch self {
        case .off, .connecting, .streaming: false
        case .loginRefused, .noSuchMountPoint, .unreachable, .noData, .protocolError: true
        }
    }
}

/// What the client has done since it was made: the state and the counters an operator reads.
public struct CorrectionsHealth: Equatable, Sendable {
    public var state: CorrectionsState
    /// When `state` began (monotonic ns).
    public var since: Int64
    /// 2 or 1: the NTRIP revision the caster last answered with; nil before any answer.
    public var revision: Int?
    /// RTCM bytes received (after de-chunking).
    public var bytes: Int
    /// Valid frames delivered.
    public var frames: Int
    /// Frames whose CRC failed: dropped.
    public var damagedFrames: Int
    /// Stream bytes in no valid frame (garbage, damaged frames).
    public var skippedBytes: Int
    /// When the last valid frame was delivered (monotonic ns).
    public var lastFrameAt: Int64?
    /// The reference station id (DF003) of the last frame that carries one (1005/1006, observables, MSM).
    public var referenceStationID: Int?
    /// The message number of the last valid frame.
    public var lastMessageNumber: Int?
    public var ggaSent: Int
    public var lastGGAAt: Int64?
    /// `.connect` actions so far.
    public var connectAttempts: Int
    /// While waiting to retry: when the next attempt starts.
    public var nextAttemptAt: Int64?

    public init(state: CorrectionsState = .off, since: Int64 = 0) {
        self.state = state
        self.since = since
        revision = nil
        bytes = 0
        frames = 0
        damagedFrames = 0
        skippedBytes = 0
        lastFrameAt = nil
        referenceStationID = nil
        lastMessageNumber = nil
        ggaSent = 0
        lastGGAAt = nil
        connectAttempts = 0
        nextAttemptAt = nil
    }
}
