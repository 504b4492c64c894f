import GNSS
import GPSD
import Input
import Posix

/// The gpsd session's consumer for the daemon and `tmm-bridge watch` (both through
/// `ReceiverInput`): each NMEA line and each of gpsd's reports goes, on the gpsd thread, to the
/// receiver's `ReceiverEpochs`, which reads the stream its gpsd driver makes exact (the NMEA
/// parser for NMEA receivers, gpsd's TPV/SKY/GST for binary ones; the driver comes with gpsd's
/// DEVICE reports), and an epoch is posted to the inbox the moment it is complete. gpsd's events are
/// forwarded as they are, after applying what they mean for the cycle in progress: a device gpsd
/// closed ends its source (its last cycle is emitted before the close is), a lost connection
/// cuts the source off (the partial cycle is dropped; the reconnected stream starts afresh).
///
/// It keeps no input state (receivers present, input lost): `InputTracker` does, on the thread
/// that drains the inbox. gpsd 3.22 passes NMEA through untagged (gpsd.c raw_report writes each
/// device's sentences to every NMEA watcher as they come), so a consumer made with a `receiver`
/// path reads one device's watch (`GPSDWatch.device`) and tags its epochs with that path; it
/// forwards only its stream's quiet spells, the session watching the device list reporting the
/// rest. Without one it is the consumer of a watch on everything (one receiver).
public struct GPSDEpochConsumer: GPSDStreamConsumer {
    private let inbox: Inbox<ReceiverInputEvent>
    private let receiver: String?
    private var stream = ReceiverEpochs()
    /// Called after each sentence is decoded, with the time it was read (the latency benchmark's
    /// hook; nil in the bridge).
    private let sentenceObserver: (@Sendable (Int64) -> Void)?

    public init(
        inbox: Inbox<ReceiverInputEvent>, receiver: String? = nil,
        sentenceObserver: (@Sendable (Int64) -> Void)? = nil
    ) {
        self.inbox = inbox
        self.receiver = receiver
        self.sentenceObserver = sentenceObserver
    }

    /// The NMEA decoder's counters so far.
    public var statistics: NMEAStreamDecoder.Statistics { stream.nmea.decoder.statistics }
    /// The receiver's epoch sources (which one serves, the reports' counters).
    public var epochs: ReceiverEpochs { stream }

    public mutating func sentence(_ line: Span<UInt8>, now: Int64) {
        // The closures capture the inbox alone, not `self`, whose stream they run inside of.
        let inbox = self.inbox
        let receiver = self.receiver
        stream.sentence(line, now: now) { position in Self.post(position, from: receiver, at: now, to: inbox) }
        sentenceObserver?(now)
    }

    public mutating func report(_ report: GPSDReport, now: Int64) {
        let inbox = self.inbox
        let receiver = self.receiver
        stream.report(report, now: now) { position in Self.post(position, from: receiver, at: now, to: inbox) }
    }

    public var deadline: Int64? { stream.deadline }

    public mutating func event(_ event: GPSDEvent, now: Int64) {
        let inbox = self.inbox
        let receiver = self.receiver
        switch event {
        case .device(let device) where device.isActive && (receiver == nil || receiver == device.path):
            stream.driver(device.driver) { position in Self.post(position, from: receiver, at: now, to: inbox) }
        case .devices(let devices):
            if let own = devices.first(where: { receiver == nil ? $0.isActive : $0.path == receiver }), own.isActive {
                stream.driver(own.driver) { position in Self.post(position, from: receiver, at: now, to: inbox) }
            }
        default:
            break
        }
        switch event {
        case .device(let device) where !device.isActive && (receiver == nil || receiver == device.path):
            stream.sourceClosed { position in Self.post(position, from: receiver, at: now, to: inbox) }
        case .connectionLost:
            stream.sourceLost { position in Self.post(position, from: receiver, at: now, to: inbox) }
        case .connected, .devices, .device, .unreachable, .quiet:
            break
        }
        guard let receiver else {
            inbox.post(.gpsd(event))
            return
        }
        switch event {
        case .quiet(let seconds): inbox.post(.receiverQuiet(path: receiver, seconds: seconds))
        case .devices(let devices):
            inbox.post(.receiverWatching(path: receiver))
            if !devices.contains(where: { $0.path == receiver && $0.isActive }) {
                inbox.post(.receiverClosed(path: receiver))
            }
        case .device(let device) where !device.isActive && device.path == receiver:
            inbox.post(.receiverClosed(path: receiver))
        case .connected, .device, .unreachable, .connectionLost: break
        }
    }

    public mutating func idle(now: Int64) {
        let inbox = self.inbox
        let receiver = self.receiver
        stream.idle(now: now) { position in Self.post(position, from: receiver, at: now, to: inbox) }
    }

    private static func post(
        _ position: Position, from receiver: String?, at now: Int64,
        to inbox: Inbox<ReceiverInputEvent>
    ) {
        if let receiver {
            inbox.post(.receiverPosition(path: receiver, position, at: now))
        } else {
            inbox.post(.position(position))
        }
    }
}
