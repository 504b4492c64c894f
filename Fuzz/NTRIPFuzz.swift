// libFuzzer target for the NTRIP client (Sources/Corrections: NTRIPSession and the parts it uses:
// the answer head, the sourcetable, HTTP1's chunked decoder, the RTCM 3 framer, the GGA writer,
// source URLs).
//
// Built by Fuzz/run-ntrip.sh into ONE module, named Corrections, from Sources/Corrections and
// the pure modules it imports (ByteCoding, NMEA0183, GNSS, HTTP1, Logging; their `import` lines
// taken out of the copies by Fuzz/lib.sh fuzz_include_module), and this harness:
//
//   swiftc -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
//       -module-name Corrections Sources/Corrections/*.swift <those modules' sources> \
//       Fuzz/NTRIPFuzz.swift -o Fuzz/build/ntrip-fuzz
//
// Input: byte 0 picks the settings and what the caster sends before the input (nothing, an
// NTRIP 2.0 chunked head, `ICY 200 OK`, a plain 200), byte 1 seeds the harness's choices, and the
// rest is what the caster sends on each connection.
//
// Per input:
// 1. Frozen clock: two sessions get the caster's bytes after `connected`, one in a single read,
//    one in reads of sizes drawn from the seed. Their actions, put end to end, and their health
//    must be identical: nothing may depend on read boundaries.
// 2. An executor with a fake clock: connects (or fails to), feeds the bytes in random reads with
//    ticks and positions in between, closes, fails, waits for retries; each new connection gets
//    the caster's bytes again (at most 6 connections). After every event: each `.connect` is
//    ended by exactly one `.disconnect`; every delivered frame validates; every GGA parses with
//    NMEA0183 and none comes within a second of the last; no log line, state or sourcetable name
//    holds the password or the credentials; the health agrees with the actions (state, frame
//    count); memory stays bounded (head, framer, sourcetable); after a tick, `nextDeadline` is in
//    the future (an executor arming a timer on it would otherwise spin).
// 3. The input as a URL: a parsed source's description parses back to it (without the password)
//    and does not depend on the password, and both requests for it parse with HTTP1's own request
//    parser, with the mount point as the target.
// 4. A position made of the input's bytes: its GGA (if any) is read back by NMEA0183 within 8
//    decimals of a minute.
//
// Any Swift runtime trap, AddressSanitizer report or failed `check` is a crash for libFuzzer, which
// writes the reproducer to Fuzz/build/ntrip-crash-<sha1>.

@inline(never)
func violation(_ message: String, _ line: UInt = #line) -> Never {
    fatalError("NTRIPFuzz invariant violated (NTRIPFuzz.swift:\(line)): \(message)")
}

@inline(__always)
func check(_ condition: Bool, _ message: @autoclosure () -> String, _ line: UInt = #line) {
    if !condition { violation(message(), line) }
}

let password = "Fuzz-Passw0rd"
let second: Int64 = 1_000_000_000

/// Deterministic choices from a seed (SplitMix64).
struct Choices {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A number in 0..<bound.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let mode = input.first ?? 0
    let seed = UInt64(input.count > 1 ? input[1] : 0)
    let body = input.count > 2 ? Array(input[2...]) : []

    let heads = [
        "", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: gnss/data\r\n\r\n", "ICY 200 OK\r\n",
        "HTTP/1.1 200 OK\r\n\r\n",
    ]
    let caster = Array(heads[Int(mode & 0x03)].utf8) + body
    let user = mode & 0x08 == 0 ? "rover:\(password)@" : ""
    let url = (mode & 0x04 == 0 ? "ntrip://" : "ntrips://") + user + "caster.example.com/MOUNT"
    guard case .success(let source) = NTRIPSource.parse(url) else { violation("the harness's URL") }
    let settings = NTRIPSession.Settings(
        source: source, userAgent: "NTRIP fuzz/1", ggaIntervalSeconds: [0, 1, 10, 3][Int(mode >> 4 & 0x03)])

