// tmm-fanout: how fast, and at what cost, the bridge fans one receiver's epochs out to many
// WebSocket clients, against gpsd's own JSON fan-out measured in the same run.
//
// One process, one clock (CLOCK_MONOTONIC). A pty plays an RTK receiver (GGA, GST, RMC, one
// unique UTC time per epoch) at R Hz; a private gpsd reads it. For each (N clients, R Hz):
// - baseline: N plain gpsd clients (`?WATCH={"enable":true,"json":true}`); an epoch's latency
//   is the receive time of the TPV whose `time` is that epoch, minus the time its last sentence
//   was written into the pty;
// - bridge: a fresh `tmm-bridge run` on the same gpsd and pty, V2 unlocked by a registration,
//   and N clients of ws://127.0.0.1:PORT/locationV2; the latency of a LocationV2 frame is its
//   receive time (by `utcTime`) minus the same write time.
// Both sides use the same writer, rates, windows and client loop (one epoll loop in this
// process). Each measurement discards a warm-up (gpsd and the bridge learn which sentence closes
// a cycle), then takes every (client, epoch) sample of a fixed window, and the servers' CPU
// (utime + stime over the window) and memory (VmRSS, VmHWM). A last bridge run adds one client
// that never reads, to see how the others fare and when the bridge closes it.
//
// `--wss` (issue 11) adds, after every bridge measurement, the same on a second fresh bridge with
// N clients of wss://127.0.0.1:PORT/locationV2 on its locationV2SecurePort (TLSClientSession in
// the client loop, the chain verified against that bridge's `<state-dir>/tls/ca.pem`), and a
// table of the server's CPU per client-frame, ws against wss (median of the per-run ratios).
//
// Prints progress, one `RESULT` line per measurement, and a table of medians over the runs.
// Exits 1 only when the harness itself fails (not when a server misses a target).
import GPSD
import Logging
import Glibc
import Posix
import Synchronization
import TLS

let usage = """
    usage: tmm-fanout [options]
      --bridge PATH        tmm-bridge to measure (default: tmm-bridge next to this program)
      --no-bridge          measure gpsd only
      --no-floor           skip the floor (an in-process minimal fan-out server: what the
                           harness and machine cost on their own)
      --clients LIST       client counts, comma-separated (default 64,256,1000)
      --rates LIST         epoch rates in Hz (default 10,20,50; each must divide 1 s into 10 ms steps)
      --warmup SECONDS     discarded at the start of every measurement (default 3)
      --window SECONDS     measured (default 10)
      --runs N             repetitions of the whole matrix; the table shows medians (default 3)
      --wss                also measure every bridge row over TLS (wss on locationV2SecurePort)
      --no-gpsd            skip gpsd's own fan-out (the baseline)
      --no-slow-client     skip the never-reading client run
      --slow-clients N     normal clients in that run (default: the largest of --clients)
      --slow-rate HZ       its rate (default 20)
      --slow-observe SECONDS  after its window, how long to wait for the bridge to drop the
                           slow client (default 20)
      --quick              --warmup 2 --window 4 --runs 1 (the slow client still gets 20 s to be closed)
      --keep               keep the scratch directory (logs) in /tmp
      --self-test          check the stream scanners (every chunk split) and exit
    """

func fail(_ message: String) -> Never {
    let text = "tmm-fanout: \(message)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(1)
}

func say(_ text: String) {
    print(text)
    fflush(nil)
}

// MARK: Options

struct Options {
    var bridge: String?
    var clients = [64, 256, 1000]
    var rates = [10, 20, 50]
    var warmup = 3
    var window = 10
    var runs = 3
    var slowClient = true
    var slowClients: Int?
    var slowRate = 20
    var slowObserve = 20
    var keep = false
    var floor = true
    var wss = false
    var gpsd = true
}

