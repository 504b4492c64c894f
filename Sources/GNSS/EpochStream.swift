import NMEA0183

/// The one consumer of a receiver's NMEA: whatever delivers it (gpsd's framed lines on the gpsd
/// thread, `tmm-bridge decode`'s reads of a file, pipe or tty) drives one of these, and each epoch
/// is emitted the moment the sentence that closes its cycle is decoded (no extra hop, no wait for
/// the next cycle).
///
/// It also holds what the source's lifecycle means for the cycle in progress, so every input
/// treats it alike:
/// - time passing without input (`idle`) emits a cycle that has waited longer than a cycle should;
/// - a source that ended cleanly (`sourceClosed`: gpsd closed the device, end of a file) emits
///   what is pending, and the next source starts afresh;
/// - a source cut off (`sourceLost`: the gpsd connection broke) drops the partial cycle: its
///   closing sentence will never come, and a reconnected stream may start mid-cycle.
public struct EpochStream: Sendable {
    public private(set) var decoder = NMEAStreamDecoder()

    public init() {}

    /// Decodes one framed sentence (no line end); returns false when it was dropped (invalid or
    /// malformed), for the caller's counters.
    @discardableResult
    public mutating func sentence(_ line: Span<UInt8>, now: Int64, _ emit: (Position) -> Void) -> Bool {
        let before = decoder.statistics.rejected + decoder.statistics.malformed
        decoder.accept(line, now: now, emit)
        return decoder.statistics.rejected + decoder.statistics.malformed == before
    }

    /// Frames and decodes raw bytes (a read of a file, pipe or tty).
    public mutating func bytes(_ chunk: Span<UInt8>, now: Int64, _ emit: (Position) -> Void) {
        decoder.feed(chunk, now: now, emit)
    }

    /// No input for a while: emits a pending cycle that is overdue (EpochAssembler's stale rule).
    public mutating func idle(now: Int64, _ emit: (Position) -> Void) {
        decoder.flushIfStale(now: now, emit)
    }

    /// End of all input (`decode` at end of file): emits what is pending; the counters stay
    /// readable.
    public mutating func finish(_ emit: (Position) -> Void) {
        decoder.finish(emit)
    }

    /// The source ended cleanly: emits what is pending, then starts afresh for the next source.
    public mutating func sourceClosed(_ emit: (Position) -> Void) {
        decoder.finish(emit)
        decoder.restart()
    }

    /// The source was cut off mid-stream: the partial cycle is dropped, and the next source
    /// starts afresh.
    public mutating func sourceLost() {
        decoder.restart()
    }
}
