// tmm-inputcost: what the gpsd thread does per epoch on each of a receiver's two input paths
// (issue 20, "Cost": the JSON path costs no more per epoch than the NMEA path and allocates
// nothing per epoch).
//
// Input: recordings of exactly what gpsd 3.22 writes to the bridge's live watch (json:true AND
// nmea:true; Tests/Fixtures/gpsd-json/README.md), one NMEA receiver and one binary receiver of
// the same chipset per pair. The connection's own lines (VERSION, DEVICES, WATCH, DEVICE) are left
// out; every other line (the `$` lines, TPV, SKY, GST) is measured, in the recorded order.
//
// Stages, per pair (a run = `--passes` passes over the recording; state kept across passes, as a
// live stream keeps it):
// - parser: the NMEA receiver's sentences alone through `EpochStream.sentence` (the zero-copy
//   parser + EpochAssembler), pre-framed: the NMEA path as if gpsd sent nothing else;
// - nmea: the NMEA receiver's whole watch, line by line, as the gpsd thread handles it: every
//   line through `GPSDCaptureReader.feed` (framing, `cgps_unpack`: libgps's `gps_unpack` + the
//   well-formedness check + `classify` for JSON, the one-byte check for `$` lines; TPV/SKY/GST
//   converted to `GPSDReport`) and `ReceiverEpochs` with the receiver's driver (`NMEA0183`), which
//   parses the sentences and ignores the reports, as the daemon's GPSDEpochConsumer does;
// - json: the binary receiver's whole watch, the same way (driver `SiRF` / `u-blox`): reports
//   through `GPSDReportAssembler`, gpsd's pseudo-NMEA ignored after one byte.
// libgps frames the live lines from its socket buffer; here `GPSDCaptureReader`'s byte loop
// frames every line on both paths instead (the same work per byte on each side).
//
// Per epoch = per `Position` the path emits. Time: wall and thread CPU, medians over `--runs`
// runs, stages interleaved per run. Allocations: the CAllocationCounter interposer, this thread,
// during every timed run (the state is made before). Instructions: run under callgrind with
// `--callgrind` and `--toggle-collect='*measured*'`: one untoggled warm-up pass, then one measured
// run (scripts/bench.sh does this per pair and stage).
//
// Usage: tmm-inputcost [--fixtures DIR] [--runs N] [--passes N] [--pairs sirf,ublox]
//                      [--stages parser,nmea,json] [--callgrind]
// Lines starting with `RESULT ` are machine-readable (`key=value`) for scripts/bench.sh.

import BenchSupport
import CAllocationCounter
import GNSS
import GPSD
import Glibc
import Input

// MARK: - Options

struct Options {
    var fixtures: String?
    var runs = 7
    var passes = 50
    var pairs = ["sirf", "ublox"]
    var stages = ["parser", "nmea", "json"]
    var callgrind = false
}

func fail(_ message: String) -> Never {
    printError("tmm-inputcost: \(message)\n")
    exit(1)
}

let usageText = """
    usage: tmm-inputcost [--fixtures DIR] [--runs N] [--passes N] [--pairs sirf,ublox]
                         [--stages parser,nmea,json] [--callgrind]
    Instructions, time and allocations per epoch of the two input paths (NMEA receiver: its
    sentences through the parser, gpsd's TPV/SKY unpacked and ignored; binary receiver: gpsd's
    TPV/SKY through libgps and GPSDReportAssembler, its pseudo-NMEA ignored), on recordings of
    gpsd 3.22's live watch (default Tests/Fixtures/gpsd-json). --callgrind: one warm-up pass, one
    measured run, no timing (run under valgrind --tool=callgrind --toggle-collect='*measured*').

    """

