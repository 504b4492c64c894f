import CGPS
import GNSS
import Input

/// Reads a capture of gpsd's JSON output (`gpspipe -w`, one object per line) without a gpsd:
/// each line is unpacked by libgps, as a live session's lines are, into the same `GPSDReport`s
/// and `GPSDDevice`s. For `tmm-bridge decode` of a binary receiver's capture.
///
/// Lines are framed here (LF, an optional CR before it); a line longer than `maximumLineLength`
/// (gpsd's longest report, a SKY of 140 signals, is under 10 KB) is dropped and counted, as are
/// lines libgps refuses. The line buffer is allocated once.
public final class GPSDCaptureReader {
    public struct Statistics: Sendable, Equatable {
        public var lines = 0
        public var reports = 0
        /// NMEA sentences among the JSON (`gpspipe -w -r`): not gpsd's reports, not read here.
        public var sentences = 0
        /// JSON objects that are neither reports nor device lists (VERSION, WATCH, ...).
        public var otherObjects = 0
        /// Lines libgps could not unpack, or that are not JSON at all.
        public var refused = 0
        public var overlong = 0

        public init() {}
    }

    /// What one line was, for the caller.
    public enum Item {
        case report(GPSDReport)
        /// A DEVICE object, or each entry of a DEVICES object: which driver gpsd uses.
        case device(GPSDDevice)
    }

    public static let maximumLineLength = 16_000

    public private(set) var statistics = Statistics()
    private let parser: OpaquePointer
    private var line: [UInt8]
    private var length = 0
    private var discarding = false

    /// Nil when libgps's parse state cannot be allocated.
    public init?() {
        guard let parser = cgps_parser() else { return nil }
        self.parser = parser
        line = [UInt8](repeating: 0, count: Self.maximumLineLength + 1)
    }

    deinit { cgps_close(parser) }

    /// Frames `chunk` into lines and hands each report and device to `deliver`. Each run of bytes
    /// up to a line end is found in the chunk and copied at once (byte by byte through the class's
    /// properties, framing cost ~170 instructions a byte: most of decode's time).
    public func feed(_ chunk: Span<UInt8>, _ deliver: (Item) -> Void) {
        var start = 0
        while start < chunk.count {
            var end = start
            while end < chunk.count && chunk[end] != 0x0A { end += 1 }
            append(chunk.extracting(start..<end))
            guard end < chunk.count else { return }
            endLine(deliver)
            start = end + 1
        }
    }

    /// Adds part of a line; a line growing past `maximumLineLength` is dropped whole.
    private func append(_ bytes: Span<UInt8>) {
        guard !discarding, !bytes.isEmpty else { return }
        guard length + bytes.count <= Self.maximumLineLength else {
            statistics.overlong += 1
            discarding = true
            length = 0
            return
        }
        let offset = length
        line.withUnsafeMutableBytes { destination in
            bytes.withUnsafeBytes { source in
                UnsafeMutableRawBufferPointer(rebasing: destination[offset..<(offset + source.count)]).copyMemory(
                    from: source)
            }
        }
        length += bytes.count
    }

    /// End of input: a last line without a line end is read too.
    public func finish(_ deliver: (Item) -> Void) {
        if length > 0 || discarding { endLine(deliver) }
    }

    private func endLine(_ deliver: (Item) -> Void) {
        defer {
            length = 0
            discarding = false
        }
        guard !discarding else { return }
        var end = length
        if end > 0 && line[end - 1] == 0x0D { end -= 1 }
        guard end > 0 else { return }
        statistics.lines += 1
        line[end] = 0
        let kind = line.withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { cgps_unpack(parser, $0.baseAddress, Int32(end)) }
        }
        if kind == 0 {
            statistics.refused += 1
        } else if kind & Int32(CGPS_LINE_NMEA) != 0 {
            statistics.sentences += 1
        } else if let report = GPSDReport(kind: kind, from: parser) {
            statistics.reports += 1
            deliver(.report(report))
        } else if kind & Int32(CGPS_LINE_DEVICES) != 0 {
            var raw = cgps_device()
            for index in 0..<cgps_device_count(parser) {
                cgps_device_at(parser, index, &raw)
                deliver(.device(GPSDDevice(raw)))
            }
        } else if kind & Int32(CGPS_LINE_DEVICE) != 0 {
            var raw = cgps_device()
            cgps_last_device(parser, &raw)
            deliver(.device(GPSDDevice(raw)))
        } else {
            statistics.otherObjects += 1
        }
    }
}
