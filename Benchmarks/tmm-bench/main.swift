// tmm-bench: throughput and heap-allocation benchmark of the NMEA 0183 parser and of the whole
// pure pipeline (bytes -> LocationV2 bytes).
//
// Corpus: every `*.log` directly in the fixture folder (gpsd regression captures), with the lines
// that start with `#` removed (gpsd's own comment/directive lines: gpsdecode would see them too),
// concatenated in name order and repeated until it holds at least `--min-sentences` sentences
// (lines starting with `$`). The bytes are otherwise untouched: CR LF / LF / CR CR LF line ends,
// garbage lines, bad checksums and all. `--write-corpus PATH` writes exactly these bytes so that
// scripts/bench.sh can feed the same input to gpsdecode and `tmm-bridge decode`.
//
// Stages (one run = the whole corpus, fed in `--chunk`-byte reads, 4096 by default):
// - parser: `NMEAFramer.feedSentences` (framing + validation) -> `NMEAMessage(_:)`;
// - pipeline: what `tmm-bridge decode --format locationV2` does per chunk minus the write:
//   `NMEAStreamDecoder.feed` (parser + EpochAssembler) -> `LocationV2Encoder` per epoch -> the
//   output buffer, folded into a digest per chunk (see `runPipeline`);
// - naive: the obvious String/split/Double parser, as a reference.
// Each stage gets one warm-up run, then `--runs` timed runs; parser and pipeline runs alternate
// (ABBA), and their ratio is the median of the per-pair ratios. Heap allocations are counted on
// this thread during every timed run with the CAllocationCounter malloc interposer (the
// pipeline's per-epoch count excludes its setup before the first chunk, printed separately).
// Per-sentence figures divide by the corpus's `$`-line count, the same denominator bench.sh uses
// for gpsdecode; per-epoch figures by the pipeline's epoch count.
//
// Usage: tmm-bench [--fixtures DIR] [--runs N] [--min-sentences N] [--chunk BYTES]
//                  [--stages parser,pipeline,naive] [--no-naive] [--naive-runs N]
//                  [--write-corpus PATH] [--write-pipeline-output PATH] [--app-version V]
// Lines starting with `RESULT ` are machine-readable (`key=value`) for scripts/bench.sh.

import BenchSupport
import CAllocationCounter
import GNSS
import Glibc
import NMEA0183
import TMMProtocol

// MARK: - Options

struct Options {
    var fixtures: String?
    var runs = 7
    var minSentences = 1_000_000
    var chunk = 4096
    /// The naive baseline is ~30x slower; fewer runs keep `make bench` short.
    var naiveRuns = 3
    var writeCorpus: String?
    var writePipelineOutput: String?
    /// What `tmm-bridge decode` writes as `appVersion` (BridgeVersion.current).
    var appVersion = "0.1.0"
    var stages: Set<String> = ["parser", "pipeline", "naive"]
}

let usageText = """
    usage: tmm-bench [--fixtures DIR] [--runs N] [--min-sentences N] [--chunk BYTES]
                     [--stages parser,pipeline,naive] [--no-naive] [--naive-runs N]
                     [--write-corpus PATH] [--write-pipeline-output PATH] [--app-version V]
    Benchmarks the NMEA 0183 parser (framer + validation + typed decode) and the whole pipeline
    (parser + epoch assembly + LocationV2 encoding, as `tmm-bridge decode` per chunk) on the
    fixture logs (default Tests/Fixtures/nmea, then /work/shared/fixtures/nmea; or $TMM_FIXTURES).
    --write-corpus writes the corpus bytes, --write-pipeline-output the pipeline's output (what
    `tmm-bridge decode CORPUS` should print), and exit.

    """

func usage(_ message: String) -> Never {
    printError("tmm-bench: \(message)\n" + usageText)
    exit(2)
}

