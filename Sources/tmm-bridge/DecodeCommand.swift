import BridgeCore
import ByteCoding
import GNSS
import Glibc
import NMEA0183
import Posix
import TMMProtocol

/// `tmm-bridge decode`: a capture in, one TMM JSON object per epoch out, with the same consumer
/// (`EpochStream`) and encoders the live sockets use.
struct DecodeCommand {
    var path: String
    var format: LocationFormat

    /// Read size: large enough for files, small enough that a live pipe is decoded as it arrives.
    static let readSize = 65_536
    /// How often a live input (pipe, tty, socket) is checked for a cycle that stalled: the
    /// assembler emits a pending epoch older than its stale time-out (EpochAssembler.staleAfter).
    static let staleCheckNanoseconds: Int64 = 100_000_000

    func run() -> Int32 {
        let fd: Int32
        let name: String
        if path == "-" {
            fd = STDIN_FILENO
            name = "standard input"
        } else {
            name = path
            do { fd = try valueOrErrno { open(path, O_RDONLY | O_CLOEXEC) } } catch {
                Output.error("tmm-bridge decode: cannot open \(path): \(error)\n")
                return ExitCode.failure
            }
        }
        defer { if fd != STDIN_FILENO { _ = try? valueOrErrno(retryOnInterrupt: false) { close(fd) } } }

        let loop: EventLoop
        do { loop = try EventLoop() } catch {
            Output.error("tmm-bridge decode: cannot create the event loop: \(error)\n")
            return ExitCode.failure
        }
        var session = DecodeSession(format: format)
        var buffer = [UInt8](repeating: 0, count: Self.readSize)
        var outcome: Int32?
        // One read per turn; the loop calls again while the descriptor is readable (a file: every
        // turn until end of file). Reads are non-blocking: a readiness that turns out empty is
        // nothing to do.
        let readable: EventLoop.Handler = { [unowned loop] _ in
            let read: Result<Int?, Errno> = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) -> Int? in try valueOrNilIfWouldBlock { Glibc.read(fd, raw.baseAddress, raw.count) } }
            }
            switch read {
            case .success(nil):
                return
            case .success(0):
                loop.stop()
            case .success(let count?):
                if !session.feed(buffer.span.extracting(0..<count), now: monotonicNanoseconds()) {
                    outcome = ExitCode.failure  // stdout closed (e.g. piped into head): stop quietly
                    loop.stop()
                }
            case .failure(let error):
                Output.error("tmm-bridge decode: reading \(name) failed: \(error)\n")
                loop.stop()
            }
        }
        do {
            // A file never waits, so no cycle of it can stall: only a live input gets the check.
            if try loop.register(fd, interest: .readable, handler: readable) == .whenReported {
                loop.schedule(afterNanoseconds: Self.staleCheckNanoseconds, periodNanoseconds: Self.staleCheckNanoseconds) { _ in
                    session.flushIfStale(now: monotonicNanoseconds())
                }
            }
            try loop.run()
            try loop.deregister(fd)
        } catch {
            Output.error("tmm-bridge decode: reading \(name) failed: \(error)\n")
        }
        if let outcome { return outcome }
        return session.finish(name: name)
    }

    /// `tmm-bridge demo`: decodes the embedded Trimble RTK capture.
    static func runDemo(format: LocationFormat) -> Int32 {
        var session = DecodeSession(format: format)
        let delivered = DemoCapture.text.withUTF8Buffer { session.feed($0.span, now: 0) }
        guard delivered else { return ExitCode.failure }
        return session.finish(name: DemoCapture.name)
    }
}

/// Decoder and encoders for one `decode` run; the encoder of the format holds a chunk's output.
struct DecodeSession {
    var stream = EpochStream()
    var v1: LocationV1Encoder
    var v2: LocationV2Encoder
    var format: LocationFormat
    var epochs = 0
    let identity = ReceiverIdentity(appVersion: BridgeVersion.current)

    /// Room for one chunk's output: its JSON is about six times the NMEA it came from.
    static let outputCapacity = 8 * DecodeCommand.readSize

    init(format: LocationFormat) {
        self.format = format
        v1 = LocationV1Encoder(reservingCapacity: format == .locationV1 ? Self.outputCapacity : 16_384)
        v2 = LocationV2Encoder(reservingCapacity: format == .locationV2 ? Self.outputCapacity : 16_384)
    }

    /// Decodes a chunk and writes the epochs it completed; false if stdout is gone.
    mutating func feed(_ chunk: Span<UInt8>, now: Int64) -> Bool {
        var stream = self.stream
        stream.bytes(chunk, now: now) { position in self.append(position) }
        self.stream = stream
        return flush()
    }

    mutating func flushIfStale(now: Int64) {
        var stream = self.stream
        stream.idle(now: now) { position in self.append(position) }
        self.stream = stream
        _ = flush()
    }

    /// End of input: last epoch, summary on stderr, exit status.
    mutating func finish(name: String) -> Int32 {
        var stream = self.stream
        stream.finish { position in self.append(position) }
        self.stream = stream
        _ = flush()

        let decoder = stream.decoder
        let stats = decoder.statistics
        let framing = decoder.framer.statistics
        let dropped = stats.rejected + stats.malformed + framing.truncatedLines + framing.overlongLines
            + framing.invalidByteLines
        if dropped > 0 {
            var message = "tmm-bridge decode: \(name): \(epochs) epochs from \(stats.decoded) sentences; dropped "
            message += "\(stats.rejected) invalid, \(stats.malformed) malformed, \(framing.truncatedLines) truncated, "
            message += "\(framing.overlongLines) overlong, \(framing.invalidByteLines) with non-ASCII bytes"
            if let error = decoder.lastError { message += " (last: \(describe(error)))" }
            Output.error(message + "\n")
        }
        guard epochs > 0 else {
            Output.error("tmm-bridge decode: no NMEA positions found in \(name) (expected NMEA 0183 sentences such as $GPGGA)\n")
            return ExitCode.failure
        }
        return ExitCode.ok
    }

    private mutating func append(_ position: Position) {
        epochs += 1
        // Appended to the encoder's own buffer (one line each), written out per chunk: no copy
        // of each message into a second buffer.
        switch format {
        case .locationV1: v1.appendLine(position, identity: identity)
        case .locationV2: v2.appendLine(position, identity: identity)
        }
    }

    private mutating func flush() -> Bool {
        switch format {
        case .locationV1:
            defer { v1.removeAll() }
            return Output.write(v1.span, to: STDOUT_FILENO)
        case .locationV2:
            defer { v2.removeAll() }
            return Output.write(v2.span, to: STDOUT_FILENO)
        }
    }
}

/// A one-line reason for a rejected sentence.
func describe(_ error: NMEAError) -> String {
    switch error {
    case .missingStart: "line does not start with $"
    case .tooLong(let n): "sentence of \(n) bytes exceeds \(NMEASentence.maxLength)"
    case .invalidByte(let offset): "byte at offset \(offset) is not printable ASCII"
    case .invalidAddress: "address field is not upper-case letters and digits"
    case .tooManyFields: "more than \(NMEASentence.maxFields) fields"
    case .malformedChecksum: "* is not followed by exactly two hex digits"
    case .badChecksum(let expected, let computed):
        "bad checksum: sentence says \(Hex.encode([expected].span)), bytes give \(Hex.encode([computed].span))"
    case .tooFewFields(let needed, let found): "\(found) fields, needs \(needed)"
    case .invalidField(let index): "field \(index) is malformed"
    case .unsupportedSentence: "unsupported sentence"
    }
}

