// libFuzzer target for the pure parsers of Sources/Bridge: the configuration file
// (ConfigurationFile.parse), the control socket's line protocol (ControlProtocol.parseRequest,
// formatReply, parseReply) and the cutting of a capture into epochs for replay (ReplayCapture,
// sentenceType, timeOfDay).
//
// Built by Fuzz/run-bridge.sh into ONE module together with the three pure files (no
// `import Bridge`, so internals are reachable):
//
//   swiftc -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
//       -module-name Bridge Sources/Bridge/{ConfigurationFile,ControlProtocol,ReplayCapture}.swift \
//       Fuzz/BridgeFuzz.swift -o Fuzz/build/bridge-fuzz
//
// The first input byte picks the parser by its value modulo 3 (the seeds use a letter: `c` 0x63 the
// configuration file, `p` 0x70 the control protocol, `n` 0x6E an NMEA capture); the rest of the input
// is the text, invalid UTF-8 repaired as `String(decoding:as:)` does. Lines below are the bytes
// between LFs (a CR right before an LF belongs to the line end): CRLF is one Character in Swift, and
// no other Character spans an LF, so this byte view is what the parsers see.
//
// 1. Configuration (`ConfigurationFile.parse(text, path: "fuzz.conf")`):
//    - accepted: names non-empty, of letters/digits/`-` (no white space, control, `=`, `#` or `"`
//      scalar); values hold no LF and no CR; line numbers strictly increase, are at most the number
//      of lines, and the entry's name and value bytes are on that line; every line parsed alone
//      gives that line's entry (or none), so the format is line-local; the entries written back as
//      `name = "value"` lines, as `name = "value"   # note` lines (a form docs/configuration.md
//      shows) and, where nothing needs quoting, as `name = value` parse to the same names and values;
//    - refused: the location is `fuzz.conf:N: ` with N a line of the text, the message is not
//      empty, the lines before N parse, and line N alone is refused with the same message.
// 2. Control protocol (the text as one line):
//    - `parseRequest` accepts exactly `OPEN <non-empty url>` (the URL is the bytes after "OPEN ");
//    - `formatReply` of `.error(line)` and `.ok(result: first word, url: the rest)` is one line:
//      ends in LF and has no other LF;
//    - `parseReply(formatReply(r))` (LF removed) is `r` for replies without CR/LF (result without a
//      space), and a line `parseReply` accepts is re-formatted to itself.
// 3. Replay (`ReplayCapture(text:name: "fuzz.log")`):
//    - the capture is refused exactly when no line starts with `$` or `!`, with a message naming it;
//    - accepted: the epochs are non-empty and joined are those lines (trailing CR and spaces
//      stripped), each followed by CRLF; every epoch starts with a sentence of the first sentence's
//      type and holds no other; the period is within `ReplayCapture.periodRange` or exactly 1 s;
//    - `timeOfDay` of every sentence is nil or within 0..<86 401 s, only for GGA/RMC/GNS/GST/ZDA/
//      PTNL, only for a field of 6 digits with hh < 24, mm < 60, ss <= 60 (the leap second), and
//      equals an independent reading of it (a fraction of 1-9 digits counts, another is ignored).
//
// Every invariant has an id (in brackets in the message). Findings that are reported but not fixed
// yet can be skipped with `BRIDGEFUZZ_KNOWN=id1,id2` so that a long run keeps exploring; traps and
// AddressSanitizer reports are never skipped. The `*-grapheme` ids are the cases where the bytes
// and Swift's Characters disagree (a `$`, `,`, `"` or space merged with a combining mark after it
// or a prepended concatenation mark such as U+0600 before it): the parsers work on Characters, the
// byte view above is what the formats define. A failed invariant is a crash for libFuzzer, which
// writes the reproducer (run-bridge.sh: Fuzz/build/bridge-crash-<sha1>).

import Glibc

@inline(never)
func violation(_ id: StaticString, _ message: String, _ line: UInt = #line) -> Never {
    fatalError("BridgeFuzz invariant violated (BridgeFuzz.swift:\(line)): [\(id)] \(message)")
}

