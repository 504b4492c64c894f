// libFuzzer target for the registration codecs (Sources/TMMProtocol: RegistrationURL, ByteCoding's Base64,
// PercentEncoding, GUID, RegistrationJSONObject, PortPlan, Access Code V1 and V2 header and claim
// parsing).
//
// Built by Fuzz/run-registration.sh into ONE module together with the pure files it needs (no
// `import TMMProtocol`, so internals are reachable):
//
//   swiftc -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
//       -module-name TMMProtocol Sources/TMMProtocol/{JSONWriter,PercentEncoding*,Registration*,
//       PortPlan*,AccessCode*}.swift Sources/ByteCoding/*.swift Fuzz/RegistrationFuzz.swift \
//       -o Fuzz/build/registration-fuzz
//   (with the `import ByteCoding` lines taken out of the copies: Fuzz/lib.sh fuzz_include_module)
//
// Per input (read as a URL string, invalid UTF-8 repaired):
// 1. `RegistrationURL.parse`, `parseIOS` and `parseWindows` agree: the dispatcher's answer equals the
//    platform codec's, and the other codec refuses the scheme. Every error has a description.
// 2. An accepted request is re-encoded canonically (iOS: Base64 JSON written by JSONWriter; Windows:
//    percent-encoded query) and parses back to the same request.
// 3. The replies under `.open` and an allowlist, with ports taken from the input, decode back: the iOS
//    reply's Base64 JSON holds `registrationResult` and the ports as strings; the Windows reply's query
//    holds id, status, message, registrationResult and the ports.
// 4. Helpers on the raw bytes: Base64 decode→encode→decode, encode→decode; percent decode→encode→
//    decode; GUID canonical form re-parses; the JSON reader does not crash; Access Code header parsing.
// 5. A port plan driven with busy ports from the input: distinct ports, stable once bound.

@inline(never)
func violation(_ message: String, _ line: UInt = #line) -> Never {
    fatalError("RegistrationFuzz invariant violated (RegistrationFuzz.swift:\(line)): \(message)")
}

