// libFuzzer target for the gpsd JSON input path: bytes of a `gpspipe -w` capture (or of gpsd's
// socket) → `GPSDCaptureReader` (line framing) → CGPS (`cgps_unpack`: libgps's `libgps_json_unpack` once per line, the
// RFC 8259 well-formedness gate `json_well_formed`, `classify`) → `GPSDReport(kind:from:)` →
// `GPSDReportAssembler` → `Position`. What `tmm-bridge decode` does with such a capture, and what
// the daemon does with each line gpsd sends.
//
// Built by Fuzz/run-gpsd-json.sh into ONE Swift module, named GPSD, from a snapshot of
// Sources/Input (GPSDDevice), Sources/GNSS, Sources/NMEA0183, Sources/ByteCoding,
// Sources/GPSD/GPSDCaptureReader.swift and the `GPSDReport(kind:from:)` / `GPSDDevice(_ raw:)` extensions, plus this
// harness; the C shim (Sources/CGPS/CGPS.c, through Fuzz/GPSDJSONFuzz.c) is compiled by clang
// with -fsanitize=fuzzer-no-link,address and linked with the system's libgps (-lgps).
//
// Per input:
// 1. The reader is fed the input whole (the reference), in two chunks split at a position from
//    the first byte and (inputs up to 4096 bytes) one byte at a time: the items delivered and the
//    statistics must be the same (framing must not depend on read boundaries).
// 2. An independent framing in this file (split at LF, one CR dropped, lines over 16,000 bytes
//    dropped) unpacks every line in a FRESH libgps session: the reader's statistics must equal
//    the ones these lines give, and its reports must equal the fresh ones in order (`stale-state`:
//    a report must depend on its own line only, never on what libgps kept from earlier lines).
// 3. Every line also goes to CGPS's validator (`json_well_formed`) and to libgps's own status
//    (`libgps_json_unpack`): a TPV/SKY/GST line that became a report must be one the validator
//    accepts AND one libgps parsed whole (status 0), since CGPS drops the others. (The first run
//    found libgps 3.22's `gps_unpack` spinning forever on lines such as
//    {"class":"TPV","mode":"x","class":"TPV"}; CGPS no longer calls it, and libFuzzer's time-out
//    catches any hang left.)
// 4. Every report goes through `GPSDReportAssembler` (receiver accuracy on or off from the second
//    byte; a closed DEVICE restarts it, as the daemon does): every Position with a fix has finite
//    latitude in [-90, 90] and longitude in [-180, 180] (or none, so `hasFix` says no); every
//    value is finite; one epoch with a fix per time (a no-fix epoch of a time may precede it);
//    served times never go back except by a jump of more than `timeJumpNanoseconds` (a restart);
//    an epoch without a time carries no fix.
//
// Any Swift runtime trap, AddressSanitizer report or failed `check`/`checkValue` is a crash for
// libFuzzer, which writes the reproducer (Fuzz/build/gpsd-json-crash-<sha1>). Value findings
// reported but not fixed yet can be skipped by id: GPSDFUZZ_KNOWN=position-range,stale-state...

import CGPS
import GPSDFuzzC
import Glibc

@inline(never)
func violation(_ message: String, _ line: UInt = #line) -> Never {
    fatalError("GPSDJSONFuzz invariant violated (GPSDJSONFuzz.swift:\(line)): \(message)")
}

@inline(__always)
func check(_ condition: Bool, _ message: @autoclosure () -> String, _ line: UInt = #line) {
    if !condition { violation(message(), line) }
}

/// A value invariant with an id; `GPSDFUZZ_KNOWN=id1,id2` skips reported, unfixed findings.
@inline(__always)
func checkValue(_ id: StaticString, _ condition: Bool, _ message: @autoclosure () -> String, _ line: UInt = #line) {
    if !condition && !knownFindings.contains(id.description) { violation("[\(id)] \(message())", line) }
}

let knownFindings: Set<String> = {
    guard let value = getenv("GPSDFUZZ_KNOWN") else { return [] }
    return Set(String(cString: value).split(separator: ",").map(String.init))
}()

