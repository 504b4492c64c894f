// libFuzzer target for the HTTP/1.1 request parser (Sources/HTTP1).
//
// Built by Fuzz/run-http.sh into ONE module together with Sources/HTTP1 (no `import HTTP1`):
//
//   swiftc -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
//       -module-name HTTP1 Sources/HTTP1/*.swift Sources/ByteCoding/*.swift Fuzz/HTTPFuzz.swift -o Fuzz/build/http-fuzz
//   (with the `import ByteCoding` lines taken out of the copies: Fuzz/lib.sh fuzz_include_module)
//
// Per input:
// 1. `HTTPRequestHead.parse` on the whole input, on a prefix (split point from the first byte),
//    with `previousLength`, and after 3 junk bytes with `from: 3`. A prefix must need more, fail
//    with the same error, or (when it holds the whole head) give the same head; the quick rescan
//    must agree with the full parse; the offset parse must give the same head, shifted.
// 2. A complete head runs every accessor, each checked against the bytes: ranges inside the
//    head, token methods and names, trimmed legal values, lookups, list tokens, keep-alive and
//    upgrade flags recomputed from the fields, framing within the limits, path normalisation and
//    query decoding, and a response written for it. A rejected head gets its error response.
// 3. `HTTPRequestReader.readAll` (heads, Content-Length and chunked bodies, pipelining) on the
//    whole input, in two chunks and (inputs up to 256 bytes) one byte at a time: the same
//    requests, bodies, end and error (the quick rescan may defer an error in an incomplete head;
//    a full parse at the end must then find it).
// 4. `HTTPChunkedDecoder` directly on the input, whole and in two chunks: same body and outcome.
// 5. `HTTPQuery` and `HTTPPath` on the raw input.
// 6. `HTTPOrigin` on the raw input: a parsed origin's normal form parses to itself, and a
//    complete head's `Origin` decision agrees with a parse of its first `Origin` value.
//
// Any Swift runtime trap (overflow, bounds, force unwrap), AddressSanitizer report or failed
// `check` is a crash for libFuzzer, which then writes the reproducer to `Fuzz/build/http-crash-<sha1>`.

@inline(never)
func violation(_ message: String, _ line: UInt = #line) -> Never {
    fatalError("HTTPFuzz invariant violated (HTTPFuzz.swift:\(line)): \(message)")
}

