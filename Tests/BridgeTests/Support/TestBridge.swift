// An in-process bridge for tests: the real BridgeServer on its own thread, on free loopback
// ports, with the input side injected (the test posts what gpsd would), plus small raw HTTP and
// WebSocket clients over real sockets.
import ByteCoding
import Foundation
import GPSD
import Glibc
import Input
import InputLoop
import Logging
import Posix
import Synchronization
import TLS
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeCore

/// A running in-process bridge. Stop it with `stop()` (also done on deinit).
final class TestBridge: Sendable {
    let ports: PortAssignment
    let input: Inbox<ReceiverInputEvent>
    let stateDirectory: String
    let runtimeDirectory: String
    /// The server's worker (registry writes): a test can hold it busy.
    let worker: Worker
    private let stopHandle: BridgeServer.StopHandle
    private let thread: OSThread
    private let logLines: LogLines
    private let stopped = Mutex(false)

    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    private struct Started: Sendable {
        var ports: PortAssignment
        var input: Inbox<ReceiverInputEvent>
        var stop: BridgeServer.StopHandle
        var worker: Worker
    }

    /// Starts a bridge with `configure` applied to a test configuration (free ports on
    /// 127.0.0.1, open registration unless changed, a fresh state and runtime directory).
    static func start(
        stateDirectory: String? = nil, gpsdControlSocket: String? = nil,
        configure: @Sendable (inout BridgeConfiguration) -> Void = { _ in }
    ) throws -> TestBridge {
        let base = NSTemporaryDirectory() + "tmm-bridge-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        let state = stateDirectory ?? base + "/state"
        let runtime = base + "/run"
        var configuration = BridgeConfiguration()
        configuration.listenAddresses = ["127.0.0.1"]
        configuration.basePorts = try freePorts()
        configuration.fallbackStart = 20_000 + UInt16(getpid() % 20_000)
        configuration.registration = .open
        configuration.discovery = false
        configure(&configuration)
        let settled = configuration

        let logs = LogLines()
        let outcome = Mutex<Result<Started, StartFailure>?>(nil)
        let thread = try OSThread(name: "test-bridge") {
            let log = Logger(format: .plain(program: ""), level: .debug) { line in
                logs.lines.withLock { $0.append(String(line.dropLast())) }
            }
            do {
                let input = try ReceiverInput.injected(gpsdControlSocket: gpsdControlSocket, log: log)
                let environment = BridgeServer.Environment(
                    stateDirectory: state, runtimeDirectory: runtime, version: "9.8.7", handleSignals: false,
                    notifySystemd: false)
                let server = try BridgeServer(configuration: settled, environment: environment, input: input, log: log)
                outcome.withLock {
                    $0 = .success(
                        Started(
                            ports: server.ports, input: input.events, stop: server.stopHandle,
                            worker: server.worker))
                }
                try server.run()
            } catch {
                outcome.withLock { $0 = .failure(StartFailure(description: "\(error)")) }
            }
        }
        guard waitUntil(timeout: .seconds(10), { outcome.withLock { $0 } != nil }),
            let result = outcome.withLock({ $0 })
        else { throw StartFailure(description: "bridge did not start") }
        switch result {
        case .success(let started):
            let bridge = TestBridge(started: started, thread: thread, logs: logs, state: state, runtime: runtime)
            try bridge.waitForLog("ready")
            return bridge
        case .failure(let failure):
            thread.join()
            throw failure
        }
    }

    private init(started: Started, thread: OSThread, logs: LogLines, state: String, runtime: String) {
        ports = started.ports
        input = started.input
        stopHandle = started.stop
        worker = started.worker
        self.thread = thread
        logLines = logs
        stateDirectory = state
        runtimeDirectory = runtime
    }

    deinit { stop() }

    /// Stops the server and waits for its thread.
    func stop() {
        guard
            !stopped.withLock({ done in
                defer { done = true }; return done
            })
        else { return }
        stopHandle.stop()
        thread.join()
    }

    var logs: [String] { logLines.lines.withLock { $0 } }

    /// Waits until a log line contains `text`.
    func waitForLog(_ text: String, milliseconds: Int = 5000) throws {
        try waitForLog(text, count: 1, milliseconds: milliseconds)
    }

    /// Waits until `count` log lines contain `text`.
    func waitForLog(_ text: String, count: Int, milliseconds: Int = 5000) throws {
        guard waitUntil(timeout: .milliseconds(milliseconds), { logLines(containing: text) >= count }) else {
            throw StartFailure(
                description: "not \(count) log line(s) with '\(text)' in:\n" + logs.joined(separator: "\n"))
        }
    }

    /// How many log lines contain `text`.
    func logLines(containing text: String) -> Int { logs.count { $0.contains(text) } }

    var controlSocket: String { BridgeServer.controlSocketPath(runtimeDirectory: runtimeDirectory) }

