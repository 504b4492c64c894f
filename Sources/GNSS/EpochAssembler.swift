// Epoch assembly: one receiver cycle of sentences in, one `Position` out, the moment the cycle
// is complete.
//
// A receiver reports each epoch as a burst of sentences (GGA, RMC, GSA, GSV, GST, ...) that
// share one UTC time. Time is the primary rule: a sentence whose time equals the pending
// epoch's belongs to it, whatever its talker (multi-GNSS chipsets send one GGA per constellation,
// `$GPGGA` then `$GLGGA` for the same second: one epoch, satellites summed). Waiting for the next
// burst's first sentence to know that a burst ended would add a whole period of latency, so the
// assembler learns, as gpsd does, which sentence closes this receiver's cycle, identified by kind,
// talker and occurrence (the second `$GNGSA`, the last sentence of the `$GLGSV` group): when a
// sentence with a new time arrives, the sentence that came just before it is the closer, and
// from then on the epoch is emitted as soon as that sentence is seen. The fallbacks:
// - a timed sentence whose time differs from the pending epoch's ends that epoch (a closer that
//   went missing, or before the closer is learned);
// - without times to compare (receivers without a fix send GGA with an empty time, VTG and GSV
//   carry none), a once-per-cycle kind from a talker already present in the pending epoch, a new
//   GSV group for a talker and signal whose group is complete, or a second GSA for one NMEA 4.10
//   system, starts a new epoch;
// - a cycle that stops early (receiver unplugged mid-burst) is flushed by `flushIfStale(now:)`.
// A timed sentence for the epoch already emitted means the cycle is longer than learned (GST or
// RMC on some epochs only): it is counted as late and dropped, never emitted as a second epoch for
// that time, and becomes the closer, so the next such cycle waits for it.
//
// The sky view (GSV) and used-satellite marks (GSA) describe state that receivers often report
// less often than positions, so they persist across epochs until a new GSV or GSA replaces them.
//
// Nothing large is copied per sentence: the epoch is built in place in `output` (whose sky view
// is the persistent one, updated as GSV sentences arrive), and the per-cycle bookkeeping is a
// few small fixed-size tables reset in place.

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
        /// Timed sentences for an epoch already emitted (dropped; the closer was re-learned).
        public var lateSentences = 0

        public init() {}

        public var epochs: Int {
            closedByLearnedCloser + closedByTimeChange + closedByRepeatedSentence + closedByTimeout + closedAtEnd
        }
    }

    /// The sentence that ends a receiver's cycle: its kind, its talker, and which occurrence of
    /// that kind and talker it is within the cycle (for GSV: which complete group).
    public struct Closer: Sendable, Equatable, CustomStringConvertible {
        public var kind: SentenceKind
        public var talker: Talker
        public var occurrence: Int

        public init(kind: SentenceKind, talker: Talker, occurrence: Int = 1) {
            self.kind = kind
            self.talker = talker
            self.occurrence = occurrence
        }

        public var description: String { "\(talker) \(kind) #\(occurrence)" }
    }

    /// A pending epoch older than this is emitted by `flushIfStale(now:)` when the receiver's
    /// period is not known yet (nanoseconds of the caller's monotonic clock).
    public static let defaultStaleAfter: Int64 = 1_000_000_000
    /// Bounds for the stale timeout derived from the measured period (1.5 periods).
    static let minimumStaleAfter: Int64 = 50_000_000
    static let maximumStaleAfter: Int64 = 3_000_000_000

    public private(set) var statistics = Statistics()
    /// The sentence learned to close this receiver's cycle, once known.
    public private(set) var closingSentence: Closer?
    /// The kind of the closing sentence, once known.
    public var closer: SentenceKind? { closingSentence?.kind }
    /// The receiver's epoch period, measured from consecutive epoch times.
    public private(set) var period: Int64?
    /// Whether the closer was given up on: late sentences kept coming however it was learned.
    public private(set) var closerAbandoned = false
    /// Late sentences since the closer last closed a run of epochs cleanly.
    private var recentLateSentences = 0
    static let lateSentencesBeforeGivingUp = 4
    static let cleanEpochsToForgiveLateness = 20
    private var cleanEpochs = 0

    /// The epoch being built; its sky view is the persistent one.
    private var output = Position()
    private var pending = PendingCycle()
    private var lastEmittedTime: NMEATime?
    private var lastDate: NMEADate?
    private var lastTimeOfDay: NMEATime?
    /// Satellites marked used by the last cycle that had a GSA.
    private var lastUsed = UsedList()
    private var dops = (pdop: Double?.none, hdop: Double?.none, vdop: Double?.none)

    public init() {
        assert(
            PendingCycle.Occurrences.count == SentenceKind.allCases.count * TalkerSlot.count,
            "PendingCycle.Occurrences must hold one count per sentence kind and talker slot")
    }

    /// Adds one decoded sentence received at `now` (the caller's monotonic clock, nanoseconds),
    /// calling `emit` for every epoch this sentence completes (at most two: the epoch it ended
    /// and, for a single-sentence cycle, its own).
    public mutating func add(_ message: NMEAMessage, talker: Talker, now: Int64, _ emit: (Position) -> Void) {
        // One switch over the message, whose payload goes to the cycle rules (`begin`) and to its
        // merge: every switch over the message copied it (155 bytes), and there were five.
        let slot = TalkerSlot(talker)
        switch message {
        case .gga(let s):
            guard let occurrence = begin(SentenceFacts(kind: .gga, time: s.time), talker, slot, now, emit) else {
                return
            }
            merge(s, slot: slot, first: occurrence <= 1)
            end(.gga, talker, occurrence, emit)
        case .gns(let s):
            guard let occurrence = begin(SentenceFacts(kind: .gns, time: s.time), talker, slot, now, emit) else {
                return
            }
            merge(s, slot: slot, first: occurrence <= 1)
            end(.gns, talker, occurrence, emit)
        case .rmc(let s):
            guard let occurrence = begin(SentenceFacts(kind: .rmc, time: s.time), talker, slot, now, emit) else {
                return
            }
            merge(s, slot: slot)
            end(.rmc, talker, occurrence, emit)
        case .gll(let s):
            guard let occurrence = begin(SentenceFacts(kind: .gll, time: s.time), talker, slot, now, emit) else {
                return
            }
            merge(s, slot: slot)
            end(.gll, talker, occurrence, emit)
        case .vtg(let s):
            guard let occurrence = begin(SentenceFacts(kind: .vtg, time: nil), talker, slot, now, emit) else { return }
            merge(s)
            end(.vtg, talker, occurrence, emit)
        case .gsa(let s):
            guard let occurrence = begin(SentenceFacts(gsa: s), talker, slot, now, emit) else { return }
            merge(s, slot: slot)
            end(.gsa, talker, occurrence, emit)
        case .gsv(let s):
            guard let occurrence = begin(SentenceFacts(gsv: s), talker, slot, now, emit) else { return }
            merge(s, slot: slot)
            end(.gsv, talker, occurrence, emit)
        case .gst(let s):
            guard let occurrence = begin(SentenceFacts(kind: .gst, time: s.time), talker, slot, now, emit) else {
                return
            }
            merge(s)
            end(.gst, talker, occurrence, emit)
        case .zda(let s):
            guard let occurrence = begin(SentenceFacts(kind: .zda, time: s.time), talker, slot, now, emit) else {
                return
            }
            merge(s)
            end(.zda, talker, occurrence, emit)
        case .hdt(let s):
            guard let occurrence = begin(SentenceFacts(kind: .hdt, time: nil), talker, slot, now, emit) else { return }
            merge(s)
            end(.hdt, talker, occurrence, emit)
        case .ptnlGGK(let s):
            guard let occurrence = begin(SentenceFacts(kind: .ptnlGGK, time: s.time), talker, slot, now, emit) else {
                return
            }
            merge(s, slot: slot)
            end(.ptnlGGK, talker, occurrence, emit)
        }
    }

    /// The cycle rules for a sentence about to be merged: emits the epoch it ends, if any, and
    /// counts it in the pending cycle. Returns its occurrence (see `PendingCycle.record`), or nil
    /// when it is dropped (late for the epoch already emitted).
    @inline(__always)
    private mutating func begin(
        _ facts: SentenceFacts, _ talker: Talker, _ slot: TalkerSlot, _ now: Int64, _ emit: (Position) -> Void
    ) -> Int? {
        let kind = facts.kind
        let role = kind.epochRole
        let slot = TalkerSlot(talker)

        if role.datesOnly {
            // Its time dates the cycle it arrives in but never places one (see `EpochRole`).
        } else if let time = facts.time {
            if let lastEmittedTime, Self.sameCycle(time, lastEmittedTime, period: period),
                !(pending.time.map { Self.sameCycle($0, time, period: period) } ?? false)
            {
                // A timed sentence for the epoch just emitted: the cycle is longer than learned.
                // It cannot join that epoch any more and must not make a second one.
                statistics.lateSentences += 1
                recentLateSentences += 1
                if recentLateSentences >= Self.lateSentencesBeforeGivingUp {
                    // The burst order keeps changing (a chartplotter relaying several sources):
                    // no sentence reliably ends the cycle, so cycles end on the next time only.
                    closingSentence = nil
                    closerAbandoned = true
                } else if !closerAbandoned {
                    closingSentence = Closer(
                        kind: kind, talker: talker, occurrence: pending.occurrence(of: kind, slot) + 1)
                }
                return nil
            }
            if let pendingTime = pending.time, !Self.sameCycle(pendingTime, time, period: period) {
                learnCloser()
                measurePeriod(from: pendingTime, to: time)
                emitPending(.timeChange, emit)
            } else if pending.time == nil && startsNewCycle(facts, slot) {
                learnCloser()
                emitPending(.repeatedSentence, emit)
            }
        } else if startsNewCycle(facts, slot) {
            learnCloser()
            emitPending(.repeatedSentence, emit)
        }

        if pending.isEmpty { pending.startedAt = now }
        if !role.datesOnly, let time = facts.time {
            if pending.time == nil { pending.time = time }
            // The epoch is stamped with its most precise position sentence's time (GGA's `.30`,
            // not the GLL's `.295` before it), as gpsd reports it.
            if role.rank > pending.stampRank || pending.stamp == nil {
                pending.stamp = time
                pending.stampRank = role.rank
            }
        }
        if !role.datesOnly {
            pending.carriesEpoch = true
        } else if pending.zdaTime == nil {
            pending.zdaTime = facts.time
        }
        return pending.record(facts, slot)
    }

    /// After the merge: the sentence is the closer candidate, and the epoch ends if it is the
    /// learned closer.
    @inline(__always)
    private mutating func end(_ kind: SentenceKind, _ talker: Talker, _ occurrence: Int, _ emit: (Position) -> Void) {
        pending.last = occurrence > 0 ? Closer(kind: kind, talker: talker, occurrence: occurrence) : nil

        if let closingSentence, closingSentence.kind == kind, closingSentence.occurrence == occurrence,
            closingSentence.talker == talker
        {
            emitPending(.learnedCloser, emit)
        }
    }

    /// Emits the pending epoch if it has waited longer than a cycle should take.
    public mutating func flushIfStale(now: Int64, _ emit: (Position) -> Void) {
        guard !pending.isEmpty, now - pending.startedAt >= staleAfter else { return }
        emitPending(.timeout, emit)
    }

    /// Emits whatever is pending (end of input).
    public mutating func finish(_ emit: (Position) -> Void) {
        guard !pending.isEmpty else { return }
        if !emitPending(.end, emit) { pending.reset() }  // a lone ZDA dates nothing now
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

    /// Whether `message`, which cannot be placed by its time, begins the next cycle.
    // (`mutating` only so that `self` is passed by address: a non-mutating call from `add` copied
    // the whole assembler, its 2 KB output epoch included, for every sentence.)
    private mutating func startsNewCycle(_ facts: SentenceFacts, _ slot: TalkerSlot) -> Bool {
        switch facts.kind.epochRole.repeats {
        case .asGroup where closingSentence != nil, .perSystem where closingSentence != nil:
            // Group repeats only serve to learn the first closer. Once it is known, cycles end on it
            // or on a new time; a repeat seen then is as likely a previous cycle's tail that a
            // dropped sentence left behind (tr737A+: a GGA with 60 minutes of latitude is refused,
            // its GSA and GSV stay pending) and must not cut the next cycle in two.
            return false
        case .asGroup:
            // A new group for a talker and signal whose group this cycle already completed.
            return facts.gsvFirst && pending.completedGroup(slot, signal: facts.gsvSignal)
        case .perSystem:
            // Several GSAs per cycle are normal (one per constellation); with NMEA 4.10 system ids a
            // second one for the same system is a new cycle. Without them nothing can be told.
            // (A system with more than 12 satellites in use gets consecutive GSAs: not a new cycle.)
            guard let system = facts.gsaSystem else { return false }
            return pending.sawGSA(slot, system: system) && pending.lastKind != facts.kind
        case .startNextCycle:
            return pending.occurrence(of: facts.kind, slot) > 0
        }
    }

    /// At an epoch boundary the closer did not mark: before the first one, the sentence that
    /// ended the cycle becomes the closer; later, a cycle that ended on the closer's kind from
    /// another talker or at another occurrence (a receiver switching from `$GNRMC` to `$GPRMC`
    /// when it drops a constellation, one GSA fewer) moves the closer there. A cycle that ended
    /// on another kind keeps it (GSV or GST every few cycles must not be forgotten).
    private mutating func learnCloser() {
        guard !closerAbandoned, let last = pending.last else { return }
        if closingSentence == nil || closingSentence?.kind == last.kind { closingSentence = last }
    }

    /// Two times of day name one receiver cycle when they are within 10 ms (a quarter period for
    /// receivers faster than 25 Hz): receivers print one instant at different precisions in one
    /// burst (magellan315: GLL `120824.758`, GGA and RMC `120824.76`; eXplorist210: GLL
    /// `200619.295`, GGA `200619.30`).
    static func sameCycle(_ a: NMEATime, _ b: NMEATime, period: Int64?) -> Bool {
        var delta = a.nanosecondsOfDay - b.nanosecondsOfDay
        if delta < 0 { delta = -delta }
        delta = min(delta, UTCTimestamp.nanosecondsPerDay - delta)
        return delta < min(10_000_000, (period ?? .max) / 4)
    }

    private mutating func measurePeriod(from old: NMEATime, to new: NMEATime) {
        var delta = new.nanosecondsOfDay - old.nanosecondsOfDay
        if delta < 0 { delta += UTCTimestamp.nanosecondsPerDay }
        // Ignore gaps (lost sentences, replugs): only plausible receiver periods count.
        if delta > 0 && delta <= 10_000_000_000 { period = delta }
    }

    /// Emits the pending epoch, counting it under `reason`; false when there was none to emit.
    @discardableResult
    private mutating func emitPending(_ reason: CloseReason, _ emit: (Position) -> Void) -> Bool {
        guard !pending.isEmpty else { return false }
        // Only a ZDA so far: a date, not an epoch. It stays pending and dates the cycle that follows.
        guard pending.carriesEpoch else { return false }

        // Date: this cycle's RMC/ZDA/GGK date, else the last one seen, rolled over at midnight.
        // A cycle without any other time (Hemisphere without a fix: HDT, GGA and VTG with empty
        // times, ZDA once a second) is stamped with its ZDA's time, but that time does not make
        // later sentences late: it did not come from a fix.
        // Nor does it stamp a fragment of the epoch just emitted (bundg relays RMC, VTG and ZDA
        // twice: the second VTG and ZDA must not become a second epoch for that second).
        var zdaStamp = pending.zdaTime
        if let zda = zdaStamp, let lastEmittedTime, Self.sameCycle(zda, lastEmittedTime, period: period) {
            zdaStamp = nil
        }
        let stampedByZDA = pending.stamp == nil && zdaStamp != nil
        if let time = pending.stamp ?? zdaStamp {
            var date = pending.date
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
            output.time = UTCTimestamp(
                date: date.map { CalendarDate(year: $0.year, month: $0.month, day: $0.day) },
                nanosecondsOfDay: time.nanosecondsOfDay)
            if !stampedByZDA { lastEmittedTime = time }
        } else {
            output.time = nil
        }

        // Satellites in use: the Trimble GGK's count, else the GGA's (a combined GN talker's, or
        // the sum over the constellations' own GGAs), else the GNS's likewise.
        output.satellitesInUse = pending.ggkSatellites ?? pending.gga.total ?? pending.gns.total

        // GSV sentences updated the sky as they came; the GSA marks of the last cycle that had a
        // GSA are applied again whenever either changed.
        if pending.sawAnyGSA { lastUsed = pending.used }
        if pending.sawAnyGSA || pending.gsvConstellations != 0 {
            output.sky.clearUsed()
            for i in 0..<lastUsed.count { output.sky.markUsed(lastUsed[i].id, in: lastUsed[i].constellation) }
        }

        if pending.sawAnyGSA {
            dops = (pending.gsaPDOP, pending.gsaHDOP, pending.gsaVDOP)
        }
        output.pdop = dops.pdop
        output.vdop = dops.vdop
        output.hdop = pending.ggaHDOP ?? dops.hdop
        if reason == .learnedCloser {
            cleanEpochs += 1
            if cleanEpochs >= Self.cleanEpochsToForgiveLateness {
                cleanEpochs = 0
                recentLateSentences = 0
            }
        }
        switch reason {
        case .learnedCloser: statistics.closedByLearnedCloser += 1
        case .timeChange: statistics.closedByTimeChange += 1
        case .repeatedSentence: statistics.closedByRepeatedSentence += 1
        case .timeout: statistics.closedByTimeout += 1
        case .end: statistics.closedAtEnd += 1
        }
        emit(output)

        output.clearMeasurements()
        pending.reset()
        return true
    }

    // MARK: - Merging one sentence into the epoch (`first`: not a repeat of its kind and talker this cycle)

    @inline(__always)
    private mutating func merge(_ s: GGA, slot: TalkerSlot, first: Bool) {
        let rank = SentenceKind.gga.epochRole.rank
        setQuality(s.quality.flatMap { FixQuality(ggaQuality: $0) }, rank: rank, slot)
        if s.quality.map({ $0 > 0 }) ?? true {
            if setPosition(s.latitude, s.longitude, rank: rank, slot) {
                output.mslHeight = s.altitudeMSL?.doubleValue
                output.undulation = s.geoidSeparation?.doubleValue
            }
        }
        if first { pending.gga.add(s.satellitesInUse, slot) }
        if let hdop = s.hdop?.doubleValue, pending.ggaHDOP == nil || slot.isCombined { pending.ggaHDOP = hdop }
        output.diffAge = output.diffAge ?? s.dgpsAge?.doubleValue
        output.diffStationID = output.diffStationID ?? s.dgpsStation
    }

    @inline(__always)
    private mutating func merge(_ s: GNS, slot: TalkerSlot, first: Bool) {
        let rank = SentenceKind.gns.epochRole.rank
        let mode = s.modes.best
        setQuality(mode.map(FixQuality.init(faaMode:)), rank: rank, slot)
        if mode.map({ $0 != UInt8(ascii: "N") }) ?? false {
            if setPosition(s.latitude, s.longitude, rank: rank, slot) {
                output.mslHeight = s.altitudeMSL?.doubleValue
                output.undulation = s.geoidSeparation?.doubleValue
            }
        }
        if first { pending.gns.add(s.satellitesInUse, slot) }
        if pending.ggaHDOP == nil { pending.ggaHDOP = s.hdop?.doubleValue }
        output.diffAge = output.diffAge ?? s.dgpsAge?.doubleValue
        output.diffStationID = output.diffStationID ?? s.dgpsStation
    }

    @inline(__always)
    private mutating func merge(_ s: RMC, slot: TalkerSlot) {
        let rank = SentenceKind.rmc.epochRole.rank
        if s.date != nil { pending.date = s.date }
        if s.status == UInt8(ascii: "A") {
            setQuality(FixQuality(faaMode: s.faaMode ?? UInt8(ascii: "A")), rank: rank, slot)
            _ = setPosition(s.latitude, s.longitude, rank: rank, slot)
            if let knots = s.speedKnots, !pending.speedFromRMC {
                output.speed = knots.doubleValue * metresPerSecondPerKnot
                pending.speedFromRMC = true
            }
            if let course = s.courseTrue, !pending.courseFromRMC {
                output.bearing = course.doubleValue
                pending.courseFromRMC = true
            }
        } else {
            setQuality(.noFix, rank: rank, slot)
        }
    }

    @inline(__always)
    private mutating func merge(_ s: GLL, slot: TalkerSlot) {
        let rank = SentenceKind.gll.epochRole.rank
        if s.isValid {
            setQuality(FixQuality(faaMode: s.faaMode ?? UInt8(ascii: "A")), rank: rank, slot)
            _ = setPosition(s.latitude, s.longitude, rank: rank, slot)
        } else {
            setQuality(.noFix, rank: rank, slot)
        }
    }

    @inline(__always)
    private mutating func merge(_ s: VTG) {
        if !pending.speedFromRMC {
            if let knots = s.speedKnots {
                output.speed = knots.doubleValue * metresPerSecondPerKnot
            } else if let kmh = s.speedKmh {
                output.speed = kmh.doubleValue / 3.6
            }
        }
        if !pending.courseFromRMC, let course = s.courseTrue { output.bearing = course.doubleValue }
    }

    @inline(__always)
    private mutating func merge(_ s: GSA, slot: TalkerSlot) {
        pending.sawAnyGSA = true
        pending.gsaPDOP = s.pdop?.doubleValue ?? pending.gsaPDOP
        pending.gsaHDOP = s.hdop?.doubleValue ?? pending.gsaHDOP
        pending.gsaVDOP = s.vdop?.doubleValue ?? pending.gsaVDOP
        let system = s.systemID.flatMap(Constellation.init(nmeaSystemID:))
        for i in 0..<s.satelliteIDs.count {
            let id = s.satelliteIDs[i]
            pending.used.append((id, Constellation(satelliteID: id, system: system, talker: slot.talker)))
        }
    }

    @inline(__always)
    private mutating func merge(_ s: GSV, slot: TalkerSlot) {
        if s.sentenceNumber == 1 { pending.gsvGroupsStarted |= 1 << slot.index }
        let groupSeenWhole = pending.gsvGroupsStarted & (1 << slot.index) != 0
        for i in 0..<s.count {
            let entry = s[i]
            let constellation = Constellation(satelliteID: entry.id, system: nil, talker: slot.talker)
            let bit: UInt16 = 1 << constellation.rawValue
            if pending.gsvConstellations & bit == 0 && groupSeenWhole {
                // This cycle's group for the constellation replaces what the last one said; a
                // group seen from the middle (the capture starts there, or its first sentence
                // was lost to line noise: isync.log) only adds to the sky it had.
                output.sky.removeAll(of: constellation)
                pending.gsvConstellations |= bit
            }
            output.sky.merge(
                packed: Satellite.pack(
                    id: entry.id, constellation: constellation, elevation: entry.elevation,
                    azimuth: entry.azimuth, snr: entry.snr))
        }
    }

    @inline(__always)
    private mutating func merge(_ s: GST) {
        output.sigmaLatitude = s.sigmaLatitude?.doubleValue
        output.sigmaLongitude = s.sigmaLongitude?.doubleValue
        output.sigmaAltitude = s.sigmaAltitude?.doubleValue
        output.rangeRMS = s.rangeRMS?.doubleValue
    }

    @inline(__always)
    private mutating func merge(_ s: ZDA) {
        if s.date != nil { pending.date = s.date }
    }

    @inline(__always)
    private mutating func merge(_ s: HDT) {
        output.heading = s.heading?.doubleValue
    }

    @inline(__always)
    private mutating func merge(_ s: PTNLGGK, slot: TalkerSlot) {
        let rank = SentenceKind.ptnlGGK.epochRole.rank
        if s.date != nil { pending.date = s.date }
        setQuality(s.quality.flatMap { FixQuality(ggkQuality: $0) }, rank: rank, slot)
        if s.quality.map({ $0 > 0 }) ?? true {
            if setPosition(s.latitude, s.longitude, rank: rank, slot) {
                output.ellipsoidalHeight = s.ellipsoidalHeight?.doubleValue
            }
        }
        if let satellites = s.satellitesInUse { pending.ggkSatellites = satellites }
    }

    /// Keeps the position from the most precise sentence of the cycle (GGK > GGA > GNS > RMC >
    /// GLL); among sentences of one kind, a combined (GN) solution over a constellation's own,
    /// else the first. Returns whether this sentence's position was taken.
    private mutating func setPosition(
        _ latitude: NMEACoordinate?, _ longitude: NMEACoordinate?, rank: Int, _ slot: TalkerSlot
    ) -> Bool {
        guard let latitude, let longitude else { return false }
        let priority = rank * 2 + (slot.isCombined ? 1 : 0)
        guard priority > pending.positionPriority else { return false }
        pending.positionPriority = priority
        output.latitude = latitude.degrees
        output.longitude = longitude.degrees
        return true
    }

    /// The quality from the most precise sentence kind; within a kind, a fix over no fix (one
    /// constellation's GGA may report none while another's has the solution).
    private mutating func setQuality(_ quality: FixQuality?, rank: Int, _ slot: TalkerSlot) {
        guard let quality else { return }
        if rank < pending.qualityRank { return }
        if rank == pending.qualityRank && quality == .noFix && output.quality != .noFix { return }
        pending.qualityRank = rank
        output.quality = quality
    }
}

