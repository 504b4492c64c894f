// Epoch assembly: one receiver cycle of sentences in, one `Position` out, the moment the cycle
// is complete.
//
// A receiver reports each epoch as a burst of sentences (GGA, RMC, GSA, GSV, GST, ...) that
// share one UTC time. Waiting for the next burst's first sentence to know that a burst ended
// would add a whole period of latency, so the assembler learns, as gpsd does, which sentence
// kind closes this receiver's cycle: when a sentence with a new time arrives, the kind that came
// just before it is the closer, and from then on the epoch is emitted as soon as that kind is
// seen. Three fallbacks keep it honest:
// - a timed sentence whose time differs from the pending epoch's ends that epoch (a closer that
//   went missing, or before the closer is learned);
// - a position sentence kind already present in the pending epoch starts a new one (receivers
//   without a fix send GGA with an empty time, so time cannot separate their cycles);
// - a cycle that stops early (receiver unplugged mid-burst) is flushed by `flushIfStale(now:)`.
// A sentence that arrives for an epoch already emitted means the learned closer was wrong
// (the cycle grew); it is counted as late and the closer is learned again.
//
// The sky view (GSV) and used-satellite marks (GSA) describe state that receivers often report
// less often than positions, so they persist across epochs until a new GSV or GSA replaces them.

import NMEA0183

/// Groups decoded sentences into one `Position` per receiver cycle.
public struct EpochAssembler: Sendable {
    /// Counters for metrics and logs.
    public struct Statistics: Sendable, Equatable {
        /// Epochs emitted, by what closed them.
        public var closedByLearnedCloser = 0
        public var closedByTimeChange = 0
        public var closedByRepeatedSentence = 0
        public var closedByTimeout = 0
        public var closedAtEnd = 0
        /// Sentences for an epoch already emitted (the closer was re-learned).
        public var lateSentences = 0

        public init() {}

        public var epochs: Int {
            closedByLearnedCloser + closedByTimeChange + closedByRepeatedSentence + closedByTimeout + closedAtEnd
        }
    }

    /// A pending epoch older than this is emitted by `flushIfStale(now:)` when the receiver's
    /// period is not known yet (nanoseconds of the caller's monotonic clock).
    public static let defaultStaleAfter: Int64 = 1_000_000_000
    /// Bounds for the stale timeout derived from the measured period (1.5 periods).
    static let minimumStaleAfter: Int64 = 50_000_000
    static let maximumStaleAfter: Int64 = 3_000_000_000

    public private(set) var statistics = Statistics()
    /// The sentence kind learned to close this receiver's cycle, once known.
    public private(set) var closer: SentenceKind?
    /// The receiver's epoch period, measured from consecutive epoch times.
    public private(set) var period: Int64?

    private var pending = PendingEpoch()
    private var lastEmittedTime: NMEATime?
    private var lastDate: NMEADate?
    private var lastTimeOfDay: NMEATime?
    private var sky = SkyView()
    private var dops = (pdop: Double?.none, hdop: Double?.none, vdop: Double?.none)

    public init() {}

    /// Adds one decoded sentence received at `now` (the caller's monotonic clock, nanoseconds),
    /// calling `emit` for every epoch this sentence completes (at most two: the epoch it ended
    /// and, for a single-sentence cycle, its own).
    public mutating func add(_ message: NMEAMessage, talker: Talker, now: Int64, _ emit: (Position) -> Void) {
        let kind = message.kind
        let time = message.time

        if let time {
            if let pendingTime = pending.time, pendingTime != time {
                if closer == nil && pending.lastKind != nil { closer = pending.lastKind }
                measurePeriod(from: pendingTime, to: time)
                statistics.closedByTimeChange += 1
                emitPending(emit)
            } else if pending.time == nil, let last = lastEmittedTime, last == time {
                // A timed sentence for the epoch just emitted: the cycle is longer than learned.
                statistics.lateSentences += 1
                closer = nil
                return
            }
        }
        if message.isPositionSentence && pending.kinds.contains(kind) {
            if closer == nil && pending.lastKind != nil { closer = pending.lastKind }
            statistics.closedByRepeatedSentence += 1
            emitPending(emit)
        }

        if pending.isEmpty { pending.startedAt = now }
        if let time, pending.time == nil { pending.time = time }
        pending.merge(message, talker: talker)
        pending.kinds.insert(kind)
        pending.lastKind = kind

        if kind == closer {
            statistics.closedByLearnedCloser += 1
            emitPending(emit)
        }
    }

    /// Emits the pending epoch if it has waited longer than a cycle should take.
    public mutating func flushIfStale(now: Int64, _ emit: (Position) -> Void) {
        guard !pending.isEmpty, now - pending.startedAt >= staleAfter else { return }
        statistics.closedByTimeout += 1
        emitPending(emit)
    }

