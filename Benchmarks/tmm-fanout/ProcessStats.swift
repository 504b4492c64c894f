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
            func value() -> Int {
                Int(text.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
            }
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

/// The server side of one loopback TCP connection, as the kernel's socket diagnostics see it.
///
/// Asked through netlink (`NETLINK_SOCK_DIAG`, an exact lookup of the 4-tuple), not by reading
/// /proc/net/tcp: with 2000 sockets that file takes 6-10 ms to generate, which stalled the client
/// loop and inflated the other clients' latency in the slow-client run.
struct ServerSocketView: Equatable {
    /// TCP state (1 ESTABLISHED, 4 FIN_WAIT1, 7 CLOSE, 8 CLOSE_WAIT, ...).
    var state: Int
    /// Bytes in the send queue not yet acknowledged by the peer.
    var sendQueue: Int

    var isEstablished: Bool { state == 1 }

    /// The socket bound to 127.0.0.1:`localPort` connected to 127.0.0.1:`remotePort`, or nil
    /// when the kernel no longer has it.
    static func find(localPort: UInt16, remotePort: UInt16) -> ServerSocketView? {
        let fd = socket(AF_NETLINK, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 4)  // NETLINK_SOCK_DIAG
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // struct nlmsghdr (16 bytes) + struct inet_diag_req_v2 (56 bytes), host byte order
        // except the ports and addresses (network order).
        var request: [UInt8] = []
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { request += $0 } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { request += $0 } }
        u32(72)
        u16(20)  // SOCK_DIAG_BY_FAMILY
        u16(1)  // NLM_F_REQUEST: one socket, no dump
        u32(1)
        u32(0)
        request += [UInt8(AF_INET), UInt8(IPPROTO_TCP), 0, 0]  // family, protocol, extensions, pad
        u32(0xFFF)  // every state
        request += [UInt8(localPort >> 8), UInt8(localPort & 0xFF), UInt8(remotePort >> 8), UInt8(remotePort & 0xFF)]
        request += [127, 0, 0, 1] + [UInt8](repeating: 0, count: 12)  // source
        request += [127, 0, 0, 1] + [UInt8](repeating: 0, count: 12)  // destination
        u32(0)  // interface
        u32(0xFFFF_FFFF)  // INET_DIAG_NOCOOKIE
        u32(0xFFFF_FFFF)
        let sent = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        guard sent == request.count else { return nil }
        var reply = [UInt8](repeating: 0, count: 8192)
        var pending = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pending, 1, 1000) == 1 else { return nil }
        let n = reply.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n >= 16 else { return nil }
        func read32(_ offset: Int) -> UInt32 {
            UInt32(reply[offset]) | UInt32(reply[offset + 1]) << 8 | UInt32(reply[offset + 2]) << 16
                | UInt32(reply[offset + 3]) << 24
        }
        let type = UInt16(reply[4]) | UInt16(reply[5]) << 8
        // NLMSG_ERROR (2): the socket is gone (ENOENT). A struct inet_diag_msg follows otherwise:
        // family, state, timer, retrans, the 48-byte id, expires, rqueue, wqueue, ...
        guard type == 20, n >= 16 + 72 else { return nil }
        return ServerSocketView(state: Int(reply[17]), sendQueue: Int(read32(16 + 4 + 48 + 8)))
    }
}
