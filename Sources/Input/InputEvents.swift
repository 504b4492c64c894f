import GNSS

// The input side's vocabulary: what the gpsd threads hand over (`ReceiverInputEvent`), what the
// input state amounts to (`InputState`) and what changed (`InputChange`). `InputTracker` turns the
// first into the last; `ReceiverInput` (InputLoop) carries them between threads.

/// What the gpsd threads hand to the input side's loop, in order: gpsd's events as the session
/// reported them, and the epochs decoded from its lines.
public enum ReceiverInputEvent: Sendable, Equatable {
    /// A fact from the gpsd session (connected, devices, connection lost, quiet, ...).
    case gpsd(GPSDEvent)
    /// One epoch of a stream of every device's NMEA (a `GPSDWatch.everything` session: one
    /// receiver, since gpsd does not say which device sent a sentence).
    case position(Position)
    /// One epoch of one receiver's own stream (a `GPSDWatch.device` session), decoded at `at`
    /// (monotonic nanoseconds).
    case receiverPosition(path: String, Position, at: Int64)
    /// That receiver's stream has been quiet for `seconds` (reported once per quiet spell).
    case receiverQuiet(path: String, seconds: Double)
    /// That receiver's own watch is in place (gpsd answered it with its device list): its
    /// sentences are read from now on, those gpsd read before are not.
    case receiverWatching(path: String)
    /// That receiver's own watch saw gpsd close it (or list it no longer), after posting the
    /// epochs gpsd reported before the close: nothing more comes from it. The main session's
    /// DEVICE report of the close is a different thread's and may overtake them.
    case receiverClosed(path: String)
}

/// What happened on the input side since the last `drain()`, in order.
public enum InputChange: Sendable, Equatable {
    /// One receiver epoch.
    case position(Position)
    /// gpsd opened a receiver (or reported it open when the session started).
    case receiverConnected(path: String)
    /// gpsd closed a receiver, or the connection to gpsd was lost while it had one.
    case receiverDisconnected(path: String)
    /// The receiver TMM clients are served is now this one (nil: none). Only with one stream per
    /// receiver (the daemon's input); a failover comes after the `inputLost` it causes.
    case servedReceiver(path: String?)
    /// Positions stopped flowing.
    case inputLost(InputLossReason)
    /// Positions flow again.
    case inputRestored
    /// The gpsd commands of a `connect()` or `disconnect()` (its ticket) are done: all accepted
    /// (`failure` nil), or stopped at the first one gpsd refused or could not be asked.
    case receiverControlFinished(ticket: Int, failure: String?)
}

/// `live` while positions flow, `lost` after a loss, `waiting` before any data (`/events`'
/// `status` message carries it as it is).
public enum InputState: String, Sendable, Equatable {
    case waiting, live, lost
}