@inline(__always)
func check(_ id: StaticString, _ condition: Bool, _ message: @autoclosure () -> String, _ line: UInt = #line) {
    if !condition && !knownFindings.contains(id.description) { violation(id, message(), line) }
}

let knownFindings: Set<String> = {
    guard let value = getenv("BRIDGEFUZZ_KNOWN") else { return [] }
    return Set(String(cString: value).split(separator: ",").map(String.init))
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let input = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: input.dropFirst(), as: UTF8.self)
    switch input[0] % 3 {
    case 0: fuzzConfiguration(text)
    case 1: fuzzControl(text)
    default: fuzzReplay(text)
    }
    return 0
}

// MARK: - Helpers

let lf: UInt8 = 0x0A
let cr: UInt8 = 0x0D

/// The lines of `bytes`: split at LF; the CR of a CRLF is dropped (a CR at the very end is not a
/// line end and stays).
func fileLines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
    let parts = bytes.split(separator: lf, omittingEmptySubsequences: false)
    return parts.indices.map { i in
        i < parts.count - 1 && parts[i].last == cr ? parts[i].dropLast() : parts[i]
    }
}

func text<C: Collection<UInt8>>(_ bytes: C) -> String { String(decoding: bytes, as: UTF8.self) }

/// Whether `needle` occurs in `haystack`.
func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty else { return true }
    guard haystack.count >= needle.count else { return false }
    var i = haystack.startIndex
    while i <= haystack.endIndex - needle.count {
        if haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
        i += 1
    }
    return false
}

/// Whether the first scalar of `s` joins the Character before it (a combining mark, ZWJ, spacing
/// mark...): then `" " + s` does not start with the Character " ".
func joinsPrevious(_ s: String) -> Bool { !s.isEmpty && ("a" + s).count == s.count }

/// Whether the last scalar of `s` joins the Character after it (a prepended concatenation mark).
func joinsNext(_ s: String) -> Bool { !s.isEmpty && (s + "a").count == s.count }

/// A short printable form of a string for messages.
func show(_ s: String) -> String {
    var out = ""
    for scalar in s.unicodeScalars.prefix(120) {
        out +=
            scalar.value >= 0x20 && scalar.value < 0x7F && scalar != "\\" && scalar != "\""
            ? String(scalar) : "\\u{\(String(scalar.value, radix: 16))}"
    }
    return "\"" + out + (s.unicodeScalars.count > 120 ? "...\"" : "\"")
}

// MARK: - 1. Configuration file

func parseConfiguration(_ text: String, path: String) -> Result<[ConfigurationFile.Entry], ConfigurationError> {
    do throws(ConfigurationError) { return .success(try ConfigurationFile.parse(text, path: path)) } catch {
        return .failure(error)
    }
}

