import Glibc

// Incremental scanners for the two client streams, fed whatever each read returned: gpsd's JSON
// lines (one TPV per epoch) and the bridge's WebSocket frames (one LocationV2 text frame per
// epoch). Both only look for the epoch's time of day and report it when the message that holds
// it is complete (the line's '\n', the frame's last byte), so a receive time is the time of the
// read that completed the message. They keep a few integers per client and never buffer or copy
// a message: the harness shares the machine with the server it measures.

/// A fixed byte string searched for one byte at a time (Knuth-Morris-Pratt, so a partial match
/// that fails is never rescanned); the only per-stream state is how many bytes are matched.
///
/// `search` is the fast path for a whole chunk: memchr for an `anchor` byte that is rare in the
/// stream, memcmp at each hit, and the byte-wise matcher only for a match cut by the chunk's end.
struct Needle: Sendable {
    let bytes: [UInt8]
    /// `fallback[i]`: the longest proper border of `bytes[0..<i]`.
    private let fallback: [Int]
    private let anchor: Int

    /// `anchor`: the index of the needle's byte that is rarest in the stream searched.
    init(_ text: String, anchor: Int = 0) {
        bytes = Array(text.utf8)
        precondition(!bytes.isEmpty, "an empty needle matches everywhere")
        precondition(bytes.indices.contains(anchor), "the anchor must be one of the needle's bytes")
        self.anchor = anchor
        var table = [Int](repeating: 0, count: bytes.count + 1)
        var border = 0
        for i in 1..<bytes.count {
            while border > 0 && bytes[i] != bytes[border] { border = table[border] }
            if bytes[i] == bytes[border] { border += 1 }
            table[i + 1] = border
        }
        fallback = table
    }

    var count: Int { bytes.count }

    /// The matched length after `byte`, given `matched` bytes before it (`count`: found).
    @inline(__always)
    func advance(_ matched: Int, _ byte: UInt8) -> Int {
        var state = matched == bytes.count ? fallback[matched] : matched
        while state > 0 && bytes[state] != byte { state = fallback[state] }
        return bytes[state] == byte ? state + 1 : 0
    }

    /// Searches `base[start..<end]`, continuing a match of `matched` bytes begun in an earlier
    /// chunk. Returns the index just past the needle (with `matched == count`), or `end` with
    /// `matched` set to the partial match the chunk ends in.
    func search(_ base: UnsafePointer<UInt8>, from start: Int, to end: Int, matched: inout Int) -> Int {
        var i = start
        while matched > 0 && i < end {
            matched = advance(matched, base[i])
            i += 1
            if matched == bytes.count { return i }
        }
        let anchorByte = CInt(bytes[anchor])
        var from = i
        while from + anchor < end {
            guard let hit = memchr(base + from + anchor, anchorByte, end - from - anchor) else { break }
            let candidate = base.distance(to: hit.assumingMemoryBound(to: UInt8.self)) - anchor
            // A candidate cut by the chunk's end (and so every later one) is left to the tail.
            guard candidate + bytes.count <= end else { break }
            let equal = bytes.withUnsafeBufferPointer { memcmp(base + candidate, $0.baseAddress!, $0.count) == 0 }
            if equal {
                matched = bytes.count
                return candidate + bytes.count
            }
            from = candidate + 1
        }
        // No whole match in the chunk: only its last count - 1 bytes can begin one.
        i = max(from, end - (bytes.count - 1))
        while i < end {
            matched = advance(matched, base[i])
            i += 1
        }
        return end
    }
}

/// A time of day written as digits `hhmmss[.fff]` (LocationV2's `utcTime` number) or
/// `hh:mm:ss[.fff]` (gpsd's ISO 8601 `time`, date part already skipped), read one byte at a time.
struct TimeOfDayReader: Sendable {
    private var whole = 0
    private var wholeDigits = 0
    private var milliseconds = 0
    private var fractionDigits = 0
    private var inFraction = false

    mutating func reset() { self = TimeOfDayReader() }

