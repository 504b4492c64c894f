// libFuzzer target for the NMEA 0183 parser (framer, validator, typed decoders) and, optionally,
// the GNSS epoch assembler.
//
// Built by Fuzz/run.sh into ONE module, named NMEA0183, together with the parser sources (so no
// `import NMEA0183` here; also builds with any other module name when GNSS is left out):
//
//   swiftc -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
//       -module-name NMEA0183 Sources/NMEA0183/*.swift Sources/NMEA0183/Sentences/*.swift \
//       Fuzz/NMEAFuzz.swift -o Fuzz/build/nmea-fuzz
//   (+ -D NMEAFUZZ_GNSS Sources/GNSS/*.swift for step 5)
//
// Per input:
// 1. The framer is fed the whole input in one chunk (the reference), in two chunks split at a
//    position derived from the first byte, and (inputs up to 512 bytes) one byte at a time. All
//    three must deliver the same sentences and end with the same statistics: framing must not
//    depend on read boundaries. `reset()` must give back a fresh framer.
// 2. Every delivered sentence is validated and decoded; accepted sentences and decoded values
//    are checked against invariants (field boundaries, value ranges, round trips).
// 3. `NMEASentence(validating:)` also runs directly on the first 512 bytes of the input, so
//    bytes the framer would never deliver (CR, LF, a second `$`, control bytes) reach it too.
// 4. The input is run again with every `*hh` checksum recomputed (see `repairChecksums`), so
//    that mutations inside a sentence reach the decoders instead of failing the checksum.
// 5. With -D NMEAFUZZ_GNSS (run.sh adds it, and Sources/GNSS, when Sources/GNSS has
//    NMEAStreamDecoder.swift and the combined build compiles): the whole pipeline of
//    `NMEAStreamDecoder` (framer -> sentence -> message -> `EpochAssembler` -> `Position`), fed in
//    one and in two chunks, must emit the same positions, each within range. The GNSS files'
//    `import NMEA0183` is ignored (one module), which the compiler only warns about.
//
// Any Swift runtime trap (overflow, bounds, force unwrap), AddressSanitizer report or failed
// `check`/`checkValue` is a crash for libFuzzer, which writes the reproducer (run.sh:
// Fuzz/build/nmea-crash-<sha1>).

import Glibc

/// A failed invariant: a crash with a message libFuzzer prints next to the reproducer.
@inline(never)
func violation(_ message: String, _ line: UInt = #line) -> Never {
    fatalError("NMEAFuzz invariant violated (NMEAFuzz.swift:\(line)): \(message)")
}

@inline(__always)
func check(_ condition: Bool, _ message: @autoclosure () -> String, _ line: UInt = #line) {
    if !condition { violation(message(), line) }
}

/// A decoded-value (semantic) invariant, identified by `id`. A finding that is reported but not
/// fixed yet can be skipped with `NMEAFUZZ_KNOWN=id1,id2` so a long run keeps exploring; memory
/// safety, traps and framing invariants are never skippable.
@inline(__always)
func checkValue(_ id: StaticString, _ condition: Bool, _ message: @autoclosure () -> String, _ line: UInt = #line) {
    if !condition && !knownFindings.contains(id.description) { violation("[\(id)] \(message())", line) }
}