func parseOptions() -> Options {
    var options = Options()
    var args = CommandLine.arguments.dropFirst()
    func value(_ name: String) -> String {
        guard let v = args.popFirst() else { usage("\(name) needs a value") }
        return v
    }
    func positive(_ name: String) -> Int {
        let text = value(name)
        guard let n = Int(text), n > 0 else { usage("\(name): '\(text)' is not a positive integer") }
        return n
    }
    while let arg = args.popFirst() {
        switch arg {
        case "--fixtures": options.fixtures = value(arg)
        case "--runs": options.runs = positive(arg)
        case "--min-sentences": options.minSentences = positive(arg)
        case "--chunk": options.chunk = positive(arg)
        case "--no-naive": options.stages.remove("naive")
        case "--stages":
            let list = value(arg).split(separator: ",").map(String.init)
            for stage in list where !["parser", "pipeline", "naive"].contains(stage) {
                usage("--stages: unknown stage '\(stage)' (parser, pipeline, naive)")
            }
            options.stages = Set(list)
        case "--write-pipeline-output": options.writePipelineOutput = value(arg)
        case "--app-version": options.appVersion = value(arg)
        case "--naive-runs": options.naiveRuns = positive(arg)
        case "--write-corpus": options.writeCorpus = value(arg)
        case "-h", "--help":
            print(usageText, terminator: "")
            exit(0)
        default: usage("unknown argument '\(arg)'")
        }
    }
    return options
}

// MARK: - Files (Glibc only)

func isDirectory(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
}

func fail(_ message: String) -> Never {
    printError("tmm-bench: \(message)\n")
    exit(1)
}

/// Names of the `*.log` files directly in `directory`, sorted.
func logNames(in directory: String) -> [String] {
    guard let dir = opendir(directory) else { fail("cannot open fixture folder \(directory)") }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafePointer(to: &entry.pointee.d_name) {
            String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
        }
        if name.hasSuffix(".log") && !isDirectory(directory + "/" + name) { names.append(name) }
    }
    return names.sorted()
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

func writeFile(_ path: String, _ bytes: [UInt8]) {
    guard let file = fopen(path, "wb") else { fail("cannot create \(path)") }
    let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    guard written == bytes.count, fclose(file) == 0 else { fail("cannot write \(path)") }
}

// MARK: - Corpus

struct Corpus {
    var bytes: [UInt8]
    /// Lines starting with `$` in `bytes`.
    var sentences: Int
    var copies: Int
    var files: [String]
    var bytesPerCopy: Int
    var sentencesPerCopy: Int
}

/// `bytes` without the lines that start with `#`, ending with a line feed.
func strippingComments(_ bytes: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count + 1)
    var start = 0
    while start < bytes.count {
        var end = start
        while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
        if bytes[start] != UInt8(ascii: "#") {
            out.append(contentsOf: bytes[start..<end])
            out.append(UInt8(ascii: "\n"))
        }
        start = end + 1
    }
    return out
}

func countSentences(_ bytes: [UInt8]) -> Int {
    var count = 0
    var lineStart = true
    for b in bytes {
        if lineStart && b == UInt8(ascii: "$") { count += 1 }
        lineStart = b == UInt8(ascii: "\n")
    }
    return count
}

func loadCorpus(directory: String, minSentences: Int) -> Corpus {
    let names = logNames(in: directory)
    guard !names.isEmpty else { fail("no *.log files in \(directory)") }
    var one: [UInt8] = []
    for name in names { one += strippingComments(readFile(directory + "/" + name)) }
    let perCopy = countSentences(one)
    guard perCopy > 0 else { fail("no sentences in \(directory)/*.log") }
    let copies = (minSentences + perCopy - 1) / perCopy
    var all: [UInt8] = []
    all.reserveCapacity(one.count * copies)
    for _ in 0..<copies { all += one }
    return Corpus(
        bytes: all, sentences: perCopy * copies, copies: copies, files: names, bytesPerCopy: one.count,
        sentencesPerCopy: perCopy)
}

