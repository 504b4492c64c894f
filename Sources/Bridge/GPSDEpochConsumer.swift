import GNSS
import GPSD
import Posix

/// What the gpsd thread hands to the input side's loop, in order: gpsd's events as the session
/// reported them, and the epochs decoded from its lines.
public enum ReceiverInputEvent: Sendable, Equatable {
    /// A fact from the gpsd session (connected, devices, connection lost, quiet, ...).
    case gpsd(GPSDEvent)
    /// One receiver epoch, decoded and assembled.
    case position(Position)
}

/// The gpsd session's consumer for the daemon and `tmm-bridge watch` (both through
/// `ReceiverInput`): each NMEA line is decoded on the gpsd thread by the one `EpochStream`, and
/// an epoch is posted to the inbox the moment its closing sentence is decoded. gpsd's events are
/// forwarded as they are, after applying what they mean for the cycle in progress: a device gpsd
/// closed ends its source (its last cycle is emitted before the close is), a lost connection
/// cuts the source off (the partial cycle is dropped; the reconnected stream starts afresh).
///
/// It keeps no input state (receivers present, input lost): `InputTracker` does, on the thread
/// that drains the inbox. gpsd 3.22 passes NMEA through untagged (gpsd.c raw_report writes each
/// device's sentences to every NMEA watcher as they come), so one stream is decoded per gpsd
/// connection, not one per receiver; see docs/ARCHITECTURE.md.
public struct GPSDEpochConsumer: GPSDStreamConsumer {
    private let inbox: Inbox<ReceiverInputEvent>
    private var stream = EpochStream()
    /// Called after each sentence is decoded, with the time it was read (the latency benchmark's
    /// hook; nil in the bridge).
    private let sentenceObserver: (@Sendable (Int64) -> Void)?

    public init(inbox: Inbox<ReceiverInputEvent>, sentenceObserver: (@Sendable (Int64) -> Void)? = nil) {
        self.inbox = inbox
        self.sentenceObserver = sentenceObserver
    }

    /// The decoder's counters so far.
    public var statistics: NMEAStreamDecoder.Statistics { stream.decoder.statistics }

    public mutating func sentence(_ line: Span<UInt8>, now: Int64) {
        // The closures capture the inbox alone, not `self`, whose stream they run inside of.
        let inbox = self.inbox
        stream.sentence(line, now: now) { position in inbox.post(.position(position)) }
        sentenceObserver?(now)
    }

    public mutating func event(_ event: GPSDEvent, now: Int64) {
        let inbox = self.inbox
        switch event {
        case .device(let device) where !device.isActive:
            stream.sourceClosed { position in inbox.post(.position(position)) }
        case .connectionLost:
            stream.sourceLost()
        case .connected, .devices, .device, .unreachable, .quiet:
            break
        }
        inbox.post(.gpsd(event))
    }

    public mutating func idle(now: Int64) {
        let inbox = self.inbox
        stream.idle(now: now) { position in inbox.post(.position(position)) }
    }
}