let knownFindings: Set<String> = {
    guard let value = getenv("NMEAFUZZ_KNOWN") else { return [] }
    return Set(String(cString: value).split(separator: ",").map(String.init))
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    let bytes = input.span

    // 1. Framing must not depend on where reads end.
    let reference = frame(bytes, splits: [])
    let split = size == 0 ? 0 : Int(bytes[0]) * (size + 1) / 256  // 0...size
    let twoChunks = frame(bytes, splits: [split])
    check(
        twoChunks == reference,
        "framing differs when split at \(split): "
            + "\(reference.sentences.count) vs \(twoChunks.sentences.count) sentences, "
            + "\(reference.statistics) vs \(twoChunks.statistics)")
    if size <= 512 {
        let byteAtATime = frame(bytes, splits: Array(0...size))
        check(byteAtATime == reference, "framing differs when fed one byte at a time")
    }
    // `reset()` returns the framer to its initial state, whatever it was holding.
    var framer = NMEAFramer()
    framer.feed(bytes.extracting(0..<split)) { _ in }
    _ = framer.hasPartialSentence
    framer.reset()
    check(!framer.hasPartialSentence, "hasPartialSentence after reset")
    var again: [[UInt8]] = []
    framer.feed(bytes) { line in again.append(copyBytes(line)) }
    check(again == reference.sentences, "framing after reset() differs from a fresh framer")

    // 3. The validator on raw input, including bytes the framer filters out.
    let direct = bytes.extracting(0..<min(size, 512))
    exercise(direct, fromFramer: false)

    #if NMEAFUZZ_GNSS
        fuzzEpochs(bytes, split: split)
    #endif

    // 4. Checksums would shield the decoders from almost every mutation, so the input is run
    //    again with every `$...*hh` checksum recomputed (when that changes anything).
    var repaired = Array(input)
    if repairChecksums(&repaired) {
        let span = repaired.span
        let whole = frame(span, splits: [])
        let halves = frame(span, splits: [split])
        check(halves == whole, "framing differs when split at \(split) (checksums repaired)")
        exercise(span.extracting(0..<min(size, 512)), fromFramer: false)
        #if NMEAFUZZ_GNSS
            fuzzEpochs(span, split: split)
        #endif
    }
    return 0
}

/// Rewrites the two characters after each `*` with the XOR of the bytes since the preceding
/// `$`, the way a valid sentence would carry it. Returns whether any byte changed.
func repairChecksums(_ bytes: inout [UInt8]) -> Bool {
    let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
    var changed = false
    var sum: UInt8 = 0
    var inSentence = false
    var i = 0
    while i < bytes.count {
        let b = bytes[i]
        if b == UInt8(ascii: "$") {
            inSentence = true
            sum = 0
        } else if b == UInt8(ascii: "*") && inSentence {
            inSentence = false
            if i + 2 < bytes.count {  // both digits are inside the input
                let high = hex[Int(sum >> 4)], low = hex[Int(sum & 15)]
                if bytes[i + 1] != high || bytes[i + 2] != low {
                    bytes[i + 1] = high
                    bytes[i + 2] = low
                    changed = true
                }
                i += 2
            }
        } else if b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r") {
            inSentence = false
        } else if inSentence {
            sum ^= b
        }
        i += 1
    }
    return changed
}

func copyBytes(_ span: Span<UInt8>) -> [UInt8] {
    var copy: [UInt8] = []
    copy.reserveCapacity(span.count)
    for i in span.indices { copy.append(span[i]) }
    return copy
}

/// What the framer delivered for one way of chunking the input.
struct Framing: Equatable {
    var sentences: [[UInt8]] = []
    var statistics = NMEAFramer.Statistics()
}

/// Feeds `bytes` to a fresh framer in chunks ending at `splits` (then the rest), validating and
/// decoding every delivered sentence.
func frame(_ bytes: Span<UInt8>, splits: [Int]) -> Framing {
    var framer = NMEAFramer()
    var result = Framing()
    var start = 0
    for end in splits + [bytes.count] where end >= start {
        framer.feed(bytes.extracting(start..<end)) { line in
            check(line.count <= NMEASentence.maxLength, "framer delivered \(line.count) bytes")
            check(line.count > 0 && line[0] == UInt8(ascii: "$"), "framer delivered a line not starting with $")
            for i in line.indices {
                let b = line[i]
                check(b >= 0x20 && b <= 0x7E, "framer delivered byte \(b) at \(i)")
                check(i == 0 || b != UInt8(ascii: "$"), "framer delivered a second $ at \(i)")
            }
            result.sentences.append(copyBytes(line))
            exercise(line, fromFramer: true)
        }
        start = end
    }
    result.statistics = framer.statistics
    check(framer.statistics.sentences == result.sentences.count, "statistics.sentences disagrees with deliveries")
    return result
}

// MARK: - Validation and decoding

func exercise(_ line: Span<UInt8>, fromFramer: Bool) {
    let sentence: NMEASentence
    do {
        sentence = try NMEASentence(validating: line)
    } catch {
        return
    }
    checkSentence(sentence, line: line)
    do {
        let message = try NMEAMessage(sentence)
        check(message == message, "NMEAMessage is not equal to itself")
        checkMessage(message, sentence)
    } catch {
        if case .unsupportedSentence = error {
            check(sentence.kind == .unknown, "unsupportedSentence for kind \(sentence.kind)")
        }
    }
}

