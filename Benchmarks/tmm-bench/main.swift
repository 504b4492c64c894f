// tmm-bench: throughput and heap-allocation benchmark of the NMEA 0183 parser.
//
// Corpus: every `*.log` directly in the fixture folder (gpsd regression captures), with the lines
// that start with `#` removed (gpsd's own comment/directive lines: gpsdecode would see them too),
// concatenated in name order and repeated until it holds at least `--min-sentences` sentences
// (lines starting with `$`). The bytes are otherwise untouched: CR LF / LF / CR CR LF line ends,
// garbage lines, bad checksums and all. `--write-corpus PATH` writes exactly these bytes so that
// scripts/bench.sh can feed the same input to gpsdecode.
//
// Measured pipeline (one run = the whole corpus): `NMEAFramer.feed` over 4096-byte chunks (a
// realistic read size) -> `NMEASentence(validating:)` -> `NMEAMessage(_:)`. One warm-up run, then
// `--runs` timed runs; heap allocations are counted on this thread during every timed run with
// the CAllocationCounter malloc interposer. Per-sentence figures divide by the corpus's `$`-line
// count, the same denominator bench.sh uses for gpsdecode.
//
// Usage: tmm-bench [--fixtures DIR] [--runs N] [--min-sentences N] [--chunk BYTES]
//                  [--no-naive] [--naive-runs N] [--write-corpus PATH]
// Lines starting with `RESULT ` are machine-readable (`key=value`) for scripts/bench.sh.

import CAllocationCounter
import GNSS
import Glibc
import NMEA0183

// MARK: - Options

struct Options {
    var fixtures: String?
    var runs = 7
    var minSentences = 1_000_000
    var chunk = 4096
    var naive = true
    /// The naive baseline is ~30x slower; fewer runs keep `make bench` short.
    var naiveRuns = 3
    var writeCorpus: String?
}