    /// Takes `byte`; false when it is not part of the number (the number ended before it).
    @inline(__always)
    mutating func take(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            let digit = Int(byte &- UInt8(ascii: "0"))
            if inFraction {
                if fractionDigits < 3 { milliseconds = milliseconds * 10 + digit }
                fractionDigits += 1
            } else {
                whole = whole * 10 + digit
                wholeDigits += 1
            }
            return true
        case UInt8(ascii: ":"):
            return !inFraction
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
            // JSON allows whitespace before a value.
            return wholeDigits == 0 && !inFraction
        case UInt8(ascii: "."):
            guard !inFraction else { return false }
            inFraction = true
            return true
        default:
            return false
        }
    }

    /// Milliseconds since midnight, or nil when what was read is not a time of day.
    var millisecondsOfDay: Int? {
        guard wholeDigits == 6 else { return nil }
        var fraction = milliseconds
        for _ in min(fractionDigits, 3)..<3 { fraction *= 10 }
        let hours = whole / 10_000, minutes = whole / 100 % 100, seconds = whole % 100
        guard hours < 24, minutes < 60, seconds < 61 else { return nil }
        return ((hours * 60 + minutes) * 60 + seconds) * 1000 + fraction
    }
}

/// gpsd's JSON stream: newline-terminated objects; reports the `time` of every
/// `{"class":"TPV",...}` line when its '\n' arrives.
struct GPSDLineScanner: Sendable {
    private enum Phase: UInt8 { case linePrefix, findTime, skipDate, readTime, skipLine }

    /// gpsd 3.22 starts every TPV object with exactly these bytes.
    static let tpvPrefix = Needle("{\"class\":\"TPV\"")
    static let timeKey = Needle("\"time\":\"", anchor: 3)  // the rare 'm'

    private var phase = Phase.linePrefix
    private var matched = 0
    private var reader = TimeOfDayReader()
    private var pendingTime: Int?
    /// Complete lines seen (any class).
    private(set) var lines = 0

    /// Scans `bytes`, calling `report` with the time of day (ms) of each TPV line completed.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, _ report: (Int) -> Void) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let end = bytes.count
        var i = 0
        while i < end {
            if phase == .skipLine {
                // The bulk of every line: find its end with memchr instead of a byte loop.
                guard let newline = memchr(base + i, 0x0A, end - i) else { return }
                i = base.distance(to: newline.assumingMemoryBound(to: UInt8.self))
            }
            let byte = base[i]
            i += 1
            if byte == 0x0A {
                lines += 1
                if let time = pendingTime { report(time) }
                pendingTime = nil
                phase = .linePrefix
                matched = 0
                continue
            }
            switch phase {
            case .linePrefix:
                if byte == Self.tpvPrefix.bytes[matched] {
                    matched += 1
                    if matched == Self.tpvPrefix.count {
                        phase = .findTime
                        matched = 0
                    }
                } else {
                    phase = .skipLine
                }
            case .findTime:
                // This byte and the rest of the chunk, up to the line's end, in one search.
                let lineEnd =
                    memchr(base + i - 1, 0x0A, end - i + 1).map {
                        base.distance(to: $0.assumingMemoryBound(to: UInt8.self))
                    } ?? end
                i = Self.timeKey.search(base, from: i - 1, to: lineEnd, matched: &matched)
                if matched == Self.timeKey.count { phase = .skipDate }
            case .skipDate:
                if byte == UInt8(ascii: "T") {
                    phase = .readTime
                    reader.reset()
                } else if byte == UInt8(ascii: "\"") {
                    phase = .skipLine
                }
            case .readTime:
                if !reader.take(byte) {
                    pendingTime = reader.millisecondsOfDay
                    phase = .skipLine
                }
            case .skipLine:
                break
            }
        }
    }
}

/// A client's view of server-to-client WebSocket frames (RFC 6455 §5.2): reports the
/// `"utcTime":` number of every text message when its last byte arrives; notes close frames and
/// pings (the loop answers pings with a pong).
struct WebSocketFrameScanner: Sendable {
    private enum Phase: UInt8 { case first, second, extendedLength, maskKey, payload }

    static let timeKey = Needle("\"utcTime\":", anchor: 4)  // the rare 'T'

    private var phase = Phase.first
    private var fin = false
    private var opcode: UInt8 = 0
    private var masked = false
    private var lengthBytesLeft = 0
    private var maskBytesLeft = 0
    private var payloadLeft: UInt64 = 0
    /// Within a text message: 0 ..< count looking for the key, count: reading the number,
    /// count + 1: done with this message.
    private var matched = 0
    private var reader = TimeOfDayReader()
    private var messageTime: Int?
    private var control: [UInt8] = []