extension Position {
    /// Clears everything one cycle reports, keeping the persistent sky view.
    mutating func clearMeasurements() {
        time = nil
        latitude = nil
        longitude = nil
        mslHeight = nil
        undulation = nil
        ellipsoidalHeight = nil
        speed = nil
        bearing = nil
        heading = nil
        quality = .noFix
        diffAge = nil
        diffStationID = nil
        pdop = nil
        hdop = nil
        vdop = nil
        sigmaLatitude = nil
        sigmaLongitude = nil
        sigmaAltitude = nil
        rangeRMS = nil
        satellitesInUse = nil
    }
}

/// What ended an epoch (the `Statistics` counter it goes to).
private enum CloseReason { case learnedCloser, timeChange, repeatedSentence, timeout, end }

/// The bookkeeping of the cycle being collected (its values go straight into the output epoch).
struct PendingCycle {
    /// The first time seen in the cycle (what later sentences are compared with), and the time
    /// the epoch is stamped with, from the most precise position sentence.
    var time: NMEATime?
    var stamp: NMEATime?
    var stampRank = 0
    var zdaTime: NMEATime?
    var date: NMEADate?
    var startedAt: Int64 = 0
    /// Sentences of each kind from each talker this cycle (GSV: complete groups), at
    /// `kind.rawValue × TalkerSlot.count + slot.index`.
    var occurrences = Occurrences(repeating: 0)
    /// One count per kind and talker slot: `SentenceKind.allCases.count × TalkerSlot.count` (12 × 9)
    /// written out, because an InlineArray's size must be a literal. A kind or a talker slot added
    /// without growing it fails `EpochRoleTests.occurrenceTableHasACountForEveryKindAndTalker` and
    /// the assertion in `EpochAssembler.init` (and an index past its end traps).
    typealias Occurrences = InlineArray<108, UInt8>
    /// The sentence merged last, as a closer candidate (nil when it cannot close a cycle, e.g. a
    /// GSV in the middle of its group).
    var last: EpochAssembler.Closer?
    var lastKind: SentenceKind?
    var count = 0
    /// Whether anything but ZDA arrived (a ZDA alone is no epoch).
    var carriesEpoch = false
    /// Priority of the sentence that set the position, rank of the one that set the quality.
    var positionPriority = 0
    var qualityRank = 0
    var speedFromRMC = false
    var courseFromRMC = false