func fuzzConfiguration(_ input: String) {
    let path = "fuzz.conf"
    let lines = fileLines(Array(input.utf8))
    switch parseConfiguration(input, path: path) {
    case .success(let entries):
        var previous = 0
        for entry in entries {
            let name = entry.name
            check(
                "config-name", !name.isEmpty && name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }),
                "name \(show(name)) accepted")
            check(
                "config-name",
                !name.unicodeScalars.contains {
                    $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F || $0 == "=" || $0 == "#"
                        || $0 == "\""
                }, "name \(show(name)) holds a separator scalar")
            check("config-value-lf", !entry.value.utf8.contains(lf), "value \(show(entry.value)) holds an LF")
            check("config-value-cr", !entry.value.utf8.contains(cr), "value \(show(entry.value)) holds a CR")
            check(
                "config-lines", entry.line > previous && entry.line <= lines.count,
                "line \(entry.line) after \(previous), \(lines.count) lines")
            previous = entry.line
            let line = lines[entry.line - 1]
            check(
                "config-lines", contains(line, Array(name.utf8)) && contains(line, Array(entry.value.utf8)),
                "entry \(show(name)) = \(show(entry.value)) is not on line \(entry.line) \(show(text(line)))")
        }
        // Line-local: each line alone gives its entry or none.
        var alone: [ConfigurationFile.Entry] = []
        for (i, line) in lines.enumerated() {
            switch parseConfiguration(text(line), path: path) {
            case .success(let one):
                check("config-line-local", one.count <= 1, "line \(i + 1) alone gave \(one.count) entries")
                if var entry = one.first {
                    check("config-line-local", entry.line == 1, "line \(i + 1) alone: entry on line \(entry.line)")
                    entry.line = i + 1
                    alone.append(entry)
                }
            case .failure(let error):
                check("config-line-local", false, "line \(i + 1) alone refused: \(show(error.description))")
            }
        }
        check("config-line-local", alone == entries, "lines parsed one by one differ from the file")
        // Written back with quoted values, the entries parse to themselves. A value holding `"`
        // cannot be quoted (a quoted value ends at the next quote); it came from an unquoted
        // value, trimmed and free of comments, so it is written back as it was.
        let quote = { (value: String) in value.utf8.contains(UInt8(ascii: "\"")) ? value : "\"\(value)\"" }
        let written = entries.map { "\($0.name) = \(quote($0.value))" }.joined(separator: "\n")
        let again = parseConfiguration(written, path: path)
        let expected = entries.map { [$0.name, $0.value] }
        let joins = entries.contains { joinsPrevious($0.value) || joinsNext($0.value) }
        guard case .success(let reread) = again else {
            if case .failure(let error) = again {
                check(
                    joins ? "config-grapheme" : "config-round-trip", false,
                    "written back as \(show(written)): \(show(error.description))")
            }
            return
        }
        check(
            joins ? "config-grapheme" : "config-round-trip", reread.map { [$0.name, $0.value] } == expected,
            "written back as \(show(written)), read \(reread.map { show($0.value) }) "
                + "instead of \(entries.map { show($0.value) })"
        )
        check(
            "config-round-trip", reread.map(\.line) == Array(stride(from: 1, through: entries.count, by: 1)),
            "written back: lines \(reread.map(\.line))")
        // docs/configuration.md's other forms: a quoted value followed by a comment, and a plain
        // value where nothing needs quoting (no `"` first, no white space at either end, no `#`
        // first or after white space; no CR, which would join a following LF, see config-value-cr).
        let commented = entries.map { "\($0.name) = \(quote($0.value))   # note" }.joined(separator: "\n")
        let withComments = parseConfiguration(commented, path: path).map { $0.map { [$0.name, $0.value] } }
        check(
            joins ? "config-grapheme" : "config-quoted-comment", withComments == .success(expected),
            "written as \(show(commented)): \(withComments)")
        let plain = entries.filter { entry in
            let v = Array(entry.value)
            return !entry.value.utf8.contains(cr) && v.first != "\"" && v.first != " " && v.first != "\t"
                && v.last != " " && v.last != "\t"
                && !v.indices.contains { v[$0] == "#" && ($0 == 0 || v[$0 - 1] == " " || v[$0 - 1] == "\t") }
        }
        let plainText = plain.map { "\($0.name) = \($0.value)" }.joined(separator: "\n")
        let plainRead = parseConfiguration(plainText, path: path).map { $0.map { [$0.name, $0.value] } }
        check(
            plain.contains { joinsPrevious($0.value) } ? "config-grapheme" : "config-round-trip",
            plainRead == .success(plain.map { [$0.name, $0.value] }),
            "written plain as \(show(plainText)): \(plainRead)")
    case .failure(let error):
        check("config-error", !error.message.isEmpty, "empty message")
        let prefix = path + ":"
        guard error.location.hasPrefix(prefix), error.location.hasSuffix(": "),
            let number = Int(error.location.dropFirst(prefix.count).dropLast(2))
        else { return check("config-error", false, "location \(show(error.location))") }
        check("config-error", number >= 1 && number <= lines.count, "line \(number) of \(lines.count)")
        guard number >= 1 && number <= lines.count else { return }
        // The lines before it parse (the first bad line is reported); it alone is refused alike.
        let bytes = Array(input.utf8)
        let before = number == 1 ? 0 : lines[number - 2].endIndex
        let head: [UInt8] = number == 1 ? [] : Array(bytes[..<before]) + (bytes[before] == cr ? [cr, lf] : [lf])
        if case .failure(let earlier) = parseConfiguration(text(head), path: path) {
            check(
                "config-error", false,
                "reported line \(number), but the lines before it fail: \(show(earlier.description))")
        }
        switch parseConfiguration(text(lines[number - 1]), path: path) {
        case .success:
            check(
                "config-line-local", false,
                "line \(number) alone is accepted, in the file refused: \(show(error.description))")
        case .failure(let alone):
            check(
                "config-line-local", alone.message == error.message && alone.location == path + ":1: ",
                "line \(number) alone: \(show(alone.description)), in the file: \(show(error.description))")
        }
    }
}

