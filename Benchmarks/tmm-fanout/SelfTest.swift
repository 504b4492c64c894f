// `tmm-fanout --self-test`: the scanners against streams with known answers, fed whole, one byte
// at a time and split at every position, so a number the benchmark prints never depends on
// where the kernel happened to cut a read. Runs in a second; `make bench` runs it first.

/// Feeds `stream` to a fresh scanner in the chunks `cuts` gives and returns what it reported.
private func feed<Scanner>(
    _ stream: [UInt8], cuts: [Int], into scanner: inout Scanner,
    _ scan: (inout Scanner, UnsafeRawBufferPointer, (Int) -> Void) -> Void
) -> [Int] {
    var times: [Int] = []
    stream.withUnsafeBytes { raw in
        var start = 0
        for cut in cuts + [stream.count] where cut >= start {
            scan(&scanner, UnsafeRawBufferPointer(rebasing: raw[start..<cut])) { times.append($0) }
            start = cut
        }
    }
    return times
}

/// Every way of cutting `count` bytes the test tries: whole, byte by byte, and in two at each
/// position.
private func cuttings(_ count: Int) -> [[Int]] {
    [[], Array(1..<count)] + (1..<count).map { [$0] }
}

/// An unmasked server frame (§5.2), with the 7-bit, 16-bit or 64-bit length form.
private func serverFrame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
    var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
    switch payload.count {
    case 0..<126: frame.append(UInt8(payload.count))
    case 126..<65_536: frame += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    default:
        frame.append(127)
        for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
    }
    return frame + payload
}

/// Runs the checks; returns the failures (empty: all passed).
func runSelfTest() -> [String] {
    var failures: [String] = []
    func check(_ what: String, _ got: [Int], _ expected: [Int]) {
        if got != expected { failures.append("\(what): got \(got), expected \(expected)") }
    }
    let t1 = ((10 * 60 + 0) * 60 + 1) * 1000 + 50  // 10:00:01.05
    let t2 = ((23 * 60 + 59) * 60 + 59) * 1000 + 950  // 23:59:59.95

    // gpsd: only TPV lines count, their time when their '\n' arrives; GST has a time too.
    let gpsdStream = Array(
        (#"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"# + "\n"
            + #"{"class":"TPV","device":"/dev/pts/0","mode":3,"time":"2025-11-20T10:00:01.050Z","ept":0.005}"# + "\n"
            + #"{"class":"GST","device":"/dev/pts/0","time":"2025-11-20T10:00:01.050Z","rms":0.012}"# + "\n"
            + #"{"class":"TPV","device":"/dev/pts/0","time":"2025-11-20T23:59:59.95Z"}"# + "\n"
            + #"{"class":"TPV","device":"/dev/pts/0","mode":1}"# + "\n"
            + #"{"class":"TPV","device":"/dev/pts/0","time":"2025-11-20T10:00:01.050Z"}"#).utf8)  // no '\n' yet
    for cuts in cuttings(gpsdStream.count) {
        var scanner = GPSDLineScanner()
        let times = feed(gpsdStream, cuts: cuts, into: &scanner) { $0.scan($1, $2) }
        check("gpsd TPV times, cuts \(cuts.prefix(3))", times, [t1, t2])
        if !failures.isEmpty { return failures }
    }

    // WebSocket: compact and spaced JSON, all three length forms, a fragmented message, a ping
    // and a close (1008 + reason).
    let compact = Array(#"{"latitude":48.1,"satelliteView":[],"utcTime":100001.05,"utcTimeStamp":"x"}"#.utf8)
    let spaced = Array(#"{"utcTime": 235959.95, "a": 1}"#.utf8)
    let long = Array((#"{"pad":""# + String(repeating: "T", count: 300) + #"","utcTime":100001.05}"#).utf8)
    let huge = Array((#"{"utcTime":235959.95,"pad":""# + String(repeating: "u", count: 70_000) + #""}"#).utf8)
    var frames = serverFrame(opcode: 0x1, compact) + serverFrame(opcode: 0x9, Array("hi".utf8))
    frames += serverFrame(opcode: 0x1, spaced) + serverFrame(opcode: 0x1, long) + serverFrame(opcode: 0x1, huge)
    frames += serverFrame(opcode: 0x1, Array(spaced[0..<9]), fin: false) + serverFrame(opcode: 0x0, Array(spaced[9...]))
    frames += serverFrame(opcode: 0x1, Array(#"{"utcTime":null}"#.utf8))
    frames += serverFrame(opcode: 0x8, [0x03, 0xF0] + Array("slow".utf8))
    let expected = [t1, t2, t1, t2, t2]
    // Every cut of the small frames; for the 70 KB one, cuts around its header and its time.
    let small = frames.count - huge.count
    let positions = Array(1..<small) + Array(small..<(small + 40)) + [frames.count - 2]
    for cuts in [[], Array(1..<frames.count)] + positions.map({ [$0] }) {
        var scanner = WebSocketFrameScanner()
        let times = feed(frames, cuts: cuts, into: &scanner) { $0.scan($1, $2) }
        check("WebSocket utcTime, cuts \(cuts.prefix(3))", times, expected)
        if scanner.closeCode != 1008 || scanner.closeReason != "slow" {
            failures.append("WebSocket close: got \(scanner.closeCode ?? -1) '\(scanner.closeReason)'")
        }
        if scanner.pendingPings != [Array("hi".utf8)] { failures.append("WebSocket ping: \(scanner.pendingPings)") }
        if scanner.protocolErrors != 0 { failures.append("WebSocket: \(scanner.protocolErrors) protocol errors") }
        if !failures.isEmpty { return failures }
    }

    // The writer's sentences: checksums valid, time digits right.
    var sentences = EpochSentences()
    sentences.setTime(millisecondsOfDay: t2)
    for sentence in [sentences.gga, sentences.gst, sentences.rmc] {
        let text = String(decoding: sentence, as: UTF8.self)
        var sum: UInt8 = 0
        for byte in sentence[1..<(sentence.count - 5)] { sum ^= byte }
        let hex = String(sum, radix: 16, uppercase: true)
        let written = String(decoding: sentence[(sentence.count - 4)..<(sentence.count - 2)], as: UTF8.self)
        if written != (hex.count == 1 ? "0" + hex : hex) || !text.hasPrefix("$GN") || !text.contains(",235959.95,") {
            failures.append("sentence \(text.debugDescription)")
        }
    }
    return failures
}