    var gga = SatelliteCount()
    var gns = SatelliteCount()
    var ggkSatellites: Int?
    var ggaHDOP: Double?

    /// GSV groups completed (talker slot << 8 | signal id) and GSA systems seen (talker << 8 | id).
    var completedGroups = SmallCodeSet()
    var gsaSystems = SmallCodeSet()
    var gsvConstellations: UInt16 = 0
    /// Talker slots whose GSV group was seen from its first sentence this cycle.
    var gsvGroupsStarted: UInt16 = 0
    var used = UsedList()
    var sawAnyGSA = false
    var gsaPDOP: Double?
    var gsaHDOP: Double?
    var gsaVDOP: Double?

    var isEmpty: Bool { count == 0 }

    mutating func reset() {
        time = nil
        stamp = nil
        stampRank = 0
        zdaTime = nil
        date = nil
        startedAt = 0
        for i in occurrences.indices { occurrences[i] = 0 }
        last = nil
        lastKind = nil
        count = 0
        carriesEpoch = false
        positionPriority = 0
        qualityRank = 0
        speedFromRMC = false
        courseFromRMC = false
        gga = SatelliteCount()
        gns = SatelliteCount()
        ggkSatellites = nil
        ggaHDOP = nil
        completedGroups.removeAll()
        gsaSystems.removeAll()
        gsvConstellations = 0
        gsvGroupsStarted = 0
        used.removeAll()
        sawAnyGSA = false
        gsaPDOP = nil
        gsaHDOP = nil
        gsaVDOP = nil
    }