func parseOptions() -> Options {
    var options = Options()
    var args = CommandLine.arguments.dropFirst()
    func usage(_ message: String) -> Never {
        printError("tmm-inputcost: \(message)\n" + usageText)
        exit(2)
    }
    func value(_ name: String) -> String {
        guard let v = args.popFirst() else { usage("\(name) needs a value") }
        return v
    }
    func positive(_ name: String) -> Int {
        let text = value(name)
        guard let n = Int(text), n > 0 else { usage("\(name): '\(text)' is not a positive integer") }
        return n
    }
    func list(_ name: String, _ allowed: [String]) -> [String] {
        let items = value(name).split(separator: ",").map(String.init)
        for item in items where !allowed.contains(item) {
            usage("\(name): unknown '\(item)' (\(allowed.joined(separator: ", ")))")
        }
        return items
    }
    while let arg = args.popFirst() {
        switch arg {
        case "--fixtures": options.fixtures = value(arg)
        case "--runs": options.runs = positive(arg)
        case "--passes": options.passes = positive(arg)
        case "--pairs": options.pairs = list(arg, pairs.map(\.key))
        case "--stages": options.stages = list(arg, ["parser", "nmea", "json"])
        case "--callgrind": options.callgrind = true
        case "-h", "--help":
            print(usageText, terminator: "")
            exit(0)
        default: usage("unknown argument '\(arg)'")
        }
    }
    return options
}

// MARK: - Recordings

func isDirectory(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
}

func readFile(_ path: String) -> [UInt8] {
    guard let file = fopen(path, "rb") else { fail("cannot read \(path)") }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        if n == 0 { break }
        bytes.append(contentsOf: buffer[0..<n])
    }
    return bytes
}

/// One watch recording: the measured lines, each with its line feed, back to back.
struct Recording {
    var name: String
    var bytes: [UInt8] = []
    /// Each line with its line end (what the reader is fed).
    var lines: [Range<Int>] = []
    /// Each line without CR LF (what the session hands `ReceiverEpochs` for a `$` line).
    var content: [Range<Int>] = []
    var isSentence: [Bool] = []
    var tpv = 0, sky = 0, gst = 0, sentences = 0, leftOut = 0

    init(path: String) {
        name = String(path.split(separator: "/").last ?? "")
        let raw = readFile(path)
        var start = 0
        while start < raw.count {
            var end = start
            while end < raw.count && raw[end] != 0x0A { end += 1 }
            var stop = end
            if stop > start && raw[stop - 1] == 0x0D { stop -= 1 }
            let text = String(decoding: raw[start..<stop], as: UTF8.self)
            let sentence = text.hasPrefix("$") || text.hasPrefix("!")
            let kind = ["TPV", "SKY", "GST"].first { text.hasPrefix("{\"class\":\"\($0)\"") }
            if sentence || kind != nil {
                let offset = bytes.count
                bytes += raw[start..<stop]
                bytes.append(0x0A)
                lines.append(offset..<bytes.count)
                content.append(offset..<(offset + stop - start))
                isSentence.append(sentence)
                switch kind {
                case "TPV": tpv += 1
                case "SKY": sky += 1
                case "GST": gst += 1
                default: sentences += 1
                }
            } else if stop > start {
                leftOut += 1
            }
            start = end + 1
        }
        guard !lines.isEmpty else { fail("\(path): no sentences or reports") }
    }

    var summary: String {
        "\(name): \(lines.count) lines (\(sentences) sentences, TPV \(tpv), SKY \(sky), GST \(gst)), "
            + "\(bytes.count) bytes; \(leftOut) connection lines left out"
    }
}

/// A receiver chipset recorded in both modes.
struct Pair {
    var key: String
    var title: String
    var nmea: String
    var binary: String
    /// gpsd's driver of the binary recording (its DEVICE line).
    var driver: String
}

let pairs = [
    Pair(
        key: "sirf", title: "SiRFstarV", nmea: "sirfstarv-nmea.log.watch", binary: "sirfstarv.log.watch", driver: "SiRF"
    ),
    Pair(
        key: "ublox", title: "u-blox M8", nmea: "neo-m8n.log.watch", binary: "ublox-neo-m8t.log.watch", driver: "u-blox"
    ),
]

// MARK: - The measured work

/// What a run did; printed so that nothing can be optimised away.
struct Counters: Equatable {
    var epochs = 0
    var reports = 0
    var digest: UInt64 = 0xcbf2_9ce4_8422_2325