// MARK: - Timing

/// Wall time (what the brief asks for; includes preemption on a busy machine).
func nowNanoseconds() -> UInt64 { clockNanoseconds(CLOCK_MONOTONIC) }

// MARK: - Work counters

/// What a run did. Printed after the runs so that none of the work can be optimised away.
struct Counters: Equatable {
    /// Lines the framer (or the naive splitter) delivered.
    var delivered = 0
    /// Validated and decoded into a typed message.
    var accepted = 0
    /// Rejected by `NMEASentence(validating:)` (checksum, address, bytes, ...).
    var invalid = 0
    /// Valid sentence whose typed decoder rejected a field.
    var decodeErrors = 0
    /// Valid sentence of a kind without a decoder.
    var unknown = 0
    /// A fold of decoded values (parser, naive) or of the output bytes (pipeline).
    var digest: UInt64 = 0
    /// Pipeline only: epochs emitted (LocationV2 messages) and output bytes (with line feeds).
    var epochs = 0
    var outputBytes = 0

    var rejected: Int { invalid + decodeErrors }
}

@inline(__always)
func mix(_ h: UInt64, _ v: Int64?) -> UInt64 { (h ^ UInt64(bitPattern: v ?? -1)) &* 0x100_0000_01b3 }

/// A cheap fold of a few decoded fields of every kind.
@inline(__always)
func digest(_ message: NMEAMessage) -> UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    switch message {
    case .gga(let m):
        h = mix(h, m.time?.nanosecondsOfDay)
        h = mix(h, m.latitude?.raw.value)
        h = mix(h, m.longitude?.raw.value)
        h = mix(h, m.altitudeMSL?.value)
        h = mix(h, m.quality.map(Int64.init))
    case .gns(let m):
        h = mix(h, m.latitude?.raw.value)
        h = mix(h, Int64(m.modes.count))
    case .rmc(let m):
        h = mix(h, m.time?.nanosecondsOfDay)
        h = mix(h, m.latitude?.raw.value)
        h = mix(h, m.speedKnots?.value)
        h = mix(h, m.date.map { Int64($0.year * 10000 + $0.month * 100 + $0.day) })
    case .gll(let m):
        h = mix(h, m.latitude?.raw.value)
        h = mix(h, m.longitude?.raw.value)
    case .vtg(let m):
        h = mix(h, m.courseTrue?.value)
        h = mix(h, m.speedKmh?.value)
    case .gsa(let m):
        h = mix(h, Int64(m.satelliteIDs.count))
        h = mix(h, m.pdop?.value)
    case .gsv(let m):
        h = mix(h, Int64(m.count))
        if m.count > 0 { h = mix(h, Int64(m[0].id)) }
    case .gst(let m):
        h = mix(h, m.sigmaLatitude?.value)
    case .zda(let m):
        h = mix(h, m.time?.nanosecondsOfDay)
    case .hdt(let m):
        h = mix(h, m.heading?.value)
    case .ptnlGGK(let m):
        h = mix(h, m.latitude?.raw.value)
    }
    return h
}

// MARK: - The parser under test

/// Frames, validates and decodes the whole corpus, fed in `chunk`-byte reads.
@inline(never)
func runParser(_ corpus: Span<UInt8>, chunk: Int) -> Counters {
    var framer = NMEAFramer()
    var c = Counters()
    var offset = 0
    let count = corpus.count
    while offset < count {
        let end = min(offset + chunk, count)
        framer.feedSentences(corpus.extracting(offset..<end)) { _, result in
            c.delivered += 1
            // Typed do-catch: an untyped one would box each NMEAError in `any Error` (a heap allocation).
            do throws(NMEAError) {
                let sentence = try result.get()
                do throws(NMEAError) {
                    let message = try NMEAMessage(sentence)
                    c.accepted += 1
                    c.digest = c.digest &* 31 &+ digest(message)
                } catch .unsupportedSentence {
                    c.unknown += 1
                } catch {
                    c.decodeErrors += 1
                }
            } catch {
                c.invalid += 1
            }
        }
        offset = end
    }
    return c
}