@inline(__always)
func check(_ condition: Bool, _ message: @autoclosure () -> String, _ line: UInt = #line) {
    if !condition { violation(message(), line) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let url = String(decoding: input, as: UTF8.self)
    let ports = portsFrom(input)

    fuzzURL(url, ports: ports)
    fuzzHelpers(input, url)
    fuzzPortPlan(input)
    return 0
}

/// Six distinct non-zero ports derived from the input (the defaults when it is short).
func portsFrom(_ input: [UInt8]) -> PortAssignment {
    var ports = PortAssignment.defaults
    guard input.count >= 2 else { return ports }
    let shift = UInt16(input[0]) << 8 | UInt16(input[1])
    for server in TMMServer.allCases {
        ports[server] = (server.defaultPort &+ shift) == 0 ? 1 : server.defaultPort &+ shift
    }
    return ports
}

func result<T>(_ body: () throws(RegistrationError) -> T) -> Result<T, RegistrationError> {
    do { return .success(try body()) } catch { return .failure(error) }
}

func fuzzURL(_ url: String, ports: PortAssignment) {
    let any = result { () throws(RegistrationError) in try RegistrationURL.parse(url) }
    let ios = result { () throws(RegistrationError) in try RegistrationURL.parseIOS(url) }
    let windows = result { () throws(RegistrationError) in try RegistrationURL.parseWindows(url) }

    switch any {
    case .failure(let error):
        check(!error.description.isEmpty, "empty error description")
        // Whatever the dispatcher refused, neither codec accepts.
        if case .success = ios { violation("parse refused (\(error)) but parseIOS accepted") }
        if case .success = windows { violation("parse refused (\(error)) but parseWindows accepted") }
    case .success(let request):
        switch request.platform {
        case .iOS:
            check(ios == .success(request), "parseIOS disagrees with parse")
            if case .success = windows { violation("parseWindows accepted an iOS request") }
        case .windows:
            check(windows == .success(request), "parseWindows disagrees with parse")
            if case .success = ios { violation("parseIOS accepted a Windows request") }
        }
        checkRequest(request)
        roundTripRequest(request)
        checkReplies(request, ports: ports)
    }
}

func checkRequest(_ request: RegistrationRequest) {
    check(!request.returnURL.isEmpty, "empty return URL accepted")
    for c in request.returnURL.utf8 { check(c > 0x20 && c < 0x7F, "return URL byte \(c) accepted") }
    check(request.returnURL.utf8.contains(UInt8(ascii: ":")), "return URL without a colon accepted")
    switch request.kind {
    case .register(let id): check(GUID(id.canonical) == id, "GUID does not re-parse")
    case .socketServerPort(let id): if let id { check(GUID(id.canonical) == id, "GUID does not re-parse") }
    case .unsupported(let name):
        check(request.platform == .windows, "an unsupported request from iOS")
        check(
            !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy(ASCII.isAlphanumeric), "request name \(name)"
        )
    }
}

/// Canonical encodings of `request` parse back to it.
func roundTripRequest(_ request: RegistrationRequest) {
    let id: GUID?
    switch request.kind {
    case .register(let guid): id = guid
    case .socketServerPort(let guid): id = guid
    case .unsupported: id = nil
    }
    let url: String
    switch request.platform {
    case .iOS:
        var writer = JSONWriter(reservingCapacity: 256)
        writer.beginObject()
        if let id { writer.field("application_id", string: id.canonical) }
        writer.field("returl", string: request.returnURL)
        writer.endObject()
        let scheme: String
        switch request.kind {
        case .register: scheme = RegistrationURL.iOSRegisterScheme
        case .socketServerPort, .unsupported: scheme = RegistrationURL.iOSSocketServerPortScheme
        }
        url = scheme + "://?" + String(decoding: Base64.encodeToBytes(writer.span), as: UTF8.self)
    case .windows:
        var query = "callback=" + PercentEncoding.encode(request.returnURL)
        if let id { query = "applicationId=" + id.canonical.uppercased() + "&" + query }
        url = "trimbleMobileManager://request/" + request.windowsRequestName + "?" + query
    }
    let again = result { () throws(RegistrationError) in try RegistrationURL.parse(url) }
    check(again == .success(request), "canonical re-encoding \(url) parsed as \(again)")
}

func checkReplies(_ request: RegistrationRequest, ports: PortAssignment) {
    let stranger = GUID("00000000-0000-0000-0000-000000000000")!
    for policy in [RegistrationPolicy.open, .allowlist([stranger])] {
        let reply = RegistrationURL.reply(to: request, policy: policy, ports: ports)
        var expectedResult: RegistrationResult?
        if case .register(let id) = request.kind { expectedResult = policy.evaluate(id) }
        switch request.platform {
        case .iOS: checkIOSReply(reply, request: request, result: expectedResult, ports: ports)
        case .windows: checkWindowsReply(reply, request: request, result: expectedResult, ports: ports)
        }
    }
}

func checkIOSReply(_ reply: String, request: RegistrationRequest, result: RegistrationResult?, ports: PortAssignment) {
    let prefix = request.returnURL + "?"
    check(reply.hasPrefix(prefix), "iOS reply does not start with returl?")
    let b64 = reply.dropFirst(prefix.count)
    guard let payload = Base64.decode(b64) else { violation("iOS reply is not Base64") }
    check(Base64.encode(payload) == String(b64), "iOS reply Base64 is not canonical")
    let object: RegistrationJSONObject
    do { object = try RegistrationJSONObject.parse(payload) } catch { violation("iOS reply JSON: \(error)") }
    check(object.otherKeys.isEmpty, "iOS reply has non-string members")
    check(object.strings["registrationResult"] == result?.rawValue, "iOS registrationResult")
    // The ports come with every result (the 2025 Swift sample force-unwraps apiPort).
    for server in TMMServer.allCases {
        check(object.strings[server.registrationKey] == String(ports[server]), "iOS \(server.registrationKey)")
    }
}

func checkWindowsReply(
    _ reply: String, request: RegistrationRequest, result: RegistrationResult?, ports: PortAssignment
) {
    check(reply.hasPrefix(request.returnURL), "Windows reply does not start with the callback")
    let rest = reply.dropFirst(request.returnURL.utf8.count)
    let separator: Character = request.returnURL.contains("?") ? "&" : "?"
    check(rest.first == separator, "Windows reply separator")
    var values: [String: String] = [:]
    for pair in rest.dropFirst().split(separator: "&", omittingEmptySubsequences: false) {
        let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        check(kv.count == 2, "Windows reply pair without '='")
        guard let value = PercentEncoding.decode(kv[1]) else { violation("Windows reply value not decodable") }
        check(PercentEncoding.encode(value) == String(kv[1]), "Windows reply value not canonically encoded")
        check(values.updateValue(value, forKey: String(kv[0])) == nil, "Windows reply duplicate key")
    }
    check(values["id"] == request.windowsRequestName, "Windows id")
    if case .unsupported(let name) = request.kind {
        check(
            values["status"] == "error" && values["message"] == RegistrationURL.unsupportedMessage(name),
            "unsupported reply")
        check(values.count == 3, "unsupported reply carries only id, status, message")
        return
    }
    let ok = result == nil || result == .ok
    check(values["status"] == (ok ? "success" : "error"), "Windows status")
    check(values["message"] != nil, "Windows message")
    check(values["registrationResult"] == result?.rawValue, "Windows registrationResult")
    for server in TMMServer.allCases {
        let expected: String? = ok ? String(ports[server]) : nil
        check(values[server.registrationKey] == expected, "Windows \(server.registrationKey)")
    }
}

func fuzzHelpers(_ input: [UInt8], _ text: String) {
    // Base64.
    let encoded = Base64.encodeToBytes(input.span)
    check(encoded.count == (input.count + 2) / 3 * 4, "Base64 length")
    check(Base64.decode(encoded.span) == input, "Base64 encode→decode")
    let strict = Base64.decode(input.span)
    if let decoded = Base64.decode(input.span, options: .lenient) {
        let again = Base64.encodeToBytes(decoded.span)
        check(Base64.decode(again.span) == decoded, "Base64 decode→encode→decode")
        check(decoded.count <= input.count, "Base64 grew")
        if let strict { check(strict == decoded, "strict and lenient Base64 differ on strict text") }
    } else {
        check(strict == nil, "strict Base64 accepts what lenient refuses")
    }
    // Percent-encoding.
    if let decoded = PercentEncoding.decode(text) {
        check(PercentEncoding.decode(PercentEncoding.encode(decoded)) == decoded, "percent round trip")
    }
    check(PercentEncoding.decode(PercentEncoding.encode(text)) == text, "percent encode→decode")
    // GUID.
    if let guid = GUID(text) {
        check(guid.canonical.utf8.count == 36 && GUID(guid.canonical) == guid, "GUID canonical form")
        check(GUID(guid.canonical.uppercased()) == guid, "GUID case")
    }
    // JSON reader (no crash; a parsed object re-written by JSONWriter parses to the same strings).
    if let object = try? RegistrationJSONObject.parse(input) {
        var writer = JSONWriter(reservingCapacity: 256)
        writer.beginObject()
        for key in object.strings.keys.sorted() { writer.field(key, string: object.strings[key]) }
        writer.endObject()
        guard let again = try? RegistrationJSONObject.parse(writer.bytes) else { violation("re-written JSON refused") }
        check(again.strings == object.strings, "JSON strings round trip")
    }
    // Access Code header parsing.
    if let code = AccessCodeV1.presentedCode(headerValue: text) {
        check(!code.isEmpty && code.first != 0x20 && code.last != 0x20, "presented code not trimmed")
    }
    if input.count >= 8 {
        var seconds: Int64 = 0
        for i in 0..<8 { seconds = seconds << 8 | Int64(input[i]) }
        let stamp = AccessCodeV1.timestamp(unixSeconds: seconds)
        check(stamp.utf8.count == 20, "timestamp length")
        // The timestamp reader inverts the writer (years 0000-9999).
        let clamped = min(max(seconds, -62_167_219_200), 253_402_300_799)
        check(AccessCodeV1.unixSeconds(timestamp: ArraySlice(stamp.utf8)) == clamped, "timestamp round trip \(stamp)")
    }
    // Access Code V2: the header's form, and the decrypted claim (the input as plaintext).
    if let ciphertext = AccessCodeV2.presentedCiphertext(headerValue: text) {
        check(!ciphertext.isEmpty && AccessCodeV2.isAccessCodeV2(headerValue: text), "V2 header")
    }
    let now: Int64 = 1_708_624_800
    switch AccessCodeV2.claim(plaintext: input, now: now) {
    case .success(let claim):
        check(input.count == 57, "claim length")
        check(
            claim.unixSeconds >= now - AccessCodeV2.lifetimeSeconds
                && claim.unixSeconds <= now + AccessCodeV2.futureSkewSeconds, "claim outside its window")
        // The canonical plaintext of the claim reads back to the same claim.
        let canonical = AccessCodeV2.plaintext(applicationID: claim.applicationID, unixSeconds: claim.unixSeconds)
        check(AccessCodeV2.claim(plaintext: canonical, now: now) == .success(claim), "claim round trip")
    case .failure(let refusal):
        check(!refusal.description.isEmpty, "refusal text")
    }
}

func fuzzPortPlan(_ input: [UInt8]) {
    // Busy ports: defaults and the start of the fallback range, chosen by the input bits.
    var busy: Set<UInt16> = []
    for (i, byte) in input.prefix(4).enumerated() {
        for bit in 0..<8 where byte & (1 << bit) != 0 {
            let n = UInt16(i * 8 + bit)
            busy.insert(n < 6 ? 9635 + n : 9650 + n - 6)
        }
    }
    let configuration = PortPlan.Configuration(fallbackStart: 9650, fallbackEnd: 9700)
    let resolved: PortAssignment?
    do {
        resolved = try PortPlan.resolve(configuration: configuration, isFree: { !busy.contains($0) })
    } catch {
        violation("resolve failed: \(error)")
    }
    guard let plan = resolved else { violation("range 9650-9700 cannot be exhausted by 32 busy ports") }
    var seen: Set<UInt16> = []
    for server in TMMServer.allCases {
        let port = plan[server]
        check(!busy.contains(port), "busy port assigned")
        check(seen.insert(port).inserted, "port assigned twice")
        check(port == server.defaultPort || port >= 9650, "fallback below 9650")
    }
}
