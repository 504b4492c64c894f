import ByteCoding
import Glibc
import Posix
import Synchronization
import TLS
import WebSocket

// All clients of one measurement, on one epoll loop (our `Selector`), in the harness's main
// thread: non-blocking sockets, level-triggered, and on every wake-up each ready socket is read
// until it is empty. One read buffer serves every client; each client keeps only its scanner's
// few integers. The receive time of a message is taken once per read, right after the read that
// completed it returned. gpsd's clients and the bridge's go through exactly the same loop.
//
// Secure clients (wss, `connect(..., secure: true)`) run a `TLSClientSession` over memory
// buffers in the same loop: the ciphertext read goes into the session, the plaintext out of it
// into the same scanners (the receive time is still that of the socket read), the session's
// output is sent at once. The server's chain is verified against `trustedAuthority` (the
// daemon's own CA), and its certificate must carry 127.0.0.1.

/// Which server a client talks to.
enum ClientKind: Sendable {
    /// A plain gpsd JSON client: `?WATCH={"enable":true,"json":true}`, one TPV line per epoch.
    case gpsd
    /// A TMM LocationV2 WebSocket client of `path` (e.g. `/locationV2`).
    case webSocket(path: String)
}

/// A harness failure (not a server's result): it ends the run with status 1.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    /// Set when the server closed a new client before answering it after this many clients
    /// were open (gpsd's subscriber limit): a fact about the server, not a harness failure.
    var refusedAfter: Int?

    init(_ description: String, refusedAfter: Int? = nil) {
        self.description = description
        self.refusedAfter = refusedAfter
    }
}

private enum Phase: UInt8 {
    /// Non-blocking connect in progress.
    case connecting
    /// Connected, TLS handshake under way (secure clients): the request waits in `request`.
    case handshaking
    /// Connected and request sent; waiting for the 101 (WebSocket) or the first line (gpsd).
    case awaitingReply
    case open
    case closed
}

private struct Client {
    var fd: CInt
    var phase = Phase.connecting
    let kind: ClientKind
    /// False for the slow client: after its handshake nothing is read until it is drained.
    var reads: Bool
    /// Index into the arrival table, or -1 when this client is not measured.
    var slot: Int
    var key = ""
    var reply: [UInt8] = []
    /// Secure clients: the session, and the request sent once it is established.
    var tls: TLSClientSession?
    var secure = false
    var request: [UInt8] = []
    var gpsd = GPSDLineScanner()
    var webSocket = WebSocketFrameScanner()
    var bytesReceived = 0
    var openedAt: Int64 = 0
    /// When the loop saw end of file, a reset or a hang-up.
    var endedAt: Int64 = 0
    var failure: String?
}

/// First receive times per (measured client, epoch); 0 = not (yet) received.
final class ArrivalTable {
    let clients: Int
    let epochs: Int
    private let times: UnsafeMutableBufferPointer<Int64>
    private(set) var duplicates = 0

    init(clients: Int, epochs: Int) {
        self.clients = clients
        self.epochs = epochs
        times = .allocate(capacity: max(1, clients * epochs))
        times.initialize(repeating: 0)
    }

    deinit { times.deallocate() }

    @inline(__always)
    func record(slot: Int, epoch: Int, at time: Int64) {
        let index = slot * epochs + epoch
        if times[index] == 0 { times[index] = time } else { duplicates += 1 }
    }

    subscript(slot: Int, epoch: Int) -> Int64 { times[slot * epochs + epoch] }
}

@available(*, unavailable, message: "the client loop belongs to the harness's main thread")
extension ArrivalTable: Sendable {}

final class ClientLoop {
    private let selector: Selector
    private var clients: [Client] = []
    private var indexByDescriptor: [Int32]
    private var events: [SelectorEvent] = []
    private let scratch: UnsafeMutableRawBufferPointer
    /// Plaintext out of a secure client's session (a record's worth at a time).
    private let plaintext: UnsafeMutableRawBufferPointer
    /// What secure clients trust (the CA of the bridge under test); set before connecting them.
    var trustedAuthority: TLSClientContext?
    private var schedule: Schedule?
    private var arrivals: ArrivalTable?
    /// Per client: messages with a time, and the last time seen. Kept apart from `clients` so
    /// the scanners' report closure can update them while a scanner (in `clients`) is running.
    private var messageCounts: [Int] = []
    private var lastTimes: [Int] = []
    /// Messages whose time names no epoch of the current schedule (between measurements).
    private(set) var unscheduled = 0