// MARK: - The full pipeline under test
//
// What `tmm-bridge decode --format locationV2` does with every chunk it reads
// (Sources/tmm-bridge/DecodeCommand.swift), minus the write to stdout: `NMEAStreamDecoder.feed`
// (framer -> sentence -> message -> EpochAssembler -> Position), `LocationV2Encoder.encode` per
// epoch, the message and a line feed appended to an output buffer reserved like decode's, and at
// the end of the chunk the buffer is folded into the digest (instead of written) and emptied,
// keeping its capacity. Only public API of GNSS and TMMProtocol is used, so this measures
// whatever those modules become. The driver keeps decoder, encoder and buffer in separate locals
// (decode's `DecodeSession` copies its decoder out of `self` and back around every chunk: that
// and decode's I/O are measured by the whole-process comparison in scripts/bench.sh, not here).

/// `appVersion` of the identity the encoder writes (decode uses `BridgeVersion.current`).
nonisolated(unsafe) var pipelineAppVersion = "0.1.0"
/// Heap allocations of the last timed pipeline run before its first chunk (decoder, encoder,
/// output buffer): what a decode process pays once. The per-epoch figure excludes them.
nonisolated(unsafe) var pipelineSetupAllocations: UInt64 = 0

/// Folds `bytes` into `h`: four independent lanes of eight bytes (xor, multiply by the FNV
/// prime: a bijection of each lane's state per word, so any changed word changes the result),
/// combined at the end, then the tail byte by byte. Four lanes rather than one chain of
/// multiplies: the digest only proves the output was made, and should cost the pipeline stage
/// as little as the output's own copy does.
@inline(__always)
func fold(_ h: UInt64, _ bytes: Span<UInt8>) -> UInt64 {
    bytes.withUnsafeBytes { raw in
        let prime: UInt64 = 0x100_0000_01b3
        var a = h, b = h ^ 1, c = h ^ 2, d = h ^ 3
        var i = 0
        let n = raw.count
        while i + 32 <= n {
            a = (a ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* prime
            b = (b ^ raw.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)) &* prime
            c = (c ^ raw.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self)) &* prime
            d = (d ^ raw.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self)) &* prime
            i += 32
        }
        var h = ((a &* prime ^ b) &* prime ^ c) &* prime ^ d
        while i < n {
            h = (h ^ UInt64(raw[i])) &* prime
            i += 1
        }
        return h
    }
}

/// bytes -> LocationV2 bytes for the whole corpus, fed in `chunk`-byte reads.
@inline(never)
func runPipeline(_ corpus: Span<UInt8>, chunk: Int) -> Counters {
    var unused: [UInt8] = []
    return pipeline(corpus, chunk: chunk, keeping: false, into: &unused)
}

