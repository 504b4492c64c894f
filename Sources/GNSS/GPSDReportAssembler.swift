/// Epochs from gpsd's reports (the JSON source; `EpochAssembler` is the NMEA one): one `Position`
/// per fix time, gpsd's last word on that time.
///
/// gpsd sends a TPV when it thinks a receiver's cycle ended (`REPORT_IS`), SKY when it has new
/// satellites and GST only for NMEA receivers' `$GxGST`; SKY and GST are kept and attached to the
/// fixes that follow, as the NMEA path keeps the last GSV set. Rules (docs/input.md, "Two
/// sources"):
/// - **the last TPV of a time is served**: gpsd often reports one time several times, and the
///   later report is the better one: its u-blox driver reports at NAV-PVT (1e-7°, mm) and again at
///   the cycle's end with NAV-HPPOSLLH's 1e-9° and 0.1 mm; SiRF reports MID 2 then MID 41; TSIP
///   up to three navigation messages. So a fix is held for `hold` after the first TPV of its
///   time (a quarter of the receiver's period, 10 to 100 ms), a later TPV of that time replaces it,
///   and it is served when the hold ends or a TPV of a later time arrives, whichever is first.
///   No client sees two positions for one instant. A report without a fix never replaces a fix.
/// - **a stream that re-reports times late waits for them**: gpsd 3.22's u-blox driver picks the
///   end of a cycle from a stale iTOW, so with NAV-DOP before NAV-PVT (a common set) its precise
///   TPV of every other epoch comes only with the next epoch's first message, a whole period
///   after the first TPV of that time and long after a quarter-period hold. Once a fix arrives for
///   a time already served (`reportedAfterServing`), the assembler holds each fix until a TPV of a
///   later time or `waitingHold` (a period and a quarter) instead, serving gpsd's last word at the
///   cost of a period's latency; after `waitingCalmEpochs` epochs in a row whose last TPV came
///   within the short hold, it goes back to the short hold.
/// - **late** TPVs (older than the last served time) are dropped and counted, unless the time
///   went back by more than `timeJumpNanoseconds` (a receiver reset or a replayed capture): then
///   the stream starts afresh.
/// - a TPV without a time serves only when it ends a fix (mode below 2 after a fix): clients
///   learn at once that the fix is gone; more of them say nothing new.
/// - **checked**: a fix without a latitude and longitude in range, or with a time Int64
///   nanoseconds cannot hold, is dropped and counted (`invalid`), never served.
/// - **heights as gpsd gives them**: altHAE, altMSL and geoidSep, never re-derived.
/// - **accuracy** from GST sigmas of the same time; else, for drivers that pass the receiver's
///   own estimate (`receiverAccuracy`: u-blox hAcc/vAcc), TPV's eph/epv; else none.
public struct GPSDReportAssembler: Sendable {
    public struct Statistics: Sendable, Equatable {
        public var fixes = 0
        public var epochs = 0
        /// TPVs of a time that a later TPV of the same time replaced, or that came after it was
        /// served.
        public var repeated = 0
        /// TPVs older than the last served time.
        public var late = 0
        /// TPVs that claim a fix without a usable position (latitude or longitude missing or out
        /// of range: a hostile or broken gpsd), or with a time no epoch can carry: dropped.
        public var invalid = 0
        public var skies = 0
        public var noises = 0
        /// Fixes for a time already served (gpsd reported it again after the hold ended): each
        /// makes the assembler wait for a later time (`waitsForLaterTime`).
        public var reportedAfterServing = 0

        public init() {}
    }

    /// A time jump backwards larger than this restarts the stream instead of dropping the fix.
    public static let timeJumpNanoseconds: Int64 = 10_000_000_000
    /// The hold: a quarter of the receiver's period (the smallest step between fix times seen),
    /// within these bounds; the longest until a period is known.
    public static let shortestHold: Int64 = 10_000_000
    public static let longestHold: Int64 = 100_000_000
    /// The longest wait for a later time while `waitsForLaterTime` (a 1 Hz receiver's period and
    /// a quarter).
    public static let longestWait: Int64 = 1_250_000_000
    /// Epochs in a row that did not need the wait before the short hold is used again.
    public static let waitingCalmEpochs = 20

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
    /// The fix held for its time (Unix nanoseconds), when the first TPV of that time came, when it
    /// is served, and when a later TPV of the time last replaced it (monotonic nanoseconds).
    private var pending: (fix: GPSDFix, time: Int64, firstSeen: Int64, deadline: Int64, replacedAt: Int64)?
    /// gpsd re-reports times after a short hold would have served them: hold until a later time.
    public private(set) var waitsForLaterTime = false
    /// Epochs served in a row, while waiting, whose last TPV came within the short hold.
    private var calmEpochs = 0
    /// The time of the last epoch served with a time (or given to `continueAfter`), and whether
    /// it had a fix.
    public private(set) var lastServedTime: UTCTimestamp?
    private var lastHadFix = false
    /// `lastServedTime` as Unix nanoseconds, the key fixes are ordered by.
    private var lastTime: Int64? { lastServedTime?.unixNanoseconds }
    /// Whether the last epoch served showed a fix (a timeless no-fix report ends it, without
    /// making the last time's fix servable again).
    private var showingFix = false
    /// The smallest step between two fix times seen: the receiver's period.
    private var period: Int64?
    /// `continueAfter` a time without a date (an NMEA cycle with no RMC or ZDA): fixes at or
    /// before this time of day, and within `timeJumpNanoseconds` of it, are not served again.
    private var afterTimeOfDay: Int64?