/// This program's own path (the floor server is a second copy of it).
func selfExecutable() -> String {
    var path = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &path, path.count - 1)
    guard n > 0 else { return CommandLine.arguments[0] }
    return String(decoding: path[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func parseOptions(_ arguments: [String]) -> Options {
    var options = Options()
    if arguments.count == 4, arguments[1] == "--serve-floor", let listener = CInt(arguments[2]),
        let epochs = CInt(arguments[3])
    {
        exit(serveFloor(listener: listener, epochs: epochs))
    }
    var defaultBridge: String? =
        selfExecutable().split(separator: "/", omittingEmptySubsequences: false)
        .dropLast().joined(separator: "/") + "/tmm-bridge"
    var i = 1
    func value() -> String {
        i += 1
        guard i < arguments.count else { fail("\(arguments[i - 1]) needs a value\n\(usage)") }
        return arguments[i]
    }
    func number(_ text: String, _ name: String) -> Int {
        guard let n = Int(text), n > 0 else { fail("\(name): '\(text)' is not a positive number") }
        return n
    }
    func list(_ text: String, _ name: String) -> [Int] {
        text.split(separator: ",").map { number(String($0), name) }
    }
    while i < arguments.count {
        switch arguments[i] {
        case "--bridge": options.bridge = value()
        case "--no-bridge": defaultBridge = nil; options.bridge = nil
        case "--clients": options.clients = list(value(), "--clients")
        case "--rates": options.rates = list(value(), "--rates")
        case "--warmup": options.warmup = number(value(), "--warmup")
        case "--window": options.window = number(value(), "--window")
        case "--runs": options.runs = number(value(), "--runs")
        case "--no-slow-client": options.slowClient = false
        case "--slow-clients": options.slowClients = number(value(), "--slow-clients")
        case "--slow-rate": options.slowRate = number(value(), "--slow-rate")
        case "--slow-observe": options.slowObserve = number(value(), "--slow-observe")
        case "--quick":
            options.warmup = 2
            options.window = 4
            options.runs = 1
        case "--keep": options.keep = true
        case "--no-floor": options.floor = false
        case "--wss": options.wss = true
        case "--no-gpsd": options.gpsd = false
        case "--self-test":
            let failures = runSelfTest()
            for failure in failures { print("self-test: FAIL \(failure)") }
            print(failures.isEmpty ? "self-test: scanners and sentences OK" : "self-test: \(failures.count) failure(s)")
            exit(failures.isEmpty ? 0 : 1)
        case "-h", "--help":
            print(usage)
            exit(0)
        default: fail("unknown argument '\(arguments[i])'\n\(usage)")
        }
        i += 1
    }
    if options.bridge == nil, arguments.contains("--no-bridge") == false { options.bridge = defaultBridge }
    for rate in options.rates + [options.slowRate] where !isSupportedRate(rate) {
        fail("rate \(rate) Hz: the epoch period must be a whole number of hundredths of a second")
    }
    return options
}

let options = parseOptions(CommandLine.arguments)

// MARK: Set-up

signal(SIGPIPE, SIG_IGN)
var descriptorLimit = rlimit()
getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &descriptorLimit)
descriptorLimit.rlim_cur = descriptorLimit.rlim_max
setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &descriptorLimit)
let largest = (options.clients + [options.slowClients ?? 0]).max() ?? 0
guard Int(descriptorLimit.rlim_cur) > largest + 64 else {
    fail("RLIMIT_NOFILE is \(descriptorLimit.rlim_cur); \(largest) clients need more (ulimit -n)")
}

let scratch = "/tmp/tmm-fanout-\(getpid())"
mkdir(scratch, 0o755)
@MainActor func cleanUp() { if !options.keep { _ = system("rm -rf \(scratch)") } }

func loadAverage() -> String {
    guard let text = readSmallFile("/proc/loadavg") else { return "?" }
    return String(decoding: text, as: UTF8.self).split(separator: " ").prefix(3).joined(separator: " ")
}

var bridgePath = options.bridge
if let path = bridgePath, access(path, X_OK) != 0 {
    say("bridge: \(path) is not an executable; measuring gpsd only")
    bridgePath = nil
}

let gpsdConfiguration: PrivateGPSD.Configuration
do {
    gpsdConfiguration = try PrivateGPSD.Configuration.inRuntimeDirectory(scratch)
} catch {
    fail("\(error)")
}
let gpsd = PrivateGPSD(gpsdConfiguration, log: Logger(format: .plain(program: ""), level: .error) { _ in })
do { try gpsd.start() } catch { fail("\(error)") }
// The bridge measured here starts as root and drops to nobody, and refuses (exit 77) a gpsd
// control socket it could not write after the drop; the socket gpsd made is root's, mode 0755.
if chmod(gpsdConfiguration.controlSocket, 0o666) != 0 {
    fail("chmod \(gpsdConfiguration.controlSocket): errno \(errno)")
}