/// The pipeline; with `keeping`, every chunk's output is also appended to `kept` (for
/// `--write-pipeline-output`, untimed).
@inline(__always)
func pipeline(_ corpus: Span<UInt8>, chunk: Int, keeping: Bool, into kept: inout [UInt8]) -> Counters {
    var decoder = NMEAStreamDecoder()
    // As decode (DecodeSession): a chunk's messages are appended to the encoder's own buffer, one
    // line each, reserved as decode reserves it, and handed on per chunk.
    var v2 = LocationV2Encoder(reservingCapacity: 8 * 65_536)
    let identity = ReceiverIdentity(appVersion: pipelineAppVersion)
    var c = Counters()
    pipelineSetupAllocations = tmm_alloc_counter_stop()
    tmm_alloc_counter_start()

    func emit(_ position: Position) {
        c.epochs += 1
        v2.appendLine(position, identity: identity)
    }
    func flush() {
        c.outputBytes += v2.span.count
        c.digest = v2.withBytes { fold(c.digest, $0) }
        if keeping { v2.withBytes { bytes in for i in bytes.indices { kept.append(bytes[i]) } } }
        v2.removeAll()
    }
    var offset = 0
    let count = corpus.count
    while offset < count {
        let end = min(offset + chunk, count)
        decoder.feed(corpus.extracting(offset..<end), now: Int64(nowNanoseconds())) { emit($0) }
        flush()
        offset = end
    }
    decoder.finish { emit($0) }
    flush()
    let s = decoder.statistics
    c.accepted = s.decoded
    c.invalid = s.rejected
    c.decodeErrors = s.malformed
    c.unknown = s.unsupported
    c.delivered = s.decoded + s.rejected + s.malformed + s.unsupported
    return c
}

// MARK: - Naive baseline ("what a first version might look like")

/// Line splitting through a growable `[UInt8]`, one `String` per line, `split(separator:)` into
/// `[String]` fields and `Double(...)`/`Int(...)` conversions: the obvious Foundation-free
/// implementation, measured in the same binary and over the same bytes and chunks.
@inline(never)
func runNaive(_ corpus: Span<UInt8>, chunk: Int) -> Counters {
    var c = Counters()
    var pending: [UInt8] = []
    var offset = 0
    let count = corpus.count
    while offset < count {
        let end = min(offset + chunk, count)
        for i in offset..<end { pending.append(corpus[i]) }
        var lineStart = 0
        var i = 0
        while i < pending.count {
            if pending[i] == UInt8(ascii: "\n") {
                naiveLine(String(decoding: pending[lineStart..<i], as: UTF8.self), &c)
                lineStart = i + 1
            }
            i += 1
        }
        pending.removeFirst(lineStart)
        offset = end
    }
    return c
}

func naiveLine(_ text: String, _ c: inout Counters) {
    var line = text
    while line.hasSuffix("\r") { line.removeLast() }
    guard let dollar = line.lastIndex(of: "$") else { return }
    line = String(line[dollar...])
    c.delivered += 1
    let body: Substring
    if let star = line.lastIndex(of: "*") {
        body = line[line.index(after: line.startIndex)..<star]
        var sum: UInt8 = 0
        for b in body.utf8 { sum ^= b }
        guard let expected = UInt8(line[line.index(after: star)...], radix: 16), expected == sum else {
            c.invalid += 1
            return
        }
    } else {
        body = line.dropFirst()
    }
    let fields = body.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    guard let address = fields.first, address.count >= 4 else {
        c.invalid += 1
        return
    }
    let type = address.hasPrefix("PTNL") ? (fields.count > 1 ? fields[1] : "") : String(address.suffix(3))
    func d(_ i: Int) -> Int64? { i < fields.count ? Double(fields[i]).map { Int64($0 * 1000) } : nil }
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    switch type {
    case "GGA", "GNS":
        guard fields.count >= 10 else {
            c.decodeErrors += 1
            return
        }
        for i in [1, 2, 4, 6, 7, 8, 9, 11] { h = mix(h, d(i)) }
    case "RMC":
        guard fields.count >= 10 else {
            c.decodeErrors += 1
            return
        }
        for i in [1, 3, 5, 7, 8, 9, 10] { h = mix(h, d(i)) }
    case "GLL", "VTG", "GSA", "GSV", "GST", "ZDA", "HDT", "GGK":
        for i in 1..<fields.count { h = mix(h, d(i)) }
    default:
        c.unknown += 1
        return
    }
    c.accepted += 1
    c.digest = c.digest &* 31 &+ h
}

// MARK: - Measurement