    frozenClock(settings, caster, seed: seed)
    executor(settings, caster, seed: seed)
    fuzzURL(String(decoding: body, as: UTF8.self))
    fuzzGGA(body)
    return 0
}

// MARK: - 1: read boundaries

func frozenClock(_ settings: NTRIPSession.Settings, _ caster: [UInt8], seed: UInt64) {
    let now: Int64 = 5_000 * second
    var whole = NTRIPSession(settings: settings)
    var wholeActions = whole.start(now: now) + whole.connected(now: now)
    wholeActions += whole.received(caster.span, now: now)

    var pieces = NTRIPSession(settings: settings)
    var pieceActions = pieces.start(now: now) + pieces.connected(now: now)
    var choices = Choices(state: seed)
    var start = 0
    repeat {
        let end = min(caster.count, start + 1 + choices.below(choices.below(2) == 0 ? 8 : 300))
        let piece = Array(caster[start..<end])
        pieceActions += pieces.received(piece.span, now: now)
        start = end
    } while start < caster.count
    check(pieceActions == wholeActions, "actions depend on read boundaries")
    check(pieces.health == whole.health, "health depends on read boundaries")
    check(pieces.phase == whole.phase, "phase depends on read boundaries")
}

// MARK: - 2: an executor

struct Watch {
    let settings: NTRIPSession.Settings
    var open = false
    var delivered = 0
    var lastState = CorrectionsState.off
    var lastGGAAt: Int64?
    let secrets: [String]

    init(_ settings: NTRIPSession.Settings) {
        self.settings = settings
        var secrets = [password]
        if let credentials = NTRIPRequest.basicCredentials(for: settings.source) { secrets.append(credentials) }
        self.secrets = secrets
    }

    func clean(_ text: String, _ what: String) {
        for secret in secrets where settings.source.user != nil {
            check(!text.contains(secret), "\(what) holds a secret: \(text)")
        }
    }

    mutating func observe(_ actions: [NTRIPSession.Action], _ session: NTRIPSession, now: Int64) {
        for action in actions {
            switch action {
            case .connect(let host, let port, let tls):
                check(!open, "a second .connect before .disconnect")
                open = true
                check(host == settings.source.host && port == settings.source.port, "connect target")
                check(tls == settings.source.usesTLS, "connect TLS")
            case .disconnect:
                check(open, ".disconnect without a connection")
                open = false
            case .send(let bytes):
                check(open, "a send without a connection")
                if bytes.starts(with: Array("$GPGGA,".utf8)) {
                    checkGGA(bytes)
                    check(settings.ggaIntervalSeconds > 0, "a GGA with the interval 0")
                    if let last = lastGGAAt { check(now - last >= second, "two GGA within a second") }
                    lastGGAAt = now
                } else {
                    check(bytes == session.request, "a send that is neither the request nor a GGA")
                }
            case .deliver(let frame):
                check(RTCM3Frame(validating: frame.bytes) != nil, "a delivered frame does not validate")
                delivered += 1
            case .stateChanged(let state):
                check(state != lastState, "a state change to the same state")
                lastState = state
                clean(state.description, "a state")
                if case .noSuchMountPoint(let offered) = state {
                    check(offered.count <= NTRIPSourcetable.maximumMountPoints, "\(offered.count) mount points")
                    for name in offered {
                        clean(name, "a mount point name")
                        check(name.utf8.count <= NTRIPSourcetable.maximumNameLength + 3, "a long name")
                    }
                }
            case .log(_, let text):
                clean(text, "a log line")
            }
        }
        let health = session.health
        check(health.state == lastState, "health.state is not the last state change")
        check(health.frames == delivered, "health.frames \(health.frames), delivered \(delivered)")
        check((health.nextAttemptAt != nil) == (session.phase == .waiting), "nextAttemptAt outside waiting")
        check(session.head.count <= NTRIPSession.maximumHeadBytes + 1, "head of \(session.head.count) bytes")
        check(session.framer.bufferedCount <= RTCM3Frame.maximumFrameBytes, "framer holds too much")
        check(session.sourcetable.count <= NTRIPSourcetable.maximumBytes, "sourcetable read too far")
        check(session.sourcetable.mountPoints.count <= NTRIPSourcetable.maximumMountPoints, "too many names")
        check(health.damagedFrames >= 0 && health.skippedBytes >= 0 && health.bytes >= 0, "negative counters")
        let connected = [NTRIPSession.Phase.awaitingAnswer, .readingSourcetable, .streaming].contains(session.phase)
        check(!connected || open, "a connection phase without a connection")
    }
}

