// A capture cut into epochs for replay (pure). The thread that plays it is CaptureReplayer
// (InputLoop/CaptureReplay.swift). Sentences are read with NMEA0183's validation and field parsers,
// the same rules the decoder applies: a line they refuse is still replayed as it is (gpsd gets
// the capture's bytes), but neither starts an epoch nor sets the pace.

import NMEA0183

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
                guard substring.utf8[before] == UInt8(ascii: "\r") || substring.utf8[before] == UInt8(ascii: " ") else {
                    break
                }
                last = before
            }
            if last > lineStart,
                substring.utf8[lineStart] == UInt8(ascii: "$") || substring.utf8[lineStart] == UInt8(ascii: "!")
            {
                sentences.append(substring[lineStart..<last])
            }
            lineStart = lineEnd == end ? end : substring.utf8.index(after: lineEnd)
        }
        guard !sentences.isEmpty else {
            throw Failure(message: "\(name): no NMEA sentences (lines starting with $) to replay")
        }
        // Each sentence read once; epochs start at each sentence of the first valid one's type.
        let read = sentences.map(Self.read)
        let starter = read.lazy.compactMap { $0?.type }.first
        var epochs: [[UInt8]] = []
        var starterTimes: [Int64] = []
        for (sentence, read) in zip(sentences, read) {
            let startsEpoch =
                if let type = read?.type, let starter { type.utf8.elementsEqual(starter.utf8) } else { false }
            if startsEpoch || epochs.isEmpty {
                epochs.append([])
                if let time = read?.time { starterTimes.append(time) }
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
    /// proprietary (`P…`) addresses whole; nil for a line NMEA0183 refuses.
    public static func sentenceType(_ sentence: Substring) -> Substring? {
        read(sentence)?.type
    }

    /// Nanoseconds of the day from the time field of the sentence kinds that carry one (their row
    /// in NMEA0183's `SentenceKind.row`: GGA, RMC, GNS, GST, ZDA field 1, GLL field 5, `$PTNL,GGK`
    /// field 2), as NMEA0183 reads it; nil for other kinds, for an empty or invalid time, and for
    /// a line NMEA0183 refuses.
    public static func timeOfDay(_ sentence: Substring) -> Int64? {
        read(sentence)?.time
    }

    /// The sentence's type and time (see above), validated once; nil for a line NMEA0183 refuses.
    private static func read(_ sentence: Substring) -> (type: Substring, time: Int64?)? {
        let bytes = Array(sentence.utf8)
        guard let valid = try? NMEASentence(validating: bytes.span) else { return nil }
        let address = valid.field(0).count
        let skip = valid.talker == .proprietary ? 0 : 2
        guard address > skip else { return nil }
        let start = sentence.utf8.index(sentence.utf8.startIndex, offsetBy: 1 + skip)
        let end = sentence.utf8.index(sentence.utf8.startIndex, offsetBy: 1 + address)
        var time: Int64?
        if let timeField = valid.kind.row?.timeField, valid.fieldCount > timeField,
            let parsed = try? valid.time(timeField)
        {
            time = parsed.nanosecondsOfDay
        }
        return (sentence[start..<end], time)
    }
}