// MARK: - 2. Control protocol

func fuzzControl(_ line: String) {
    let bytes = Array(line.utf8)
    let open = Array("OPEN ".utf8)
    switch ControlProtocol.parseRequest(line) {
    case .success(.open(let url)):
        check(
            "request",
            bytes.starts(with: open) && !url.isEmpty && Array(url.utf8) == Array(bytes.dropFirst(open.count)),
            "accepted \(show(line)) as OPEN \(show(url))")
    case .success(.status):
        check("request", line == "STATUS", "accepted \(show(line)) as STATUS")
    case .failure(let failure):
        check("request", !failure.message.isEmpty, "empty failure message")
        let rest = text(bytes.dropFirst(open.count))
        // A URL starting with a combining mark merges with the space; refusing it is fine.
        check(
            "request", !(bytes.starts(with: open) && !rest.isEmpty && !joinsPrevious(rest)),
            "refused \(show(line)): \(failure.message)")
    }

    // Replies made of the input.
    let space = bytes.firstIndex(of: 0x20)
    let result = space.map { text(bytes[..<$0]) } ?? "-"
    let url = space.map { text(bytes[($0 + 1)...]) } ?? line
    let hasBreak = { (s: String) in s.utf8.contains(lf) || s.utf8.contains(cr) }
    // formatReply turns every control character into a space (line breaks included).
    let hasControl = { (s: String) in s.utf8.contains { $0 < 0x20 || $0 == 0x7F } }
    let replies: [ControlProtocol.Reply] = [.error(line), .ok(result: result, url: url), .status(json: line)]
    for reply in replies {
        let formatted = ControlProtocol.formatReply(reply)
        let out = Array(formatted.utf8)
        let oneLine = out.last == lf && !out.dropLast().contains(lf)
        switch reply {
        case .error(let message):
            let crlf = contains(Array(message.utf8)[...], [cr, lf])
            check(
                crlf ? "reply-error-crlf" : "reply-line", oneLine,
                "formatReply(.error(\(show(message)))) = \(show(formatted))")
        case .ok(let result, let url):
            check(
                hasBreak(result) || hasBreak(url) ? "reply-ok-line-break" : "reply-line", oneLine,
                "formatReply(.ok(\(show(result)), \(show(url)))) = \(show(formatted))")
        case .status(let json):
            let crlf = contains(Array(json.utf8)[...], [cr, lf])
            check(
                crlf ? "reply-status-crlf" : "reply-line", oneLine,
                "formatReply(.status(\(show(json)))) = \(show(formatted))")
        }
        // Round trip for replies without control characters (a result is one word).
        let plain: Bool
        let joins: Bool
        switch reply {
        case .error(let message):
            plain = !hasControl(message)
            joins = joinsPrevious(message)
        case .ok(let result, let url):
            plain = !hasControl(result) && !hasControl(url) && !result.utf8.contains(0x20)
            joins = joinsPrevious(result) || joinsNext(result) || joinsPrevious(url)
        case .status(let json):
            plain = !hasControl(json)
            joins = joinsPrevious(json)
        }
        if plain {
            let parsed = ControlProtocol.parseReply(String(formatted.dropLast()))
            check(
                joins ? "reply-grapheme" : "reply-round-trip", parsed == reply,
                "\(show(formatted)) parsed as \(parsed.map { "\($0)" } ?? "nil")")
        }
    }

    // A line parseReply accepts is re-formatted to itself.
    if let reply = ControlProtocol.parseReply(line) {
        check(
            "reply-parse",
            bytes.starts(with: Array("OK ".utf8)) || bytes.starts(with: Array("OK-JSON ".utf8))
                || bytes.starts(with: Array("ERROR ".utf8)),
            "\(show(line)) accepted as \(reply)")
        if !hasControl(line) {
            check(
                "reply-parse", ControlProtocol.formatReply(reply) == line + "\n",
                "\(show(line)) re-formatted as \(show(ControlProtocol.formatReply(reply)))")
        }
    }
}