@inline(__always)
func check(_ condition: Bool, _ message: @autoclosure () -> String, _ line: UInt = #line) {
    if !condition { violation(message(), line) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let span = input.span
    let split = size == 0 ? 0 : Int(input[0]) * (size + 1) / 256  // 0...size

    fuzzHead(input, split: split)
    fuzzReader(input, split: split)
    fuzzChunked(input, split: split)

    // 5. Query and path helpers on arbitrary bytes.
    _ = HTTPQuery.value(of: "format", in: span)
    _ = HTTPQuery.decode(span)
    let path = HTTPPath(normalizing: span)
    check(path.matches(span), "a path does not match its own normalisation")
    check(!path.normalized.isEmpty, "empty normalised path")

    // 6. Origins on arbitrary bytes.
    if let origin = try? HTTPOrigin(span, 0..<span.count) {
        check((try? HTTPOrigin(origin.serialization)) == origin, "origin \(origin) does not parse to its normal form")
        check(HTTPOriginPolicy.only([origin]).allows(origin), "a policy listing \(origin) refuses it")
    }
    return 0
}

// MARK: - 1 and 2: the head parser

enum Outcome: Equatable {
    case needMore
    case complete(HTTPRequestHead, Int)
    case failed(HTTPRequestError)
}

func outcome(_ bytes: Span<UInt8>, from start: Int = 0, previousLength: Int = 0) -> Outcome {
    do {
        switch try HTTPRequestHead.parse(bytes, from: start, previousLength: previousLength) {
        case .needMore: return .needMore
        case .complete(let head, let consumed): return .complete(head, consumed)
        }
    } catch {
        return .failed(error)
    }
}

func fuzzHead(_ input: [UInt8], split: Int) {
    let span = input.span
    let whole = outcome(span)

    // A prefix needs more, fails the same way, or holds the whole head.
    let prefix = Array(input[0..<split])
    let partial = outcome(prefix.span)
    switch whole {
    case .needMore:
        check(partial == .needMore, "prefix of \(split) bytes: \(partial), whole: needMore")
    case .failed(let error):
        check(partial == .needMore || partial == .failed(error), "prefix of \(split): \(partial), whole: \(error)")
    case .complete(_, let consumed):
        check(partial == (split >= consumed ? whole : .needMore), "prefix of \(split): \(partial), whole \(consumed)")
    }

    // picohttpparser's last_len: after `.needMore` for the prefix, the rescan agrees with a full parse
    // (or defers an error of an incomplete head).
    if partial == .needMore {
        let quick = outcome(span, previousLength: split)
        if case .failed = whole {
            check(quick == whole || quick == .needMore, "quick rescan: \(quick), full: \(whole)")
        } else {
            check(quick == whole, "quick rescan: \(quick), full: \(whole)")
        }
    }

    // Parsing at an offset gives the same head, shifted.
    let shifted = [0x78, 0x79, 0x7A] + input
    switch (whole, outcome(shifted.span, from: 3)) {
    case (.complete(let head, let consumed), .complete(var other, let otherConsumed)):
        check(other.start == 3 && consumed == otherConsumed, "offset parse: start \(other.start)")
        other.start = 0
        check(other == head, "offset parse gives another head")
        checkHead(other, in: span)
        var moved = other
        moved.start = 3
        checkHead(moved, in: shifted.span)
    case (let a, let b):
        check(a == b, "offset parse: \(b), at 0: \(a)")
    }

    if case .failed(let error) = whole {
        var writer = HTTPResponseWriter()
        writer.writeError(error, date: HTTPDate.imfFixdate(unixSeconds: Int64(input.count)))
        check(writer.bytes.starts(with: Array("HTTP/1.1 \(error.status.code) ".utf8)), "error response status line")
        check([400, 413, 414, 417, 431, 501, 505].contains(error.status.code), "status \(error.status.code)")
    }
}

/// Every accessor of a complete head, checked against the bytes.
func checkHead(_ head: HTTPRequestHead, in bytes: Span<UInt8>) {
    let range = head.range
    check(range.lowerBound >= 0 && range.upperBound <= bytes.count, "head range \(range)")
    check(head.length <= HTTPLimits.maxHeadBytes, "head of \(head.length) bytes")
    check(head.end == range.upperBound, "end")
    check(range.count >= 2 && bytes[range.upperBound - 1] == 0x0A, "head does not end with LF")
    func inside(_ r: Range<Int>) -> Bool { r.lowerBound >= range.lowerBound && r.upperBound <= range.upperBound }

    let method = head.method(in: bytes)
    check(inside(head.methodRange) && !method.isEmpty && method.count <= HTTPLimits.maxMethodLength, "method range")
    for i in method.indices { check(ASCII.isTokenChar(method[i]), "method byte \(method[i])") }
    check(HTTPMethod(bytes, head.methodRange) == head.method, "method enum")
    check(head.methodRange.upperBound < bytes.count && bytes[head.methodRange.upperBound] == 0x20, "SP after method")

    let target = head.target(in: bytes)
    check(inside(head.targetRange) && !target.isEmpty && target.count <= HTTPLimits.maxTargetLength, "target")
    for i in target.indices { check(ASCII.isTargetChar(target[i]), "target byte \(target[i])") }
    let path = head.path(in: bytes)
    check(head.pathRange.lowerBound >= head.targetRange.lowerBound, "path before target")
    check(head.pathRange.upperBound <= head.targetRange.upperBound, "path after target")
    if let query = head.queryRange {
        check(query.upperBound == head.targetRange.upperBound, "query does not end the target")
        check(
            query.lowerBound >= head.pathRange.upperBound + 1 && bytes[query.lowerBound - 1] == ASCII.question,
            "no ? before the query")
        let q = bytes.extracting(query)
        // Every key in the query is found.
        var start = 0
        while start <= q.count {
            var end = start
            while end < q.count && q[end] != ASCII.ampersand { end += 1 }
            if end > start {
                var eq = start
                while eq < end && q[eq] != ASCII.equals { eq += 1 }
                let key = String(decoding: HTTPQuery.decode(q.extracting(start..<eq)), as: UTF8.self)
                if !key.utf8.contains(0xEF) {  // keys with U+FFFD do not round-trip; skip those
                    check(head.queryValue(key, in: bytes) != nil, "query key \(key) not found")
                }
            }
            start = end + 1
        }
    }
    switch head.targetForm {
    case .origin: check(!path.isEmpty && path[0] == ASCII.slash, "origin-form path")
    case .asterisk: check(head.method == .options && target.count == 1 && path.count == 1, "asterisk-form")
    case .authority: check(head.method == .connect && path.isEmpty && head.queryRange == nil, "authority-form")
    case .absolute: check(path.isEmpty || path[0] == ASCII.slash, "absolute-form path")
    }
    let normalized = head.normalizedPath(in: bytes)
    check(!normalized.isEmpty, "empty normalised path")
    check(head.pathMatches(HTTPPath(normalizing: path), in: bytes), "path does not match itself")
    check(HTTPOriginPolicy.any.decide(head, in: bytes) == .any, "the any policy read the Origin field")
    let listed = HTTPOriginPolicy.only([.null])
    switch listed.decide(head, in: bytes) {
    case .any: violation("a list decided any")
    case .absent: check(head.index(of: "Origin", in: bytes) == nil, "absent with an Origin field")
    case .allowed(let sent):
        check(head.count(of: "Origin", in: bytes) == 1 && sent == "null", "allowed \(sent)")
    case .refused: check(head.index(of: "Origin", in: bytes) != nil, "refused without an Origin field")
    }

    check(head.fieldCount >= 0 && head.fieldCount <= HTTPLimits.maxFieldCount, "field count \(head.fieldCount)")
    var hosts = 0
    var close = false
    var keepAliveOption = false
    var upgradeOption = false
    var webSocket = false
    for index in 0..<head.fieldCount {
        let nameRange = head.nameRange(index)
        let valueRange = head.valueRange(index)
        check(inside(nameRange) && inside(valueRange), "field \(index) outside the head")
        check(nameRange.upperBound <= valueRange.lowerBound, "value before name")
        let name = head.name(at: index, in: bytes)
        let value = head.value(at: index, in: bytes)
        check(!name.isEmpty, "empty name")
        for i in name.indices { check(ASCII.isTokenChar(name[i]), "name byte \(name[i])") }
        check(bytes[nameRange.upperBound] == ASCII.colon, "no colon after the name")
        for i in value.indices {
            check(ASCII.isFieldValueChar(value[i]), "value byte \(value[i])")
        }
        if !value.isEmpty {
            check(!ASCII.isBlank(value[0]) && !ASCII.isBlank(value[value.count - 1]), "untrimmed value")
        }
        let nameText = String(decoding: copy(name), as: UTF8.self)
        let first = head.index(of: nameText, in: bytes)
        check(first != nil && first! <= index, "index(of: \(nameText))")
        check(head.index(of: nameText, from: index, in: bytes) == index, "index(of:from:)")
        check(head.count(of: nameText, in: bytes) >= 1, "count(of:)")
        _ = head.string(of: nameText, in: bytes)
        if let found = head.value(of: nameText, in: bytes) { _ = found.count } else { violation("value(of:) nil") }
        switch nameText.lowercased() {
        case "host": hosts += 1
        case "connection":
            close = close || head.listContains("close", inField: "connection", in: bytes)
            keepAliveOption = keepAliveOption || head.listContains("keep-alive", inField: "connection", in: bytes)
            upgradeOption = upgradeOption || head.listContains("upgrade", inField: "connection", in: bytes)
        case "upgrade":
            webSocket = webSocket || head.listContains("websocket", inField: "upgrade", in: bytes)
        default: break
        }
    }
    check(hosts <= 1 && (hosts == 1 || head.version == .http1_0), "\(hosts) Host fields accepted")
    check(head.keepAlive == (!close && (head.version == .http1_1 || keepAliveOption)), "keepAlive")
    check(
        head.isWebSocketUpgrade == (head.method == .get && head.version == .http1_1 && upgradeOption && webSocket),
        "isWebSocketUpgrade")
    check(!head.expectsContinue || head.version == .http1_1, "expectsContinue in HTTP/1.0")
    switch head.framing {
    case .none:
        check(
            head.count(of: "content-length", in: bytes) == 0 && head.count(of: "transfer-encoding", in: bytes) == 0,
            "framing none")
    case .contentLength(let n):
        check(n >= 0 && n <= HTTPLimits.maxBodyBytes && head.contentLength == n, "content length \(n)")
    case .chunked: check(head.version == .http1_1 && head.count(of: "content-length", in: bytes) == 0, "chunked")
    }

    var writer = HTTPResponseWriter()
    writer.writeResponse(
        .ok, date: HTTPDate.imfFixdate(unixSeconds: Int64(head.length) * 1_000_003), contentType: "text/plain",
        body: path, keepAlive: head.keepAlive, requestVersion: head.version, isHeadRequest: head.method == .head,
        cors: .preflight(maxAgeSeconds: HTTPCORSHeaders.defaultMaxAge))
    check(writer.bytes.starts(with: Array("HTTP/1.1 200 OK\r\n".utf8)), "response status line")
}

func copy(_ span: Span<UInt8>) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(span.count)
    for i in span.indices { bytes.append(span[i]) }
    return bytes
}

