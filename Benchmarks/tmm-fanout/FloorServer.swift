import Glibc
import Posix
import TLS
import WebSocket

// The floor: what the harness, the kernel and this machine cost on their own. A second copy of
// this program (`tmm-fanout --serve-floor LISTENER PIPE`) is a WebSocket "server" that does the
// least a fan-out server can do: when the pty writer has written an epoch it sends the epoch's
// time down a pipe, and the floor patches it into one prebuilt LocationV2-sized text frame and
// send()s that same buffer to every client, nothing else (no gpsd, no parsing, no encoding, no
// queues). It is a process of its own, like the bridge, so the scheduler treats both alike (a
// thread of the harness would share its wake-ups and cores). Its clients are the same
// `ClientLoop` clients, so the floor's latency is the part of any server's latency that this
// harness and machine add, and (bridge − floor) is the bridge's own.

/// The parent's side: the listening socket and the epoch pipe, handed to the child at spawn.
final class FloorProcess {
    let port: UInt16
    private let child: ChildProcess
    private let epochWriteEnd: CInt

    /// Starts `executable --serve-floor` (this program) with a bound listener and a pipe.
    init(executable: String, logPath: String) throws(HarnessError) {
        let listenerFD: CInt
        do {
            let bound = try TCPListener.bind(address: "127.0.0.1", port: 0, backlog: 1024)
            port = bound.localPort
            // The listener is ~Copyable and closes its own descriptor: the child gets a duplicate.
            listenerFD = fcntl(bound.descriptor.rawValue, F_DUPFD_CLOEXEC, 0)
        } catch {
            throw HarnessError("floor server: \(error)")
        }
        var ends: [CInt] = [-1, -1]
        guard listenerFD >= 0, pipe(&ends) == 0 else {
            throw HarnessError("floor server: \(Errno.current)")
        }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        epochWriteEnd = ends[1]
        let log = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer {
            if log >= 0 { close(log) }
            close(listenerFD)
            close(ends[0])
        }
        do {
            child = try ChildProcess(
                executable: executable,
                arguments: [
                    "--serve-floor", String(ChildProcess.childDescriptor(forPassed: 0)),
                    String(ChildProcess.childDescriptor(forPassed: 1)),
                ],
                logDescriptor: log >= 0 ? log : nil, passing: [listenerFD, ends[0]])
        } catch {
            close(ends[1])
            throw HarnessError("floor server: cannot start \(executable): \(error)")
        }
    }

    var pid: pid_t { child.pid }

    /// The pipe the pty writer sends each epoch's time of day (ms, 8 bytes) to.
    var epochDescriptor: CInt { epochWriteEnd }

    /// Closes the pipe (the child exits at its end) and reaps the child.
    func stop() {
        close(epochWriteEnd)
        child.stop(signal: SIGTERM, graceMilliseconds: 2000)
    }
}

@available(*, unavailable, message: "the floor process is driven from the harness's main thread")
extension FloorProcess: Sendable {}

/// The child's side: serves until the epoch pipe closes. Returns the exit status.
func serveFloor(listener: CInt, epochs: CInt) -> Int32 {
    guard let selector = try? Selector(maxEventsPerWait: 1024) else { return 1 }
    _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
    _ = fcntl(epochs, F_SETFL, fcntl(epochs, F_GETFL) | O_NONBLOCK)
    _ = try? selector.register(listener, interest: .readable)
    _ = try? selector.register(epochs, interest: .readable)
    var requests: [CInt: [UInt8]] = [:]
    var open: [CInt] = []
    var frame = FloorFrame()
    var events: [SelectorEvent] = []
    var times = [Int64](repeating: 0, count: 64)
    var chunk = [UInt8](repeating: 0, count: 4096)
    var dropped = 0
    while true {
        _ = try? selector.wait(timeoutMilliseconds: -1, into: &events)
        for event in events where selector.isCurrent(event) {
            let fd = event.descriptor
            if fd == epochs {
                let n = times.withUnsafeMutableBytes { read(epochs, $0.baseAddress, $0.count) }
                if n == 0 {
                    if dropped > 0 { print("floor: \(dropped) frames did not fit a client's socket") }
                    return 0
                }
                guard n > 0 else { continue }
                for index in 0..<(n / 8) {
                    frame.setTime(millisecondsOfDay: Int(times[index]))
                    frame.bytes.withUnsafeBytes { raw in
                        for client in open {
                            let sent = send(client, raw.baseAddress, raw.count, CInt(MSG_DONTWAIT | MSG_NOSIGNAL))
                            if sent != raw.count { dropped += 1 }
                        }
                    }
                }
            } else if fd == listener {
                while true {
                    let accepted = accept(listener, nil, nil)
                    if accepted < 0 { break }
                    _ = fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK)
                    _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
                    var one: CInt = 1
                    _ = setsockopt(accepted, CInt(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<CInt>.size))
                    requests[accepted] = []
                    _ = try? selector.register(accepted, interest: .readable)
                }
            } else {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) {
                    try? selector.deregister(fd)
                    close(fd)
                    requests[fd] = nil
                    open.removeAll { $0 == fd }
                    continue
                }
                // After the handshake, what a client sends (its close frame) is ignored.
                guard n > 0, var request = requests[fd] else { continue }
                request += chunk[0..<n]
                if let response = floorHandshake(request) {
                    _ = response.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, CInt(MSG_NOSIGNAL)) }
                    open.append(fd)
                    requests[fd] = nil
                } else {
                    requests[fd] = request
                }
            }
        }
    }
}