    /// Whether a real client, `openssl s_client` trusting the bridge's local CA, completes a
    /// verified handshake on the secure REST port.
    func realTLSHandshakeSucceeds() throws -> Bool {
        let done = try Process.run(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            arguments: [
                "s_client", "-connect", "127.0.0.1:\(ports.apiSecure)", "-CAfile", stateDirectory + "/tls/ca.pem",
                "-verify_return_error", "-brief",
            ]
        ) { _ in }
        done.waitUntilExit()
        return done.terminationStatus == 0
    }

    /// Registers `id` through the control socket (iOS form) and returns the reply.
    @discardableResult
    func register(_ id: String, returnURL: String = "testapp://response/register") throws -> ControlProtocol.Reply {
        let json = "{\"application_id\":\"\(id)\",\"returl\":\"\(returnURL)\"}"
        return try ControlProtocol.open("tmmregister://?" + Base64.encode(Array(json.utf8)), socketPath: controlSocket)
    }

    /// Posts what gpsd would say when a receiver at `path` is open, and waits until the server has
    /// taken the device list: the io thread logs "gpsd has <path>" as it drains it, and handles
    /// the resulting change (receiver connected) before anything the test sends afterwards.
    func connectReceiver(_ path: String = "/dev/ttyTEST0") throws {
        let handled = "gpsd has \(path)"
        let before = logLines(containing: handled)
        input.post(.gpsd(.connected(release: "3.22")))
        input.post(.gpsd(.devices([GPSDDevice(path: path, driver: "NMEA0183", activated: 1)])))
        try waitForLog(handled, count: before + 1)
    }
}

/// What the bridge logged (shared with its thread).
final class LogLines: Sendable {
    let lines = Mutex<[String]>([])
}

/// Six distinct free loopback ports.
func freePorts() throws -> PortAssignment {
    var ports: [UInt16] = []
    while ports.count < 6 {
        guard let port = freeLoopbackPort() else { throw TestBridge.StartFailure(description: "no free port") }
        if !ports.contains(port) { ports.append(port) }
    }
    return PortAssignment(
        location: ports[0], locationSecure: ports[1], api: ports[2], apiSecure: ports[3],
        locationV2: ports[4], locationV2Secure: ports[5])
}

let testAppID = "12345678-1234-1234-1234-123456789abc"

/// `Authorization` header value with the Access Code V1 of `id` at `offset` seconds from now.
func accessCode(_ id: String = testAppID, offset: Int64 = 0) -> String {
    "Basic "
        + AccessCodeV1.code(
            applicationID: id, unixSeconds: wallClockMilliseconds() / 1000 + offset,
            sha256: Digest.sha256)
}

// MARK: - A raw HTTP client

/// One parsed response.
struct HTTPResponse: CustomStringConvertible {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] }
    var description: String { "\(status) \(headers) \(text)" }
}

/// A client connection to a loopback port that speaks raw bytes.
final class RawClient {
    let socket: StreamSocket
    var buffer: [UInt8] = []

    init(port: UInt16) throws {
        socket = try StreamSocket.connect(loopbackPort: port)
    }

    /// A client whose kernel receive buffer is `receiveBuffer` bytes from the start (set before
    /// connecting, so the window it advertises stays small): a client that reads slowly.
    init(port: UInt16, receiveBuffer: Int) throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var size = CInt(receiveBuffer)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<CInt>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(fd)
            throw Errno.current
        }
        socket = StreamSocket(descriptor: FileDescriptor(adopting: fd))
    }

    func send(_ text: String) throws { try socket.descriptor.writeAll(text) }
    func send(_ bytes: [UInt8]) throws { try socket.descriptor.writeAll(bytes) }

    /// Reads at least one more byte (false at end of file or time-out).
    @discardableResult
    func fill(milliseconds: Int32 = 3000) throws -> Bool {
        guard try socket.descriptor.waitReadable(milliseconds: milliseconds) else { return false }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = try chunk.withUnsafeMutableBytes { raw in try socket.descriptor.read(into: raw) }
        if count == 0 { return false }
        buffer += chunk[0..<count]
        return true
    }

    /// True when the server closed the connection within `milliseconds` (after any pending data).
    func isClosedByServer(milliseconds: Int32 = 3000) throws -> Bool {
        let deadline = monotonicNanoseconds() + Int64(milliseconds) * 1_000_000
        while monotonicNanoseconds() < deadline {
            let left = Int32(max(1, (deadline - monotonicNanoseconds()) / 1_000_000))
            guard try socket.descriptor.waitReadable(milliseconds: left) else { return false }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { raw in try socket.descriptor.read(into: raw) }
            } catch {
                return true  // reset
            }
            if count == 0 { return true }
            buffer += chunk[0..<count]
        }
        return false
    }

    /// Reads one response (Content-Length framed, or headers only for 1xx/204/HEAD).
    func response(headRequest: Bool = false, milliseconds: Int32 = 3000) throws -> HTTPResponse {
        while true {
            if let end = find([13, 10, 13, 10]) {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst()
                let status = Int(statusLine.split(separator: " ")[1])!
                let headers = lines.map { line -> (String, String) in
                    let colon = line.firstIndex(of: ":")!
                    return (
                        String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    )
                }
                let length =
                    headRequest || status < 200 || status == 204
                    ? 0 : Int(headers.first { $0.0.lowercased() == "content-length" }?.1 ?? "0")!
                while buffer.count < end + 4 + length {
                    guard try fill(milliseconds: milliseconds) else {
                        throw TestBridge.StartFailure(description: "short body")
                    }
                }
                let body = Array(buffer[(end + 4)..<(end + 4 + length)])
                buffer.removeFirst(end + 4 + length)
                return HTTPResponse(status: status, headers: headers, body: body)
            }
            guard try fill(milliseconds: milliseconds) else {
                throw TestBridge.StartFailure(
                    description: "no response; got \(String(decoding: buffer, as: UTF8.self))")
            }
        }
    }

    private func find(_ needle: [UInt8]) -> Int? {
        guard buffer.count >= needle.count else { return nil }
        for i in 0...(buffer.count - needle.count)
        where buffer[i] == needle[0] && Array(buffer[i..<(i + needle.count)]) == needle {
            return i
        }
        return nil
    }
}

