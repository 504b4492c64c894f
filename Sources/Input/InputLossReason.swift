/// Why positions stopped flowing (decided by `InputTracker` from `GPSDEvent`s).
public enum InputLossReason: Sendable, Equatable, CustomStringConvertible {
    /// No gpsd answered at the configured address (the text is libgps's reason).
    case gpsdUnreachable(String)
    /// gpsd closed the connection or it failed mid-read.
    case gpsdConnectionLost
    /// gpsd reported that it closed this device (unplugged, or removed through the control socket).
    case receiverRemoved(path: String)
    /// The receiver stopped sending while gpsd kept it open.
    case receiverSilent(seconds: Double)

    /// The reason codes, as `/events`' `inputLost` carries them (docs/events.md): the one list.
    public enum Code: String, Sendable, Equatable, CaseIterable {
        case gpsdUnreachable, gpsdConnectionLost, receiverRemoved, receiverSilent
    }

    /// This reason's code.
    public var code: Code {
        switch self {
        case .gpsdUnreachable: .gpsdUnreachable
        case .gpsdConnectionLost: .gpsdConnectionLost
        case .receiverRemoved: .receiverRemoved
        case .receiverSilent: .receiverSilent
        }
    }

    public var description: String {
        switch self {
        case .gpsdUnreachable(let reason): "no gpsd answers (\(reason))"
        case .gpsdConnectionLost: "gpsd closed the connection"
        case .receiverRemoved(let path): "gpsd closed \(path) (receiver unplugged or removed)"
        case .receiverSilent(let seconds): "no data from the receiver for \(seconds) s"
        }
    }
}
