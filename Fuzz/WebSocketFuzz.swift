// libFuzzer target for the WebSocket connection state machine (frame decoding, unmasking,
// fragmentation, UTF-8, close handling), plus Base64 and the UTF-8 validator on the side.
//
// Built by Fuzz/run-websocket.sh into ONE module together with Sources/WebSocket (no
// `import WebSocket`):
//
//   swiftc -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
//       Sources/WebSocket/*.swift Sources/ByteCoding/*.swift Sources/HTTP1/*.swift Fuzz/WebSocketFuzz.swift \
//       -o Fuzz/build/websocket-fuzz
//   (with the `import ByteCoding` and `import HTTP1` lines taken out of the copies: Fuzz/lib.sh)
//
// Input layout: byte 0 is a mode byte, the rest is the body.
//   bit 0     0: the body is raw client bytes; 1: the body is a "frame script" (below) that the
//             harness turns into masked frames with correct lengths, so mutations reach the
//             fragmentation, UTF-8 and close logic instead of dying at the MASK bit.
//   bits 1-6  where to split the bytes into two reads: split = value * (count + 1) / 64.
//   bit 7     small limits (frames 200, messages 300 bytes) to reach the 1009 paths.
// Frame script: repeated [b0][ctl][payload]: b0 is the first header byte (RSV bits cleared unless
// ctl bit 7 is set); ctl & 0x7F is the payload length (127: everything left), taken from what follows.
//
// Per input:
// 1. The client bytes are fed in one read, in two reads split at `split`, and (up to 512 bytes)
//    one byte per read: all must give the same actions, state and termination.
// 2. Every action is checked: at most one ending action and it comes last; every write is a
//    well-formed unmasked server frame (pongs of at most 125 bytes); an ending write is a Close
//    with a code valid on the wire; delivered text is valid UTF-8 (the stdlib agrees) and no
//    message exceeds the limit; `receive` always makes progress.
// 3. The same bytes after our own Close (state closingByUs) also agree across chunkings; then
//    the owner events (idle ticks, close, fail, transportClosed) run on every ending state.
// 4. `UTF8Validator` agrees with `String(validating:)` on the body; `Base64.decode` of the body,
//    when it succeeds, re-encodes to text that decodes to the same bytes.
//
// Any runtime trap (overflow, bounds), AddressSanitizer report or failed `check` is a crash for
// libFuzzer, which then writes the reproducer to `websocket-crash-<sha1>`.

/// A failed invariant: a crash with a message libFuzzer prints next to the reproducer.
@inline(never)
func violation(_ message: String, _ line: UInt = #line) -> Never {
    fatalError("WebSocketFuzz invariant violated (WebSocketFuzz.swift:\(line)): \(message)")
}