// MARK: - 3: the request reader

struct ReadRequest: Equatable {
    var head: HTTPRequestHead
    var range: Range<Int>
    var body: [UInt8]
}

struct Reading: Equatable {
    var requests: [ReadRequest] = []
    var end = 0
    var error: HTTPRequestError?
    var endsConnection = false
}

/// Reads `input` with a reader fed the bytes up to each of `splits`, then the whole input.
func read(_ input: [UInt8], splits: [Int], checkHeads: Bool = false) -> Reading {
    var reader = HTTPRequestReader()
    var result = Reading()
    for end in splits + [input.count] where end >= result.end {
        let available = input.span.extracting(0..<end)
        let batch = reader.readAll(in: available, from: result.end)
        var expectedStart = result.end
        for request in batch.requests {
            check(
                request.range.lowerBound == expectedStart, "request at \(request.range), expected at \(expectedStart)")
            expectedStart = request.range.upperBound
            check(
                request.head.start == request.range.lowerBound, "head start \(request.head.start) vs \(request.range)")
            check(request.bodyCount <= HTTPLimits.maxBodyBytes, "body of \(request.bodyCount) bytes")
            let body = request.bodyBytes(in: available)
            check(body.count == request.bodyCount, "bodyBytes and bodyCount differ")
            if checkHeads { checkHead(request.head, in: available) }
            result.requests.append(ReadRequest(head: request.head, range: request.range, body: body))
        }
        check(batch.end >= result.end && batch.end <= end, "batch end \(batch.end)")
        result.end = batch.end
        if let error = batch.error {
            result.error = error
            break
        }
        if batch.endsConnection {
            result.endsConnection = true
            break
        }
    }
    return result
}