/// One benchmarked body and its timed runs.
struct Stage {
    var name: String  // a plain identifier: the `RESULT` key prefix
    var body: (Span<UInt8>, Int) -> Counters
    /// The warm-up's counters: every timed run must do the same work.
    var counters = Counters()
    var nsPerSentence: [Double] = []
    var cpuNsPerSentence: [Double] = []
    var allocations: [Double] = []
    var setupAllocations: [Double] = []

    init(_ name: String, _ body: @escaping (Span<UInt8>, Int) -> Counters) {
        self.name = name
        self.body = body
    }

    /// Per-epoch figures too (the pipeline).
    var perEpoch: Bool { counters.epochs > 0 }
}

/// Warm-up: page in the corpus, instantiate metadata, settle the allocator.
func warmUp(_ stage: inout Stage, _ corpus: Corpus, chunk: Int) {
    stage.counters = stage.body(corpus.bytes.span, chunk)
}

/// One timed run; returns wall and CPU nanoseconds.
@discardableResult
func timedRun(_ stage: inout Stage, _ corpus: Corpus, chunk: Int, run: Int, of runs: Int) -> (Double, Double) {
    let span = corpus.bytes.span
    let sentences = Double(corpus.sentences)
    pipelineSetupAllocations = 0
    tmm_alloc_counter_start()
    let cpuStart = threadCPUNanoseconds()
    let start = nowNanoseconds()
    let counters = stage.body(span, chunk)
    let elapsed = nowNanoseconds() - start
    let cpu = threadCPUNanoseconds() - cpuStart
    let allocations = tmm_alloc_counter_stop()
    let setup = stage.perEpoch ? pipelineSetupAllocations : 0
    if counters != stage.counters { fail("\(stage.name): run \(run) did different work than the warm-up") }
    let ns = Double(elapsed) / sentences
    let cpuNs = Double(cpu) / sentences
    stage.nsPerSentence.append(ns)
    stage.cpuNsPerSentence.append(cpuNs)
    stage.allocations.append(Double(allocations))
    stage.setupAllocations.append(Double(setup))
    var line =
        "  \(stage.name) run \(run)/\(runs): \(fixed(Double(elapsed) / 1e6, 1)) ms, \(fixed(ns, 1)) ns/sentence, "
    if stage.perEpoch { line += "\(fixed(Double(elapsed) / Double(stage.counters.epochs), 1)) ns/epoch, " }
    line += "\(fixed(1e3 / ns, 3)) M sentences/s, CPU \(fixed(cpuNs, 1)) ns/sentence, \(allocations) allocations"
    if stage.perEpoch { line += " (+ \(setup) before the first chunk)" }
    print(line)
    return (ns, cpuNs)
}