    public init() {}

    /// How long a fix is held for a later report of its time.
    public var hold: Int64 {
        guard let period else { return Self.longestHold }
        return min(max(period / 4, Self.shortestHold), Self.longestHold)
    }

    /// How long a fix waits for a later time while `waitsForLaterTime`: a period and a quarter
    /// (the next epoch's first TPV normally serves it before), at most `longestWait`.
    public var waitingHold: Int64 {
        guard let period else { return Self.longestWait }
        return min(max(period + period / 4, hold), Self.longestWait)
    }

    /// When the held fix is due (monotonic nanoseconds), for the caller's timer.
    public var deadline: Int64? { pending?.deadline }

    /// A TPV read at `now`: held, replacing a held fix of its time, or dropped by the rules above;
    /// a held fix of an earlier time is served first.
    public mutating func fix(_ fix: GPSDFix, now: Int64, _ emit: (Position) -> Void) {
        statistics.fixes += 1
        let hasFix = fix.quality != .noFix
        if hasFix {
            guard let latitude = fix.latitude, let longitude = fix.longitude,
                (-90.0...90.0).contains(latitude), (-180.0...180.0).contains(longitude)
            else {
                statistics.invalid += 1
                return
            }
        }
        if fix.time != nil && fix.time?.unixNanoseconds == nil {
            statistics.invalid += 1
            return
        }
        guard let time = fix.time?.unixNanoseconds else {
            flush(emit)
            guard !hasFix, showingFix else {
                statistics.repeated += 1
                return
            }
            showingFix = false
            serve(fix, emit)
            return
        }
        if let held = pending {
            if time == held.time {
                statistics.repeated += 1
                if hasFix || held.fix.quality == .noFix {
                    pending = (fix, time, held.firstSeen, held.deadline, now)
                }
                return
            }
            if time > held.time || time < held.time - Self.timeJumpNanoseconds {
                flush(emit)
            } else {
                statistics.late += 1
                return
            }
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
                lastServedTime = nil
                period = nil
            } else if time < lastTime {
                statistics.late += 1
                return
            } else if time == lastTime && (lastHadFix || !hasFix) {
                statistics.repeated += 1
                if hasFix && lastHadFix {
                    // Served too early: gpsd's last word on that time came after the hold.
                    statistics.reportedAfterServing += 1
                    waitsForLaterTime = true
                    calmEpochs = 0
                }
                return
            } else if time > lastTime {
                let step = time - lastTime
                period = min(period ?? step, step)
            }
        }
        afterTimeOfDay = nil
        pending = (fix, time, now, now + (waitsForLaterTime ? waitingHold : hold), now)
    }

    /// Time passed: a held fix whose hold has ended is served.
    public mutating func idle(now: Int64, _ emit: (Position) -> Void) {
        if let held = pending, now >= held.deadline { flush(emit) }
    }

    /// Serves the held fix now (end of input, the source closed).
    public mutating func flush(_ emit: (Position) -> Void) {
        guard let held = pending else { return }
        pending = nil
        if waitsForLaterTime {
            calmEpochs = held.replacedAt - held.firstSeen > hold ? 0 : calmEpochs + 1
            if calmEpochs >= Self.waitingCalmEpochs { waitsForLaterTime = false }
        }
        lastServedTime = held.fix.time
        lastHadFix = held.fix.quality != .noFix
        showingFix = lastHadFix
        serve(held.fix, emit)
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

    /// Any report, read at `now`.
    public mutating func report(_ report: GPSDReport, now: Int64, _ emit: (Position) -> Void) {
        switch report {
        case .fix(let fix): self.fix(fix, now: now, emit)
        case .sky(let sky): self.sky(sky)
        case .noise(let noise): self.noise(noise)
        }
    }

    /// Serves only fixes later than `time` from now on (the NMEA source served up to it, so
    /// the switch to this one neither repeats nor loses an epoch).
    public mutating func continueAfter(_ time: UTCTimestamp?) {
        pending = nil
        lastServedTime = time
        lastHadFix = lastTime != nil
        showingFix = lastHadFix
        afterTimeOfDay = lastTime == nil ? time?.nanosecondsOfDay : nil
    }

    /// A new source (the device closed, the connection was lost): nothing kept carries over
    /// (flush first to serve a held fix).
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