    /// A loop for descriptors below `descriptorLimit`.
    init(descriptorLimit: Int) throws(HarnessError) {
        do {
            selector = try Selector(maxEventsPerWait: 1024)
        } catch {
            throw HarnessError("epoll: \(error)")
        }
        indexByDescriptor = [Int32](repeating: -1, count: descriptorLimit)
        scratch = .allocate(byteCount: 256 * 1024, alignment: 16)
        plaintext = .allocate(byteCount: 64 * 1024, alignment: 16)
        events.reserveCapacity(1024)
    }

    deinit {
        closeAll()
        scratch.deallocate()
        plaintext.deallocate()
    }

    var clientCount: Int { clients.count }

    private static let closedBeforeReply = "closed by the server before its reply"

    // MARK: Connecting

    /// Connects `count` clients of `kind` to 127.0.0.1:`port`, at most `inFlight` unanswered at
    /// a time (gpsd listens with a backlog of 5), and waits until all are open.
    func connect(
        count: Int, kind: ClientKind, port: UInt16, inFlight: Int, secure: Bool = false,
        timeoutSeconds: Int = 60
    ) throws(HarnessError) {
        if secure && trustedAuthority == nil { throw HarnessError("secure clients need trustedAuthority") }
        let first = clients.count
        let deadline = monotonicNanoseconds() + Int64(timeoutSeconds) * 1_000_000_000
        var started = 0
        while true {
            var waiting = 0
            var open = 0
            for index in first..<clients.count {
                switch clients[index].phase {
                case .connecting, .handshaking, .awaitingReply: waiting += 1
                case .open: open += 1
                case .closed:
                    let failure = clients[index].failure ?? "closed"
                    let refused = failure.hasPrefix(Self.closedBeforeReply) ? index - first : nil
                    throw HarnessError("client \(index - first + 1) of \(count): \(failure)", refusedAfter: refused)
                }
            }
            if open == count { return }
            while started < count && waiting < inFlight {
                try addClient(kind: kind, port: port, receiveBuffer: nil, reads: true, secure: secure)
                started += 1
                waiting += 1
            }
            guard monotonicNanoseconds() < deadline else {
                throw HarnessError("only \(open) of \(count) clients connected within \(timeoutSeconds) s")
            }
            pump(milliseconds: 5)
        }
    }

    /// Connects one WebSocket client with a small receive buffer that reads nothing after its
    /// handshake. Returns its index (for `slowClientReport`).
    func connectSlowClient(port: UInt16, path: String, receiveBuffer: Int) throws(HarnessError) -> Int {
        try addClient(kind: .webSocket(path: path), port: port, receiveBuffer: receiveBuffer, reads: false)
        let index = clients.count - 1
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while clients[index].phase != .open {
            if clients[index].phase == .closed {
                throw HarnessError("slow client: \(clients[index].failure ?? "closed")")
            }
            guard monotonicNanoseconds() < deadline else { throw HarnessError("slow client: no handshake in 10 s") }
            pump(milliseconds: 5)
        }
        return index
    }