    func occurrence(of kind: SentenceKind, _ slot: TalkerSlot) -> Int {
        Int(occurrences[Self.occurrenceIndex(kind, slot)])
    }

    @inline(__always)
    static func occurrenceIndex(_ kind: SentenceKind, _ slot: TalkerSlot) -> Int {
        kind.rawValue * TalkerSlot.count + slot.index
    }

    func completedGroup(_ slot: TalkerSlot, signal: UInt8) -> Bool {
        completedGroups.contains(UInt16(slot.index) << 8 | UInt16(signal))
    }

    func sawGSA(_ slot: TalkerSlot, system: Int) -> Bool {
        gsaSystems.contains(UInt16(slot.index) << 8 | UInt16(truncatingIfNeeded: system))
    }

    /// Counts the sentence and returns its occurrence in this cycle: 1 for the first of its kind
    /// and talker, 0 for a GSV that does not complete its group (it cannot close a cycle).
    mutating func record(_ facts: SentenceFacts, _ slot: TalkerSlot) -> Int {
        let kind = facts.kind
        count += 1
        lastKind = kind
        switch kind.epochRole.repeats {
        case .asGroup:
            guard facts.gsvLast else { return 0 }
            completedGroups.insert(UInt16(slot.index) << 8 | UInt16(facts.gsvSignal))
        case .perSystem:
            if let system = facts.gsaSystem {
                gsaSystems.insert(UInt16(slot.index) << 8 | UInt16(truncatingIfNeeded: system))
            }
        case .startNextCycle: break
        }
        let index = Self.occurrenceIndex(kind, slot)
        if occurrences[index] < UInt8.max { occurrences[index] += 1 }
        return Int(occurrences[index])
    }
}

