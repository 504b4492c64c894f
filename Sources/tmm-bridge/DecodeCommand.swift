import BridgeCore
import ByteCoding
import GNSS
import GPSD
import Glibc
import Input
import NMEA0183
import Posix
import TMMProtocol

/// `tmm-bridge decode`: a capture in, one TMM JSON object per epoch out, with the same consumers
/// and encoders the live sockets use: NMEA 0183 through `EpochStream`, or gpsd's JSON (`gpspipe
/// -w`, a binary receiver's capture) through libgps and `GPSDReportAssembler`. The first
/// non-blank byte decides: `{` is gpsd's JSON, anything else NMEA.
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
                Result { () throws(Errno) -> Int? in
                    try valueOrNilIfWouldBlock { Glibc.read(fd, raw.baseAddress, raw.count) }
                }
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
                loop.schedule(
                    afterNanoseconds: Self.staleCheckNanoseconds, periodNanoseconds: Self.staleCheckNanoseconds
                ) { _ in
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
    /// What the input is, decided by its first non-blank byte.
    enum Input {
        case undecided
        case nmea
        /// gpsd's JSON reports: libgps's parse state and the epochs made from them.
        case gpsdJSON(GPSDCaptureReader)
    }

    var input = Input.undecided
    var stream = EpochStream()
    var reports = GPSDReportAssembler()
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
        if case .undecided = input {
            var first: UInt8?
            for i in 0..<chunk.count where !ASCII.isBlank(chunk[i]) && chunk[i] != 0x0A && chunk[i] != 0x0D {
                first = chunk[i]
                break
            }
            guard let first else { return true }
            if first == UInt8(ascii: "{") {
                guard let reader = GPSDCaptureReader() else {
                    Output.error("tmm-bridge decode: out of memory for libgps's parser\n")
                    return false
                }
                input = .gpsdJSON(reader)
            } else {
                input = .nmea
            }
        }
        if case .gpsdJSON(let reader) = input {
            var reports = self.reports
            reader.feed(chunk) { item in Self.read(item, now: now, into: &reports) { position in self.append(position) }
            }
            self.reports = reports
            return flush()
        }
        var stream = self.stream
        stream.bytes(chunk, now: now) { position in self.append(position) }
        self.stream = stream
        return flush()
    }

    /// One item of a gpsd JSON capture: reports make epochs; a device's driver says whether its
    /// TPV error estimates are the receiver's own (`GPSDDriver.reportsReceiverAccuracy`).
    private static func read(
        _ item: GPSDCaptureReader.Item, now: Int64, into reports: inout GPSDReportAssembler,
        _ emit: (Position) -> Void
    ) {
        switch item {
        case .report(let report): reports.report(report, now: now, emit)
        case .device(let device) where device.isActive:
            reports.receiverAccuracy = GPSDDriver(device.driver).reportsReceiverAccuracy
        case .device: break
        }
    }

    mutating func flushIfStale(now: Int64) {
        if case .gpsdJSON = input {
            var reports = self.reports
            reports.idle(now: now) { position in self.append(position) }
            self.reports = reports
            _ = flush()
            return
        }
        guard case .nmea = input else { return }
        var stream = self.stream
        stream.idle(now: now) { position in self.append(position) }
        self.stream = stream
        _ = flush()
    }

    /// End of input: last epoch, summary on stderr, exit status.
    mutating func finish(name: String) -> Int32 {
        if case .gpsdJSON(let reader) = input { return finishReports(reader, name: name) }
        var stream = self.stream
        stream.finish { position in self.append(position) }
        self.stream = stream
        _ = flush()

        let decoder = stream.decoder
        let stats = decoder.statistics
        let framing = decoder.framer.statistics
        let dropped =
            stats.rejected + stats.malformed + framing.truncatedLines + framing.overlongLines
            + framing.invalidByteLines
        if dropped > 0 {
            var message = "tmm-bridge decode: \(name): \(epochs) epochs from \(stats.decoded) sentences; dropped "
            message += "\(stats.rejected) invalid, \(stats.malformed) malformed, \(framing.truncatedLines) truncated, "
            message += "\(framing.overlongLines) overlong, \(framing.invalidByteLines) with non-ASCII bytes"
            if let error = decoder.lastError { message += " (last: \(describe(error)))" }
            Output.error(message + "\n")
        }
        guard epochs > 0 else {
            Output.error(
                "tmm-bridge decode: no NMEA positions found in \(name) (expected NMEA 0183 sentences such as $GPGGA, "
                    + "or gpsd's JSON as gpspipe -w writes it)\n")
            return ExitCode.failure
        }
        return ExitCode.ok
    }

    /// End of a gpsd JSON capture: the last line, a summary on stderr when lines were dropped.
    private mutating func finishReports(_ reader: GPSDCaptureReader, name: String) -> Int32 {
        var reports = self.reports
        reader.finish { item in Self.read(item, now: .max, into: &reports) { position in self.append(position) } }
        reports.flush { position in self.append(position) }
        self.reports = reports
        _ = flush()
        let lines = reader.statistics
        let fixes = reports.statistics
        if lines.refused + lines.overlong + lines.sentences > 0 {
            Output.error(
                "tmm-bridge decode: \(name): \(epochs) epochs from \(fixes.fixes) TPV reports; dropped "
                    + "\(lines.refused) lines that are not gpsd JSON, "
                    + "\(lines.overlong) over \(GPSDCaptureReader.maximumLineLength) bytes, "
                    + "\(lines.sentences) NMEA sentences (gpsd's JSON is read, not its NMEA)\n")
        }
        guard epochs > 0 else {
            Output.error(
                "tmm-bridge decode: no TPV reports found in \(name) (expected gpsd's JSON as gpspipe -w writes it, "
                    + "or NMEA 0183 sentences such as $GPGGA)\n")
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