let maximumLine = GPSDCaptureReader.maximumLineLength

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size).span

    // 1. Framing must not depend on where reads end.
    let reference = read(bytes, splits: [])
    let split = size == 0 ? 0 : Int(bytes[0]) * (size + 1) / 256  // 0...size
    let halves = read(bytes, splits: [split])
    check(
        halves == reference,
        "reading differs when split at \(split): \(reference.items.count) vs \(halves.items.count) items, "
            + "\(reference.statistics) vs \(halves.statistics)")
    if size <= 4096 {
        let byteAtATime = read(bytes, splits: Array(0...size))
        check(byteAtATime == reference, "reading differs when fed one byte at a time")
    }

    // 2 and 3. Line by line, each in a fresh libgps session, and the validator against libgps.
    let framing = referenceLines(bytes)
    var expected = GPSDCaptureReader.Statistics()
    expected.overlong = framing.overlong
    var expectedReports: [GPSDReport] = []
    for line in framing.lines {
        expected.lines += 1
        let (kind, report) = unpackAlone(line)
        checkLine(line, kind: kind, report: report)
        if kind == 0 {
            expected.refused += 1
        } else if kind & Int32(CGPS_LINE_NMEA) != 0 {
            expected.sentences += 1
        } else if let report {
            expected.reports += 1
            expectedReports.append(report)
        } else if kind & Int32(CGPS_LINE_DEVICES | CGPS_LINE_DEVICE) == 0 {
            expected.otherObjects += 1
        }
    }
    check(reference.statistics == expected, "statistics \(reference.statistics), line by line \(expected)")
    let reports = reference.items.compactMap { item -> GPSDReport? in
        if case .report(let report) = item { return report } else { return nil }
    }
    check(reports.count == expectedReports.count, "\(reports.count) reports, line by line \(expectedReports.count)")
    for (index, (report, alone)) in zip(reports, expectedReports).enumerated() {
        checkValue("stale-state", report == alone, "report \(index) is \(report), from its line alone \(alone)")
    }

    // 4. Epochs.
    assemble(reference.items, receiverAccuracy: size > 1 && bytes[1] & 1 != 0)
    return 0
}

// MARK: - Reading

enum Delivered: Equatable {
    case report(GPSDReport)
    case device(GPSDDevice)

    init(_ item: GPSDCaptureReader.Item) {
        switch item {
        case .report(let report): self = .report(report)
        case .device(let device): self = .device(device)
        }
    }
}

struct Reading: Equatable {
    var items: [Delivered] = []
    var statistics = GPSDCaptureReader.Statistics()
}

/// Feeds `bytes` to a fresh reader in chunks ending at `splits` (then the rest), then `finish`.
func read(_ bytes: Span<UInt8>, splits: [Int]) -> Reading {
    guard let reader = GPSDCaptureReader() else { violation("GPSDCaptureReader() failed") }
    var reading = Reading()
    var start = 0
    for end in splits + [bytes.count] where end >= start {
        reader.feed(bytes.extracting(start..<end)) { reading.items.append(Delivered($0)) }
        start = end
    }
    reader.finish { reading.items.append(Delivered($0)) }
    let s = reader.statistics
    reading.statistics = s
    let reports = reading.items.reduce(0) { count, item in
        if case .report = item { return count + 1 } else { return count }
    }
    check(s.reports == reports, "statistics.reports \(s.reports), \(reports) delivered")
    check(s.lines >= s.reports + s.sentences + s.otherObjects + s.refused, "statistics do not add up: \(s)")
    check(
        [s.lines, s.reports, s.sentences, s.otherObjects, s.refused, s.overlong].allSatisfy { $0 >= 0 },
        "negative statistics \(s)")
    return reading
}

/// The lines of `bytes` as the reader's contract describes them, framed without it: split at LF,
/// one CR before it dropped, empty lines skipped, lines longer than 16,000 bytes (CR included)
/// counted and dropped; a last line without LF counts too.
func referenceLines(_ bytes: Span<UInt8>) -> (lines: [[UInt8]], overlong: Int) {
    var lines: [[UInt8]] = []
    var overlong = 0
    var start = 0
    func end(_ stop: Int) {
        let count = stop - start
        if count > maximumLine {
            overlong += 1
            return
        }
        var line: [UInt8] = []
        line.reserveCapacity(count)
        for i in start..<stop { line.append(bytes[i]) }
        if line.last == 0x0D { line.removeLast() }
        if !line.isEmpty { lines.append(line) }
    }
    for i in 0..<bytes.count where bytes[i] == 0x0A {
        end(i)
        start = i + 1
    }
    if start < bytes.count { end(bytes.count) }
    return (lines, overlong)
}

/// One line unpacked in a fresh libgps session: its CGPS_LINE_* bits and the report it makes.
func unpackAlone(_ line: [UInt8]) -> (kind: Int32, report: GPSDReport?) {
    guard let session = cgps_parser() else { violation("cgps_parser() failed") }
    defer { cgps_close(session) }
    let terminated = line + [0]
    let kind = terminated.withUnsafeBufferPointer { raw in
        raw.withMemoryRebound(to: CChar.self) { cgps_unpack(session, $0.baseAddress, Int32(line.count)) }
    }
    guard kind != 0 && kind & Int32(CGPS_LINE_NMEA) == 0 else { return (kind, nil) }
    return (kind, GPSDReport(kind: kind, from: session))
}

/// The validator and libgps on one line (NUL-terminated copy; both stop at a NUL inside it).
func checkLine(_ line: [UInt8], kind: Int32, report: GPSDReport?) {
    let terminated = line + [0]
    let (wellFormed, status) = terminated.withUnsafeBufferPointer { raw in
        raw.withMemoryRebound(to: CChar.self) {
            (gpsdfuzz_well_formed($0.baseAddress) != 0, gpsdfuzz_libgps_status($0.baseAddress))
        }
    }
    check(kind & Int32(CGPS_LINE_MALFORMED) == 0, "cgps_unpack returned CGPS_LINE_MALFORMED (\(kind)) to its caller")
    if report != nil {
        check(wellFormed, "a report from a line the validator refuses: \(printable(line))")
        check(status == 0, "a report from a line libgps could not parse whole (status \(status)): \(printable(line))")
        check(kind & Int32(CGPS_LINE_TPV | CGPS_LINE_SKY | CGPS_LINE_GST) != 0, "a report from kind \(kind)")
    }
}