let pty: Pseudoterminal
do { pty = try Pseudoterminal() } catch { fail("pty: \(error)") }
let writer = EpochWriter(pty: pty.controller.rawValue, rate: options.rates.first ?? 20)
let writerThread: OSThread
do { writerThread = try OSThread(name: "pty-writer") { writer.run() } } catch { fail("writer thread: \(error)") }

@MainActor func shutDown() {
    writer.stop()
    writerThread.join()
    gpsd.stop()
    cleanUp()
}

/// Asks gpsd to (re)open the pty: the bridge may remove it from gpsd when it stops.
@MainActor func ensureDevice(strict: Bool) {
    do {
        try GPSDControlSocket(path: gpsdConfiguration.controlSocket).add(pty.devicePath)
    } catch {
        if strict {
            shutDown()
            fail("gpsd would not open \(pty.devicePath): \(error)")
        }
    }
}

let loop: ClientLoop
do { loop = try ClientLoop(descriptorLimit: Int(descriptorLimit.rlim_cur)) } catch { fail("\(error)") }

ensureDevice(strict: true)
// A first client must see TPVs before anything is measured (gpsd flushes a newly opened tty).
do {
    try loop.connect(count: 1, kind: .gpsd, port: gpsdConfiguration.port, inFlight: 1)
    let deadline = monotonicNanoseconds() + 15_000_000_000
    while loop.unscheduled < 5 && monotonicNanoseconds() < deadline { loop.pump(milliseconds: 50) }
    guard loop.unscheduled >= 5 else { throw HarnessError("gpsd delivered no TPV for the pty within 15 s") }
    loop.closeAll()
} catch {
    shutDown()
    fail("\(error)")
}

// MARK: Measuring

/// One measurement's numbers.
struct Measurement {
    var run: Int
    var server: String
    var clients: Int
    var rate: Int
    var latency = LatencySummary()
    var serverCPU: Double?
    var serverRSS = 0
    var serverHWM = 0
    var gpsdCPU: Double?
    var gpsdRSS = 0
    var harnessCPU: Double?
    var overruns = 0
    var note = ""
}

/// Runs one schedule (warm-up, window, tail) on the connected clients, with CPU meters over the
/// window; `observe` runs about every 250 ms.
@MainActor func measure(
    run: Int, server: String, clients: Int, rate: Int, serverPID: pid_t, observe: (() -> Void)? = nil
)
    -> Measurement
{
    var result = Measurement(run: run, server: server, clients: clients, rate: rate)
    let warm = options.warmup * rate
    let window = options.window * rate
    let tail = max(2, rate / 2)
    let schedule = writer.schedule(rate: rate, count: warm + window + tail)
    let measured = loop.beginMeasurement(schedule)
    if measured != clients { result.note = "\(measured) of \(clients) clients open at start" }
    var serverMeter = CPUMeter(pid: serverPID)
    let gpsdPID = gpsd.pid ?? 0
    var gpsdMeter = CPUMeter(pid: gpsdPID)
    var ownMeter = CPUMeter(pid: getpid())
    var phase = 0  // 0 warm-up, 1 window, 2 tail
    var nextObservation = monotonicNanoseconds()
    while !schedule.isComplete {
        loop.pump(milliseconds: 10)
        let written = schedule.written.load(ordering: .acquiring)
        if phase == 0 && written >= warm {
            serverMeter.start()
            if serverPID != gpsdPID { gpsdMeter.start() }
            ownMeter.start()
            phase = 1
        } else if phase == 1 && written >= warm + window {
            serverMeter.stop()
            if serverPID != gpsdPID { gpsdMeter.stop() }
            ownMeter.stop()
            if let memory = MemoryUse(pid: serverPID) {
                result.serverRSS = memory.residentKiB
                result.serverHWM = memory.peakKiB
            }
            if let memory = MemoryUse(pid: gpsdPID) { result.gpsdRSS = memory.residentKiB }
            phase = 2
        }
        if let observe, monotonicNanoseconds() >= nextObservation {
            observe()
            nextObservation = monotonicNanoseconds() + 250_000_000
        }
    }
    loop.pump(until: monotonicNanoseconds() + 300_000_000)
    result.latency = loop.endMeasurement(epochs: warm..<(warm + window))
    result.serverCPU = serverMeter.percent
    result.gpsdCPU = serverPID == gpsdPID ? serverMeter.percent : gpsdMeter.percent
    result.harnessCPU = ownMeter.percent
    result.overruns = schedule.overruns.load(ordering: .relaxed)
    return result
}