    private func addClient(
        kind: ClientKind, port: UInt16, receiveBuffer: Int?, reads: Bool, secure: Bool = false
    )
        throws(HarnessError)
    {
        let fd = socket(
            AF_INET, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(Errno.current) (raise RLIMIT_NOFILE?)") }
        guard Int(fd) < indexByDescriptor.count else {
            Glibc.close(fd)
            throw HarnessError("descriptor \(fd) above the limit \(indexByDescriptor.count)")
        }
        if var size = receiveBuffer.map(CInt.init) {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<CInt>.size))
        }
        var one: CInt = 1
        _ = setsockopt(fd, CInt(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<CInt>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if result == -1 && errno != EINPROGRESS {
            let error = Errno.current
            Glibc.close(fd)
            throw HarnessError("connect to port \(port): \(error)")
        }
        let index = clients.count
        var client = Client(fd: fd, kind: kind, reads: reads, slot: -1)
        client.secure = secure
        clients.append(client)
        messageCounts.append(0)
        lastTimes.append(-1)
        indexByDescriptor[Int(fd)] = Int32(index)
        do {
            try selector.register(fd, interest: .writable)
        } catch {
            throw HarnessError("epoll register: \(error)")
        }
    }

    /// The connect finished: check it, send the request, wait for the reply.
    private func connected(_ index: Int) {
        let fd = clients[index].fd
        var error: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else { return end(index, failure: "connect: \(Errno(rawValue: error))") }
        let request: [UInt8]
        switch clients[index].kind {
        case .gpsd:
            request = Array("?WATCH={\"enable\":true,\"json\":true}\n".utf8)
        case .webSocket(let path):
            let nonce = (try? Random.bytes(count: 16)) ?? (0..<16).map { _ in UInt8.random(in: 0...255) }
            let key = Base64.encode(nonce.span)
            clients[index].key = key
            request = Array(
                ("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                    + "Connection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
        }
        if clients[index].secure, let context = trustedAuthority {
            do {
                let session = try TLSClientSession(context: context, serverName: "127.0.0.1")
                try session.start()
                clients[index].tls = session
            } catch {
                return end(index, failure: "TLS: \(error)")
            }
            clients[index].request = request
            clients[index].phase = .handshaking
            guard flushTLS(index) else { return end(index, failure: "sending the ClientHello: \(Errno.current)") }
            try? selector.modify(fd, interest: .readable)
            return
        }
        guard sendAll(fd, request) else { return end(index, failure: "sending the request: \(Errno.current)") }
        clients[index].phase = .awaitingReply
        try? selector.modify(fd, interest: .readable)
    }

    // MARK: The loop

    /// Waits up to `milliseconds` for events and handles them all.
    func pump(milliseconds: Int32) {
        do {
            try selector.wait(timeoutMilliseconds: milliseconds, into: &events)
        } catch {
            return
        }
        for event in events {
            guard selector.isCurrent(event) else { continue }
            let index = Int(indexByDescriptor[Int(event.descriptor)])
            guard index >= 0 else { continue }
            switch clients[index].phase {
            case .connecting:
                connected(index)
            case .handshaking, .awaitingReply, .open:
                if clients[index].reads || clients[index].phase != .open {
                    readAvailable(index)
                } else if event.isHangUp || event.isError {
                    // The slow client reads nothing: a hang-up is the server giving up on it.
                    clients[index].endedAt = monotonicNanoseconds()
                    try? selector.deregister(clients[index].fd)
                }
            case .closed:
                break
            }
        }
    }

    /// Pumps until `deadline` (CLOCK_MONOTONIC ns).
    func pump(until deadline: Int64) {
        while true {
            let left = deadline - monotonicNanoseconds()
            if left <= 0 { return }
            pump(milliseconds: Int32(min(left / 1_000_000 + 1, 50)))
        }
    }

    private func readAvailable(_ index: Int) {
        let fd = clients[index].fd
        while clients[index].phase != .closed {
            let n = read(fd, scratch.baseAddress, scratch.count)
            if n > 0 {
                let now = monotonicNanoseconds()
                clients[index].bytesReceived += n
                if let session = clients[index].tls {
                    decrypt(index, session, UnsafeRawBufferPointer(rebasing: scratch[0..<n]), at: now)
                } else {
                    consume(index, UnsafeRawBufferPointer(rebasing: scratch[0..<n]), at: now)
                }
                // A short read emptied the socket; level-triggered epoll reports anything newer.
                if n < scratch.count || !clients[index].reads { return }
            } else if n == 0 {
                return end(index, failure: clients[index].phase == .open ? nil : Self.closedBeforeReply)
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                return
            } else {
                let error = Errno.current
                // A reset before the reply is a refusal too (gpsd closes a client it has no slot for).
                let refused = clients[index].phase == .awaitingReply || clients[index].phase == .handshaking
                return end(index, failure: refused ? "\(Self.closedBeforeReply) (\(error))" : "read: \(error)")
            }
        }
    }

    /// A secure client's ciphertext: through its session into `consume`; the session's output
    /// (handshake flights) out at once, and the request once the handshake is done.
    private func decrypt(_ index: Int, _ session: TLSClientSession, _ bytes: UnsafeRawBufferPointer, at now: Int64) {
        session.receive(bytes)
        do {
            reading: while clients[index].phase != .closed {
                switch try session.readPlaintext(into: plaintext) {
                case .bytes(let count): consume(index, UnsafeRawBufferPointer(rebasing: plaintext[0..<count]), at: now)
                case .needsInput: break reading
                case .handledRecord: continue reading
                case .closed: return end(index, failure: clients[index].phase == .open ? nil : Self.closedBeforeReply)
                }
            }
        } catch {
            _ = flushTLS(index)  // the alert
            return end(index, failure: "TLS: \(error)")
        }
        guard clients[index].phase != .closed else { return }
        if clients[index].phase == .handshaking && session.isEstablished {
            clients[index].phase = .awaitingReply
            guard send(index, clients[index].request) else { return end(index, failure: "sending the request") }
            clients[index].request = []
        }
        guard flushTLS(index) else { return end(index, failure: "send: \(Errno.current)") }
    }

    /// Sends what a secure client's session has for the socket.
    private func flushTLS(_ index: Int) -> Bool {
        guard let session = clients[index].tls, session.pendingOutputCount > 0 else { return true }
        var output: [UInt8] = []
        session.takeOutput(appendingTo: &output)
        return sendAll(clients[index].fd, output)
    }

    /// Sends `bytes` to client `index` (through its session when it is secure).
    @discardableResult
    private func send(_ index: Int, _ bytes: [UInt8]) -> Bool {
        guard let session = clients[index].tls else { return sendAll(clients[index].fd, bytes) }
        var offset = 0
        while offset < bytes.count {
            let taken = (try? bytes[offset...].withUnsafeBytes { try session.writePlaintext($0) }) ?? 0
            guard taken > 0 else { return false }
            offset += taken
        }
        return flushTLS(index)
    }

    private func consume(_ index: Int, _ bytes: UnsafeRawBufferPointer, at now: Int64) {
        let slot = clients[index].slot
        switch clients[index].kind {
        case .gpsd:
            if clients[index].phase == .awaitingReply {
                clients[index].phase = .open
                clients[index].openedAt = now
            }
            clients[index].gpsd.scan(bytes) { time in arrived(index, slot, time, now) }
        case .webSocket:
            var payload = bytes
            if clients[index].phase == .awaitingReply {
                guard let rest = handshakeReply(index, bytes, at: now) else { return }
                payload = rest
            }
            clients[index].webSocket.scan(payload) { time in arrived(index, slot, time, now) }
            if !clients[index].webSocket.pendingPings.isEmpty { answerPings(index) }
        }
    }

    @inline(__always)
    private func arrived(_ index: Int, _ slot: Int, _ time: Int, _ now: Int64) {
        messageCounts[index] += 1
        lastTimes[index] = time
        guard slot >= 0, let schedule, let arrivals, let epoch = schedule.epoch(atMilliseconds: time) else {
            unscheduled += 1
            return
        }
        arrivals.record(slot: slot, epoch: epoch, at: now)
    }

    /// Collects the HTTP reply to the upgrade; checks `101` and `Sec-WebSocket-Accept`. Returns
    /// the bytes after the reply (the first frames), or nil while the reply is incomplete or
    /// when it failed (the client is then closed).
    private func handshakeReply(
        _ index: Int, _ bytes: UnsafeRawBufferPointer, at now: Int64
    )
        -> UnsafeRawBufferPointer?
    {
        let before = clients[index].reply.count
        clients[index].reply.append(contentsOf: bytes)
        let reply = clients[index].reply
        let terminator: [UInt8] = [13, 10, 13, 10]
        guard let end = reply.firstRange(of: terminator)?.upperBound else {
            if reply.count > 16_384 { self.end(index, failure: "no end of the HTTP reply in 16 KiB") }
            return nil
        }
        let head = String(decoding: reply[..<end], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let status = lines.first, status.hasPrefix("HTTP/1.1 101") else {
            let first = lines.first.map(String.init) ?? "(empty)"
            self.end(index, failure: "upgrade refused: \(first)")
            return nil
        }
        let expected = WebSocketHandshake.acceptValue(forKey: clients[index].key) { Digest.sha1($0) }
        let accept = lines.dropFirst().compactMap { line -> Substring? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            guard line[..<colon].lowercased() == "sec-websocket-accept" else { return nil }
            return line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
        }.first
        guard let accept, String(accept).split(separator: " ").first.map(String.init) == expected else {
            self.end(
                index,
                failure: "bad Sec-WebSocket-Accept \(accept.map(String.init) ?? "(missing)"), expected \(expected)")
            return nil
        }
        clients[index].phase = .open
        clients[index].openedAt = now
        clients[index].reply = []
        if !clients[index].reads { try? selector.modify(clients[index].fd, interest: []) }
        let consumedHere = end - before
        return UnsafeRawBufferPointer(rebasing: bytes[consumedHere...])
    }

    private func answerPings(_ index: Int) {
        let pings = clients[index].webSocket.pendingPings
        clients[index].webSocket.pendingPings = []
        for payload in pings {
            send(index, maskedFrame(opcode: 0xA, payload: payload))
        }
    }

    // MARK: Measurements

    /// Starts recording arrivals of `schedule`'s epochs for every open client that reads.
    /// Returns the number of measured clients.
    @discardableResult
    func beginMeasurement(_ schedule: Schedule) -> Int {
        var slots = 0
        for index in clients.indices {
            if clients[index].phase == .open && clients[index].reads {
                clients[index].slot = slots
                slots += 1
            } else {
                clients[index].slot = -1
            }
            clients[index].bytesReceived = 0
            messageCounts[index] = 0
        }
        self.schedule = schedule
        arrivals = ArrivalTable(clients: slots, epochs: schedule.count)
        unscheduled = 0
        return slots
    }

    /// Latency statistics over epochs `epochs` of the current measurement, which it ends.
    func endMeasurement(epochs: Range<Int>) -> LatencySummary {
        guard let schedule, let arrivals else { return LatencySummary() }
        let written = schedule.writeTimes.withLock { $0 }
        var summary = LatencySummary()
        var samples: [Double] = []
        samples.reserveCapacity(arrivals.clients * epochs.count)
        var bytes = 0
        var messages = 0
        for index in clients.indices where clients[index].slot >= 0 {
            let slot = clients[index].slot
            for k in epochs {
                let arrival = arrivals[slot, k]
                if arrival == 0 {
                    summary.missing += 1
                } else {
                    samples.append(Double(arrival - written[k]) / 1e6)
                }
            }
            if clients[index].phase == .closed { summary.disconnects += 1 }
            bytes += clients[index].bytesReceived
            messages += messageCounts[index]
        }
        summary.clients = arrivals.clients
        summary.duplicates = arrivals.duplicates
        summary.bytesPerMessage = messages > 0 ? bytes / messages : 0
        summary.set(samples: &samples)
        self.schedule = nil
        self.arrivals = nil
        return summary
    }

    // MARK: The slow client

    /// What the slow client got, after it was drained: reads everything the kernel kept for it,
    /// for up to `milliseconds` or until end of file.
    func drainSlowClient(_ index: Int, milliseconds: Int64) -> SlowClientReport {
        var report = SlowClientReport()
        report.hungUpBeforeDrain = clients[index].endedAt != 0
        if clients[index].phase == .open {
            clients[index].reads = true
            if report.hungUpBeforeDrain {
                // Deregistered after its hang-up; register again to read what is left.
                _ = try? selector.register(clients[index].fd, interest: .readable)
            } else {
                try? selector.modify(clients[index].fd, interest: .readable)
            }
            let deadline = monotonicNanoseconds() + milliseconds * 1_000_000
            while clients[index].phase != .closed && monotonicNanoseconds() < deadline {
                pump(milliseconds: 10)
            }
        }
        report.endOfFile = clients[index].phase == .closed && clients[index].failure == nil
        report.failure = clients[index].failure
        report.messages = clients[index].webSocket.textMessages
        report.lastTime = lastTimes[index]
        report.bytes = clients[index].bytesReceived
        report.closeCode = clients[index].webSocket.closeCode
        report.closeReason = clients[index].webSocket.closeReason
        return report
    }

    /// The local port of client `index` (to find the server's end in /proc/net/tcp).
    func localPort(_ index: Int) -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(clients[index].fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    /// When the loop saw the slow client's connection end (0: not yet).
    func endedAt(_ index: Int) -> Int64 { clients[index].endedAt }
    func openedAt(_ index: Int) -> Int64 { clients[index].openedAt }

    // MARK: Closing

    /// Closes every client (WebSocket clients send a close frame, 1000, first).
    func closeAll() {
        for index in clients.indices where clients[index].phase != .closed {
            if case .webSocket = clients[index].kind, clients[index].phase == .open {
                send(index, maskedFrame(opcode: 0x8, payload: [0x03, 0xE8]))
            }
            end(index, failure: nil)
        }
        clients.removeAll()
        messageCounts.removeAll()
        lastTimes.removeAll()
        schedule = nil
        arrivals = nil
    }

    private func end(_ index: Int, failure: String?) {
        guard clients[index].phase != .closed else { return }
        let fd = clients[index].fd
        try? selector.deregister(fd)
        Glibc.close(fd)
        indexByDescriptor[Int(fd)] = -1
        if clients[index].endedAt == 0 { clients[index].endedAt = monotonicNanoseconds() }
        clients[index].phase = .closed
        clients[index].failure = failure
    }
}

@available(*, unavailable, message: "the client loop belongs to the harness's main thread")
extension ClientLoop: Sendable {}

/// Sends all of `bytes` on a non-blocking socket whose buffer has room (requests and control
/// frames are small); false on any error or a full buffer.
@discardableResult
private func sendAll(_ fd: CInt, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let n = send(fd, raw.baseAddress! + offset, raw.count - offset, CInt(MSG_NOSIGNAL))
            if n > 0 {
                offset += n
            } else if n == -1 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }
}

/// A client-to-server frame (§5.3: "The masking key is a 32-bit value chosen at random").
private func maskedFrame(opcode: UInt8, payload: [UInt8]) -> [UInt8] {
    precondition(payload.count <= 125, "control frames only")
    let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
    var frame: [UInt8] = [0x80 | opcode, 0x80 | UInt8(payload.count)] + mask
    for (i, byte) in payload.enumerated() { frame.append(byte ^ mask[i % 4]) }
    return frame
}

/// Latency over all (client, epoch) samples of a measurement window.
struct LatencySummary {
    var clients = 0
    var samples = 0
    var missing = 0
    var duplicates = 0
    var disconnects = 0
    var bytesPerMessage = 0
    var p50 = Double.nan
    var p99 = Double.nan
    var max = Double.nan
    var min = Double.nan

    mutating func set(samples values: inout [Double]) {
        samples = values.count
        guard !values.isEmpty else { return }
        values.sort()
        p50 = values[values.count / 2]
        p99 = values[Swift.min(values.count - 1, Int(Double(values.count) * 0.99))]
        max = values[values.count - 1]
        min = values[0]
    }
}

/// What the never-reading client saw once drained.
struct SlowClientReport {
    var hungUpBeforeDrain = false
    var endOfFile = false
    var failure: String?
    var messages = 0
    var bytes = 0
    var lastTime = -1
    var closeCode: Int?
    var closeReason = ""
}