func printable(_ line: [UInt8]) -> String {
    let head = line.prefix(300).map {
        $0 >= 0x20 && $0 < 0x7F ? String(UnicodeScalar($0)) : "\\x\(String($0, radix: 16))"
    }
    return head.joined() + (line.count > 300 ? "... (\(line.count) bytes)" : "")
}

// MARK: - Epochs

func assemble(_ items: [Delivered], receiverAccuracy: Bool) {
    var assembler = GPSDReportAssembler()
    assembler.receiverAccuracy = receiverAccuracy
    var served = EpochLog()
    // Reports 1 ms apart, so a held fix's hold (10-100 ms) ends in the middle of some inputs.
    var now: Int64 = 0
    func emit(_ position: Position) {
        checkPosition(position)
        served.add(position)
    }
    /// Every TPV ends counted once: served, replaced or repeated, late, or invalid.
    func checkAccounts() {
        let s = assembler.statistics
        check(s.epochs + s.repeated + s.late + s.invalid == s.fixes, "a TPV neither served nor counted: \(s)")
    }
    for item in items {
        now += 1_000_000
        switch item {
        case .report(let report):
            let before = assembler.statistics.epochs
            assembler.idle(now: now, emit)
            assembler.report(report, now: now, emit)
            check(assembler.statistics.epochs - before <= 2, "one report served more than the held fix and itself")
        case .device(let device):
            if device.activated == nil {
                // The device closed: the held fix is served, then a new source in which nothing
                // carries over (ReceiverEpochs does this).
                assembler.flush(emit)
                checkAccounts()
                assembler.restart()
                served = EpochLog()
            }
        }
    }
    assembler.flush(emit)
    checkAccounts()
}

/// The epochs served so far in one stream: one with a fix per time, times never going back
/// except by a jump larger than `timeJumpNanoseconds` (then the stream starts afresh).
struct EpochLog {
    var lastTime: Int64?
    /// Times served in this stream, and whether the epoch of that time had a fix.
    var times: [Int64: Bool] = [:]

    mutating func add(_ p: Position) {
        guard let time = p.time else {
            checkValue("untimed-fix", p.quality == .noFix, "an epoch without a time has quality \(p.quality)")
            return
        }
        guard let t = time.unixNanoseconds else { violation("an epoch's time has no date: \(time)") }
        if let lastTime {
            if t < lastTime - GPSDReportAssembler.timeJumpNanoseconds {
                times = [:]
            } else {
                checkValue("epoch-order", t >= lastTime, "served \(t) after \(lastTime)")
            }
        }
        let hasFix = p.quality != .noFix
        if let earlier = times[t] {
            checkValue(
                "one-epoch-per-time", !earlier && hasFix,
                "two epochs of time \(t): fix \(earlier), then fix \(hasFix)")
        }
        times[t] = (times[t] ?? false) || hasFix
        lastTime = t
    }
}

func checkPosition(_ p: Position) {
    if p.quality != .noFix {
        if let lat = p.latitude {
            checkValue("position-range", lat.isFinite && abs(lat) <= 90, "latitude \(lat) with quality \(p.quality)")
        }
        if let lon = p.longitude {
            checkValue("position-range", lon.isFinite && abs(lon) <= 180, "longitude \(lon) with quality \(p.quality)")
        }
    } else {
        check(p.latitude == nil && p.longitude == nil, "coordinates without a fix")
    }
    let values: [(Double?, String)] = [
        (p.latitude, "latitude"), (p.longitude, "longitude"), (p.mslHeight, "mslHeight"), (p.undulation, "undulation"),
        (p.ellipsoidalHeight, "ellipsoidalHeight"), (p.speed, "speed"), (p.bearing, "bearing"), (p.heading, "heading"),
        (p.diffAge, "diffAge"), (p.pdop, "pdop"), (p.hdop, "hdop"), (p.vdop, "vdop"),
        (p.sigmaLatitude, "sigmaLatitude"), (p.sigmaLongitude, "sigmaLongitude"), (p.sigmaAltitude, "sigmaAltitude"),
        (p.rangeRMS, "rangeRMS"), (p.receiverHorizontalAccuracy, "receiverHorizontalAccuracy"),
        (p.receiverVerticalAccuracy, "receiverVerticalAccuracy"), (p.altitude, "altitude"), (p.hrms, "hrms"),
        (p.vrms, "vrms"),
    ]
    for (value, name) in values {
        if let value { check(value.isFinite, "\(name) = \(value)") }
    }
    if let n = p.satellitesInUse { check(n >= 0, "satellitesInUse \(n)") }
    _ = p.hasFix
    _ = p.satellitesInView
    _ = p.satellitesUsed
}