// MARK: - 3. Replay

func fuzzReplay(_ input: String) {
    let name = "fuzz.log"
    let bytes = Array(input.utf8)
    // The sentences, by bytes: lines starting with $ or !, trailing CR and spaces stripped.
    var sentences: [ArraySlice<UInt8>] = []
    for var line in bytes.split(separator: lf) {
        while let last = line.last, last == cr || last == 0x20 { line = line.dropLast() }
        if line.first == UInt8(ascii: "$") || line.first == UInt8(ascii: "!") { sentences.append(line) }
    }
    // The same by Characters, as Swift sees the text: only to name a difference "replay-grapheme"
    // (a $ followed by a combining mark is not the Character "$"; a space after a prepended
    // concatenation mark is not the Character " ").
    var characterSentences: [ArraySlice<UInt8>] = []
    for raw in input.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
        var line = raw
        while let last = line.last, last == "\r" || last == " " { line = line.dropLast() }
        if line.first == "$" || line.first == "!" { characterSentences.append(Array(line.utf8)[...]) }
    }
    let graphemeCase = characterSentences.map(Array.init) != sentences.map(Array.init)

    let capture: ReplayCapture
    do throws(ReplayCapture.Failure) {
        capture = try ReplayCapture(text: input, name: name)
    } catch {
        check("replay-refused", error.message.hasPrefix(name + ": "), "message \(show(error.message))")
        check(
            graphemeCase ? "replay-grapheme" : "replay-lines", sentences.isEmpty,
            "refused with \(sentences.count) sentences: \(show(text(sentences[0])))")
        checkTimes(sentences)
        return
    }
    check(graphemeCase ? "replay-grapheme" : "replay-lines", !sentences.isEmpty, "accepted without sentences")
    let expected = sentences.flatMap { Array($0) + [cr, lf] }
    let joined = capture.epochs.flatMap { $0 }
    check(
        graphemeCase ? "replay-grapheme" : "replay-lines", joined == expected,
        "epochs \(show(text(joined))) instead of \(show(text(expected)))")
    check("replay-epochs", capture.epochs.allSatisfy { !$0.isEmpty }, "an empty epoch")
    if joined == expected, !sentences.isEmpty {
        // Epochs start at the type of the first sentence NMEA0183 accepts; lines it refuses are
        // replayed but never start one (the capture's first epoch starts at its first line).
        let starter = sentences.lazy.compactMap { ReplayCapture.sentenceType(Substring(text($0))) }.first
        for (e, epoch) in capture.epochs.enumerated() {
            // Sentences hold no LF, so the epoch's LFs end them (each after its CR).
            let parts = epoch.split(separator: lf).map { Substring(text($0.dropLast())) }
            check("replay-epochs", epoch.last == lf && parts.allSatisfy { !$0.isEmpty }, "epoch \(e) is not CRLF lines")
            for (i, sentence) in parts.enumerated() {
                let type = ReplayCapture.sentenceType(sentence)
                let isStarter = type != nil && type == starter
                check(
                    "replay-epochs", isStarter == (i == 0) || (e == 0 && i == 0),
                    "epoch \(e) sentence \(i) \(show(String(sentence))), "
                        + "starter type \(show(String(starter ?? "none")))"
                )
            }
        }
    }
    check(
        "replay-period", ReplayCapture.periodRange.contains(capture.period) || capture.period == 1_000_000_000,
        "period \(capture.period) ns")
    checkTimes(sentences)
}