/// Structural invariants of an accepted sentence.
func checkSentence(_ s: borrowing NMEASentence, line: Span<UInt8>) {
    let b = s.bytes
    check(b.count >= 2 && b.count <= NMEASentence.maxLength, "accepted length \(b.count)")
    check(b.count <= line.count, "sentence longer than its line")
    for i in b.indices { check(b[i] == line[i], "sentence bytes are not a prefix of the line") }
    for i in b.count..<line.count { check(line[i] == UInt8(ascii: " "), "dropped a non-space tail byte") }
    check(b[0] == UInt8(ascii: "$"), "accepted without $")
    check(s.fieldCount >= 1 && s.fieldCount <= NMEASentence.maxFields, "fieldCount \(s.fieldCount)")

    // The fields, joined with commas, are the bytes between `$` and `*` (or the end).
    var star = b.count
    var sum: UInt8 = 0
    for i in 1..<b.count {
        if b[i] == UInt8(ascii: "*") {
            star = i
            break
        }
        check(b[i] >= 0x20 && b[i] <= 0x7E && b[i] != UInt8(ascii: "$"), "accepted byte \(b[i]) at \(i)")
        sum ^= b[i]
    }
    check(s.hasChecksum == (star < b.count), "hasChecksum \(s.hasChecksum) but star at \(star)")
    if s.hasChecksum {
        check(b.count == star + 3, "checksum is not two digits")
        let text = String(decoding: [b[star + 1], b[star + 2]], as: UTF8.self)
        check(UInt8(text, radix: 16) == sum, "accepted checksum \(text), computed \(sum)")
    }
    var offset = 1
    for index in 0..<s.fieldCount {
        let f = s.field(index)
        for i in f.indices {
            check(f[i] == b[offset + i], "field \(index) is not at offset \(offset)")
            check(f[i] != UInt8(ascii: ",") && f[i] != UInt8(ascii: "*"), "separator inside field \(index)")
        }
        offset += f.count
        check(s.hasValue(index) == (index == 0 || f.count > 0), "hasValue(\(index)) disagrees with field")
        if index < s.fieldCount - 1 {
            check(b[offset] == UInt8(ascii: ","), "field \(index) not closed by a comma")
            offset += 1
        }
    }
    check(offset == star, "fields end at \(offset), star/end at \(star)")
    check(s.field(s.fieldCount).isEmpty && s.field(-1).isEmpty && s.field(1000).isEmpty, "out-of-range field")
    check(!s.hasValue(s.fieldCount) && !s.hasValue(-1), "hasValue out of range")

    // Address: upper-case letters and digits, starting with a letter.
    let address = s.field(0)
    check(address.count >= 1, "empty address accepted")
    check(address[0] >= 0x41 && address[0] <= 0x5A, "address starts with \(address[0])")
    _ = s.talker
    _ = s.kind
}

// MARK: - Decoded values

