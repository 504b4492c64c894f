import GNSS

/// One receiver's epochs, from whichever of gpsd's two streams carries them exactly
/// (`GPSDDriver.source`): its NMEA sentences through `EpochStream`, or gpsd's reports through
/// `GPSDReportAssembler`. The other stream is read and ignored (counted), so the two never mix in
/// one epoch.
///
/// gpsd can change a receiver's driver mid-stream (a u-blox receiver starts on the NMEA driver
/// until its first UBX packet). The switch drops the cycle in progress on the old source (its
/// end would never come there), and the new source serves only epochs later than the last one
/// served: none twice, none mixed, and the one in progress is served by the new source's report
/// of it.
public struct ReceiverEpochs: Sendable {
    public struct Statistics: Sendable, Equatable {
        /// Driver changes that changed the source.
        public var sourceSwitches = 0
        /// Lines and reports of the stream not serving (gpsd's pseudo-NMEA of a binary receiver,
        /// gpsd's TPVs of an NMEA one).
        public var ignoredSentences = 0
        public var ignoredReports = 0

        public init() {}
    }

    public private(set) var driver = GPSDDriver("")
    public private(set) var nmea = EpochStream()
    public private(set) var reports = GPSDReportAssembler()
    public private(set) var statistics = Statistics()
    /// The time of the last epoch the NMEA source served (the reports' assembler keeps its own:
    /// `GPSDReportAssembler.lastServedTime`); each is handed to the other at a switch.
    private var nmeaLastServed: UTCTimestamp?

    public init() {}

    public var source: EpochSource { driver.source }

    /// gpsd named (or renamed) the receiver's driver; a fix held on gpsd's reports is served
    /// before a switch away from them.
    public mutating func driver(_ name: String, _ emit: (Position) -> Void) {
        let new = GPSDDriver(name)
        guard new != driver else { return }
        let old = driver.source
        driver = new
        reports.receiverAccuracy = new.reportsReceiverAccuracy
        guard new.source != old else { return }
        statistics.sourceSwitches += 1
        switch new.source {
        case .gpsdReports:
            nmea.sourceLost()
            reports.restart()
            reports.continueAfter(nmeaLastServed)
        case .nmea:
            reports.flush(emit)
            nmeaLastServed = reports.lastServedTime
            // gpsd falls back to the NMEA driver when a receiver is switched to NMEA output;
            // its sentences start a new cycle.
            nmea.sourceLost()
        }
    }

    /// One NMEA line from gpsd (the receiver's own sentence, or gpsd's pseudo-NMEA).
    @discardableResult
    public mutating func sentence(_ line: Span<UInt8>, now: Int64, _ emit: (Position) -> Void) -> Bool {
        guard source == .nmea else {
            statistics.ignoredSentences += 1
            return true
        }
        var served: UTCTimestamp?? = nil
        let accepted = nmea.sentence(line, now: now) { position in
            served = .some(position.time)
            emit(position)
        }
        if let served, let time = served { nmeaLastServed = time }
        return accepted
    }

    /// One of gpsd's reports for this receiver, read at `now`.
    public mutating func report(_ report: GPSDReport, now: Int64, _ emit: (Position) -> Void) {
        guard source == .gpsdReports else {
            statistics.ignoredReports += 1
            return
        }
        reports.report(report, now: now, emit)
    }

    /// When the fix held on gpsd's reports is due (monotonic nanoseconds): the reading thread
    /// waits no longer than this for input before calling `idle`.
    public var deadline: Int64? { source == .gpsdReports ? reports.deadline : nil }

    /// Time passed without input: an overdue NMEA cycle, or a held fix whose hold has ended, is
    /// emitted.
    public mutating func idle(now: Int64, _ emit: (Position) -> Void) {
        switch source {
        case .nmea: nmea.idle(now: now, emit)
        case .gpsdReports: reports.idle(now: now, emit)
        }
    }

    /// End of all input (`decode` at the end of a file).
    public mutating func finish(_ emit: (Position) -> Void) {
        switch source {
        case .nmea: nmea.finish(emit)
        case .gpsdReports: reports.flush(emit)
        }
    }

    /// The source ended cleanly (gpsd closed the device): a pending NMEA cycle or held fix is
    /// emitted; the next device starts afresh and is named again by gpsd.
    public mutating func sourceClosed(_ emit: (Position) -> Void) {
        if source == .nmea { nmea.sourceClosed(emit) } else { nmea.sourceLost() }
        reports.flush(emit)
        reports.restart()
        nmeaLastServed = nil
        driver = GPSDDriver("")
        reports.receiverAccuracy = false
    }

    /// The source was cut off (the gpsd connection broke): the partial NMEA cycle is dropped; a
    /// held fix is whole, and served.
    public mutating func sourceLost(_ emit: (Position) -> Void) {
        nmea.sourceLost()
        reports.flush(emit)
        reports.restart()
        nmeaLastServed = nil
    }
}