/// What the cycle rules read of one sentence: its kind and time, and for GSV and GSA what their
/// group and system checks need.
struct SentenceFacts {
    var kind: SentenceKind
    var time: NMEATime?
    /// GSV: the first sentence of its group, the last one, the signal id (0 when not given).
    var gsvFirst = false
    var gsvLast = false
    var gsvSignal: UInt8 = 0
    /// GSA: the NMEA 4.10 system id, if given.
    var gsaSystem: Int?

    @inline(__always)
    init(kind: SentenceKind, time: NMEATime?) {
        self.kind = kind
        self.time = time
    }

    @inline(__always)
    init(gsv s: GSV) {
        kind = .gsv
        gsvFirst = s.sentenceNumber == 1
        gsvLast = s.isLastOfGroup
        gsvSignal = s.signalID ?? 0
    }

    @inline(__always)
    init(gsa s: GSA) {
        kind = .gsa
        gsaSystem = s.systemID
    }
}

/// Satellites in use as one kind of position sentence reported them this cycle: a combined (GN)
/// talker's count is the total; constellations' own sentences (`$GPGGA`, `$GLGGA`) are summed.
struct SatelliteCount {
    private var combined: Int?
    private var sum: Int?

    mutating func add(_ satellites: Int?, _ slot: TalkerSlot) {
        guard let satellites else { return }
        if slot.isCombined {
            combined = satellites
        } else {
            sum = (sum ?? 0) + satellites
        }
    }