func checkMessage(_ message: NMEAMessage, _ s: borrowing NMEASentence) {
    switch message {
    case .gga(let m):
        checkTime(m.time, s.field(1))
        checkLatitude(m.latitude)
        checkLongitude(m.longitude)
        check(m.quality.map { $0 <= 9 } ?? true, "GGA quality")
        for d in [m.hdop, m.altitudeMSL, m.geoidSeparation, m.dgpsAge] { checkDecimal(d) }
    case .gns(let m):
        checkTime(m.time, s.field(1))
        checkLatitude(m.latitude)
        checkLongitude(m.longitude)
        check(m.modes.count <= ModeIndicators.capacity, "GNS modes")
        for i in 0..<m.modes.count { check(m.modes[i] >= 0x41 && m.modes[i] <= 0x5A, "GNS mode byte") }
        if let best = m.modes.best { check(best >= 0x41 && best <= 0x5A, "GNS best mode") }
        for d in [m.hdop, m.altitudeMSL, m.geoidSeparation, m.dgpsAge] { checkDecimal(d) }
    case .rmc(let m):
        checkTime(m.time, s.field(1))
        checkLatitude(m.latitude)
        checkLongitude(m.longitude)
        checkDate(m.date)
        for d in [m.speedKnots, m.courseTrue, m.magneticVariation] { checkDecimal(d) }
        checkSpeed(m.speedKnots)
        checkCourse(m.courseTrue)
        _ = m.isValid
    case .gll(let m):
        checkLatitude(m.latitude)
        checkLongitude(m.longitude)
        checkTime(m.time, s.field(5))
        _ = m.isValid
    case .vtg(let m):
        for d in [m.courseTrue, m.courseMagnetic, m.speedKnots, m.speedKmh] { checkDecimal(d) }
        checkSpeed(m.speedKnots)
        checkSpeed(m.speedKmh)
        checkCourse(m.courseTrue)
    case .gsa(let m):
        check(m.satelliteIDs.count <= 12, "GSA ids")
        var hasher = Hasher()
        m.satelliteIDs.hash(into: &hasher)
        _ = hasher.finalize()
        for i in 0..<m.satelliteIDs.count { check(m.satelliteIDs[i] <= 999, "GSA id") }
        for d in [m.pdop, m.hdop, m.vdop] { checkDecimal(d) }
    case .gsv(let m):
        check(m.count <= 4, "GSV count \(m.count)")
        check(m.sentenceNumber >= 1 && m.sentenceNumber <= m.totalSentences, "GSV numbering")
        for i in 0..<m.count {
            let e = m[i]
            check(e.id <= 999, "GSV id")
            check(e.elevation.map { $0 >= -90 && $0 <= 90 } ?? true, "GSV elevation \(String(describing: e.elevation))")
            check(e.azimuth.map { $0 >= 0 && $0 <= 360 } ?? true, "GSV azimuth")
            check(e.snr.map { $0 <= 99 } ?? true, "GSV snr")
        }
        _ = m.isLastOfGroup
    case .gst(let m):
        checkTime(m.time, s.field(1))
        for d in [
            m.rangeRMS, m.semiMajor, m.semiMinor, m.orientation, m.sigmaLatitude, m.sigmaLongitude,
            m.sigmaAltitude,
        ] { checkDecimal(d) }
    case .zda(let m):
        checkTime(m.time, s.field(1))
        checkDate(m.date)
    case .hdt(let m):
        checkDecimal(m.heading)
        if let h = m.heading {
            checkValue("heading-range", h.doubleValue >= 0 && h.doubleValue < 361, "HDT heading \(h)")
        }
    case .ptnlGGK(let m):
        checkTime(m.time, s.field(2))
        checkDate(m.date)
        checkLatitude(m.latitude)
        checkLongitude(m.longitude)
        checkDecimal(m.dop)
        checkDecimal(m.ellipsoidalHeight)
    }
}

/// An exact decimal: its text and `doubleValue` agree with the standard library's parse.
func checkDecimal(_ d: NMEADecimal?) {
    guard let d else { return }
    check(d.scale <= 18, "decimal scale \(d.scale)")
    let text = d.description
    guard let parsed = Double(text) else { violation("description '\(text)' does not parse") }
    let value = d.doubleValue
    check(value.isFinite, "doubleValue not finite")
    checkValue(
        "decimal-double", abs(value - parsed) <= 1e-12 * max(1, abs(parsed)),
        "doubleValue \(value) vs description \(text)")
    for scale in [0, 1, 3, 9, 18] as [UInt8] { _ = d.rescaled(to: scale) }
}

/// Speed over ground is a magnitude: a decoded speed is never negative.
func checkSpeed(_ d: NMEADecimal?) {
    guard let d else { return }
    checkValue("negative-speed", d.value >= 0, "speed \(d)")
}

/// Course over ground, degrees true: 0...360.
func checkCourse(_ d: NMEADecimal?) {
    guard let d else { return }
    checkValue("course-range", d.value >= 0 && d.doubleValue <= 360, "course \(d)")
}

func checkLatitude(_ c: NMEACoordinate?) {
    guard let c else { return }
    checkDecimal(c.raw)
    checkValue("coordinate-range", abs(c.degrees) <= 90, "latitude \(c.degrees)")
}

