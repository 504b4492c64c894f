import Corrections
import GNSS
import Testing

typealias Action = NTRIPSession.Action

/// The password every session test uses: no action, log line or state may ever hold it.
let testPassword = "S3cr3t!pw"
let testURL = "ntrip://rover:\(testPassword)@caster.example.com/MOUNT"

extension [Action] {
    var states: [CorrectionsState] { compactMap { if case .stateChanged(let s) = $0 { s } else { nil } } }
    var delivered: [[UInt8]] { compactMap { if case .deliver(let f) = $0 { f.bytes } else { nil } } }
    var sent: [[UInt8]] { compactMap { if case .send(let b) = $0 { b } else { nil } } }
    var logs: [String] { compactMap { if case .log(_, let text) = $0 { text } else { nil } } }
    var connects: Int { count { if case .connect = $0 { true } else { false } } }
    var disconnects: Int { count { $0 == .disconnect } }
    /// The GGA sentences among the sends.
    var ggas: [String] { sent.map { String(decoding: $0, as: UTF8.self) }.filter { $0.hasPrefix("$GPGGA") } }
}

/// Drives one session as an executor would, with a fake clock, recording every action.
struct SessionDriver {
    var session: NTRIPSession
    /// Monotonic ns; starts away from 0 so that "0" is never mistaken for "unset".
    var now: Int64 = 1_000 * second
    /// Every action so far, in order.
    var all: [Action] = []

    init(url: String = testURL, ggaIntervalSeconds: Int = 10) {
        let source = try! NTRIPSource.parse(url).get()
        session = NTRIPSession(
            settings: .init(source: source, userAgent: "NTRIP tmm-bridge/1.0", ggaIntervalSeconds: ggaIntervalSeconds))
    }

    var state: CorrectionsState { session.health.state }

    private mutating func record(_ actions: [Action]) -> [Action] {
        all += actions
        return actions
    }

    @discardableResult mutating func start() -> [Action] { record(session.start(now: now)) }
    @discardableResult mutating func connected() -> [Action] { record(session.connected(now: now)) }
    @discardableResult mutating func closed() -> [Action] { record(session.connectionClosed(now: now)) }
    @discardableResult mutating func stop() -> [Action] { record(session.stop(now: now)) }

    @discardableResult mutating func failed(_ reason: String) -> [Action] {
        record(session.connectionFailed(reason: reason, now: now))
    }

    @discardableResult mutating func position(_ position: Position) -> [Action] {
        record(session.position(position, now: now))
    }

    /// Feeds `bytes` in pieces of `piece` bytes (all at once by default).
    @discardableResult mutating func receive(_ bytes: [UInt8], piece: Int = Int.max) -> [Action] {
        var actions: [Action] = []
        var start = 0
        repeat {
            let end = min(bytes.count, start + max(piece, 1))
            let chunk = Array(bytes[start..<end])
            actions += session.received(chunk.span, now: now)
            start = end
        } while start < bytes.count
        return record(actions)
    }

    @discardableResult mutating func receive(_ text: String, piece: Int = Int.max) -> [Action] {
        receive(Array(text.utf8), piece: piece)
    }

    /// Advances the clock by `nanoseconds` and ticks once.
    @discardableResult mutating func tick(after nanoseconds: Int64) -> [Action] {
        now += nanoseconds
        return record(session.tick(now: now))
    }

    /// Advances the clock `seconds` seconds, ticking every `step` (default: each second).
    @discardableResult mutating func wait(seconds: Int, step: Int64 = second) -> [Action] {
        var actions: [Action] = []
        let end = now + Int64(seconds) * second
        while now < end {
            now = min(now + step, end)
            actions += session.tick(now: now)
        }
        return record(actions)
    }

    /// Starts and connects: the session has sent its request and waits for the answer.
    mutating func startAndConnect() {
        start()
        connected()
    }
}

let ntrip2OK = "HTTP/1.1 200 OK\r\nNtrip-Version: Ntrip/2.0\r\nContent-Type: gnss/data\r\n\r\n"
let ntrip2Chunked =
    "HTTP/1.1 200 OK\r\nNtrip-Version: Ntrip/2.0\r\nTransfer-Encoding: chunked\r\nContent-Type: gnss/data\r\n\r\n"
let icyOK = "ICY 200 OK\r\n"

/// `data` as one chunk of a chunked body (size line, data, CRLF).
func chunk(_ data: [UInt8], extensions: String = "") -> [UInt8] {
    Array((String(data.count, radix: 16) + extensions + "\r\n").utf8) + data + [0x0D, 0x0A]
}