/// Medians and the work done; the `RESULT` line.
func report(_ stage: Stage, _ corpus: Corpus) {
    let c = stage.counters
    let name = stage.name
    let ns = median(stage.nsPerSentence)
    let minNs = stage.nsPerSentence.min()!
    let cpuNs = median(stage.cpuNsPerSentence)
    let allocs = median(stage.allocations)
    let sentences = Double(corpus.sentences)
    print(
        "\(name): median \(fixed(ns, 1)) ns/sentence wall (min \(fixed(minNs, 1)), "
            + "max \(fixed(stage.nsPerSentence.max()!, 1))), \(fixed(1e3 / ns, 3)) M sentences/s, "
            + "\(fixed(cpuNs, 1)) ns/sentence thread CPU, \(fixed(allocs / sentences, 4)) allocations/sentence")
    print(
        "\(name): delivered \(c.delivered), accepted \(c.accepted), rejected \(c.rejected) "
            + "(invalid \(c.invalid), decode errors \(c.decodeErrors)), unknown \(c.unknown), "
            + "digest \(String(c.digest, radix: 16))")
    var result =
        "RESULT \(name)_ns_per_sentence=\(fixed(ns, 2)) \(name)_min_ns_per_sentence=\(fixed(minNs, 2)) "
        + "\(name)_cpu_ns_per_sentence=\(fixed(cpuNs, 2)) \(name)_sentences_per_second=\(fixed(1e9 / ns, 0)) "
        + "\(name)_allocations_per_sentence=\(fixed(allocs / sentences, 4)) \(name)_accepted=\(c.accepted) "
        + "\(name)_rejected=\(c.rejected) \(name)_unknown=\(c.unknown)"
    if stage.perEpoch {
        let perEpoch = sentences / Double(c.epochs)
        let setup = median(stage.setupAllocations)
        print(
            "\(name): \(c.epochs) epochs (\(fixed(perEpoch, 2)) sentences/epoch), "
                + "median \(fixed(ns * perEpoch, 1)) ns/epoch wall (min \(fixed(minNs * perEpoch, 1))), "
                + "\(fixed(cpuNs * perEpoch, 1)) ns/epoch thread CPU, "
                + "\(fixed(allocs / Double(c.epochs), 4)) allocations/epoch after setup (\(fixed(allocs, 0)) per run; "
                + "setup \(fixed(setup, 0)) per run), \(c.outputBytes) output bytes "
                + "(\(fixed(Double(c.outputBytes) / Double(c.epochs), 1)) per epoch)")
        result +=
            " \(name)_epochs=\(c.epochs) \(name)_ns_per_epoch=\(fixed(ns * perEpoch, 1)) "
            + "\(name)_min_ns_per_epoch=\(fixed(minNs * perEpoch, 1)) "
            + "\(name)_cpu_ns_per_epoch=\(fixed(cpuNs * perEpoch, 1)) "
            + "\(name)_allocations_per_epoch=\(fixed(allocs / Double(c.epochs), 4)) "
            + "\(name)_allocations_per_run=\(fixed(allocs, 0)) \(name)_setup_allocations=\(fixed(setup, 0)) "
            + "\(name)_output_bytes=\(c.outputBytes) \(name)_digest=\(String(c.digest, radix: 16))"
    }
    print(result)
}

/// `--write-pipeline-output`: one untimed pipeline run, its output kept and written to `path`.
func writePipelineOutput(_ path: String, _ corpus: Corpus, chunk: Int) {
    var kept: [UInt8] = []
    let c = pipeline(corpus.bytes.span, chunk: chunk, keeping: true, into: &kept)
    writeFile(path, kept)
    print("wrote \(path): \(c.epochs) epochs, \(kept.count) bytes (LocationV2, appVersion \(pipelineAppVersion))")
}

// MARK: - Main

let options = parseOptions()
pipelineAppVersion = options.appVersion
let fixtures: String = {
    if let f = options.fixtures { return f }
    if let env = getenv("TMM_FIXTURES") { return String(cString: env) }
    for candidate in ["Tests/Fixtures/nmea", "/work/shared/fixtures/nmea"] where isDirectory(candidate) {
        return candidate
    }
    fail("no fixture folder: pass --fixtures DIR (Tests/Fixtures/nmea from the repository root)")
}()
let corpus = loadCorpus(directory: fixtures, minSentences: options.minSentences)
print(
    "corpus: \(corpus.files.count) files from \(fixtures) (# lines stripped), \(corpus.bytesPerCopy) bytes and "
        + "\(corpus.sentencesPerCopy) sentences per copy, x\(corpus.copies) = \(corpus.bytes.count) bytes, "
        + "\(corpus.sentences) sentences")
print(
    "RESULT corpus_bytes=\(corpus.bytes.count) corpus_sentences=\(corpus.sentences) corpus_copies=\(corpus.copies) "
        + "corpus_files=\(corpus.files.count)")

if options.writeCorpus != nil || options.writePipelineOutput != nil {
    if let path = options.writeCorpus {
        writeFile(path, corpus.bytes)
        print("wrote \(path)")
    }
    if let path = options.writePipelineOutput {
        writePipelineOutput(path, corpus, chunk: options.chunk)
    }
    exit(0)
}