func fuzzReader(_ input: [UInt8], split: Int) {
    let whole = read(input, splits: [], checkHeads: true)
    func agree(_ other: Reading, _ how: String) {
        check(
            other.requests == whole.requests, "\(how): \(other.requests.count) requests, whole: \(whole.requests.count)"
        )
        check(
            other.end == whole.end && other.endsConnection == whole.endsConnection,
            "\(how): end \(other.end) vs \(whole.end)")
        if other.error != whole.error {
            // Only the quick rescan may defer an error, and only one a full parse of the
            // remaining (incomplete) head finds.
            check(
                other.error == nil,
                "\(how): error \(String(describing: other.error)) vs \(String(describing: whole.error))")
            check(
                outcome(input.span, from: other.end) == .failed(whole.error!),
                "\(how): deferred error \(String(describing: whole.error)) not found by a full parse")
        }
    }
    agree(read(input, splits: [split]), "two chunks split at \(split)")
    if input.count <= 256 {
        agree(read(input, splits: Array(0..<input.count)), "one byte at a time")
    }
}

// MARK: - 4: the chunked decoder

func fuzzChunked(_ input: [UInt8], split: Int) {
    func decode(_ splits: [Int]) -> (body: [UInt8], consumed: Int, complete: Bool, error: HTTPRequestError?) {
        var decoder = HTTPChunkedDecoder()
        var body: [UInt8] = []
        var consumed = 0
        var start = 0
        for end in splits + [input.count] where end >= start {
            let piece = Array(input[start..<end])
            do {
                let used = try decoder.decode(piece.span, into: &body)
                check(
                    used <= piece.count && (decoder.isComplete || used == piece.count),
                    "consumed \(used) of \(piece.count)")
                consumed += used
            } catch {
                return (body, consumed, false, error)
            }
            check(body.count == decoder.decodedCount && body.count <= HTTPLimits.maxBodyBytes, "decoded count")
            start = end
            if decoder.isComplete { break }
        }
        return (body, consumed, decoder.isComplete, nil)
    }
    let whole = decode([])
    let halves = decode([split])
    check(
        whole.error == halves.error,
        "chunked error \(String(describing: whole.error)) vs \(String(describing: halves.error))")
    if whole.error == nil {
        check(
            whole.body == halves.body && whole.consumed == halves.consumed && whole.complete == halves.complete,
            "chunked decoding depends on the split at \(split)")
    }
}
