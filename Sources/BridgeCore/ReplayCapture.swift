// A capture cut into epochs for replay (pure: standard library only, so Fuzz/run-bridge.sh can
// build it alone). The thread that plays it is CaptureReplayer (CaptureReplay.swift).

/// A capture cut into epochs, with the period to play them at.
public struct ReplayCapture: Sendable, Equatable {
    /// The bytes of each epoch, CRLF-terminated sentences.
    public var epochs: [[UInt8]]
    /// Nanoseconds between epochs.
    public var period: Int64

    /// Shortest and longest period accepted from a capture's times; outside it, 1 s is used.
    public static let periodRange: ClosedRange<Int64> = 10_000_000...10_000_000_000

    /// Why a capture cannot be played.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Parses a capture in gpsd's log format.
    ///
    /// Works on UTF-8 bytes (the syntax is ASCII): lines end at LF, trailing CR and spaces are
    /// dropped, sentences start with `$` or `!`.
    public init(text: String, name: String) throws(Failure) {
        let substring = Substring(text)
        var sentences: [Substring] = []
        var lineStart = substring.utf8.startIndex
        let end = substring.utf8.endIndex
        while lineStart < end {
            let lineEnd = substring.utf8[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? end
            var last = lineEnd
            while last > lineStart {
                let before = substring.utf8.index(before: last)
                guard substring.utf8[before] == UInt8(ascii: "\r") || substring.utf8[before] == UInt8(ascii: " ") else { break }
                last = before
            }
            if last > lineStart, substring.utf8[lineStart] == UInt8(ascii: "$") || substring.utf8[lineStart] == UInt8(ascii: "!") {
                sentences.append(substring[lineStart..<last])
            }
            lineStart = lineEnd == end ? end : substring.utf8.index(after: lineEnd)
        }
        guard let first = sentences.first else {
            throw Failure(message: "\(name): no NMEA sentences (lines starting with $) to replay")
        }
        let starter = Self.sentenceType(first)
        var epochs: [[UInt8]] = []
        var starterTimes: [Int64] = []
        for sentence in sentences {
            if Self.sentenceType(sentence).utf8.elementsEqual(starter.utf8) || epochs.isEmpty {
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

    /// `GGA` of `$GNGGA,...` (the sentence type without the two-letter talker); `PTNL` and other
    /// proprietary (`P…`) addresses whole.
    public static func sentenceType(_ sentence: Substring) -> Substring {
        let bytes = sentence.utf8
        guard let first = bytes.indices.first else { return sentence }
        let start = bytes.index(after: first)
        let end = bytes[start...].firstIndex { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "*") } ?? bytes.endIndex
        let address = sentence[start..<end]
        if address.utf8.first == UInt8(ascii: "P") { return address }
        let afterTalker = address.utf8.index(address.utf8.startIndex, offsetBy: 2, limitedBy: address.utf8.endIndex) ?? address.utf8.endIndex
        return address[afterTalker...]
    }

    /// Nanoseconds of the day from the time field (`hhmmss[.s…]`, field 1; `$PTNL,GGK`: field 2)
    /// of the sentence types that carry one; nil for others and for anything not a valid time.
    public static func timeOfDay(_ sentence: Substring) -> Int64? {
        // Compared by bytes: String equality is Unicode-canonical, the NMEA address is ASCII.
        let type = sentenceType(sentence).utf8
        let isTrimble = type.elementsEqual("PTNL".utf8)
        guard isTrimble || ["GGA", "RMC", "GNS", "GST", "ZDA"].contains(where: { type.elementsEqual($0.utf8) }) else {
            return nil
        }
        let fields = sentence.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        let wanted = isTrimble ? 2 : 1
        guard fields.count > wanted else { return nil }
        let field = Array(fields[wanted])
        guard field.count >= 6, field.prefix(6).allSatisfy(isDigit) else { return nil }
        func number(_ range: Range<Int>) -> Int64 { range.reduce(0) { $0 * 10 + Int64(field[$1] - UInt8(ascii: "0")) } }
        let hours = number(0..<2), minutes = number(2..<4), seconds = number(4..<6)
        // 60 is a leap second.
        guard hours < 24, minutes < 60, seconds <= 60 else { return nil }
        var nanoseconds = ((hours * 60 + minutes) * 60 + seconds) * 1_000_000_000
        if field.count > 6 {
            let fraction = field[7...]
            guard field[6] == UInt8(ascii: "."), !fraction.isEmpty, fraction.count <= 9, fraction.allSatisfy(isDigit) else {
                return nil
            }
            var scaled = number(7..<field.count)
            for _ in fraction.count..<9 { scaled *= 10 }
            nanoseconds += scaled
        }
        return nanoseconds
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
