import NMEA0183

/// The whole pure input pipeline for one receiver: bytes → sentences → typed messages →
/// positions. `EpochStream` drives it for every input (gpsd's lines, `tmm-bridge decode`'s reads).
public struct NMEAStreamDecoder: Sendable {
    /// What happened to every sentence, for metrics and `decode`'s summary.
    public struct Statistics: Sendable, Equatable {
        /// Sentences that validated and decoded.
        public var decoded = 0
        /// Valid sentences of kinds without a decoder (counted, not errors).
        public var unsupported = 0
        /// Lines rejected by validation (checksum, bytes, address, length).
        public var rejected = 0
        /// Valid sentences whose fields did not decode.
        public var malformed = 0
        /// Sentences accepted without a checksum (gpsd 3.22 accepts them too).
        public var withoutChecksum = 0

        public init() {}
    }

    public private(set) var framer = NMEAFramer()
    public private(set) var assembler = EpochAssembler()
    public private(set) var statistics = Statistics()
    /// The last rejection, for a log line; cleared by nothing (the counters say how many).
    public private(set) var lastError: NMEAError?

    public init() {}

    /// Frames and decodes `chunk`, calling `emit` for each completed epoch.
    public mutating func feed(_ chunk: Span<UInt8>, now: Int64, _ emit: (Position) -> Void) {
        // The framer is moved out so its delivery closure can update the rest of `self`.
        // One pass: the framer validates while it frames (`feedSentences`), with exactly the
        // verdict `NMEASentence(validating:)` gives.
        var framer = self.framer
        framer.feedSentences(chunk) { _, result in
            do throws(NMEAError) {
                let sentence = try result.get()
                self.decode(sentence, now: now, emit)
            } catch {
                self.statistics.rejected += 1
                self.lastError = error
            }
        }
        self.framer = framer
    }

    /// Validates, decodes and assembles one complete sentence (without its line end).
    public mutating func accept(_ line: Span<UInt8>, now: Int64, _ emit: (Position) -> Void) {
        let sentence: NMEASentence
        do {
            sentence = try NMEASentence(validating: line)
        } catch {
            statistics.rejected += 1
            lastError = error
            return
        }
        decode(sentence, now: now, emit)
    }

    private mutating func decode(_ sentence: borrowing NMEASentence, now: Int64, _ emit: (Position) -> Void) {
        if !sentence.hasChecksum { statistics.withoutChecksum += 1 }
        let message: NMEAMessage
        do {
            message = try NMEAMessage(sentence)
        } catch .unsupportedSentence {
            statistics.unsupported += 1
            return
        } catch {
            statistics.malformed += 1
            lastError = error
            return
        }
        statistics.decoded += 1
        assembler.add(message, talker: sentence.talker, now: now, emit)
    }

    /// Emits a pending epoch that has waited longer than a cycle should.
    public mutating func flushIfStale(now: Int64, _ emit: (Position) -> Void) {
        assembler.flushIfStale(now: now, emit)
    }

    /// End of input: emits what is pending.
    public mutating func finish(_ emit: (Position) -> Void) {
        assembler.finish(emit)
    }

    /// Starts over for a new source: the partial line, the pending cycle and the cycle shape the
    /// assembler learned are dropped (the next receiver may close its cycles differently). The
    /// sentence counters (`statistics`) go on; the framer's start again with it.
    public mutating func restart() {
        framer = NMEAFramer()
        assembler = EpochAssembler()
    }
}