func checkLongitude(_ c: NMEACoordinate?) {
    guard let c else { return }
    checkDecimal(c.raw)
    checkValue("coordinate-range", abs(c.degrees) <= 180, "longitude \(c.degrees)")
}

func checkDate(_ d: NMEADate?) {
    guard let d else { return }
    checkValue("date-range", d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= 31, "date \(d)")
    checkValue("date-range", d.year >= 1980 && d.year <= 9999, "year \(d.year)")
}

/// A decoded time of day reads back as the `hhmmss` digits of its field. A second of 60 (leap
/// second) gets its own finding id, `leap-second`, so it can be skipped on its own.
func checkTime(_ t: NMEATime?, _ field: Span<UInt8>) {
    guard let t else { return }
    check(field.count >= 6, "time from a short field")
    func two(_ i: Int) -> Int { Int(field[i] &- 0x30) * 10 + Int(field[i + 1] &- 0x30) }
    let (hh, mm, ss) = (two(0), two(2), two(4))
    let id: StaticString = ss == 60 ? "leap-second" : "time-readback"
    check(t.nanoseconds >= 0 && t.nanoseconds < 1_000_000_000, "time nanoseconds \(t.nanoseconds)")
    checkValue(
        id, t.hours == hh && t.minutes == mm && t.seconds == ss,
        "time \(t.hours):\(t.minutes):\(t.seconds) read back from field \(hh):\(mm):\(ss)")
    checkValue(
        id, (0...23).contains(t.hours) && (0...59).contains(t.minutes) && (0...60).contains(t.seconds),
        "time \(t.hours):\(t.minutes):\(t.seconds) out of range")
}

// MARK: - GNSS epoch assembly (optional, -D NMEAFUZZ_GNSS)

#if NMEAFUZZ_GNSS
    func fuzzEpochs(_ bytes: Span<UInt8>, split: Int) {
        func run(_ splits: [Int]) -> [Position] {
            var decoder = NMEAStreamDecoder()
            var positions: [Position] = []
            var start = 0
            for end in splits + [bytes.count] where end >= start {
                decoder.feed(bytes.extracting(start..<end), now: 0) { positions.append($0) }
                start = end
            }
            // An even split point also exercises the stale flush; otherwise `finish` emits what is pending.
            if split % 2 == 0 { decoder.flushIfStale(now: Int64.max / 2) { positions.append($0) } }
            decoder.finish { positions.append($0) }
            return positions
        }
        let whole = run([])
        let halves = run([split])
        check(whole == halves, "epochs differ when split at \(split): \(whole.count) vs \(halves.count) positions")
        for p in whole { checkPosition(p) }
    }

    func checkPosition(_ p: Position) {
        func finite(_ v: Double?, _ name: String) {
            if let v { checkValue("position-range", v.isFinite, "\(name) = \(v)") }
        }
        if let lat = p.latitude { checkValue("position-range", abs(lat) <= 90, "latitude \(lat)") }
        if let lon = p.longitude { checkValue("position-range", abs(lon) <= 180, "longitude \(lon)") }
        for (v, name) in [
            (p.mslHeight, "mslHeight"), (p.undulation, "undulation"), (p.ellipsoidalHeight, "ellipsoidalHeight"),
            (p.speed, "speed"), (p.bearing, "bearing"), (p.heading, "heading"), (p.diffAge, "diffAge"),
            (p.pdop, "pdop"), (p.hdop, "hdop"), (p.vdop, "vdop"), (p.sigmaLatitude, "sigmaLatitude"),
            (p.sigmaLongitude, "sigmaLongitude"), (p.sigmaAltitude, "sigmaAltitude"), (p.rangeRMS, "rangeRMS"),
            (p.altitude, "altitude"),
        ] {
            finite(v, name)
        }
        if let speed = p.speed { checkValue("negative-speed", speed >= 0, "speed \(speed) m/s") }
        if let bearing = p.bearing { checkValue("course-range", bearing >= 0 && bearing <= 360, "bearing \(bearing)") }
        if let n = p.satellitesInUse { checkValue("position-range", n >= 0, "satellitesInUse \(n)") }
        _ = p.time
        _ = p.sky
    }
#endif