    /// Emits whatever is pending (end of input).
    public mutating func finish(_ emit: (Position) -> Void) {
        guard !pending.isEmpty else { return }
        statistics.closedAtEnd += 1
        emitPending(emit)
    }

    /// Forgets everything learned about the receiver (it was unplugged or replaced).
    public mutating func reset() {
        let statistics = self.statistics
        self = EpochAssembler()
        self.statistics = statistics
    }

    /// How long a pending epoch may wait before `flushIfStale` emits it.
    public var staleAfter: Int64 {
        guard let period else { return Self.defaultStaleAfter }
        return min(max(period + period / 2, Self.minimumStaleAfter), Self.maximumStaleAfter)
    }

    private mutating func measurePeriod(from old: NMEATime, to new: NMEATime) {
        var delta = new.nanosecondsOfDay - old.nanosecondsOfDay
        if delta < 0 { delta += UTCTimestamp.nanosecondsPerDay }
        // Ignore gaps (lost sentences, replugs): only plausible receiver periods count.
        if delta > 0 && delta <= 10_000_000_000 { period = delta }
    }

    private mutating func emitPending(_ emit: (Position) -> Void) {
        let epoch = pending
        pending = PendingEpoch()
        guard !epoch.isEmpty else { return }
        var position = epoch.position

        // Date: this cycle's RMC/ZDA/GGK date, else the last one seen, rolled over at midnight.
        if let time = epoch.time {
            var date = epoch.date
            if date == nil, let lastDate, let lastTimeOfDay {
                var calendar = CalendarDate(year: lastDate.year, month: lastDate.month, day: lastDate.day)
                if time.nanosecondsOfDay + UTCTimestamp.nanosecondsPerDay / 2 < lastTimeOfDay.nanosecondsOfDay {
                    calendar = CalendarDate(daysSinceEpoch: calendar.daysSinceEpoch + 1)
                }
                date = NMEADate(year: calendar.year, month: calendar.month, day: calendar.day)
            }
            if let date {
                lastDate = date
                lastTimeOfDay = time
            }
            position.time = UTCTimestamp(
                date: date.map { CalendarDate(year: $0.year, month: $0.month, day: $0.day) },
                nanosecondsOfDay: time.nanosecondsOfDay)
            lastEmittedTime = time
        }

        // Sky: constellations with a GSV this cycle are replaced; GSA replaces the used marks.
        if epoch.gsvConstellations != 0 {
            for constellation in Constellation.allCases
            where epoch.gsvConstellations & (1 << constellation.rawValue) != 0 {
                sky.removeAll(of: constellation)
            }
            for i in 0..<epoch.gsvSky.count { sky.merge(epoch.gsvSky[i]) }
        }
        if epoch.used.count > 0 || epoch.sawGSA {
            sky.clearUsed()
            for i in 0..<epoch.used.count { sky.markUsed(epoch.used[i].id, in: epoch.used[i].constellation) }
        }
        position.sky = sky

        if epoch.sawGSA {
            dops = (epoch.gsaPDOP, epoch.gsaHDOP, epoch.gsaVDOP)
        }
        position.pdop = dops.pdop
        position.vdop = dops.vdop
        position.hdop = epoch.ggaHDOP ?? dops.hdop
        emit(position)
    }
}

/// The cycle being collected.
private struct PendingEpoch {
    var position = Position()
    var time: NMEATime?
    var date: NMEADate?
    var startedAt: Int64 = 0
    var kinds = KindSet()
    var lastKind: SentenceKind?
    /// Rank of the sentence that set the position and of the one that set the quality.
    var positionRank = 0
    var qualityRank = 0
    var speedFromRMC = false

    var gsvSky = SkyView()
    var gsvConstellations: UInt16 = 0
    var used = UsedList()
    var sawGSA = false
    var gsaPDOP: Double?
    var gsaHDOP: Double?
    var gsaVDOP: Double?
    var ggaHDOP: Double?

    var isEmpty: Bool { kinds.isEmpty }