func executor(_ settings: NTRIPSession.Settings, _ caster: [UInt8], seed: UInt64) {
    var session = NTRIPSession(settings: settings)
    var watch = Watch(settings)
    var choices = Choices(state: seed ^ 0xA5A5)
    var now: Int64 = 7_000 * second
    var connections = 0
    var offset = 0  // in `caster`, for the current connection
    var steps = 0

    func tick(_ advance: Int64) {
        now += advance
        let actions = session.tick(now: now)
        watch.observe(actions, session, now: now)
        if let deadline = session.nextDeadline { check(deadline > now, "nextDeadline \(deadline) not after \(now)") }
    }

    watch.observe(session.start(now: now), session, now: now)
    events: while steps < 2_000 {
        steps += 1
        switch session.phase {
        case .idle:
            break events
        case .waiting:
            tick((session.nextDeadline ?? now) - now)
        case .connecting:
            switch choices.below(20) {
            case 0: watch.observe(session.connectionFailed(reason: "refused", now: now), session, now: now)
            case 1: tick(NTRIPSession.connectTimeout)
            default:
                connections += 1
                if connections > 6 {
                    watch.observe(session.stop(now: now), session, now: now)
                } else {
                    offset = 0
                    watch.observe(session.connected(now: now), session, now: now)
                }
            }
        case .awaitingAnswer, .readingSourcetable, .streaming:
            if offset >= caster.count {
                // The caster has said everything: it goes quiet, then closes (or the link breaks).
                switch choices.below(3) {
                case 0: watch.observe(session.connectionClosed(now: now), session, now: now)
                case 1: watch.observe(session.connectionFailed(reason: "reset", now: now), session, now: now)
                default: tick(Int64(choices.below(40)) * second)
                }
                continue
            }
            let end = min(caster.count, offset + 1 + choices.below(choices.below(3) == 0 ? 4 : 200))
            let piece = Array(caster[offset..<end])
            offset = end
            watch.observe(session.received(piece.span, now: now), session, now: now)
            switch choices.below(8) {
            case 0: tick(Int64(choices.below(4_000)) * 1_000_000)
            case 1: watch.observe(session.position(position(&choices), now: now), session, now: now)
            case 2: now += Int64(choices.below(1_500)) * 1_000_000
            default: break
            }
        }
    }
    if session.phase != .idle { watch.observe(session.stop(now: now), session, now: now) }
    check(!watch.open, "a connection left open after stop")
    check(session.nextDeadline == nil, "a deadline after stop")
}

func position(_ choices: inout Choices) -> Position {
    var position = Position()
    position.quality = FixQuality(ggaQuality: UInt8(choices.below(9))) ?? .noFix
    position.latitude = choices.below(10) == 0 ? 95 : Double(choices.below(180_000_000)) / 1e6 - 90
    position.longitude = choices.below(10) == 0 ? nil : Double(choices.below(360_000_000)) / 1e6 - 180
    position.time = UTCTimestamp(date: nil, nanosecondsOfDay: Int64(choices.below(86_401)) * second)
    position.satellitesInUse = choices.below(40)
    position.hdop = Double(choices.below(100)) / 10
    return position
}