func fixed(_ value: Double?, _ decimals: Int = 3) -> String {
    guard let value, value.isFinite else { return "nan" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = String(rounded)
    if text.hasSuffix(".0") && decimals == 0 { text.removeLast(2) }
    return text
}

@MainActor func resultLine(_ m: Measurement, run: Int, extra: String = "") -> String {
    var line = "RESULT fanout run=\(run) server=\(m.server) clients=\(m.clients) rate_hz=\(m.rate)"
    line += " window_s=\(options.window) samples=\(m.latency.samples) missing=\(m.latency.missing)"
    line += " duplicates=\(m.latency.duplicates) disconnects=\(m.latency.disconnects)"
    line +=
        " p50_ms=\(fixed(m.latency.p50)) p99_ms=\(fixed(m.latency.p99))"
        + " max_ms=\(fixed(m.latency.max)) min_ms=\(fixed(m.latency.min))"
    line += " cpu_pct=\(fixed(m.serverCPU, 1)) rss_kib=\(m.serverRSS) hwm_kib=\(m.serverHWM)"
    line += " gpsd_cpu_pct=\(fixed(m.gpsdCPU, 1)) gpsd_rss_kib=\(m.gpsdRSS) harness_cpu_pct=\(fixed(m.harnessCPU, 1))"
    line += " bytes_per_message=\(m.latency.bytesPerMessage) pty_overruns=\(m.overruns)"
    line += " load1=\(loadAverage().split(separator: " ").first ?? "?")"
    // A note has spaces, so it goes on a line of its own (RESULT lines are key=value words).
    return line + extra + (m.note.isEmpty ? "" : "\nnote: \(m.server), \(m.clients) clients, \(m.rate) Hz: \(m.note)")
}

/// The most clients gpsd accepted, once it refused one (Debian's gpsd 3.22 is built with
/// 64 subscriber slots: "no subscriber slots available").
var gpsdClientLimit: Int?

@MainActor func measureGPSD(clients: Int, rate: Int, run: Int) throws(HarnessError) -> Measurement? {
    guard options.gpsd else { return nil }
    if let limit = gpsdClientLimit, clients > limit { return nil }
    ensureDevice(strict: false)
    do {
        try loop.connect(count: clients, kind: .gpsd, port: gpsdConfiguration.port, inFlight: 4)
    } catch {
        loop.closeAll()
        guard let limit = error.refusedAfter else { throw error }
        gpsdClientLimit = limit
        say("gpsd: refused client \(limit + 1) (its subscriber limit): no baseline for \(limit + 1) or more clients")
        say("RESULT fanout run=\(run) server=gpsd clients=\(clients) rate_hz=\(rate) status=refused accepted=\(limit)")
        return nil
    }
    let result = measure(run: run, server: "gpsd", clients: clients, rate: rate, serverPID: gpsd.pid ?? 0)
    loop.closeAll()
    say(resultLine(result, run: run))
    return result
}

/// Starts a bridge, unlocks V2, connects the clients; nil (and a message) when the bridge cannot
/// be measured.
@MainActor func startBridge(_ path: String, clients: Int, label: String, secure: Bool = false) -> BridgeProcess? {
    let bridge: BridgeProcess
    do {
        bridge = try BridgeProcess(
            executable: path, device: pty.devicePath, gpsd: gpsdConfiguration,
            directory: scratch + "/" + label)
        try bridge.unlockLocationV2()
    } catch {
        say("bridge: \(error)")
        return nil
    }
    do {
        if secure {
            // This bridge's own CA (a fresh state directory makes a fresh one).
            guard let pem = readSmallFile(bridge.directory + "/state/tls/ca.pem") else {
                throw HarnessError("no \(bridge.directory)/state/tls/ca.pem")
            }
            do {
                loop.trustedAuthority = try TLSClientContext(trusting: [try Certificate(pem: pem)])
            } catch {
                throw HarnessError("the bridge's CA: \(error)")
            }
        }
        try loop.connect(
            count: clients, kind: .webSocket(path: "/locationV2"),
            port: secure ? bridge.ports.locationV2Secure : bridge.ports.locationV2, inFlight: 32, secure: secure)
    } catch {
        say("bridge: \(error)\(bridge.logTail())")
        loop.closeAll()
        bridge.stop()
        return nil
    }
    return bridge
}

@MainActor func stopBridge(_ bridge: BridgeProcess, _ result: inout Measurement) {
    if let ended = bridge.poll() {
        result.note += (result.note.isEmpty ? "" : "; ") + "bridge \(ended) during the measurement"
        say("bridge: \(ended) during the measurement\(bridge.logTail())")
    }
    loop.closeAll()
    let ended = bridge.stop()
    if ended != .exited(0) && ended != .signalled(SIGTERM) {
        say("bridge: on SIGTERM it \(ended)\(bridge.logTail())")
    }
}

var bridgeUsable = bridgePath != nil
var measurementCount = 0

/// The floor: the in-process minimal fan-out server (FloorServer.swift) with the same clients.
@MainActor func measureFloor(clients: Int, rate: Int, run: Int) throws(HarnessError) -> Measurement? {
    guard options.floor else { return nil }
    measurementCount += 1
    let logPath = scratch + "/floor-\(measurementCount).log"
    let floor = try FloorProcess(executable: selfExecutable(), logPath: logPath)
    defer { floor.stop() }
    do {
        try loop.connect(count: clients, kind: .webSocket(path: "/locationV2"), port: floor.port, inFlight: 32)
    } catch {
        loop.closeAll()
        throw error
    }
    writer.setObserver(floor.epochDescriptor)
    let result = measure(run: run, server: "floor", clients: clients, rate: rate, serverPID: floor.pid)
    writer.setObserver(nil)
    loop.closeAll()
    say(resultLine(result, run: run))
    return result
}

@MainActor func measureBridge(clients: Int, rate: Int, run: Int, secure: Bool = false) -> Measurement? {
    guard bridgeUsable, let path = bridgePath else { return nil }
    measurementCount += 1
    let server = secure ? "bridge-wss" : "bridge"
    guard let bridge = startBridge(path, clients: clients, label: "\(server)-\(measurementCount)", secure: secure)
    else {
        say("bridge: not measured (\(clients) clients, \(rate) Hz); skipping the remaining bridge runs")
        bridgeUsable = false
        return nil
    }
    var result = measure(run: run, server: server, clients: clients, rate: rate, serverPID: bridge.pid)
    stopBridge(bridge, &result)
    say(resultLine(result, run: run))
    return result
}

/// The slow-client run and what it found.
struct SlowClientRun {
    var measurement: Measurement
    var report: SlowClientReport
    /// Seconds from the slow client's handshake until the server's end of it left ESTABLISHED
    /// (closed by the bridge), if seen.
    var serverClosedAfter: Double?
    var serverState: Int?
    var sendQueueMax = 0
    var lastFrameAfter: Double?
    var handshakeMilliseconds = 0
}

@MainActor func measureSlowClient(clients: Int, rate: Int, run: Int) -> SlowClientRun? {
    guard bridgeUsable, let path = bridgePath else { return nil }
    measurementCount += 1
    guard let bridge = startBridge(path, clients: clients, label: "bridge-\(measurementCount)-slow") else { return nil }
    let slow: Int
    do {
        slow = try loop.connectSlowClient(port: bridge.ports.locationV2, path: "/locationV2", receiveBuffer: 4096)
    } catch {
        say("bridge: \(error)")
        loop.closeAll()
        bridge.stop()
        return nil
    }
    let slowPort = loop.localPort(slow)
    let opened = loop.openedAt(slow)
    var closedAt: Int64?
    var lastState: Int?
    var sendQueueMax = 0
    let observe = {
        guard closedAt == nil else { return }
        let view = ServerSocketView.find(localPort: bridge.ports.locationV2, remotePort: slowPort)
        if let view { sendQueueMax = max(sendQueueMax, view.sendQueue) }
        lastState = view?.state
        if view.map({ !$0.isEstablished }) ?? true { closedAt = monotonicNanoseconds() }
    }
    var result = measure(
        run: run, server: "bridge+slow", clients: clients, rate: rate, serverPID: bridge.pid, observe: observe)
    // Give the bridge time to give up on the slow client, if it has not yet.
    let deadline = monotonicNanoseconds() + Int64(options.slowObserve) * 1_000_000_000
    while closedAt == nil && loop.endedAt(slow) == 0 && monotonicNanoseconds() < deadline {
        loop.pump(milliseconds: 250)
        observe()
    }
    if closedAt == nil, loop.endedAt(slow) != 0 { closedAt = loop.endedAt(slow) }
    let report = loop.drainSlowClient(slow, milliseconds: 3000)
    var slowRun = SlowClientRun(measurement: result, report: report)
    slowRun.serverClosedAfter = closedAt.map { Double($0 - opened) / 1e9 }
    slowRun.serverState = lastState
    slowRun.sendQueueMax = sendQueueMax
    stopBridge(bridge, &result)
    slowRun.measurement = result
    var extra = " slow_closed=\(closedAt != nil ? "yes" : "no")"
    extra += " slow_closed_after_s=\(fixed(slowRun.serverClosedAfter, 2))"
    extra += " slow_close_code=\(report.closeCode.map(String.init) ?? "none")"
    extra += " slow_messages=\(report.messages) slow_bytes=\(report.bytes)"
    extra += " slow_eof=\(report.endOfFile ? "yes" : "no") server_send_queue_max=\(sendQueueMax)"
    say(resultLine(result, run: run, extra: extra))
    if !report.closeReason.isEmpty { say("slow client: close reason '\(report.closeReason)'") }
    return slowRun
}

// MARK: The run

/// The wall-clock time, `2026-11-29 14:48:13 UTC`.
func utcNow() -> String {
    var now = time(nil)
    var parts = tm()
    gmtime_r(&now, &parts)
    var text = [CChar](repeating: 0, count: 64)
    let count = strftime(&text, text.count, "%Y-%m-%d %H:%M:%S UTC", &parts)
    return String(decoding: text[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

let started = utcNow()
let startedAt = monotonicNanoseconds()
/// Seconds since the benchmark started, for the progress lines.
func elapsed() -> String { "\((monotonicNanoseconds() - startedAt) / 1_000_000_000) s" }
say(
    "tmm-fanout: \(options.runs) run(s) of clients \(options.clients) x rates \(options.rates) Hz;"
        + " warm-up \(options.warmup) s, window \(options.window) s per measurement")
say(
    "gpsd: \(gpsdConfiguration.executable) (pid \(gpsd.pid ?? 0), port \(gpsdConfiguration.port)); "
        + "pty \(pty.devicePath)"
)
say("bridge: \(bridgePath ?? "not measured")")
say("started: \(started), load \(loadAverage())")

var all: [Measurement] = []
var slowRuns: [SlowClientRun] = []
do {
    for run in 1...options.runs {
        for clients in options.clients {
            for rate in options.rates {
                say(
                    "== run \(run)/\(options.runs): \(clients) clients, \(rate) Hz "
                        + "(at \(elapsed()), load \(loadAverage()))"
                )
                if let baseline = try measureGPSD(clients: clients, rate: rate, run: run) { all.append(baseline) }
                if let floor = try measureFloor(clients: clients, rate: rate, run: run) { all.append(floor) }
                if let bridge = measureBridge(clients: clients, rate: rate, run: run) { all.append(bridge) }
                if options.wss, let secure = measureBridge(clients: clients, rate: rate, run: run, secure: true) {
                    all.append(secure)
                }
            }
        }
        if options.slowClient, bridgeUsable {
            let clients = options.slowClients ?? options.clients.max() ?? 1000
            say(
                "== run \(run)/\(options.runs): slow client: \(clients) clients + 1 that never reads, "
                    + "\(options.slowRate) Hz"
            )
            if let slow = measureSlowClient(clients: clients, rate: options.slowRate, run: run) {
                slowRuns.append(slow)
            }
        }
    }
} catch {
    shutDown()
    fail("\(error)")
}
shutDown()

// MARK: Summary

func median(_ values: [Double]) -> Double? {
    let finite = values.filter { $0.isFinite }.sorted()
    guard !finite.isEmpty else { return nil }
    return finite.count % 2 == 1
        ? finite[finite.count / 2] : (finite[finite.count / 2 - 1] + finite[finite.count / 2]) / 2
}

@MainActor func medianOf(_ server: String, _ clients: Int, _ rate: Int, _ value: (Measurement) -> Double?) -> Double? {
    median(all.filter { $0.server == server && $0.clients == clients && $0.rate == rate }.compactMap(value))
}

func ratio(_ a: Double?, _ b: Double?) -> String {
    guard let a, let b, b > 0 else { return "n/a" }
    return fixed(a / b, 1) + "x"
}

say("")
say("## WebSocket fan-out (medians of \(options.runs) run(s))")
say("")
say("latency = receive time of an epoch's message at a client minus the write of its last sentence into the pty;")
say("p50/p99 over all (client, epoch) samples of a \(options.window) s window; CPU = utime+stime over the window,")
say("% of one core; RSS = VmRSS at the window's end (MiB), HWM = VmHWM (bridge: started fresh per measurement).")
say("")
say(
    "| clients | Hz | server | p50 ms | p99 ms | max ms | missing | server CPU % "
        + "| RSS MiB | HWM MiB | gpsd CPU % | harness CPU % | p99 vs gpsd | CPU vs gpsd | p99 − floor ms |"
)
say("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for clients in options.clients {
    for rate in options.rates {
        let gpsdP99 = medianOf("gpsd", clients, rate) { $0.latency.p99 }
        let gpsdCPU = medianOf("gpsd", clients, rate) { $0.serverCPU }
        let floorP99 = medianOf("floor", clients, rate) { $0.latency.p99 }
        if let limit = gpsdClientLimit, clients > limit {
            say("| \(clients) | \(rate) | gpsd | refused: gpsd serves at most \(limit) clients ||||||||||||")
        }
        for server in ["gpsd", "floor", "bridge", "bridge-wss"] {
            let rows = all.filter { $0.server == server && $0.clients == clients && $0.rate == rate }
            guard !rows.isEmpty else { continue }
            func m(_ value: (Measurement) -> Double?) -> Double? { medianOf(server, clients, rate, value) }
            let p99 = m { $0.latency.p99 }
            let cpu = m { $0.serverCPU }
            let isBridge = server.hasPrefix("bridge")
            let cells = [
                String(clients), String(rate), server,
                fixed(m { $0.latency.p50 }), fixed(p99), fixed(m { $0.latency.max }),
                fixed(m { Double($0.latency.missing) }, 0), fixed(cpu, 1),
                fixed(m { Double($0.serverRSS) / 1024 }, 1), fixed(m { Double($0.serverHWM) / 1024 }, 1),
                server == "floor" ? "" : fixed(m { $0.gpsdCPU }, 1), fixed(m { $0.harnessCPU }, 1),
                isBridge ? ratio(p99, gpsdP99) : "", isBridge ? ratio(cpu, gpsdCPU) : "",
                isBridge ? fixed(p99.flatMap { p in floorP99.map { p - $0 } }) : "",
            ]
            say("| " + cells.joined(separator: " | ") + " |")
        }
    }
}

/// The server's CPU per delivered (client, frame) pair over the window, in µs.
func cpuPerClientFrame(_ m: Measurement) -> Double? {
    guard let cpu = m.serverCPU, m.latency.samples > 0 else { return nil }
    return cpu / 100 * Double(options.window) * 1e6 / Double(m.latency.samples)
}

if options.wss {
    say("")
    say("ws against wss (bridge, same clients and rates; CPU per client-frame = server CPU over the window /")
    say("(client, frame) pairs delivered in it; ratio = median of the per-run wss / ws):")
    say("")
    say(
        "| clients | Hz | ws CPU % | wss CPU % | ws µs CPU/client-frame | wss µs CPU/client-frame | wss / ws "
            + "| ws p50 ms | wss p50 ms | ws p99 ms | wss p99 ms | missing ws/wss | wss HWM MiB |"
    )
    say("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for clients in options.clients {
        for rate in options.rates {
            let plain = all.filter { $0.server == "bridge" && $0.clients == clients && $0.rate == rate }
            let secure = all.filter { $0.server == "bridge-wss" && $0.clients == clients && $0.rate == rate }
            guard !plain.isEmpty, !secure.isEmpty else { continue }
            let ratios = plain.compactMap { p -> Double? in
                guard let s = secure.first(where: { $0.run == p.run }), let a = cpuPerClientFrame(p),
                    let b = cpuPerClientFrame(s), a > 0
                else { return nil }
                return b / a
            }
            let wsCost = median(plain.compactMap(cpuPerClientFrame))
            let wssCost = median(secure.compactMap(cpuPerClientFrame))
            let plainMissing = median(plain.map { Double($0.latency.missing) })
            let secureMissing = median(secure.map { Double($0.latency.missing) })
            let cells = [
                String(clients), String(rate),
                fixed(median(plain.compactMap(\.serverCPU)), 1), fixed(median(secure.compactMap(\.serverCPU)), 1),
                fixed(wsCost, 2), fixed(wssCost, 2), median(ratios).map { fixed($0, 2) + "x" } ?? "n/a",
                fixed(median(plain.map(\.latency.p50))), fixed(median(secure.map(\.latency.p50))),
                fixed(median(plain.map(\.latency.p99))), fixed(median(secure.map(\.latency.p99))),
                "\(fixed(plainMissing, 0))/\(fixed(secureMissing, 0))",
                fixed(median(secure.map { Double($0.serverHWM) / 1024 }), 1),
            ]
            say("| " + cells.joined(separator: " | ") + " |")
            say(
                "RESULT fanout_wss clients=\(clients) rate_hz=\(rate) ws_us_per_client_frame=\(fixed(wsCost, 2))"
                    + " wss_us_per_client_frame=\(fixed(wssCost, 2))"
                    + " ratio=\(median(ratios).map { fixed($0, 2) } ?? "nan")"
            )
        }
    }
}

if !slowRuns.isEmpty {
    let clients = slowRuns[0].measurement.clients
    let rate = slowRuns[0].measurement.rate
    say("")
    say("Slow client (\(clients) clients + 1 that never reads, SO_RCVBUF 4096, \(rate) Hz):")
    say(
        "| run | others' p99 ms | without it (same run) | missing | bridge CPU % "
            + "| HWM MiB | closed by bridge | after s | close code | frames it got | server send queue max |"
    )
    say("|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for slow in slowRuns {
        let run = slow.measurement.run
        let without = all.first { $0.server == "bridge" && $0.clients == clients && $0.rate == rate && $0.run == run }
        let cells = [
            String(run), fixed(slow.measurement.latency.p99), fixed(without?.latency.p99),
            String(slow.measurement.latency.missing), fixed(slow.measurement.serverCPU, 1),
            fixed(Double(slow.measurement.serverHWM) / 1024, 1),
            slow.serverClosedAfter != nil ? "yes" : "no", fixed(slow.serverClosedAfter, 2),
            slow.report.closeCode.map(String.init) ?? "none", String(slow.report.messages), String(slow.sendQueueMax),
        ]
        say("| " + cells.joined(separator: " | ") + " |")
    }
}

say("")
let targetClients = 1000, targetRate = 20
if let p99 = medianOf("bridge", targetClients, targetRate, { $0.latency.p99 }),
    let cpu = medianOf("bridge", targetClients, targetRate, { $0.serverCPU })
{
    let met = p99 <= 5 && cpu < 50
    say(
        "target: \(targetClients) clients at \(targetRate) Hz with p99 <= 5 ms and under half a core:"
            + " \(met ? "MET" : "NOT MET") (median p99 \(fixed(p99)) ms, CPU \(fixed(cpu, 1)) %)")
    say(
        "RESULT fanout_target clients=\(targetClients) rate_hz=\(targetRate) p99_ms=\(fixed(p99))"
            + " cpu_pct=\(fixed(cpu, 1)) met=\(met ? "yes" : "no")"
    )
} else {
    say("target: \(targetClients) clients at \(targetRate) Hz with p99 <= 5 ms and under half a core: not measured")
}
say("finished: \(utcNow()), load \(loadAverage())")