    var total: Int? { combined ?? sum }
}

/// A talker as a small index for the per-cycle tables.
struct TalkerSlot {
    let talker: Talker
    let index: Int

    static let count = 9

    init(_ talker: Talker) {
        self.talker = talker
        switch talker {
        case .gps: index = 0
        case .glonass: index = 1
        case .galileo: index = 2
        case .beidou: index = 3
        case .qzss: index = 4
        case .navic: index = 5
        case .combined: index = 6
        case .other: index = 7  // other two-letter talkers share one slot: none sends positions per constellation
        case .proprietary: index = 8
        }
    }

    var isCombined: Bool { index == 6 }
}

/// A few 16-bit codes (GSV groups, GSA systems of one cycle); more than fit are ignored, which
/// only loses a repeat check.
struct SmallCodeSet {
    private var storage = InlineArray<16, UInt16>(repeating: 0)
    private var count = 0

    func contains(_ code: UInt16) -> Bool {
        for i in 0..<count where storage[i] == code { return true }
        return false
    }

    mutating func insert(_ code: UInt16) {
        guard !contains(code), count < 16 else { return }
        storage[count] = code
        count += 1
    }

    mutating func removeAll() { count = 0 }
}

/// 1 knot = 1852 m per hour.
let metresPerSecondPerKnot = 1852.0 / 3600.0

