// tmm-fleetload: what fleet publishing costs at scale (issue 24): N boxes publishing their
// LocationV2 positions to one mosquitto, simulated in one process.
//
// For each N (and each run): a fresh mosquitto on 127.0.0.1 (persistence off), N `MQTTLink`s
// (Fleet's real client: its own "mqtt" thread each, libmosquitto, the spool, QoS 1, the retained
// status and the last will), and one subscriber (libmosquitto, in this process, QoS 1 on
// `fleetload/+/location`) standing in for the fleet's backend. One thread (main, the boxes' io
// threads folded into one) submits each box's message at R Hz, the boxes spread evenly over the
// period (a fleet is not synchronised). Each payload is one real LocationV2 message whose
// `utcTimeStamp` string ("2020-03-18T13:28:19.600Z") is overwritten with the submit time in
// digits (monotonic microseconds since the tool started, zero-padded to the same 24 characters):
// the size is the real message's, and the subscriber reads the time back. Latency = delivery
// to the subscriber - submit (this process, one clock): the link's queue and thread,
// libmosquitto, TCP over loopback, mosquitto, TCP again, the subscriber.
//
// After a warm-up, a window of D seconds is measured: latency percentiles of every message
// submitted in it, delivered / expected, CPU over the window (thread CPU clocks, exact: the links'
// "mqtt" threads + the submitting thread = what the boxes pay; the subscriber apart; mosquitto's
// process CPU clock) and mosquitto's memory (VmRSS at the end, VmHWM). Bytes on the wire per
// message are computed from the MQTT 3.1.1 framing (a real daemon's topic) with TCP/IP over a
// 1500-byte MTU; the loopback interface's counters over the window are printed beside them.
//
// Prints one `RESULT` line per measurement and a table of medians over the runs. Exits 1 only
// when the harness fails (no broker, a box that never connects), not when a figure is poor.
import BenchSupport
import CMosquitto
import Fleet
import Glibc
import Logging
import Posix
import Synchronization

let usage = """
    usage: tmm-fleetload [options]
      --boxes LIST        publisher counts, comma-separated (default 1,10,100,1000)
      --rate HZ           messages per second per box (default 1)
      --warmup SECONDS    published but not measured, after every box is connected (default 3)
      --duration SECONDS  the measured window (default 15)
      --runs N            repetitions of the whole list; the table shows medians (default 3)
      --payload FILE      the LocationV2 message (first line of FILE, e.g. `tmm-bridge demo
                          --format locationV2`); default: a real one built in (demo capture)
      --mosquitto PATH    the broker (default /usr/sbin/mosquitto)
      --keep              keep the scratch directory (broker logs, spools) in /tmp
    """

/// The running mosquitto (0: none), stopped by `fail` (it leads a process group of its own and
/// would outlive us).
let runningBroker = Atomic<pid_t>(0)

func fail(_ message: String) -> Never {
    printError("tmm-fleetload: \(message)\n")
    let broker = runningBroker.load(ordering: .relaxed)
    if broker > 0 { kill(broker, SIGTERM) }
    exit(1)
}

func say(_ text: String) {
    print(text)
    fflush(nil)
}

// MARK: - Options

struct Options {
    var boxes = [1, 10, 100, 1000]
    var rate = 1.0
    var warmup = 3.0
    var duration = 15.0
    var runs = 3
    var payloadFile: String?
    var mosquitto = "/usr/sbin/mosquitto"
    var keep = false
}

func parseOptions(_ arguments: [String]) -> Options {
    var options = Options()
    var i = 1
    func value() -> String {
        i += 1
        guard i < arguments.count else { fail("\(arguments[i - 1]) needs a value\n\(usage)") }
        return arguments[i]
    }
    func positive(_ text: String, _ name: String) -> Double {
        guard let n = Double(text), n > 0 else { fail("\(name): '\(text)' is not a positive number") }
        return n
    }
    while i < arguments.count {
        switch arguments[i] {
        case "--boxes":
            options.boxes = value().split(separator: ",").map { Int(positive(String($0), "--boxes")) }
        case "--rate": options.rate = positive(value(), "--rate")
        case "--warmup": options.warmup = positive(value(), "--warmup")
        case "--duration": options.duration = positive(value(), "--duration")
        case "--runs": options.runs = Int(positive(value(), "--runs"))
        case "--payload": options.payloadFile = value()
        case "--mosquitto": options.mosquitto = value()
        case "--keep": options.keep = true
        case "-h", "--help":
            print(usage)
            exit(0)
        default: fail("unknown argument '\(arguments[i])'\n\(usage)")
        }
        i += 1
    }
    return options
}

