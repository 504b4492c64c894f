import Glibc
import Posix

// What the servers cost, read from /proc: CPU time (utime + stime of all threads) and memory
// (VmRSS now, VmHWM the peak), plus the kernel's view of one TCP connection for the slow-client
// run. Read a few times per measurement, never on the hot path.

/// The whole of a (small) file, or nil when it cannot be read.
func readSmallFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        result += chunk[0..<n]
    }
    return result
}

/// CPU time of a process, all threads, in nanoseconds (utime + stime from /proc/PID/stat).
func processCPUNanoseconds(_ pid: pid_t) -> Int64? {
    guard let stat = readSmallFile("/proc/\(pid)/stat"),
          let close = stat.lastIndex(of: UInt8(ascii: ")"))
    else { return nil }
    // After "pid (comm)": field 3 (state) is the first; utime and stime are fields 14 and 15.
    let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "))
    guard fields.count > 12, let user = Int64(String(decoding: fields[11], as: UTF8.self)),
          let system = Int64(String(decoding: fields[12], as: UTF8.self))
    else { return nil }
    let ticks = Int64(sysconf(Int32(_SC_CLK_TCK)))
    return (user + system) * 1_000_000_000 / ticks
}

/// This process's CPU time (all threads), in nanoseconds.
func ownCPUNanoseconds() -> Int64 {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    func ns(_ t: timeval) -> Int64 { Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_usec) * 1000 }
    return ns(usage.ru_utime) + ns(usage.ru_stime)
}

/// Resident memory of a process in KiB: now (VmRSS) and the peak (VmHWM).
struct MemoryUse {
    var residentKiB = 0
    var peakKiB = 0

    init?(pid: pid_t) {
        guard let status = readSmallFile("/proc/\(pid)/status") else { return nil }
        for line in status.split(separator: UInt8(ascii: "\n")) {
            let text = String(decoding: line, as: UTF8.self)
            func value() -> Int { Int(text.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0 }
            if text.hasPrefix("VmRSS:") { residentKiB = value() }
            if text.hasPrefix("VmHWM:") { peakKiB = value() }
        }
    }
}

/// CPU use of a process over an interval, as a percentage of one core.
struct CPUMeter {
    let pid: pid_t
    private var startCPU: Int64?
    private var startTime: Int64 = 0
    private(set) var percent: Double?

    init(pid: pid_t) { self.pid = pid }

    mutating func start() {
        startCPU = pid == getpid() ? ownCPUNanoseconds() : processCPUNanoseconds(pid)
        startTime = monotonicNanoseconds()
    }

    mutating func stop() {
        guard let startCPU else { return }
        let cpu = pid == getpid() ? ownCPUNanoseconds() : processCPUNanoseconds(pid)
        let elapsed = monotonicNanoseconds() - startTime
        guard let cpu, elapsed > 0 else { return }
        percent = Double(cpu - startCPU) * 100 / Double(elapsed)
    }
}

/// The server side of one loopback TCP connection as /proc/net/tcp shows it.
struct ServerSocketView: Equatable {
    /// TCP state (1 ESTABLISHED, 4 FIN_WAIT1, 7 CLOSE, 8 CLOSE_WAIT, ...).
    var state: Int
    /// Bytes in the send queue not yet acknowledged by the peer.
    var sendQueue: Int

    var isEstablished: Bool { state == 1 }

    /// The socket bound to 127.0.0.1:`localPort` connected to 127.0.0.1:`remotePort`, or nil
    /// when the kernel no longer has it.
    static func find(localPort: UInt16, remotePort: UInt16) -> ServerSocketView? {
        guard let table = readSmallFile("/proc/net/tcp") else { return nil }
        func hex(_ port: UInt16) -> String {
            let digits = String(port, radix: 16, uppercase: true)
            return String(repeating: "0", count: 4 - digits.count) + digits
        }
        let key = Array("0100007F:\(hex(localPort)) 0100007F:\(hex(remotePort)) ".utf8)
        for line in table.split(separator: UInt8(ascii: "\n")) {
            // "   5: 0100007F:1F90 0100007F:C350 01 00000000:00000000 ..."
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let rest = line[(colon + 2)...]
            guard rest.starts(with: key) else { continue }
            let fields = rest.split(separator: UInt8(ascii: " "))
            guard fields.count > 3 else { return nil }
            let state = Int(String(decoding: fields[2], as: UTF8.self), radix: 16) ?? 0
            let queues = fields[3].split(separator: UInt8(ascii: ":"))
            let send = Int(String(decoding: queues.first ?? [], as: UTF8.self), radix: 16) ?? 0
            return ServerSocketView(state: state, sendQueue: send)
        }
        return nil
    }
}
