// tmm-latency: how long a sentence takes from a receiver's tty to the bridge, and how much of
// that is the bridge's own.
//
// One process, one clock (CLOCK_MONOTONIC): a pty plays a receiver at a fixed epoch rate; a
// private gpsd reads it; two clients of that gpsd record when each sentence arrives:
// - the baseline: a plain gpsd client (a TCP socket with ?WATCH={"nmea":true}, no libgps),
//   which is gpsd's own delivery;
// - the bridge: GPSDSession (libgps) feeding the bridge's GPSDEpochConsumer (zero-copy parse,
//   epoch assembly) with its sentence hook.
// For each sentence: write → baseline arrival, write → parsed in the bridge. The bridge's own
// share is the difference of the two medians. Usage: tmm-latency [EPOCHS] [HZ]
import GNSS
import GPSD
import Input
import InputLoop
import Logging
import Glibc
import Posix
import Synchronization

let arguments = CommandLine.arguments
let epochCount = arguments.count > 1 ? Int(arguments[1]) ?? 600 : 600
let rate = arguments.count > 2 ? Int(arguments[2]) ?? 20 : 20

/// A 10 Hz RTK cycle shape (GGA + GST + RMC), with checksums, for epoch `n`.
func epoch(_ n: Int) -> [[UInt8]] {
    let tenths = n % 864_000
    let h = tenths / 36_000, m = tenths / 600 % 60, s = tenths / 10 % 60, t = tenths % 10
    func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
    let time = "\(two(h))\(two(m))\(two(s)).\(t)0"
    let bodies = [
        "GNGGA,\(time),4807.0380000,N,01131.0020000,E,4,14,0.62,545.400,M,47.321,M,1.0,0123",
        "GNGST,\(time),0.012,0.011,0.009,45.0,0.011,0.009,0.018",
        "GNRMC,\(time),A,4807.0380000,N,01131.0020000,E,0.012,,201125,,,R,V",
    ]
    return bodies.map { body in
        var sum: UInt8 = 0
        for byte in body.utf8 { sum ^= byte }
        let hex = Array("0123456789ABCDEF".utf8)
        return Array("$\(body)*".utf8) + [hex[Int(sum >> 4)], hex[Int(sum & 15)], 13, 10]
    }
}

/// Arrival times recorded by one consumer, in order.
final class Arrivals: Sendable {
    private let times = Mutex<[Int64]>([])
    func record(_ t: Int64) { times.withLock { $0.append(t) } }
    var all: [Int64] { times.withLock { $0 } }
}

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func format(_ ms: Double) -> String {
    let scaled = (ms * 1000).rounded() / 1000
    return String(scaled)
}

func fail(_ message: String) -> Never {
    let text = "tmm-latency: \(message)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(1)
}

let runtime = "/tmp/tmm-latency-\(getpid())"
mkdir(runtime, 0o755)
defer { _ = system("rm -rf \(runtime)") }

let gpsdConfiguration: PrivateGPSD.Configuration
do {
    gpsdConfiguration = try PrivateGPSD.Configuration.inRuntimeDirectory(runtime)
} catch {
    fail("\(error)")
}
let gpsd = PrivateGPSD(gpsdConfiguration, log: Logger(format: .plain(program: ""), level: .error) { _ in })
do { try gpsd.start() } catch { fail("\(error)") }

// Baseline: a plain gpsd client on its own thread.
let baseline = Arrivals()
let plain: StreamSocket
do {
    plain = try StreamSocket.connect(loopbackPort: gpsdConfiguration.port)
    try plain.descriptor.writeAll("?WATCH={\"enable\":true,\"nmea\":true}\n")
} catch {
    fail("plain client: \(error)")
}
let plainFD = plain.descriptor.rawValue
let plainThread = try OSThread(name: "plain-client") {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(plainFD, $0.baseAddress, $0.count) }
        if count <= 0 { return }
        let now = monotonicNanoseconds()
        for i in 0..<count where buffer[i] == UInt8(ascii: "$") { baseline.record(now) }
    }
}

// The bridge's input side.
let bridge = Arrivals()
let inbox = try Inbox<ReceiverInputEvent>(capacity: 100_000)
var configuration = GPSDSession.Configuration(port: gpsdConfiguration.port)
configuration.controlSocket = gpsdConfiguration.controlSocket
let session = GPSDSession(configuration, log: Logger(format: .plain(program: ""), level: .error) { _ in })
try session.start(feeding: GPSDEpochConsumer(inbox: inbox, sentenceObserver: { bridge.record($0) }))

let pty = try Pseudoterminal()
do { try session.addDevice(pty.devicePath) } catch { fail("\(error)") }
sleep(nanoseconds: 800_000_000)  // gpsd flushes a newly opened tty

// Warm-up epochs, then discard what they recorded.
var written: [Int64] = []
let period = Int64(1_000_000_000 / rate)
for n in 0..<20 {
    for sentence in epoch(n) { try pty.controller.writeAll(sentence) }
    sleep(nanoseconds: period)
}
sleep(nanoseconds: 300_000_000)
let skipBaseline = baseline.all.count
let skipBridge = bridge.all.count

var next = monotonicNanoseconds()
for n in 20..<(20 + epochCount) {
    for sentence in epoch(n) {
        written.append(monotonicNanoseconds())
        try pty.controller.writeAll(sentence)
        // A receiver streams a burst at serial speed; a small gap keeps sentences distinct.
        sleep(nanoseconds: 200_000)
    }
    next += period
    sleep(nanoseconds: next - monotonicNanoseconds())
}
sleep(nanoseconds: 500_000_000)
session.stop()
gpsd.stop()
plainThread.join()

let base = Array(baseline.all.dropFirst(skipBaseline))
let ours = Array(bridge.all.dropFirst(skipBridge))
let n = min(written.count, base.count, ours.count)
guard n > 0, base.count == written.count, ours.count == written.count else {
    fail("sentence counts differ: written \(written.count), baseline \(base.count), bridge \(ours.count)")
}
let gpsdDelivery = (0..<n).map { Double(base[$0] - written[$0]) / 1e6 }
let bridgeDelivery = (0..<n).map { Double(ours[$0] - written[$0]) / 1e6 }
let share = (0..<n).map { Double(ours[$0] - base[$0]) / 1e6 }
print("sentences: \(n) (\(epochCount) epochs at \(rate) Hz, 3 sentences each)")
print("| path | median ms | p90 ms | p99 ms |")
print("|---|---|---|---|")
print(
    "| pty → gpsd → plain client (baseline) | \(format(median(gpsdDelivery))) | "
        + "\(format(percentile(gpsdDelivery, 0.9))) | \(format(percentile(gpsdDelivery, 0.99))) |"
)
print(
    "| pty → gpsd → bridge, parsed | \(format(median(bridgeDelivery))) | "
        + "\(format(percentile(bridgeDelivery, 0.9))) | \(format(percentile(bridgeDelivery, 0.99))) |"
)
print(
    "| bridge's own share (per sentence, bridge − baseline) | \(format(median(share))) | "
        + "\(format(percentile(share, 0.9))) | \(format(percentile(share, 0.99))) |"
)