/// Satellites marked used by the GSAs of one cycle.
struct UsedList {
    private var storage = InlineArray<64, (id: UInt16, constellation: Constellation)>(repeating: (0, .gps))
    private(set) var count = 0
    mutating func append(_ entry: (UInt16, Constellation)) {
        guard count < 64 else { return }
        storage[count] = entry
        count += 1
    }
    mutating func removeAll() { count = 0 }
    subscript(i: Int) -> (id: UInt16, constellation: Constellation) { storage[i] }
}

/// What a sentence kind is to the epoch rules: the GNSS half of the kind's row (NMEA0183's
/// `SentenceKind.row` says how the kind is read; this says what a cycle makes of it), one row per
/// kind in `SentenceKind.epochRole`, whose switch makes the compiler ask for a new kind's row.
/// `EpochRoleTests` checks the rows against NMEA0183's.
struct EpochRole {
    /// What a second sentence of the kind from one talker means in a cycle that has no time to go
    /// by (`startsNewCycle`), and which sentences count as occurrences (`PendingCycle.record`).
    enum Repeats {
        /// The kind comes once per cycle and talker: a second one starts the next cycle.
        case startNextCycle
        /// A numbered group is one occurrence (GSV): a new group (sentence 1) for a talker and
        /// signal whose group is complete starts the next cycle, and only a group's last sentence
        /// counts (and can close a cycle).
        case asGroup
        /// Several per cycle are normal, one per constellation (GSA): only a second one for one
        /// NMEA 4.10 system id, not right after the first, starts the next cycle.
        case perSystem
    }

