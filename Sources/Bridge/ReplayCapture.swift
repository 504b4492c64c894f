// A capture cut into epochs for replay (pure: standard library only, so Fuzz/run-bridge.sh can
// build it alone). The thread that plays it is CaptureReplayer (CaptureReplay.swift).

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