/// The 101 response once the request head is complete, else nil.
private func floorHandshake(_ request: [UInt8]) -> [UInt8]? {
    guard let end = request.firstRange(of: [13, 10, 13, 10] as [UInt8])?.lowerBound else { return nil }
    let head = String(decoding: request[..<end], as: UTF8.self)
    for line in head.split(separator: "\r\n") {
        guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == "sec-websocket-key" else {
            continue
        }
        let key = String(line[line.index(after: colon)...])
        let accept = WebSocketHandshake.acceptValue(forKey: key) { Digest.sha1($0) }
        return WebSocketHandshake.switchingProtocolsResponse(acceptValue: accept)
    }
    return nil
}

/// A LocationV2 text frame the size of the bridge's (about 990 bytes, no satellites), with the
/// epoch's time patched in place.
private struct FloorFrame {
    private(set) var bytes: [UInt8]
    private let timeOffset: Int

    init() {
        let json =
            #"{"latitude":48.1173,"longitude":11.5167,"altitude":592.721,"speed":0.006,"bearing":null,"#
            + #""geoidModel":null,"hrms":0.014,"vrms":0.018,"satellites":14,"totalSatInUse":14,"totalSatInView":14,"#
            + #""pdop":null,"hdop":0.62,"vdop":null,"diffAge":1.0,"diffStatus":4,"diffID":"0123","#
            + #""solutionType":"RTK Fixed","receiverModel":null,"receiverSerialNumber":null,"#
            + #""mockProvider":"Trimble Mobile Manager","appVersion":"0.1.0","battery":null,"mslHeight":545.4,"#
            + #""undulation":47.321,"utcTime":000000.00,"utcTimeStamp":"2025-11-20T10:00:03.100Z","#
            + #""gpsTimeStamp":"2025-11-20T10:00:21.100Z","subscriptionType":100,"sourceReferenceFrameName":null,"#
            + #""sourceReferenceFrameEpoch":null,"targetReferenceFrameName":null,"targetReferenceFrameEpoch":null,"#
            + #""imuAlignmentStatus":0,"isTIP":false,"pitch":null,"roll":null,"yaw":null,"pitchPrecision":null,"#
            + #""rollPrecision":null,"yawPrecision":null,"igsAntenna":null,"antennaHeight":0.0,"satelliteView":[],"#
            + #""accuracy":0.014,"verticalAccuracyMeters":0.018,"sourceReferenceEpoch":null}"#
        let payload = Array(json.utf8)
        precondition(payload.count >= 126 && payload.count < 65_536, "the floor frame uses the 16-bit length")
        bytes = [0x81, 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload
        timeOffset = bytes.firstRange(of: Array(#""utcTime":"#.utf8))!.upperBound
    }

    mutating func setTime(millisecondsOfDay milliseconds: Int) {
        let hundredths = milliseconds / 10
        func put(_ offset: Int, _ value: Int) {
            bytes[timeOffset + offset] = UInt8(ascii: "0") + UInt8(value / 10)
            bytes[timeOffset + offset + 1] = UInt8(ascii: "0") + UInt8(value % 10)
        }
        put(0, hundredths / 360_000)
        put(2, hundredths / 6000 % 60)
        put(4, hundredths / 100 % 60)
        put(7, hundredths % 100)
    }
}