    mutating func merge(_ message: NMEAMessage, talker: Talker) {
        switch message {
        case .gga(let s):
            setQuality(s.quality.flatMap { FixQuality(ggaQuality: $0) }, rank: 4)
            if s.quality.map({ $0 > 0 }) ?? true {
                setPosition(s.latitude, s.longitude, rank: 4)
                if positionRank == 4 {
                    position.mslHeight = s.altitudeMSL?.doubleValue
                    position.undulation = s.geoidSeparation?.doubleValue
                }
            }
            position.satellitesInUse = s.satellitesInUse ?? position.satellitesInUse
            ggaHDOP = s.hdop?.doubleValue ?? ggaHDOP
            position.diffAge = s.dgpsAge?.doubleValue ?? position.diffAge
            position.diffStationID = s.dgpsStation ?? position.diffStationID
        case .gns(let s):
            let mode = s.modes.best
            setQuality(mode.map(FixQuality.init(faaMode:)), rank: 3)
            if mode.map({ $0 != UInt8(ascii: "N") }) ?? false {
                setPosition(s.latitude, s.longitude, rank: 3)
                if positionRank == 3 {
                    position.mslHeight = s.altitudeMSL?.doubleValue
                    position.undulation = s.geoidSeparation?.doubleValue
                }
            }
            if position.satellitesInUse == nil { position.satellitesInUse = s.satellitesInUse }
            if ggaHDOP == nil { ggaHDOP = s.hdop?.doubleValue }
            position.diffAge = position.diffAge ?? s.dgpsAge?.doubleValue
            position.diffStationID = position.diffStationID ?? s.dgpsStation
        case .rmc(let s):
            if s.date != nil { date = s.date }
            if s.status == UInt8(ascii: "A") {
                setQuality(FixQuality(faaMode: s.faaMode ?? UInt8(ascii: "A")), rank: 2)
                setPosition(s.latitude, s.longitude, rank: 2)
                if let knots = s.speedKnots {
                    position.speed = knots.doubleValue * metresPerSecondPerKnot
                    speedFromRMC = true
                }
                if let course = s.courseTrue { position.bearing = course.doubleValue }
            } else {
                setQuality(.noFix, rank: 2)
            }
        case .gll(let s):
            if s.isValid {
                setQuality(FixQuality(faaMode: s.faaMode ?? UInt8(ascii: "A")), rank: 1)
                setPosition(s.latitude, s.longitude, rank: 1)
            } else {
                setQuality(.noFix, rank: 1)
            }
        case .vtg(let s):
            if !speedFromRMC {
                if let knots = s.speedKnots {
                    position.speed = knots.doubleValue * metresPerSecondPerKnot
                } else if let kmh = s.speedKmh {
                    position.speed = kmh.doubleValue / 3.6
                }
                if let course = s.courseTrue { position.bearing = course.doubleValue }
            }
        case .gsa(let s):
            sawGSA = true
            gsaPDOP = s.pdop?.doubleValue ?? gsaPDOP
            gsaHDOP = s.hdop?.doubleValue ?? gsaHDOP
            gsaVDOP = s.vdop?.doubleValue ?? gsaVDOP
            let system = s.systemID.flatMap(Constellation.init(nmeaSystemID:))
            for i in 0..<s.satelliteIDs.count {
                let id = s.satelliteIDs[i]
                let constellation = Constellation(satelliteID: id, system: system, talker: talker)
                used.append((id, constellation))
            }
        case .gsv(let s):
            for i in 0..<s.count {
                let entry = s[i]
                let constellation = Constellation(satelliteID: entry.id, system: nil, talker: talker)
                gsvConstellations |= 1 << constellation.rawValue
                gsvSky.merge(
                    Satellite(id: entry.id, constellation: constellation, elevation: entry.elevation,
                              azimuth: entry.azimuth, snr: entry.snr))
            }
        case .gst(let s):
            position.sigmaLatitude = s.sigmaLatitude?.doubleValue
            position.sigmaLongitude = s.sigmaLongitude?.doubleValue
            position.sigmaAltitude = s.sigmaAltitude?.doubleValue
            position.rangeRMS = s.rangeRMS?.doubleValue
        case .zda(let s):
            if s.date != nil { date = s.date }
        case .hdt(let s):
            position.heading = s.heading?.doubleValue
        case .ptnlGGK(let s):
            if s.date != nil { date = s.date }
            setQuality(s.quality.flatMap { FixQuality(ggkQuality: $0) }, rank: 5)
            if s.quality.map({ $0 > 0 }) ?? true {
                setPosition(s.latitude, s.longitude, rank: 5)
                if positionRank == 5 { position.ellipsoidalHeight = s.ellipsoidalHeight?.doubleValue }
            }
            position.satellitesInUse = s.satellitesInUse ?? position.satellitesInUse
        }
    }

    /// Keeps the position from the most precise sentence of the cycle (GGK > GGA > GNS > RMC > GLL).
    private mutating func setPosition(_ latitude: NMEACoordinate?, _ longitude: NMEACoordinate?, rank: Int) {
        guard let latitude, let longitude, rank >= positionRank else { return }
        positionRank = rank
        position.latitude = latitude.degrees
        position.longitude = longitude.degrees
    }