    @inline(__always)
    mutating func emitted(_ position: Position) {
        epochs += 1
        let value = (position.latitude ?? 0) + (position.longitude ?? 0) + (position.mslHeight ?? 0)
        digest = (digest ^ value.bitPattern ^ UInt64(truncatingIfNeeded: position.sky.count)) &* 0x100_0000_01b3
    }
}

/// One stage's state, made before any measurement (the reader's libgps session, the streams).
final class StageState {
    let recording: Recording
    let reader: GPSDCaptureReader
    var epochs = ReceiverEpochs()
    var stream = EpochStream()
    var now: Int64 = 1_000_000_000

    init(_ recording: Recording, driver: String) {
        self.recording = recording
        guard let reader = GPSDCaptureReader() else { fail("cannot allocate libgps's parser") }
        self.reader = reader
        epochs.driver(driver) { _ in }
    }
}

/// The NMEA receiver's sentences alone through the parser and epoch assembly.
@inline(__always)
func parserPasses(_ state: StageState, _ passes: Int, _ c: inout Counters) {
    let bytes = state.recording.bytes
    let span = bytes.span
    let content = state.recording.content
    let isSentence = state.recording.isSentence
    var stream = state.stream
    var now = state.now
    for _ in 0..<passes {
        for i in content.indices where isSentence[i] {
            now &+= 1_000_000
            stream.sentence(span.extracting(content[i]), now: now) { c.emitted($0) }
        }
    }
    state.stream = stream
    state.now = now
}

/// A whole watch, line by line, as the gpsd thread handles it (see the header).
@inline(__always)
func watchPasses(_ state: StageState, _ passes: Int, _ c: inout Counters) {
    let bytes = state.recording.bytes
    let span = bytes.span
    let lines = state.recording.lines
    let content = state.recording.content
    let isSentence = state.recording.isSentence
    let reader = state.reader
    var epochs = state.epochs
    var now = state.now
    for _ in 0..<passes {
        for i in lines.indices {
            now &+= 1_000_000
            reader.feed(span.extracting(lines[i])) { item in
                guard case .report(let report) = item else { return }
                c.reports += 1
                epochs.report(report, now: now) { c.emitted($0) }
            }
            if isSentence[i] { epochs.sentence(span.extracting(content[i]), now: now) { c.emitted($0) } }
            // The session's loop: a held fix whose hold ended is served by `idle`.
            if let deadline = epochs.deadline, now >= deadline { epochs.idle(now: now) { c.emitted($0) } }
        }
    }
    state.epochs = epochs
    state.now = now
}

// The toggled symbols (callgrind --toggle-collect='*measured*'), and their untoggled twins.
@inline(never) func measuredParser(_ s: StageState, _ passes: Int) -> Counters {
    var c = Counters()
    parserPasses(s, passes, &c)
    return c
}
/// Both paths (the driver decides which stream serves): one symbol, since the compiler merges
/// identical functions into a thunk and a body callgrind's toggle would not see.
@inline(never) func measuredWatch(_ s: StageState, _ passes: Int) -> Counters {
    var c = Counters()
    watchPasses(s, passes, &c)
    return c
}
@inline(never) func warmUp(_ stage: String, _ s: StageState) -> Counters {
    var c = Counters()
    if stage == "parser" { parserPasses(s, 1, &c) } else { watchPasses(s, 1, &c) }
    return c
}

func measured(_ stage: String, _ s: StageState, _ passes: Int) -> Counters {
    switch stage {
    case "parser": measuredParser(s, passes)
    default: measuredWatch(s, passes)
    }
}

// MARK: - Timing

struct Stage {
    var name: String
    var state: StageState
    var counters = Counters()
    var wall: [Double] = []
    var cpu: [Double] = []
    var allocations: [Double] = []
}

// MARK: - Main

let options = parseOptions()
let fixtures: String = {
    if let f = options.fixtures { return f }
    for candidate in ["Tests/Fixtures/gpsd-json"] where isDirectory(candidate) { return candidate }
    fail("no recordings: pass --fixtures DIR (Tests/Fixtures/gpsd-json from the repository root)")
}()