/// `bytes` (a sentence with its CRLF) read by NMEA0183 as a checksummed GGA.
func checkGGA(_ bytes: [UInt8]) {
    check(bytes.count >= 2 && bytes.suffix(2) == [0x0D, 0x0A], "GGA without CRLF")
    let line = Array(bytes.dropLast(2))
    let decoded: GGA?
    do throws(NMEAError) {
        decoded = try readGGA(line)
    } catch {
        violation("GGA refused by NMEA0183: \(error): \(String(decoding: line, as: UTF8.self))")
    }
    check(decoded != nil, "not a checksummed GGA: \(String(decoding: line, as: UTF8.self))")
}

/// The GGA `line` holds, or nil when it is another sentence or has no checksum.
func readGGA(_ line: [UInt8]) throws(NMEAError) -> GGA? {
    let sentence = try NMEASentence(validating: line.span)
    guard sentence.hasChecksum, case .gga(let gga) = try NMEAMessage(sentence) else { return nil }
    return gga
}

// MARK: - 3: URLs

func fuzzURL(_ text: String) {
    guard case .success(let source) = NTRIPSource.parse(text) else { return }
    var withoutPassword = source
    withoutPassword.password = nil
    guard case .success(let again) = NTRIPSource.parse(source.description) else {
        violation("the description \(source.description) does not parse")
    }
    check(again == withoutPassword, "the description parses to another source")
    var otherPassword = source
    otherPassword.password = "other"
    check(otherPassword.description == source.description, "the description depends on the password")
    for revision in [NTRIPRevision.version1, .version2] {
        let request = NTRIPRequest.bytes(for: source, userAgent: "NTRIP \u{1}fuzz\r\n", revision: revision)
        let parsed = parseRequest(request.span)
        guard case .success(.complete(let head, let consumed)) = parsed else {
            violation("HTTP1 does not read the request for \(source): \(parsed)")
        }
        check(consumed == request.count, "the request has bytes after its head")
        check(head.method == .get, "the request is no GET")
        let target = String(decoding: copy(head.target(in: request.span)), as: UTF8.self)
        check(target == "/" + NTRIPSource.pathEncoded(source.mountPoint), "target \(target)")
        check(head.count(of: "Authorization", in: request.span) == (source.user == nil ? 0 : 1), "Authorization")
    }
}

func parseRequest(_ bytes: Span<UInt8>) -> Result<HTTPRequestHead.ParseResult, HTTPRequestError> {
    do throws(HTTPRequestError) {
        return .success(try HTTPRequestHead.parse(bytes))
    } catch {
        return .failure(error)
    }
}

func copy(_ span: Span<UInt8>) -> [UInt8] {
    var out: [UInt8] = []
    for i in span.indices { out.append(span[i]) }
    return out
}

// MARK: - 4: GGA

func fuzzGGA(_ body: [UInt8]) {
    guard body.count >= 26 else { return }
    func double(_ at: Int) -> Double {
        var bits: UInt64 = 0
        for i in 0..<8 { bits = bits << 8 | UInt64(body[at + i]) }
        return Double(bitPattern: bits)
    }
    var position = Position()
    position.latitude = double(0)
    position.longitude = double(8)
    position.mslHeight = double(16)
    position.quality = FixQuality(ggaQuality: body[24] % 9) ?? .autonomous
    position.time = UTCTimestamp(date: nil, nanosecondsOfDay: Int64(body[25]) * 337_000_000_123)
    position.hdop = Double(body[25]) / 7
    position.satellitesInUse = Int(body[24]) - 100
    guard let sentence = GGAWriter.sentence(for: position) else {
        check(!GGAWriter.isWritable(position), "a writable position made no sentence")
        return
    }
    check(sentence.count <= NMEASentence.maxLength + 2, "GGA of \(sentence.count) bytes")
    checkGGA(sentence)
    guard let gga = try? readGGA(Array(sentence.dropLast(2))) else { violation("the GGA does not read back") }
    let latitude = gga.latitude?.degrees ?? .nan
    let longitude = gga.longitude?.degrees ?? .nan
    check(abs(latitude - position.latitude!) < 1e-9, "latitude \(latitude) for \(position.latitude!)")
    check(abs(longitude - position.longitude!) < 1e-9, "longitude \(longitude) for \(position.longitude!)")
}