/// The sentence types whose time `ReplayCapture.timeOfDay` reads, and its field (as NMEA0183's kind
/// table has them; `$PTNL,GGK`: field 2).
let timeFields: [Substring: Int] = ["GGA": 1, "RMC": 1, "GNS": 1, "GST": 1, "ZDA": 1, "GLL": 5]

func checkTimes(_ sentences: [ArraySlice<UInt8>]) {
    let isDigit = { (b: UInt8) in b >= 0x30 && b <= 0x39 }
    for bytes in sentences.prefix(64) {
        let sentence = Substring(text(bytes))
        guard let time = ReplayCapture.timeOfDay(sentence) else { continue }
        guard let type = ReplayCapture.sentenceType(sentence) else {
            check("time-type", false, "time from \(show(String(sentence))), a line NMEA0183 refuses")
            continue
        }
        check(
            "time-range", time >= 0 && time < 86_401 * 1_000_000_000,
            "timeOfDay(\(show(String(sentence)))) = \(time) ns")
        check("time-type", timeFields[type] != nil || type.hasPrefix("PTNL"), "time from a \(show(String(type)))")
        // The field, by bytes: `timeFields`' field, or field 2 of $PTNL. When a comma is not a
        // Character of its own (a prepended concatenation mark before it), the parser sees other fields.
        let fields = bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        let graphemes = sentence.split(separator: ",", omittingEmptySubsequences: false).count != fields.count
        let index = type.hasPrefix("PTNL") ? 2 : timeFields[type] ?? 1
        guard fields.count > index else {
            check(
                graphemes ? "replay-grapheme" : "time-type", false,
                "time from \(show(String(sentence))) without the field")
            continue
        }
        // The field ends at the checksum's `*` when it is the last one (NMEA0183 reads it so).
        let field = Array(fields[index].prefix { $0 != UInt8(ascii: "*") })
        let dot = field.firstIndex(of: UInt8(ascii: ".")) ?? field.count
        let whole = field[..<dot]
        let fraction = field.count > dot ? field[(dot + 1)...] : []
        check(
            graphemes ? "replay-grapheme" : "time-digits", dot == 6 && whole.allSatisfy(isDigit),
            "timeOfDay(\(show(String(sentence)))) = \(time) ns from the field \(show(text(field)))")
        guard dot == 6, whole.allSatisfy(isDigit) else { continue }
        let d = whole.map { Int64($0 - 0x30) }
        let (h, m, s) = (d[0] * 10 + d[1], d[2] * 10 + d[3], d[4] * 10 + d[5])
        check(
            graphemes ? "replay-grapheme" : "time-range", h < 24 && m < 60 && s <= 60,
            "timeOfDay(\(show(String(sentence)))) = \(time) ns from hh \(h) mm \(m) ss \(s)")
        // An independent reading: the fraction counts when it is 1-9 digits, else it is ignored.
        var nanoseconds: Int64 = 0
        if fraction.count <= 9 && fraction.allSatisfy(isDigit) {
            for (i, digit) in fraction.enumerated() { nanoseconds += Int64(digit - 0x30) * pow10(8 - i) }
        }
        let reference = ((h * 60 + m) * 60 + s) * 1_000_000_000 + nanoseconds
        let id: StaticString =
            graphemes ? "replay-grapheme" : fraction.allSatisfy(isDigit) ? "time-value" : "time-digits"
        check(id, time == reference, "timeOfDay(\(show(String(sentence)))) = \(time) ns, not \(reference)")
    }
}

func pow10(_ n: Int) -> Int64 {
    var value: Int64 = 1
    for _ in 0..<n { value *= 10 }
    return value
}
