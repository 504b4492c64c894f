import Glibc
import Posix
import Synchronization

// A recorded receiver played back through a pseudo-terminal, so gpsd reads it exactly as it reads
// a serial receiver: the demo (`tmm-bridge run --demo`, `make run`) and `--replay FILE`.
//
// The capture is cut into epochs at each repeat of its first sentence type (nmea-rtk.log: a GGA
// starts each epoch, an RMC ends it), and the epochs are written at the capture's own rate, taken
// from the time field of those first sentences (10 Hz for nmea-rtk.log), looping forever. gpsd's
// comment lines (`#`) are skipped.

/// A capture cut into epochs, with the period to play them at.
public struct ReplayCapture: Sendable, Equatable {
    /// The bytes of each epoch, CRLF-terminated sentences.
    public var epochs: [[UInt8]]
    /// Nanoseconds between epochs.
    public var period: Int64

    /// Shortest and longest period accepted from a capture's times; outside it, 1 s is used.
    static let periodRange: ClosedRange<Int64> = 10_000_000...10_000_000_000

    /// Why a capture cannot be played.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Parses a capture in gpsd's log format.
    public init(text: String, name: String) throws(Failure) {
        var sentences: [Substring] = []
        for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            var line = raw
            while let last = line.last, last == "\r" || last == " " { line = line.dropLast() }
            if line.first == "$" || line.first == "!" { sentences.append(line) }
        }
        guard let first = sentences.first else {
            throw Failure(message: "\(name): no NMEA sentences (lines starting with $) to replay")
        }
        let starter = Self.sentenceType(first)
        var epochs: [[UInt8]] = []
        var starterTimes: [Int64] = []
        for sentence in sentences {
            if Self.sentenceType(sentence) == starter || epochs.isEmpty {
                epochs.append([])
                if let time = Self.timeOfDay(sentence) { starterTimes.append(time) }
            }
            epochs[epochs.count - 1] += Array(sentence.utf8) + [13, 10]
        }
        self.epochs = epochs
        var deltas: [Int64] = []
        for i in starterTimes.indices.dropFirst() where starterTimes[i] > starterTimes[i - 1] {
            deltas.append(starterTimes[i] - starterTimes[i - 1])
        }
        deltas.sort()
        let median = deltas.isEmpty ? 1_000_000_000 : deltas[deltas.count / 2]
        period = Self.periodRange.contains(median) ? median : 1_000_000_000
    }

    /// `GGA` of `$GNGGA,...` (the sentence type without the talker).
    static func sentenceType(_ sentence: Substring) -> Substring {
        let address = sentence.dropFirst().prefix { $0 != "," && $0 != "*" }
        return address.hasPrefix("P") ? address : address.dropFirst(2)
    }

    /// Nanoseconds of the day from field 1 (`hhmmss.ss`) of sentences that carry it there.
    static func timeOfDay(_ sentence: Substring) -> Int64? {
        let fields = sentence.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count > 1 else { return nil }
        let type = sentenceType(sentence)
        guard ["GGA", "RMC", "GNS", "GST", "ZDA"].contains(type) || type.hasPrefix("PTNL") else { return nil }
        let field = type.hasPrefix("PTNL") ? (fields.count > 2 ? fields[2] : "") : fields[1]
        let digits = field.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = digits.first, whole.count == 6, let hhmmss = Int64(whole) else { return nil }
        var nanoseconds = (hhmmss / 10000 * 3600 + hhmmss / 100 % 100 * 60 + hhmmss % 100) * 1_000_000_000
        if digits.count == 2, !digits[1].isEmpty, digits[1].count <= 9, let fraction = Int64(digits[1]) {
            var scaled = fraction
            for _ in digits[1].count..<9 { scaled *= 10 }
            nanoseconds += scaled
        }
        return nanoseconds
    }
}

/// Plays a capture into a pty on a thread of its own until stopped.
public final class CaptureReplayer: Sendable {
    private struct State {
        var stopping = false
        var thread: OSThread?
        var loops = 0
    }

    public let capture: ReplayCapture
    /// The device path gpsd is given (`/dev/pts/N`).
    public let devicePath: String
    private let controller: CInt
    private let device: CInt
    private let state = Mutex(State())

    /// Opens the pty (nothing is written until `start`).
    public init(capture: ReplayCapture) throws(Errno) {
        self.capture = capture
        let pty = try Pseudoterminal()
        devicePath = pty.devicePath
        // The descriptors are owned by this object from here on (closed in deinit).
        (controller, device) = pty.release()
        _ = fcntl(controller, F_SETFL, fcntl(controller, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        Glibc.close(controller)
        Glibc.close(device)
    }

    /// Times the capture has been played to its end.
    public var loops: Int { state.withLock { $0.loops } }

    public func start() throws(Errno) {
        let thread = try OSThread(name: "replay") { [self] in run() }
        state.withLock { $0.thread = thread }
    }

    public func stop() {
        let thread = state.withLock { state -> OSThread? in
            state.stopping = true
            return state.thread
        }
        thread?.join()
    }

    private func run() {
        var next = monotonicNanoseconds()
        while true {
            for epoch in capture.epochs {
                if state.withLock({ $0.stopping }) { return }
                write(epoch)
                next += capture.period
                let now = monotonicNanoseconds()
                // After a stall (machine suspended, gpsd not reading) continue from now, not in a burst.
                if next < now - capture.period { next = now }
                sleepUntil(next)
            }
            state.withLock { $0.loops += 1 }
        }
    }

    /// Writes one epoch; when nobody reads the pty (gpsd not started yet) the bytes are dropped,
    /// as a real receiver's would be.
    private func write(_ bytes: [UInt8]) {
        var offset = 0
        var attempts = 0
        while offset < bytes.count && attempts < 10 {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(controller, $0.baseAddress, $0.count) }
            if written > 0 {
                offset += written
            } else {
                attempts += 1
                sleep(nanoseconds: 1_000_000)
            }
        }
    }

    private func sleepUntil(_ deadline: Int64) {
        while !state.withLock({ $0.stopping }) {
            let left = deadline - monotonicNanoseconds()
            if left <= 0 { return }
            sleep(nanoseconds: min(left, 50_000_000))
        }
    }
}