// MARK: - Clocks and /proc

/// Microseconds since the tool started (monotonic): what the payload carries.
let baseNanoseconds = monotonicNanoseconds()
func nowMicroseconds() -> Int64 { (monotonicNanoseconds() - baseNanoseconds) / 1000 }

/// The CPU clock of one thread of this process by its kernel id (Linux's MAKE_THREAD_CPUCLOCK:
/// `~tid << 3 | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED`): exact, unlike /proc's 10 ms ticks.
func threadCPUNanoseconds(tid: pid_t) -> Int64? {
    let clock = clockid_t((~tid) << 3 | 6)
    var ts = timespec()
    guard clock_gettime(clock, &ts) == 0 else { return nil }
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

/// The CPU clock of another process (all its threads; Linux's MAKE_PROCESS_CPUCLOCK).
func processCPUNanoseconds(_ pid: pid_t) -> Int64? {
    var clock = clockid_t()
    guard clock_getcpuclockid(pid, &clock) == 0 else { return nil }
    var ts = timespec()
    guard clock_gettime(clock, &ts) == 0 else { return nil }
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

func ownProcessCPUNanoseconds() -> Int64 { Int64(clockNanoseconds(CLOCK_PROCESS_CPUTIME_ID)) }

/// A small file's text (/proc entries, the payload), nil when it cannot be read: Posix's one reader.
func readSmallFile(_ path: String) -> String? {
    guard let bytes = try? AtomicFile.read(path, limit: 16 << 20) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}

/// The kernel ids of this process's threads named `name` (/proc/self/task/TID/comm).
func threads(named name: String) -> [pid_t] {
    guard let directory = opendir("/proc/self/task") else { return [] }
    defer { closedir(directory) }
    var found: [pid_t] = []
    while let entry = readdir(directory) {
        let tidText = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
        }
        guard let tid = pid_t(tidText) else { continue }
        let comm = readSmallFile("/proc/self/task/\(tid)/comm") ?? ""
        if comm.hasPrefix(name + "\n") || comm == name { found.append(tid) }
    }
    return found
}

/// VmRSS and VmHWM of a process, KiB.
func memoryKiB(_ pid: pid_t) -> (resident: Int, peak: Int) {
    var result = (resident: 0, peak: 0)
    for line in (readSmallFile("/proc/\(pid)/status") ?? "").split(separator: "\n") {
        let value = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        if line.hasPrefix("VmRSS:") { result.resident = value }
        if line.hasPrefix("VmHWM:") { result.peak = value }
    }
    return result
}

/// The loopback interface's received bytes and packets (/proc/net/dev).
func loopbackCounters() -> (bytes: Int64, packets: Int64) {
    for line in (readSmallFile("/proc/net/dev") ?? "").split(separator: "\n") {
        let parts = line.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, parts[0].trimmingPrefixSpaces == "lo" else { continue }
        let fields = parts[1].split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 2 else { break }
        return (Int64(fields[0]) ?? 0, Int64(fields[1]) ?? 0)
    }
    return (0, 0)
}

extension Substring {
    var trimmingPrefixSpaces: Substring { drop { $0 == " " } }
}

// MARK: - The payload

/// A LocationV2 message of `tmm-bridge demo --format locationV2` (the embedded Trimble RTK
/// capture, an empty satelliteView): what a box publishes on PREFIX/location, byte for byte.
let builtInPayload = """
    {"latitude":41.5749659098,"longitude":-93.7505719013,"altitude":246.719,"speed":0.076,\
    "bearing":124.888,"geoidModel":null,"hrms":null,"vrms":null,"satellites":10,"totalSatInUse":10,\
    "totalSatInView":10,"pdop":null,"hdop":0.9,"vdop":null,"diffAge":6.6,"diffStatus":2,"diffID":"0133",\
    "solutionType":"DGPS","receiverModel":null,"receiverSerialNumber":null,\
    "mockProvider":"Trimble Mobile Manager","appVersion":"0.1.0","battery":null,"mslHeight":278.161,\
    "undulation":-31.442,"utcTime":132819.6,"utcTimeStamp":"2020-03-18T13:28:19.600Z",\
    "gpsTimeStamp":"2020-03-18T13:28:37.600Z","subscriptionType":100,"sourceReferenceFrameName":null,\
    "sourceReferenceFrameEpoch":null,"targetReferenceFrameName":null,"targetReferenceFrameEpoch":null,\
    "imuAlignmentStatus":0,"isTIP":false,"pitch":null,"roll":null,"yaw":null,"pitchPrecision":null,\
    "rollPrecision":null,"yawPrecision":null,"igsAntenna":null,"antennaHeight":0.0,"satelliteView":[],\
    "accuracy":null,"verticalAccuracyMeters":null,"sourceReferenceEpoch":null}
    """

/// The payload's bytes and where its `utcTimeStamp` string's characters are (overwritten with the submit time).
struct Payload {
    let bytes: [UInt8]
    let stampOffset: Int
    let stampWidth: Int

    init(_ text: String) {
        var line = Array(text.utf8)
        if let newline = line.firstIndex(of: 0x0A) { line = Array(line[..<newline]) }
        let key = Array(#""utcTimeStamp":""#.utf8)
        guard let start = Payload.find(key, in: line) else { fail("the payload has no \"utcTimeStamp\":\" field") }
        var end = start + key.count
        while end < line.count, line[end] != 0x22 { end += 1 }
        guard end < line.count, end - (start + key.count) >= 16 else {
            fail("the payload's utcTimeStamp is not a string of 16 characters or more")
        }
        bytes = line
        stampOffset = start + key.count
        stampWidth = end - stampOffset
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }

    /// A copy stamped with `micros` (zero-padded to the field's width).
    func stamped(_ micros: Int64) -> [UInt8] {
        var copy = bytes
        var value = micros
        for i in stride(from: stampOffset + stampWidth - 1, through: stampOffset, by: -1) {
            copy[i] = UInt8(0x30 + value % 10)
            value /= 10
        }
        return copy
    }

    /// The stamp of a received payload, if it has the field where expected.
    static func stamp(in bytes: UnsafeRawBufferPointer, offset: Int, width: Int) -> Int64? {
        guard bytes.count >= offset + width else { return nil }
        var value: Int64 = 0
        for i in offset..<(offset + width) {
            let digit = bytes[i]
            guard digit >= 0x30, digit <= 0x39 else { return nil }
            value = value * 10 + Int64(digit - 0x30)
        }
        return value
    }
}

// MARK: - Bytes on the wire

/// One message's bytes, MQTT 3.1.1 framing and TCP/IPv4 (20 + 20 + 12 bytes of timestamps per
/// segment, MSS 1448 on a 1500-byte MTU); Ethernet's 38 bytes per frame not counted.
struct WireBytes {
    let publish: Int
    let segments: Int
    let upstream: Int
    let downstream: Int

    init(payload: Int, topic: Int) {
        let remaining = 2 + topic + 2 + payload
        var lengthBytes = 1
        var rest = remaining / 128
        while rest > 0 {
            lengthBytes += 1
            rest /= 128
        }
        publish = 1 + lengthBytes + remaining
        segments = (publish + 1447) / 1448
        // Up: PUBLISH in its segments, and the box's ACK of the PUBACK (nothing to ride on at 1 Hz).
        upstream = publish + 52 * segments + 52
        // Down: PUBACK (4 bytes) carrying the ACK of the PUBLISH.
        downstream = 4 + 52
    }
}

// MARK: - The broker

final class Broker {
    let child: ChildProcess
    let port: UInt16
    let directory: String

    init(executable: String, directory: String) {
        self.directory = directory
        port = Broker.freePort()
        var lines = [
            "# tmm-fleetload's broker: loopback, no persistence, anonymous",
            "listener \(port) 127.0.0.1",
            "allow_anonymous true",
            "persistence false",
            // The subscriber must not lose a message to mosquitto's queue limit (default 1000).
            "max_queued_messages 100000",
            "log_dest file \(directory)/mosquitto.log",
            "log_type error", "log_type warning", "log_type notice",
        ]
        // As root, mosquitto drops to the user `mosquitto`, who cannot write this directory.
        if geteuid() == 0 { lines.insert("user root", at: 1) }
        let config = directory + "/mosquitto.conf"
        let text = lines.joined(separator: "\n") + "\n"
        let fd = open(config, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { fail("cannot write \(config)") }
        _ = text.withCString { write(fd, $0, strlen($0)) }
        close(fd)
        let output = open(directory + "/mosquitto.out", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        do {
            child = try ChildProcess(executable: executable, arguments: ["-c", config], logDescriptor: output)
        } catch {
            fail("cannot start \(executable): \(error)")
        }
        close(output)
        runningBroker.store(child.pid, ordering: .relaxed)
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while !Broker.accepts(port) {
            if child.poll() != nil || monotonicNanoseconds() > deadline {
                fail("mosquitto did not start on port \(port); see \(directory)/mosquitto.out and .log")
            }
            sleep(nanoseconds: 10_000_000)
        }
    }

    func stop() {
        _ = child.stop()
        runningBroker.store(0, ordering: .relaxed)
    }

    static func freePort() -> UInt16 {
        let fd = socket(AF_INET, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { fail("no free port on 127.0.0.1") }
        return UInt16(bigEndian: address.sin_port)
    }

    static func accepts(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

// MARK: - The subscriber

/// The fleet's backend: one libmosquitto client, QoS 1 on `fleetload/+/location`, on its own
/// thread; records each delivery's submit time (from the payload) and latency.
final class Subscriber: Sendable {
    struct Sample {
        var sent: Int64
        var latency: Int64
    }
    struct State {
        var subscribed = false
        var failure: String?
        var samples: [Sample] = []
        var malformed = 0
    }

    let state = Mutex(State())
    let stopping = Atomic<Bool>(false)
    let stampOffset: Int
    let stampWidth: Int
    private let thread = Mutex<OSThread?>(nil)

    init(port: UInt16, payload: Payload) {
        stampOffset = payload.stampOffset
        stampWidth = payload.stampWidth
        let started: OSThread
        do {
            started = try OSThread(name: "fleetload-sub") { [self] in run(port: port) }
        } catch {
            fail("cannot start the subscriber's thread: \(error)")
        }
        thread.withLock { $0 = started }
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while true {
            let (ready, failure) = state.withLock { ($0.subscribed, $0.failure) }
            if let failure { fail("subscriber: \(failure)") }
            if ready { return }
            if monotonicNanoseconds() > deadline { fail("subscriber: no SUBACK within 10 s") }
            sleep(nanoseconds: 5_000_000)
        }
    }

    var kernelID: pid_t? { thread.withLock { $0?.kernelID } }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        let running = thread.withLock { current -> OSThread? in
            defer { current = nil }
            return current
        }
        running?.join()
    }

    private func run(port: UInt16) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let handle = mosquitto_new("fleetload-subscriber", true, context) else {
            state.withLock { $0.failure = "mosquitto_new failed" }
            return
        }
        defer { mosquitto_destroy(handle) }
        mosquitto_connect_callback_set(handle) { handle, context, code in
            let subscriber = Subscriber.from(context)
            guard code == 0 else {
                subscriber.state.withLock { $0.failure = "CONNACK \(code)" }
                return
            }
            _ = mosquitto_subscribe(handle, nil, "fleetload/+/location", 1)
        }
        mosquitto_subscribe_callback_set(handle) { _, context, _, _, _ in
            Subscriber.from(context).state.withLock { $0.subscribed = true }
        }
        mosquitto_message_callback_set(handle) { _, context, message in
            let now = nowMicroseconds()
            let subscriber = Subscriber.from(context)
            guard let message, let payload = message.pointee.payload else { return }
            let bytes = UnsafeRawBufferPointer(start: payload, count: Int(message.pointee.payloadlen))
            let sent = Payload.stamp(in: bytes, offset: subscriber.stampOffset, width: subscriber.stampWidth)
            subscriber.state.withLock { state in
                if let sent {
                    state.samples.append(Sample(sent: sent, latency: now - sent))
                } else {
                    state.malformed += 1
                }
            }
        }
        _ = mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)
        let code = mosquitto_connect(handle, "127.0.0.1", CInt(port), 30)
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            state.withLock { $0.failure = "connect: " + String(cString: mosquitto_strerror(code)) }
            return
        }
        // poll(2), as MQTTLink does: mosquitto_loop uses select(2), which refuses a descriptor
        // above 1023 (a thousand boxes' sockets come first).
        while !stopping.load(ordering: .relaxed) {
            let socket = mosquitto_socket(handle)
            guard socket >= 0 else {
                state.withLock { $0.failure = "the connection to the broker was lost" }
                return
            }
            var events = Int16(POLLIN)
            if mosquitto_want_write(handle) { events |= Int16(POLLOUT) }
            var poller = pollfd(fd: socket, events: events, revents: 0)
            _ = poll(&poller, 1, 100)
            var result = MOSQ_ERR_SUCCESS.rawValue
            if poller.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { result = mosquitto_loop_read(handle, 1) }
            if result == MOSQ_ERR_SUCCESS.rawValue, mosquitto_want_write(handle) {
                result = mosquitto_loop_write(handle, 1)
            }
            if result == MOSQ_ERR_SUCCESS.rawValue { result = mosquitto_loop_misc(handle) }
            if result != MOSQ_ERR_SUCCESS.rawValue {
                state.withLock { $0.failure = "loop: " + String(cString: mosquitto_strerror(result)) }
                return
            }
        }
        mosquitto_disconnect(handle)
    }

    static func from(_ context: UnsafeMutableRawPointer?) -> Subscriber {
        Unmanaged<Subscriber>.fromOpaque(context!).takeUnretainedValue()
    }
}

// MARK: - One measurement

struct Measurement {
    var boxes = 0
    var expected = 0
    var delivered = 0
    var p50 = 0.0, p99 = 0.0, maximum = 0.0  // ms
    /// CPU over the window, nanoseconds.
    var linksCPU: Int64 = 0, submitCPU: Int64 = 0, subscriberCPU: Int64 = 0, processCPU: Int64 = 0
    var brokerCPU: Int64 = 0
    var window: Int64 = 0
    var brokerRSS = 0, brokerHWM = 0
    var loopbackBytes: Int64 = 0, loopbackPackets: Int64 = 0
    var connectSeconds = 0.0
    var spooled = 0, lost = 0, acknowledged = 0, published = 0

    /// CPU per box as a percentage of one core.
    var perBoxPercent: Double { Double(linksCPU + submitCPU) * 100 / Double(window) / Double(boxes) }
    /// CPU per message, microseconds (links + submit).
    var perMessageMicros: Double { expected == 0 ? 0 : Double(linksCPU + submitCPU) / 1000 / Double(expected) }
    var brokerPercent: Double { Double(brokerCPU) * 100 / Double(window) }
    var brokerMicrosPerMessage: Double { expected == 0 ? 0 : Double(brokerCPU) / 1000 / Double(expected) }
    var subscriberPercent: Double { Double(subscriberCPU) * 100 / Double(window) }
}

func percentile(_ sorted: [Int64], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
    return Double(sorted[max(0, index)]) / 1000
}

func measure(boxes: Int, options: Options, payload: Payload, scratch: String, run: Int) -> Measurement {
    let directory = scratch + "/n\(boxes)-run\(run)"
    mkdir(directory, 0o755)
    mkdir(directory + "/spool", 0o755)
    let broker = Broker(executable: options.mosquitto, directory: directory)
    let log = Logger.standardError(program: "tmm-fleetload", level: .error)
    var links: [MQTTLink] = []
    links.reserveCapacity(boxes)
    for _ in 0..<boxes {
        do { links.append(try MQTTLink(log: log)) } catch {
            fail("box \(links.count + 1) of \(boxes): cannot make its link's thread: \(error)")
        }
    }
    let subscriber = Subscriber(port: broker.port, payload: payload)
    let connectStart = monotonicNanoseconds()
    for (index, link) in links.enumerated() {
        let clientID = "fleetload-\(index)"
        let will = Array(#"{"online":false,"reason":"connection lost"}"#.utf8)
        let settings = MQTTLinkSettings(
            host: "127.0.0.1", port: broker.port, user: nil, password: nil, usesTLS: false, authorityFile: nil,
            certificateFile: nil, keyFile: nil, clientID: clientID, topicPrefix: "fleetload/\(index)",
            lastWill: will, brokerDescription: "mqtt://127.0.0.1:\(broker.port)")
        link.updateStatus(Array(#"{"online":true,"clientId":"\#(clientID)"}"#.utf8))
        do {
            try link.start(
                settings: settings, spoolDirectory: directory + "/spool/\(index)", spoolLimit: 1 << 20)
        } catch {
            fail("box \(index): \(error)")
        }
    }
    let connectDeadline = monotonicNanoseconds() + 60_000_000_000
    while links.contains(where: { $0.report.state != .connected }) {
        if monotonicNanoseconds() > connectDeadline {
            let connected = links.filter { $0.report.state == .connected }.count
            fail("only \(connected) of \(boxes) boxes connected within 60 s")
        }
        sleep(nanoseconds: 20_000_000)
    }
    var result = Measurement()
    result.boxes = boxes
    result.connectSeconds = Double(monotonicNanoseconds() - connectStart) / 1e9

    // The schedule: message k (all boxes) at start + k / (N R); box k mod N.
    let interval = 1e9 / (options.rate * Double(boxes))
    let start = monotonicNanoseconds() + 50_000_000
    let windowStart = start + Int64(options.warmup * 1e9)
    let windowEnd = windowStart + Int64(options.duration * 1e9)
    let linkThreads = threads(named: "mqtt")
    guard linkThreads.count >= boxes else { fail("found \(linkThreads.count) mqtt threads for \(boxes) boxes") }
    let subscriberTID = subscriber.kernelID ?? 0
    struct Snapshot {
        var links: Int64 = 0, submit: Int64 = 0, subscriber: Int64 = 0, process: Int64 = 0, broker: Int64 = 0
        var at: Int64 = 0
        var loopback: (bytes: Int64, packets: Int64) = (0, 0)
    }
    func snapshot() -> Snapshot {
        Snapshot(
            links: linkThreads.reduce(0) { $0 + (threadCPUNanoseconds(tid: $1) ?? 0) },
            submit: Int64(threadCPUNanoseconds()), subscriber: threadCPUNanoseconds(tid: subscriberTID) ?? 0,
            process: ownProcessCPUNanoseconds(), broker: processCPUNanoseconds(broker.child.pid) ?? 0,
            at: monotonicNanoseconds(), loopback: loopbackCounters())
    }
    var before: Snapshot?
    var after: Snapshot?
    var windowSamplesStart = Int64.max
    var k: Int64 = 0
    var submittedInWindow = 0
    var refused = 0
    while true {
        let due = start + Int64((Double(k) * interval).rounded())
        if due >= windowEnd { break }
        if before == nil, due >= windowStart {
            before = snapshot()
            windowSamplesStart = (due - baseNanoseconds) / 1000
        }
        var now = monotonicNanoseconds()
        if now < due {
            var wake = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nil) == EINTR {}
            now = monotonicNanoseconds()
        }
        let box = Int(k % Int64(boxes))
        let message = FleetMessage(
            topic: .location, payload: payload.stamped(nowMicroseconds()), unixMilliseconds: wallClockMilliseconds())
        if !links[box].submit(message) { refused += 1 }
        if due >= windowStart { submittedInWindow += 1 }
        k += 1
    }
    after = snapshot()
    let memory = memoryKiB(broker.child.pid)
    let windowSamplesEnd = (windowEnd - baseNanoseconds) / 1000

    // Deliveries still on their way: up to 5 s.
    let drainDeadline = monotonicNanoseconds() + 5_000_000_000
    var inWindow: [Int64] = []
    while true {
        inWindow = subscriber.state.withLock { state in
            state.samples.filter { $0.sent >= windowSamplesStart && $0.sent < windowSamplesEnd }.map(\.latency)
        }
        if inWindow.count >= submittedInWindow || monotonicNanoseconds() > drainDeadline { break }
        sleep(nanoseconds: 50_000_000)
    }
    for link in links {
        let report = link.report
        result.spooled += report.spool.spooled
        result.lost += report.lost
        result.published += report.published
        result.acknowledged += report.acknowledged
    }
    result.lost += refused
    inWindow.sort()
    result.expected = submittedInWindow
    result.delivered = inWindow.count
    result.p50 = percentile(inWindow, 0.50)
    result.p99 = percentile(inWindow, 0.99)
    result.maximum = inWindow.last.map { Double($0) / 1000 } ?? 0
    if let before, let after {
        result.linksCPU = after.links - before.links
        result.submitCPU = after.submit - before.submit
        result.subscriberCPU = after.subscriber - before.subscriber
        result.processCPU = after.process - before.process
        result.brokerCPU = after.broker - before.broker
        result.window = after.at - before.at
        result.loopbackBytes = after.loopback.bytes - before.loopback.bytes
        result.loopbackPackets = after.loopback.packets - before.loopback.packets
    }
    result.brokerRSS = memory.resident
    result.brokerHWM = memory.peak

    // Stop the links in parallel (each waits for its in-flight PUBACKs, then disconnects).
    let stoppers = (0..<2).compactMap { part -> OSThread? in
        let share = links.enumerated().filter { $0.offset % 2 == part }.map(\.element)
        return try? OSThread(name: "fleetload-stop") { for link in share { link.stop(finalStatus: nil) } }
    }
    for stopper in stoppers { stopper.join() }
    subscriber.stop()
    broker.stop()
    return result
}

// MARK: - Main

let options = parseOptions(CommandLine.arguments)
let descriptors = raiseOpenFileLimit()
// Per box: the socket, the link's wake-up eventfd, the spool's directory and segment; mosquitto
// (which inherits the limit) needs one per connection.
let needed = (options.boxes.max() ?? 0) * 4 + 64
if descriptors < needed {
    fail("the open-file limit is \(descriptors), \(needed) needed for \(options.boxes.max() ?? 0) boxes (ulimit -n)")
}
var payloadText = builtInPayload
if let file = options.payloadFile {
    guard let text = readSmallFile(file), !text.isEmpty else { fail("cannot read \(file)") }
    payloadText = text
}
let payload = Payload(payloadText)
var scratchTemplate = Array("/tmp/tmm-fleetload-XXXXXX".utf8CString)
guard let made = mkdtemp(&scratchTemplate) else { fail("cannot make a scratch directory in /tmp") }
let scratch = String(cString: made)
signal(SIGPIPE, SIG_IGN)

// A real daemon's topic (the default prefix `tmm-bridge/<hostname>`, a 16-character host name).
let realTopic = "tmm-bridge/" + String(repeating: "h", count: 16) + "/location"
let wire = WireBytes(payload: payload.bytes.count, topic: realTopic.utf8.count)
say(
    "tmm-fleetload: boxes \(options.boxes.map(String.init).joined(separator: ",")), \(fixed(options.rate, 1)) Hz, "
        + "warm-up \(fixed(options.warmup, 0)) s, window \(fixed(options.duration, 0)) s, \(options.runs) run(s); "
        + "payload \(payload.bytes.count) bytes; open-file limit \(descriptors); scratch \(scratch)")

var results: [Int: [Measurement]] = [:]
for run in 1...options.runs {
    for boxes in options.boxes {
        let m = measure(boxes: boxes, options: options, payload: payload, scratch: scratch, run: run)
        // The loopback counters are the machine's: other traffic on it counts too.
        func perMessage(_ total: Int64) -> Double { m.expected == 0 ? 0 : Double(total) / Double(m.expected) }
        let load = readSmallFile("/proc/loadavg")?.split(separator: " ").first ?? "?"
        results[boxes, default: []].append(m)
        say(
            "RESULT boxes=\(boxes) rate=\(fixed(options.rate, 2)) run=\(run) expected=\(m.expected) "
                + "delivered=\(m.delivered) p50_ms=\(fixed(m.p50, 3)) p99_ms=\(fixed(m.p99, 3)) "
                + "max_ms=\(fixed(m.maximum, 3)) box_cpu_pct=\(fixed(m.perBoxPercent, 4)) "
                + "box_cpu_us_per_msg=\(fixed(m.perMessageMicros, 1)) "
                + "links_cpu_ms=\(fixed(Double(m.linksCPU) / 1e6, 1)) "
                + "submit_cpu_ms=\(fixed(Double(m.submitCPU) / 1e6, 1)) "
                + "subscriber_cpu_pct=\(fixed(m.subscriberPercent, 2)) "
                + "process_cpu_ms=\(fixed(Double(m.processCPU) / 1e6, 1)) "
                + "broker_cpu_pct=\(fixed(m.brokerPercent, 2)) "
                + "broker_us_per_msg=\(fixed(m.brokerMicrosPerMessage, 1)) broker_rss_kib=\(m.brokerRSS) "
                + "broker_hwm_kib=\(m.brokerHWM) "
                + "lo_bytes_per_msg=\(fixed(perMessage(m.loopbackBytes), 0)) "
                + "lo_packets_per_msg=\(fixed(perMessage(m.loopbackPackets), 1)) "
                + "connect_s=\(fixed(m.connectSeconds, 2)) published=\(m.published) acknowledged=\(m.acknowledged) "
                + "spooled=\(m.spooled) lost=\(m.lost) load=\(load)"
        )
    }
}

func column(_ rows: [Measurement], _ value: (Measurement) -> Double) -> Double { median(rows.map(value)) }

say("")
say(
    "Medians of \(options.runs) run(s); \(fixed(options.rate, 1)) Hz per box, QoS 1, \(payload.bytes.count)-byte "
        + "LocationV2 payload, mosquitto on loopback (persistence off), \(fixed(options.duration, 0)) s windows.")
say("Box CPU = the links' mqtt threads + the submitting thread, per box; latency = submit to subscriber delivery.")
say("")
say(
    "| boxes | delivered/expected | p50 ms | p99 ms | max ms | CPU/box % | CPU/msg µs | broker CPU % "
        + "| broker µs/msg | broker RSS MiB | subscriber CPU % |")
say("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for boxes in options.boxes {
    let rows = results[boxes] ?? []
    let delivered = rows.reduce(0) { $0 + $1.delivered }
    let expected = rows.reduce(0) { $0 + $1.expected }
    say(
        "| \(boxes) | \(delivered)/\(expected) | \(fixed(column(rows) { $0.p50 }, 2)) "
            + "| \(fixed(column(rows) { $0.p99 }, 2)) | \(fixed(column(rows) { $0.maximum }, 1)) "
            + "| \(fixed(column(rows) { $0.perBoxPercent }, 3)) | \(fixed(column(rows) { $0.perMessageMicros }, 0)) "
            + "| \(fixed(column(rows) { $0.brokerPercent }, 2)) "
            + "| \(fixed(column(rows) { $0.brokerMicrosPerMessage }, 1)) "
            + "| \(fixed(column(rows) { Double($0.brokerRSS) / 1024 }, 1)) "
            + "| \(fixed(column(rows) { $0.subscriberPercent }, 2)) |")
}
say("")
say(
    "wire (computed, one message, topic \(realTopic.utf8.count) bytes, IPv4+TCP with timestamps, MTU 1500): "
        + "PUBLISH \(wire.publish) bytes in \(wire.segments) segment(s); box → broker \(wire.upstream) bytes "
        + "(PUBLISH + headers + the ACK of the PUBACK), broker → box \(wire.downstream) bytes (PUBACK + ACK)")
let perSecond = Double(wire.upstream + wire.downstream) * options.rate
say(
    "per box at \(fixed(options.rate, 1)) Hz: \(fixed(perSecond, 0)) bytes/s both ways, "
        + "\(fixed(perSecond * 86400 * 30 / 1e9, 2)) GB per 30-day month; 1000 boxes: "
        + "\(fixed(perSecond * 1000 * 8 / 1e6, 2)) Mbit/s, \(fixed(perSecond * 1000 * 86400 * 30 / 1e12, 2)) TB/month")
say(
    "RESULT wire payload=\(payload.bytes.count) topic=\(realTopic.utf8.count) publish=\(wire.publish) "
        + "segments=\(wire.segments) upstream=\(wire.upstream) downstream=\(wire.downstream)")
if !options.keep {
    var pid: pid_t = 0
    var arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/rm"), strdup("-rf"), strdup(scratch), nil]
    if posix_spawn(&pid, "/bin/rm", nil, nil, &arguments, environ) == 0 {
        var status: CInt = 0
        waitpid(pid, &status, 0)
    }
    for pointer in arguments { free(pointer) }
} else {
    say("scratch kept: \(scratch)")
}