@inline(__always)
func check(_ condition: Bool, _ message: @autoclosure () -> String, _ line: UInt = #line) {
    if !condition { violation(message(), line) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = input.first else { return 0 }
    let body = Array(input.dropFirst())
    let wire = mode & 1 == 0 ? body : script(body)
    let split = Int((mode >> 1) & 0x3F) * (wire.count + 1) / 64
    let configuration =
        mode & 0x80 != 0
        ? WebSocketConnection.Configuration(maxFrameSize: 200, maxMessageSize: 300)
        : WebSocketConnection.Configuration()

    // 1-2. Chunking independence and action invariants, from the open state.
    let whole = drive(wire, cuts: [], configuration: configuration, closeFirst: false)
    let halves = drive(wire, cuts: [split], configuration: configuration, closeFirst: false)
    check(halves == whole, "split at \(split) differs: \(whole) vs \(halves)")
    if wire.count <= 512 {
        let dripped = drive(wire, cuts: Array(0...wire.count), configuration: configuration, closeFirst: false)
        check(dripped == whole, "one byte per read differs")
    }
    checkActions(whole, configuration: configuration, closeFirst: false)

    // 3. The same after our own Close.
    let closing = drive(wire, cuts: [], configuration: configuration, closeFirst: true)
    let closingHalves = drive(wire, cuts: [split], configuration: configuration, closeFirst: true)
    check(closing == closingHalves, "split at \(split) differs after our Close")
    checkActions(closing, configuration: configuration, closeFirst: true)

    // 4. Side checks on the body itself.
    let valid = UTF8Validator.isValid(body.span)
    check(valid == (String(validating: body, as: UTF8.self) != nil), "UTF-8 verdict differs from the stdlib")
    if let decoded = Base64.decode(body.span) {
        let again = Base64.encodeToBytes(decoded.span)
        check(again.count == body.count, "Base64 re-encoding changed the length")
        check(Base64.decode(again.span) == decoded, "Base64 round trip")
    }
    return 0
}

/// Everything observable after feeding a connection.
struct Outcome: Equatable, CustomStringConvertible {
    var actions: [WebSocketAction] = []
    var state: WebSocketConnection.State = .open
    var termination: WebSocketConnection.Termination?

    var description: String { "\(actions.count) actions, \(state), \(String(describing: termination))" }
}

func drive(
    _ bytes: [UInt8], cuts: [Int], configuration: WebSocketConnection.Configuration, closeFirst: Bool
) -> Outcome {
    var connection = WebSocketConnection(configuration: configuration)
    var outcome = Outcome()
    if closeFirst {
        check(connection.close(code: .goingAway) != nil, "close() in the open state returned nothing")
    }
    let all = bytes.span
    var start = 0
    for end in cuts + [bytes.count] where end >= start {
        let chunk = all.extracting(start..<end)
        var offset = 0
        while offset < chunk.count {
            let step = connection.receive(chunk.extracting(offset..<chunk.count))
            check(step.consumed > 0 && step.consumed <= chunk.count - offset, "receive consumed \(step.consumed)")
            offset += step.consumed
            if let action = step.action { outcome.actions.append(action) }
        }
        start = end
    }
    outcome.state = connection.state
    outcome.termination = connection.termination
    exerciseOwnerEvents(&connection)
    return outcome
}

/// Owner events on whatever state the bytes left: none may trap, and the ending ones stick.
func exerciseOwnerEvents(_ connection: inout WebSocketConnection) {
    var copy = connection
    for tick in [0, 25, 50, 75] as [Int64] { _ = copy.idle(now: tick * 1_000_000_000) }
    _ = copy.close()
    _ = copy.fail(code: .policyViolation)
    check(copy.state == .closed, "fail() left \(copy.state)")
    copy.transportClosed()
    check(copy.state == .closed && copy.termination != nil, "transportClosed() left \(copy.state)")
}

func checkActions(_ outcome: Outcome, configuration: WebSocketConnection.Configuration, closeFirst: Bool) {
    var ended = false
    for action in outcome.actions {
        check(!ended, "an action after the ending action")
        switch action {
        case .deliver(let message):
            check(message.payload.count <= configuration.maxMessageSize, "message of \(message.payload.count) bytes")
            if message.kind == .text {
                check(String(validating: message.payload, as: UTF8.self) != nil, "delivered text is not UTF-8")
            }
        case .write(let frame):
            check(!closeFirst, "wrote after our Close")
            let (opcode, payload) = parseServerFrame(frame)
            check(opcode == 0xA, "wrote opcode \(opcode), expected a pong")
            check(payload.count <= 125, "pong of \(payload.count) bytes")
        case .writeAndClose(let frame):
            ended = true
            check(!closeFirst, "a second Close")
            let (opcode, payload) = parseServerFrame(frame)
            check(opcode == 0x8, "ending write is opcode \(opcode), not a Close")
            check(payload.count != 1, "Close body of one byte")
            if payload.count >= 2 {
                let code = WebSocketCloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
                check(code.isValidOnWire, "sent close code \(code)")
                check(String(validating: payload.dropFirst(2), as: UTF8.self) != nil, "Close reason is not UTF-8")
            }
        case .close:
            ended = true
            check(closeFirst, "closed without a Close frame while open")
        }
    }
    switch outcome.state {
    case .open, .closingByUs:
        check(!ended, "ended but state \(outcome.state)")
        check(outcome.state == (closeFirst ? .closingByUs : .open), "state \(outcome.state)")
    case .closingByPeer, .closed:
        check(ended, "state \(outcome.state) without an ending action")
        check(outcome.termination != nil, "no termination recorded")
    }
}

/// Opcode and payload of one unmasked server frame that must fill `frame` exactly.
func parseServerFrame(_ frame: [UInt8]) -> (UInt8, [UInt8]) {
    check(frame.count >= 2, "server frame of \(frame.count) bytes")
    check(frame[0] & 0xF0 == 0x80, "server frame byte 0 is \(frame[0]): FIN must be set, RSV clear")
    check(frame[1] & 0x80 == 0, "server frame is masked")
    var length = Int(frame[1] & 0x7F)
    var offset = 2
    if length == 126 {
        length = Int(frame[2]) << 8 | Int(frame[3])
        offset = 4
        check(length >= 126, "non-minimal server length")
    } else if length == 127 {
        length = 0
        for i in 2..<10 { length = length << 8 | Int(frame[i]) }
        offset = 10
        check(length >= 65_536, "non-minimal server length")
    }
    check(frame.count == offset + length, "server frame length \(length) but \(frame.count - offset) payload bytes")
    return (frame[0] & 0x0F, Array(frame[offset...]))
}

/// Turns a frame script into masked client frames with correct, minimal lengths.
func script(_ body: [UInt8]) -> [UInt8] {
    var wire: [UInt8] = []
    var i = 0
    var frameIndex: UInt32 = 0
    while i + 2 <= body.count {
        let control = body[i + 1]
        let b0 = control & 0x80 != 0 ? body[i] : body[i] & 0x8F
        i += 2
        let wanted = Int(control & 0x7F)
        let n = wanted == 127 ? body.count - i : min(wanted, body.count - i)
        let payload = body[i..<(i + n)]
        i += n
        wire.append(b0)
        if n < 126 {
            wire.append(0x80 | UInt8(n))
        } else if n <= 0xFFFF {
            wire += [0x80 | 126, UInt8(n >> 8), UInt8(n & 0xFF)]
        } else {
            wire.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { wire.append(UInt8(truncatingIfNeeded: n >> shift)) }
        }
        frameIndex &+= 1
        let key = frameIndex &* 0x9E37_79B9
        let keyBytes = (0..<4).map { UInt8(truncatingIfNeeded: key >> (24 - 8 * UInt32($0))) }
        wire += keyBytes
        for (j, byte) in payload.enumerated() { wire.append(byte ^ keyBytes[j & 3]) }
    }
    return wire
}
