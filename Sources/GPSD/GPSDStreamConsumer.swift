import GNSS
import Input

/// The receiving end of a gpsd session, called on the gpsd thread in the order gpsd sent things.
/// The session hands it raw NMEA lines, gpsd's reports and `GPSDEvent`s and does nothing else
/// with them: the consumer decodes (InputLoop's `GPSDEpochConsumer` feeds the receiver's
/// `Input.ReceiverEpochs`).
///
/// It is moved to the gpsd thread once, at `GPSDSession.start`, and lives there from then on, so
/// it needs no lock: the calls are made one at a time, by that thread only.
public protocol GPSDStreamConsumer: Sendable {
    /// One NMEA sentence exactly as gpsd passed it through, line end stripped. The bytes are the
    /// session's read buffer: valid during this call only, overwritten by the next read.
    mutating func sentence(_ line: Span<UInt8>, now: Int64)
    /// One of gpsd's reports (TPV, SKY, GST) of the watched device(s), as libgps unpacked it.
    /// Not called on a `GPSDWatch.devices` session.
    mutating func report(_ report: GPSDReport, now: Int64)
    /// Anything else gpsd said, or that happened to the connection.
    mutating func event(_ event: GPSDEvent, now: Int64)
    /// A poll interval passed without a line (`GPSDSession.Configuration.pollInterval`): time for
    /// whatever waits on the clock.
    mutating func idle(now: Int64)
    /// When the consumer next needs `idle` (monotonic nanoseconds), if sooner than a poll
    /// interval: a fix held for a later report of its time. The session waits no longer.
    var deadline: Int64? { get }
}

extension GPSDStreamConsumer {
    public var deadline: Int64? { nil }
}

/// What a session's `?WATCH` asks gpsd for.
public enum GPSDWatch: Sendable, Equatable {
    /// Device reports and every device's NMEA. gpsd 3.22 does not say which device sent a
    /// sentence, so this is one stream only while gpsd reads one receiver.
    case everything
    /// Device reports only (`DEVICES`, `DEVICE`): what the bridge's main session watches, the
    /// NMEA coming from one `device` watch per receiver.
    case devices
    /// Only this device's NMEA and reports (gpsd's `"device"` member; checked against gpsd 3.22:
    /// other devices' sentences never arrive, and the watch outlives the device's close and
    /// resumes when gpsd opens the same path again).
    case device(String)
}