for pair in pairs where options.pairs.contains(pair.key) {
    let nmea = Recording(path: fixtures + "/" + pair.nmea)
    let binary = Recording(path: fixtures + "/" + pair.binary)
    print("== \(pair.title) (\(pair.key))")
    print("  NMEA receiver:   \(nmea.summary)")
    print("  binary receiver: \(binary.summary), driver \(pair.driver)")
    var stages: [Stage] = []
    for name in options.stages {
        let state = name == "json" ? StageState(binary, driver: pair.driver) : StageState(nmea, driver: "NMEA0183")
        var stage = Stage(name: name, state: state)
        stage.counters = warmUp(name, state)
        guard stage.counters.epochs > 0 else { fail("\(pair.key) \(name): no epochs in the warm-up pass") }
        stages.append(stage)
    }
    if options.callgrind {
        for i in stages.indices {
            let c = measured(stages[i].name, stages[i].state, options.passes)
            print(
                "RESULT \(pair.key)_\(stages[i].name)_measured_epochs=\(c.epochs) "
                    + "\(pair.key)_\(stages[i].name)_reports=\(c.reports)"
            )
        }
        continue
    }
    var reference: [String: Counters] = [:]
    for run in 1...options.runs {
        // Interleaved, the order rotating per run, so a slow phase of the machine hits every stage.
        for k in stages.indices {
            let i = (k + run) % stages.count
            let state = stages[i].state
            tmm_alloc_counter_start()
            let cpuStart = clockNanoseconds(CLOCK_THREAD_CPUTIME_ID)
            let start = clockNanoseconds(CLOCK_MONOTONIC)
            let c = measured(stages[i].name, state, options.passes)
            let wall = clockNanoseconds(CLOCK_MONOTONIC) - start
            let cpu = clockNanoseconds(CLOCK_THREAD_CPUTIME_ID) - cpuStart
            let allocations = tmm_alloc_counter_stop()
            if let r = reference[stages[i].name], r.epochs != c.epochs || r.reports != c.reports {
                fail("\(pair.key) \(stages[i].name): run \(run) made \(c.epochs) epochs, the first \(r.epochs)")
            }
            reference[stages[i].name] = c
            stages[i].wall.append(Double(wall) / Double(c.epochs))
            stages[i].cpu.append(Double(cpu) / Double(c.epochs))
            stages[i].allocations.append(Double(allocations) / Double(c.epochs))
        }
    }
    var result = "RESULT"
    for stage in stages {
        let c = reference[stage.name]!
        print(
            "  \(stage.name): \(c.epochs / options.passes) epochs per pass, "
                + "median \(fixed(median(stage.wall), 1)) ns/epoch wall (min \(fixed(stage.wall.min()!, 1))), "
                + "\(fixed(median(stage.cpu), 1)) ns/epoch thread CPU, "
                + "\(fixed(median(stage.allocations), 4)) allocations/epoch, "
                + "\(c.reports / options.passes) reports per pass, "
                + "digest \(String(c.digest, radix: 16))")
        let key = "\(pair.key)_\(stage.name)"
        result +=
            " \(key)_epochs_per_pass=\(c.epochs / options.passes) \(key)_ns_per_epoch=\(fixed(median(stage.wall), 1))"
            + " \(key)_min_ns_per_epoch=\(fixed(stage.wall.min()!, 1))"
            + " \(key)_cpu_ns_per_epoch=\(fixed(median(stage.cpu), 1))"
            + " \(key)_allocations_per_epoch=\(fixed(median(stage.allocations), 4))"
    }
    if let n = stages.firstIndex(where: { $0.name == "nmea" }), let j = stages.firstIndex(where: { $0.name == "json" })
    {
        let ratios = zip(stages[j].cpu, stages[n].cpu).map { $0 / $1 }
        let wallRatios = zip(stages[j].wall, stages[n].wall).map { $0 / $1 }
        print(
            "  json / nmea per epoch: median of \(options.runs) per-run ratios \(fixed(median(wallRatios), 3))x wall, "
                + "\(fixed(median(ratios), 3))x thread CPU")
        result +=
            " \(pair.key)_json_nmea_ratio=\(fixed(median(wallRatios), 3))"
            + " \(pair.key)_json_nmea_cpu_ratio=\(fixed(median(ratios), 3))"
    }
    print(result)
}