func printError(_ text: String) {
    var text = text
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

let usageText = """
    usage: tmm-bench [--fixtures DIR] [--runs N] [--min-sentences N] [--chunk BYTES] [--no-naive]
                     [--naive-runs N] [--write-corpus PATH]
    Benchmarks the NMEA 0183 parser (framer + validation + typed decode) on the fixture logs
    (default Tests/Fixtures/nmea, then /work/shared/fixtures/nmea; or $TMM_FIXTURES).

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
        case "--no-naive": options.naive = false
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

/// CPU time of this thread: excludes time the thread was preempted, so it is the steadier figure
/// on a shared machine. Reported next to wall time, never instead of it.
func threadCPUNanoseconds() -> UInt64 { clockNanoseconds(CLOCK_THREAD_CPUTIME_ID) }

func clockNanoseconds(_ clock: clockid_t) -> UInt64 {
    var ts = timespec()
    clock_gettime(clock, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

func fixed(_ value: Double, _ decimals: Int) -> String {
    var p = 1.0
    for _ in 0..<decimals { p *= 10 }
    let scaled = (value * p).rounded()
    var text = String(Int64(scaled.magnitude))
    if decimals > 0 {
        while text.count <= decimals { text = "0" + text }
        text.insert(".", at: text.index(text.endIndex, offsetBy: -decimals))
    }
    return scaled < 0 ? "-" + text : text
}

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
    /// A fold of decoded values.
    var digest: UInt64 = 0

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

// MARK: - GNSS epoch assembly (placeholder)
//
// LEAD: the parser benchmark above stops at `NMEAMessage`. To measure the whole pure input
// pipeline, add a second body here and measure it from `main` below, e.g. with
// `GNSS.NMEAStreamDecoder` (framer -> sentence -> message -> EpochAssembler -> Position):
//
//     @inline(never)
//     func runEpochs(_ corpus: Span<UInt8>, chunk: Int) -> Counters {
//         var decoder = NMEAStreamDecoder()
//         var c = Counters()
//         var offset = 0
//         while offset < corpus.count {
//             let end = min(offset + chunk, corpus.count)
//             decoder.feed(corpus.extracting(offset..<end), now: 0) { position in
//                 c.accepted += 1  // epochs
//                 c.digest = c.digest &* 31 &+ UInt64(bitPattern: Int64((position.latitude ?? 0) * 1e7))
//             }
//             offset = end
//         }
//         decoder.finish { _ in c.accepted += 1 }
//         c.delivered = decoder.statistics.decoded  // and .unsupported / .rejected / .malformed
//         return c
//     }
//
//     // in main, after the parser measurement:
//     _ = measure(name: "epochs", corpus: corpus, runs: options.runs, chunk: options.chunk, runEpochs)
//
// `measure` prints per-run and median ns per *sentence* (same denominator), allocations per
// sentence (the assembler must stay at 0 too) and a `RESULT epochs_*` line; scripts/bench.sh
// reads only `parser_*` and `naive_*`, so add an `epochs` row there if it should be tabled.

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

struct Measurement {
    var nsPerSentence: [Double] = []
    var cpuNsPerSentence: [Double] = []
    var allocationsPerSentence: [Double] = []
    var counters = Counters()
}

func measure(
    name: String, corpus: Corpus, runs: Int, chunk: Int, _ body: (Span<UInt8>, Int) -> Counters
) -> Measurement {
    let span = corpus.bytes.span
    let sentences = Double(corpus.sentences)
    var result = Measurement()
    // Warm-up: page in the corpus, instantiate metadata, settle the allocator.
    result.counters = body(span, chunk)
    for run in 1...runs {
        tmm_alloc_counter_start()
        let cpuStart = threadCPUNanoseconds()
        let start = nowNanoseconds()
        let counters = body(span, chunk)
        let elapsed = nowNanoseconds() - start
        let cpu = threadCPUNanoseconds() - cpuStart
        let allocations = tmm_alloc_counter_stop()
        if counters != result.counters { fail("\(name): run \(run) did different work than the warm-up") }
        let ns = Double(elapsed) / sentences
        let cpuNs = Double(cpu) / sentences
        result.nsPerSentence.append(ns)
        result.cpuNsPerSentence.append(cpuNs)
        result.allocationsPerSentence.append(Double(allocations) / sentences)
        print(
            "  \(name) run \(run)/\(runs): \(fixed(Double(elapsed) / 1e6, 1)) ms, \(fixed(ns, 1)) ns/sentence, "
                + "\(fixed(1e3 / ns, 3)) M sentences/s, CPU \(fixed(cpuNs, 1)) ns/sentence, \(allocations) allocations")
    }
    let c = result.counters
    let ns = median(result.nsPerSentence)
    let cpuNs = median(result.cpuNsPerSentence)
    let allocs = median(result.allocationsPerSentence)
    print(
        "\(name): median \(fixed(ns, 1)) ns/sentence wall (min \(fixed(result.nsPerSentence.min()!, 1)), "
            + "max \(fixed(result.nsPerSentence.max()!, 1))), \(fixed(1e3 / ns, 3)) M sentences/s, "
            + "\(fixed(cpuNs, 1)) ns/sentence thread CPU, \(fixed(allocs, 4)) allocations/sentence")
    print(
        "\(name): delivered \(c.delivered), accepted \(c.accepted), rejected \(c.rejected) "
            + "(invalid \(c.invalid), decode errors \(c.decodeErrors)), unknown \(c.unknown), "
            + "digest \(String(c.digest, radix: 16))")
    let key = name  // a plain identifier: "parser", "naive", later "epochs"
    print(
        "RESULT \(key)_ns_per_sentence=\(fixed(ns, 2)) \(key)_min_ns_per_sentence=\(fixed(result.nsPerSentence.min()!, 2)) "
            + "\(key)_cpu_ns_per_sentence=\(fixed(cpuNs, 2)) \(key)_sentences_per_second=\(fixed(1e9 / ns, 0)) "
            + "\(key)_allocations_per_sentence=\(fixed(allocs, 4)) \(key)_accepted=\(c.accepted) "
            + "\(key)_rejected=\(c.rejected) \(key)_unknown=\(c.unknown)")
    return result
}

// MARK: - Main

let options = parseOptions()
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

if let path = options.writeCorpus {
    writeFile(path, corpus.bytes)
    print("wrote \(path)")
    exit(0)
}

print(
    "runs: \(options.runs) (naive: \(options.naive ? options.naiveRuns : 0)), each after 1 warm-up; "
        + "chunk: \(options.chunk) bytes")
_ = measure(name: "parser", corpus: corpus, runs: options.runs, chunk: options.chunk, runParser)
if options.naive {
    _ = measure(name: "naive", corpus: corpus, runs: options.naiveRuns, chunk: options.chunk, runNaive)
}