    /// Complete text messages.
    private(set) var textMessages = 0
    /// Frames that break the rules for a server (masked, reserved bits, unknown opcode).
    private(set) var protocolErrors = 0
    /// The close frame's status code (1005 when it had none), once one arrived.
    private(set) var closeCode: Int?
    /// The close frame's reason text.
    private(set) var closeReason = ""
    /// Payloads of pings not yet answered (the loop takes them).
    var pendingPings: [[UInt8]] = []

    /// Scans `bytes`, calling `report` with the `utcTime` (ms of day) of each message completed.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, _ report: (Int) -> Void) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let end = bytes.count
        var i = 0
        while i < end {
            switch phase {
            case .first:
                let byte = base[i]
                i += 1
                fin = byte & 0x80 != 0
                opcode = byte & 0x0F
                // §5.2: "RSV1, RSV2, RSV3: ... MUST be 0 unless an extension is negotiated".
                if byte & 0x70 != 0 { protocolErrors += 1 }
                switch opcode {
                case 0x0, 0x1, 0x2, 0x8, 0x9, 0xA: break
                default: protocolErrors += 1
                }
                if opcode == 0x1 {
                    matched = 0
                    messageTime = nil
                }
                if opcode & 0x8 != 0 { control.removeAll(keepingCapacity: true) }
                phase = .second
            case .second:
                let byte = base[i]
                i += 1
                // §5.1: "A server MUST NOT mask any frames that it sends to the client."
                masked = byte & 0x80 != 0
                if masked { protocolErrors += 1 }
                maskBytesLeft = masked ? 4 : 0
                let length = byte & 0x7F
                switch length {
                case 126: lengthBytesLeft = 2
                case 127: lengthBytesLeft = 8
                default: lengthBytesLeft = 0
                }
                payloadLeft = length < 126 ? UInt64(length) : 0
                phase = lengthBytesLeft > 0 ? .extendedLength : (masked ? .maskKey : .payload)
                if phase == .payload && payloadLeft == 0 { finishFrame(report) }
            case .extendedLength:
                payloadLeft = payloadLeft << 8 | UInt64(base[i])
                i += 1
                lengthBytesLeft -= 1
                if lengthBytesLeft == 0 {
                    phase = masked ? .maskKey : .payload
                    if phase == .payload && payloadLeft == 0 { finishFrame(report) }
                }
            case .maskKey:
                // Counted as an error above; the key is skipped (the payload is not unmasked).
                i += 1
                maskBytesLeft -= 1
                if maskBytesLeft == 0 {
                    phase = .payload
                    if payloadLeft == 0 { finishFrame(report) }
                }
            case .payload:
                let available = min(UInt64(end - i), payloadLeft)
                let stop = i + Int(available)
                if opcode & 0x8 != 0 {
                    control.append(contentsOf: UnsafeBufferPointer(start: base + i, count: stop - i))
                    i = stop
                } else if opcode == 0x2 || matched > Self.timeKey.count {
                    i = stop  // binary, or the time is already read: skip the rest unscanned
                } else {
                    if matched < Self.timeKey.count {
                        i = Self.timeKey.search(base, from: i, to: stop, matched: &matched)
                        if matched == Self.timeKey.count { reader.reset() }
                    }
                    while i < stop && matched == Self.timeKey.count {
                        let byte = base[i]
                        i += 1
                        if !reader.take(byte) {
                            messageTime = reader.millisecondsOfDay
                            matched += 1
                        }
                    }
                    i = stop
                }
                payloadLeft -= available
                if payloadLeft == 0 { finishFrame(report) }
            }
        }
    }

    private mutating func finishFrame(_ report: (Int) -> Void) {
        phase = .first
        switch opcode {
        case 0x0, 0x1:
            guard fin else { return }
            textMessages += 1
            if let time = messageTime { report(time) }
            messageTime = nil
            matched = 0
        case 0x8:
            closeCode = control.count >= 2 ? Int(control[0]) << 8 | Int(control[1]) : 1005
            if control.count > 2 { closeReason = String(decoding: control[2...], as: UTF8.self) }
        case 0x9:
            pendingPings.append(control)
        default:
            break
        }
    }
}