    private mutating func setQuality(_ quality: FixQuality?, rank: Int) {
        guard let quality, rank >= qualityRank else { return }
        qualityRank = rank
        position.quality = quality
    }
}

/// 1 knot = 1852 m per hour.
let metresPerSecondPerKnot = 1852.0 / 3600.0

/// A small set of sentence kinds.
struct KindSet {
    private var bits: UInt16 = 0
    var isEmpty: Bool { bits == 0 }
    func contains(_ kind: SentenceKind) -> Bool { bits & kind.bit != 0 }
    mutating func insert(_ kind: SentenceKind) { bits |= kind.bit }
}

/// Satellites marked used by the GSAs of one cycle.
struct UsedList {
    private var storage = InlineArray<64, (id: UInt16, constellation: Constellation)>(repeating: (0, .gps))
    private(set) var count = 0
    mutating func append(_ entry: (UInt16, Constellation)) {
        guard count < 64 else { return }
        storage[count] = entry
        count += 1
    }
    subscript(i: Int) -> (id: UInt16, constellation: Constellation) { storage[i] }
}

extension SentenceKind {
    var bit: UInt16 {
        switch self {
        case .gga: 1 << 0
        case .gns: 1 << 1
        case .rmc: 1 << 2
        case .gll: 1 << 3
        case .vtg: 1 << 4
        case .gsa: 1 << 5
        case .gsv: 1 << 6
        case .gst: 1 << 7
        case .zda: 1 << 8
        case .hdt: 1 << 9
        case .ptnlGGK: 1 << 10
        case .unknown: 1 << 11
        }
    }
}

extension NMEAMessage {
    var kind: SentenceKind {
        switch self {
        case .gga: .gga
        case .gns: .gns
        case .rmc: .rmc
        case .gll: .gll
        case .vtg: .vtg
        case .gsa: .gsa
        case .gsv: .gsv
        case .gst: .gst
        case .zda: .zda
        case .hdt: .hdt
        case .ptnlGGK: .ptnlGGK
        }
    }

    /// The UTC time the sentence carries, if any.
    var time: NMEATime? {
        switch self {
        case .gga(let s): s.time
        case .gns(let s): s.time
        case .rmc(let s): s.time
        case .gll(let s): s.time
        case .gst(let s): s.time
        case .zda(let s): s.time
        case .ptnlGGK(let s): s.time
        case .vtg, .gsa, .gsv, .hdt: nil
        }
    }

    /// Sentences that occur once per cycle; a second one means a new cycle began.
    var isPositionSentence: Bool {
        switch self {
        case .gga, .gns, .rmc, .gll, .vtg, .gst, .zda, .hdt, .ptnlGGK: true
        case .gsa, .gsv: false
        }
    }
}

extension FixQuality {
    /// From an NMEA 2.3+ FAA mode / GNS mode character.
    init(faaMode: UInt8) {
        switch faaMode {
        case UInt8(ascii: "A"): self = .autonomous
        case UInt8(ascii: "D"): self = .dgps
        case UInt8(ascii: "P"): self = .pps
        case UInt8(ascii: "R"): self = .rtkFixed
        case UInt8(ascii: "F"): self = .rtkFloat
        case UInt8(ascii: "E"): self = .estimated
        case UInt8(ascii: "M"): self = .manual
        case UInt8(ascii: "S"): self = .simulated
        default: self = .noFix
        }
    }
}

extension Constellation {
    /// NMEA 4.10 GNSS system id (GSA field 18, GSV talker-independent id).
    init?(nmeaSystemID: Int) {
        switch nmeaSystemID {
        case 1: self = .gps
        case 2: self = .glonass
        case 3: self = .galileo
        case 4: self = .beidou
        case 5: self = .qzss
        case 6: self = .irnss
        default: return nil
        }
    }

    /// The constellation of a satellite id, from the system id or talker when they say, and
    /// otherwise from the id ranges gpsd and u-blox use for `GN` sentences.
    init(satelliteID id: UInt16, system: Constellation?, talker: Talker) {
        if let system {
            self = system == .gps && (33...64).contains(id) ? .sbas : system
            return
        }
        switch talker {
        case .glonass: self = .glonass
        case .galileo: self = .galileo
        case .beidou: self = .beidou
        case .qzss: self = .qzss
        case .navic: self = .irnss
        case .gps:
            switch id {
            case 33...64, 120...158: self = .sbas
            case 193...202: self = .qzss
            default: self = .gps
            }
        case .combined, .other, .proprietary:
            switch id {
            case 33...64, 120...158: self = .sbas
            case 65...96: self = .glonass
            case 193...202: self = .qzss
            case 201...263, 401...437: self = .beidou
            case 301...336: self = .galileo
            default: self = .gps
            }
        }
    }
}