    /// For position sentences, their precision rank (highest first: GGK, GGA, GNS, RMC, GLL): the
    /// epoch's position, fix quality and time stamp come from the highest-ranked sentence that
    /// has them. 0 for kinds without a position.
    var rank = 0
    /// The kind's time dates the cycle it arrives in but never places one (ZDA: receivers stamp
    /// it apart from their fixes, ac12: RMC 19:32:21 then ZDA 19:32:23, and send it twice,
    /// bundg, so its time would split cycles and duplicate epochs). Such a sentence alone is no
    /// epoch.
    var datesOnly = false
    var repeats = Repeats.startNextCycle
}

extension SentenceKind {
    /// The kind's row of epoch rules (see `EpochRole`).
    var epochRole: EpochRole {
        switch self {
        case .ptnlGGK: EpochRole(rank: 5)
        case .gga: EpochRole(rank: 4)
        case .gns: EpochRole(rank: 3)
        case .rmc: EpochRole(rank: 2)
        case .gll: EpochRole(rank: 1)
        case .vtg: EpochRole()
        case .gsa: EpochRole(repeats: .perSystem)
        case .gsv: EpochRole(repeats: .asGroup)
        case .gst: EpochRole()
        case .zda: EpochRole(datesOnly: true)
        case .hdt: EpochRole()
        case .unknown: EpochRole()  // never assembled: it has no decoder, so no NMEAMessage
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
    @inline(__always)
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