/// One request on a new connection.
func request(
    _ port: UInt16, _ target: String, method: String = "GET", headers: [String] = [], body: String = "",
    authorized: Bool = true
) throws -> HTTPResponse {
    let client = try RawClient(port: port)
    var text = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
    if authorized { text += "Authorization: \(accessCode())\r\n" }
    for header in headers { text += header + "\r\n" }
    if !body.isEmpty { text += "Content-Length: \(body.utf8.count)\r\n" }
    text += "\r\n" + body
    try client.send(text)
    return try client.response(headRequest: method == "HEAD")
}

// MARK: - A raw WebSocket client

/// A frame from the server.
struct ServerFrame: Equatable {
    var fin: Bool
    var opcode: UInt8
    var payload: [UInt8]
    var text: String { String(decoding: payload, as: UTF8.self) }
    var closeCode: UInt16? {
        opcode == 8 && payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
    }
}

/// A WebSocket client over a raw socket: handshake, masked frames out, server frames in.
final class WebSocketTestClient {
    let raw: RawClient

    /// Connects and completes the handshake (throws with the response when refused). `headers`
    /// are more field lines (`Origin: https://app.example`).
    init(port: UInt16, path: String = "/", headers: [String] = []) throws {
        raw = try RawClient(port: port)
        try raw.send(
            "GET \(path) HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + headers.map { $0 + "\r\n" }.joined() + "\r\n")
        let response = try raw.response()
        guard response.status == 101 else { throw Refused(response: response) }
        #expect(response.header("Sec-WebSocket-Accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    struct Refused: Error {
        var response: HTTPResponse
    }

    /// Sends one masked frame.
    func send(opcode: UInt8, _ payload: [UInt8], fin: Bool = true, mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]) throws {
        try raw.send(Self.frame(opcode: opcode, payload, fin: fin, mask: mask))
    }

    static func frame(
        opcode: UInt8, _ payload: [UInt8], fin: Bool = true, mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
    )
        -> [UInt8]
    {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            bytes.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65_536 {
            bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        bytes += mask
        for (i, byte) in payload.enumerated() { bytes.append(byte ^ mask[i % 4]) }
        return bytes
    }

    /// The next frame, or nil at end of file / time-out.
    func frame(milliseconds: Int32 = 3000) throws -> ServerFrame? {
        while true {
            if let (frame, used) = Self.parse(raw.buffer) {
                raw.buffer.removeFirst(used)
                return frame
            }
            guard try raw.fill(milliseconds: milliseconds) else { return nil }
        }
    }

    /// Frames until a non-position one or the count is reached.
    func frames(_ count: Int, milliseconds: Int32 = 3000) throws -> [ServerFrame] {
        var result: [ServerFrame] = []
        while result.count < count, let frame = try frame(milliseconds: milliseconds) { result.append(frame) }
        return result
    }

    static func parse(_ bytes: [UInt8]) -> (ServerFrame, Int)? {
        guard bytes.count >= 2 else { return nil }
        #expect(bytes[1] & 0x80 == 0, "server frames are never masked")
        var length = Int(bytes[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            offset = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = 0
            for i in 2..<10 { length = length << 8 | Int(bytes[i]) }
            offset = 10
        }
        guard bytes.count >= offset + length else { return nil }
        return (
            ServerFrame(
                fin: bytes[0] & 0x80 != 0, opcode: bytes[0] & 0x0F,
                payload: Array(bytes[offset..<(offset + length)])), offset + length
        )
    }
}