print(
    "sizes: NMEAStreamDecoder \(MemoryLayout<NMEAStreamDecoder>.size) bytes, EpochAssembler "
        + "\(MemoryLayout<EpochAssembler>.size), Position \(MemoryLayout<Position>.size), SkyView "
        + "\(MemoryLayout<SkyView>.size), NMEAMessage \(MemoryLayout<NMEAMessage>.size)")
var parser = Stage("parser", runParser)
var pipelineStage = Stage("pipeline", runPipeline)
let stages = options.stages
print(
    "stages: \(stages.sorted().joined(separator: ", ")); "
        + "runs: \(options.runs) (naive: \(stages.contains("naive") ? options.naiveRuns : 0)), "
        + "each stage after 1 warm-up; parser and pipeline runs alternate (paired); chunk: \(options.chunk) bytes")
if stages.contains("parser") { warmUp(&parser, corpus, chunk: options.chunk) }
if stages.contains("pipeline") {
    warmUp(&pipelineStage, corpus, chunk: options.chunk)
    guard pipelineStage.counters.epochs > 0 else { fail("pipeline: no epochs") }
    if stages.contains("parser") {
        let (p, q) = (parser.counters, pipelineStage.counters)
        guard p.accepted == q.accepted, p.rejected == q.rejected, p.unknown == q.unknown else {
            fail(
                "pipeline decoded other sentences than the parser: accepted \(q.accepted) vs \(p.accepted), "
                    + "rejected \(q.rejected) vs \(p.rejected), unknown \(q.unknown) vs \(p.unknown)")
        }
    }
}
if stages.contains("parser") && stages.contains("pipeline") {
    // Paired: the two alternate (ABBA order), so a slow phase of the machine hits both; the
    // ratio is the median of the per-pair ratios.
    var wallRatios: [Double] = []
    var cpuRatios: [Double] = []
    for run in 1...options.runs {
        let a: (Double, Double)
        let b: (Double, Double)
        if run % 2 == 1 {
            a = timedRun(&parser, corpus, chunk: options.chunk, run: run, of: options.runs)
            b = timedRun(&pipelineStage, corpus, chunk: options.chunk, run: run, of: options.runs)
        } else {
            b = timedRun(&pipelineStage, corpus, chunk: options.chunk, run: run, of: options.runs)
            a = timedRun(&parser, corpus, chunk: options.chunk, run: run, of: options.runs)
        }
        wallRatios.append(b.0 / a.0)
        cpuRatios.append(b.1 / a.1)
    }
    report(parser, corpus)
    report(pipelineStage, corpus)
    let wall = median(wallRatios)
    let cpu = median(cpuRatios)
    print(
        "pipeline / parser: median of \(options.runs) paired ratios \(fixed(wall, 3))x wall "
            + "(min \(fixed(wallRatios.min()!, 3)), max \(fixed(wallRatios.max()!, 3))), \(fixed(cpu, 3))x thread CPU")
    print(
        "RESULT pipeline_parser_ratio=\(fixed(wall, 3)) pipeline_parser_cpu_ratio=\(fixed(cpu, 3)) "
            + "pipeline_parser_min_ratio=\(fixed(wallRatios.min()!, 3))")
} else {
    for name in ["parser", "pipeline"] where stages.contains(name) {
        var stage = name == "parser" ? parser : pipelineStage
        for run in 1...options.runs { timedRun(&stage, corpus, chunk: options.chunk, run: run, of: options.runs) }
        report(stage, corpus)
    }
}
if stages.contains("naive") {
    var naive = Stage("naive", runNaive)
    warmUp(&naive, corpus, chunk: options.chunk)
    for run in 1...options.naiveRuns { timedRun(&naive, corpus, chunk: options.chunk, run: run, of: options.naiveRuns) }
    report(naive, corpus)
}
