/// Epochs from gpsd's reports (the JSON source; `EpochAssembler` is the NMEA one): one `Position`
/// per fix time, emitted the moment gpsd's TPV for it is read.
///
/// gpsd sends a TPV when a receiver's cycle ends (`REPORT_IS`), SKY when it has new satellites
/// and GST only for NMEA receivers' `$GxGST`; SKY and GST are kept and attached to the fixes that
/// follow, as the NMEA path keeps the last GSV set. Rules (docs/input.md, "Two sources"):
/// - **one epoch per time**: the first TPV of a time with a fix is served; later TPVs of the same
///   time (gpsd repeats some, and its SiRF and TSIP drivers report one fix per navigation
///   message) are dropped and counted, so no client sees two positions for one instant. A TPV
///   without a fix is served only when its time is new, and a fix of the same time still follows it.
/// - **late** TPVs (older than the last served time) are dropped and counted, unless the time
///   went back by more than `timeJumpNanoseconds` (a receiver reset or a replayed capture): then
///   the stream starts afresh.
/// - a TPV without a time serves only when it ends a fix (mode below 2 after a fix): clients
///   learn at once that the fix is gone; more of them say nothing new.
/// - **heights as gpsd gives them**: altHAE, altMSL and geoidSep, never re-derived.
/// - **accuracy** from GST sigmas of the same time; else, for drivers that pass the receiver's
///   own estimate (`receiverAccuracy`: u-blox hAcc/vAcc), TPV's eph/epv; else none.
public struct GPSDReportAssembler: Sendable {
    public struct Statistics: Sendable, Equatable {
        public var fixes = 0
        public var epochs = 0
        /// TPVs of a time already served.
        public var repeated = 0
        /// TPVs older than the last served time.
        public var late = 0
        public var skies = 0
        public var noises = 0

        public init() {}
    }

    /// A time jump backwards larger than this restarts the stream instead of dropping the fix.
    public static let timeJumpNanoseconds: Int64 = 10_000_000_000

    public private(set) var statistics = Statistics()
    /// TPV's eph/epv are the receiver's own accuracy estimates (the driver's choice; see
    /// `GPSDDriver`), so they stand in for GST's sigmas.
    public var receiverAccuracy = false

    private var sky = SkyView()
    private var pdop: Double?
    private var hdop: Double?
    private var vdop: Double?
    private var satellitesUsed: Int?
    private var noise: GPSDNoise?
    /// The last served epoch's time (Unix nanoseconds) and whether it had a fix.
    private var lastTime: Int64?
    private var lastHadFix = false
    /// `continueAfter` a time without a date (an NMEA cycle with no RMC or ZDA): fixes at or
    /// before this time of day, and within `timeJumpNanoseconds` of it, are not served again.
    private var afterTimeOfDay: Int64?

    public init() {}

    /// A TPV: emits its epoch unless the rules above drop it.
    public mutating func fix(_ fix: GPSDFix, _ emit: (Position) -> Void) {
        statistics.fixes += 1
        let hasFix = fix.quality != .noFix
        guard let time = fix.time?.unixNanoseconds else {
            guard !hasFix, lastHadFix else {
                statistics.repeated += 1
                return
            }
            lastHadFix = false
            serve(fix, emit)
            return
        }
        if lastTime == nil, let after = afterTimeOfDay, let timeOfDay = fix.time?.nanosecondsOfDay {
            let behind = after - timeOfDay
            if behind >= 0 && behind <= Self.timeJumpNanoseconds {
                statistics.repeated += 1
                return
            }
        }
        if let lastTime {
            if time < lastTime - Self.timeJumpNanoseconds {
                self.lastTime = nil
            } else if time < lastTime {
                statistics.late += 1
                return
            } else if time == lastTime && (lastHadFix || !hasFix) {
                statistics.repeated += 1
                return
            }
        }
        lastTime = time
        lastHadFix = hasFix
        afterTimeOfDay = nil
        serve(fix, emit)
    }

    /// A SKY: its satellites replace the kept sky (a SKY without satellites keeps it), its DOPs
    /// replace the kept DOPs.
    public mutating func sky(_ report: GPSDSky) {
        statistics.skies += 1
        if report.satellites.count > 0 {
            sky = report.satellites
            satellitesUsed = report.satellitesUsed
        }
        pdop = report.pdop
        hdop = report.hdop
        vdop = report.vdop
    }

    /// A GST: kept for the fix of the same time.
    public mutating func noise(_ report: GPSDNoise) {
        statistics.noises += 1
        noise = report
    }

    /// Any report.
    public mutating func report(_ report: GPSDReport, _ emit: (Position) -> Void) {
        switch report {
        case .fix(let fix): self.fix(fix, emit)
        case .sky(let sky): self.sky(sky)
        case .noise(let noise): self.noise(noise)
        }
    }

    /// Serves only fixes later than `time` from now on (the NMEA source served up to it, so
    /// the switch to this one neither repeats nor loses an epoch).
    public mutating func continueAfter(_ time: UTCTimestamp?) {
        lastTime = time?.unixNanoseconds
        lastHadFix = lastTime != nil
        afterTimeOfDay = lastTime == nil ? time?.nanosecondsOfDay : nil
    }

    /// A new source (the device closed, the connection was lost): nothing kept carries over.
    public mutating func restart() {
        let kept = (statistics, receiverAccuracy)
        self = GPSDReportAssembler()
        (statistics, receiverAccuracy) = kept
    }

    private mutating func serve(_ fix: GPSDFix, _ emit: (Position) -> Void) {
        var position = Position()
        position.time = fix.time
        position.quality = fix.quality
        if position.quality != .noFix {
            position.latitude = fix.latitude
            position.longitude = fix.longitude
            position.ellipsoidalHeight = fix.altitudeHAE
            position.mslHeight = fix.altitudeMSL
            position.undulation = fix.geoidSeparation
            position.speed = fix.speed
            position.bearing = fix.track
            position.diffAge = fix.dgpsAge
            position.diffStationID = fix.dgpsStation
            if receiverAccuracy {
                position.receiverHorizontalAccuracy = fix.eph
                position.receiverVerticalAccuracy = fix.epv
            }
            if let noise, let noiseTime = noise.time, noiseTime == fix.time {
                position.sigmaLatitude = noise.latitudeError
                position.sigmaLongitude = noise.longitudeError
                position.sigmaAltitude = noise.altitudeError
                position.rangeRMS = noise.rms
            }
        }
        position.pdop = pdop
        position.hdop = hdop
        position.vdop = vdop
        position.satellitesInUse = satellitesUsed
        position.sky = sky
        statistics.epochs += 1
        emit(position)
    }
}
