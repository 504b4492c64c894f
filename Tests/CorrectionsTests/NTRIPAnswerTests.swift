// The caster's answer head and sourcetable: each answer shape, every split point, and a
// malformed-input table with one row per rule.
import Corrections
import TestSupport
import Testing

/// An answer head that must be refused, and a phrase of the reason.
struct BadAnswer: Sendable, CustomTestStringConvertible {
    let rule: String
    let bytes: [UInt8]
    let reasonHolds: String
    var testDescription: String { rule }

    init(_ rule: String, _ text: String, _ reasonHolds: String) {
        self.rule = rule
        self.bytes = Array(text.utf8)
        self.reasonHolds = reasonHolds
    }

    init(_ rule: String, bytes: [UInt8], _ reasonHolds: String) {
        self.rule = rule
        self.bytes = bytes
        self.reasonHolds = reasonHolds
    }
}

/// Reads `input` as an answer head fed in pieces ending at `splits`.
func readHead(
    _ input: [UInt8], splits: [Int] = [], maximumBytes: Int = 8192, redaction: Redaction = .none
)
    -> Result<(NTRIPAnswer, Int)?, NTRIPHeadError>
{
    var head = NTRIPResponseHead(maximumBytes: maximumBytes, redaction: redaction)
    var start = 0
    for end in splits + [input.count] where end >= start {
        let piece = Array(input[start..<end])
        do throws(NTRIPHeadError) {
            if case .complete(let answer, let consumed) = try head.read(piece.span) {
                return .success((answer, start + consumed))
            }
        } catch {
            return .failure(error)
        }
        start = end
    }
    return .success(nil)
}

@Suite("NTRIP answers", .tags(.unit))
struct NTRIPAnswerTests {
    typealias HTTPAnswer = NTRIPAnswer.HTTPAnswer

    static let answers: [(String, NTRIPAnswer, Int)] = [
        ("ICY 200 OK\r\n\u{D3}", .icy, 12),
        ("ICY 200 OK\n", .icy, 11),
        ("ICY 200 OK\r\nServer: x\r\n\r\n", .icy, 12),
        ("SOURCETABLE 200 OK\r\nServer: x\r\n", .sourcetable, 20),
        ("ERROR - Bad Password\r\n", .error(line: "ERROR - Bad Password"), 22),
        ("HTTP/1.1 200 OK\r\n\r\nrest", .http(HTTPAnswer(status: 200, statusLine: "HTTP/1.1 200 OK")), 19),
        ("HTTP/1.0 200\r\n\r\n", .http(HTTPAnswer(status: 200, statusLine: "HTTP/1.0 200")), 16),
        (
            "HTTP/1.1 200 OK\r\nNtrip-Version: Ntrip/2.0\r\nTransfer-Encoding: gzip, Chunked\r\n"
                + "Content-Type: gnss/data\r\nX: y\r\n\r\n",
            .http(HTTPAnswer(status: 200, statusLine: "HTTP/1.1 200 OK", isChunked: true, contentType: "gnss/data")),
            110
        ),
        (
            "HTTP/1.1 200 OK\nCONTENT-TYPE: GNSS/Sourcetable; charset=x\nContent-Length: 1234\nodd line\n\n",
            .http(
                HTTPAnswer(
                    status: 200, statusLine: "HTTP/1.1 200 OK", contentType: "gnss/sourcetable", contentLength: 1234)),
            89
        ),
        (
            "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\n\r\n",
            .http(HTTPAnswer(status: 401, statusLine: "HTTP/1.1 401 Unauthorized")), 64
        ),
    ]

    @Test func eachShapeAtEverySplit() throws {
        for (text, answer, consumed) in Self.answers {
            let input = bytes(text)
            let whole = try readHead(input).get()
            #expect(whole?.0 == answer, "\(text)")
            #expect(whole?.1 == consumed, "\(text)")
            for split in 0...input.count {
                let pieces = try readHead(input, splits: [split]).get()
                #expect(pieces?.0 == answer && pieces?.1 == consumed, "\(text) split at \(split)")
            }
        }
    }

    @Test func everyProperPrefixNeedsMore() throws {
        let input = bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for length in 0..<input.count {
            #expect(try readHead(Array(input[0..<length])).get() == nil, "prefix of \(length)")
        }
    }

    static let malformed: [BadAnswer] = [
        BadAnswer("binary first byte (raw RTCM, no head)", bytes: [0xD3, 0x00, 0x13], "binary"),
        BadAnswer("NUL in the status line", "HTTP/1.1\u{0} 200", "binary"),
        BadAnswer("banner", "Welcome to the caster\r\n", "does not start with a status line"),
        BadAnswer("lower-case http", "http/1.1 200 OK\r\n\r\n", "does not start with a status line"),
        BadAnswer("leading empty line", "\r\nHTTP/1.1 200 OK\r\n\r\n", "does not start with a status line"),
        BadAnswer("HTTP/2", "HTTP/2 200\r\n\r\n", "malformed"),
        BadAnswer("HTTP/1.1 without status", "HTTP/1.1\r\n\r\n", "malformed"),
        BadAnswer("two-digit status", "HTTP/1.1 20 OK\r\n\r\n", "malformed"),
        BadAnswer("status 099", "HTTP/1.1 099 Low\r\n\r\n", "malformed"),
        BadAnswer("no space after the status", "HTTP/1.1 200OK\r\n\r\n", "malformed"),
        BadAnswer("ICY refusal", "ICY 401 Unauthorized\r\n", "ICY 401"),
        BadAnswer("SOURCETABLE other status", "SOURCETABLE 500 Oops\r\n", "SOURCETABLE 500"),
        BadAnswer("bare CR in the status line", "HTTP/1.1 200 OK\rX\n", "CR"),
        BadAnswer("bare CR in a field", "HTTP/1.1 200 OK\r\nA: b\rc\r\n\r\n", "CR"),
        BadAnswer("control in a field", "HTTP/1.1 200 OK\r\nA: b\u{1}\r\n\r\n", "control"),
    ]

    @Test(arguments: malformed)
    func refuses(_ row: BadAnswer) {
        for splits in [[], [1], Array(1..<max(row.bytes.count, 1))] {
            switch readHead(row.bytes, splits: splits) {
            case .success(let answer): Issue.record("read as \(String(describing: answer))")
            case .failure(let error): #expect(error.reason.contains(row.reasonHolds), "\(error.reason)")
            }
        }
    }

    @Test func headLongerThanTheLimitIsRefusedAtTheLimit() throws {
        // A 10 MB header line fed in 64 KiB pieces: refused as soon as the limit is passed, having
        // read no more than the limit.
        var head = NTRIPResponseHead(maximumBytes: 8192)
        let piece = bytes("HTTP/1.1 200 OK\r\nX: ") + Array(repeating: UInt8(ascii: "a"), count: 65_536)
        do throws(NTRIPHeadError) {
            for _ in 0..<160 { _ = try head.read(piece.span) }
            Issue.record("a 10 MB head was accepted")
        } catch {
            #expect(error.reason.contains("longer than 8192"))
        }
        #expect(head.count == 8193)
        // Exactly at the limit is fine.
        let exact =
            bytes("HTTP/1.1 200 OK\r\n") + bytes("X: ") + Array(repeating: 0x61, count: 8192 - 17 - 3 - 4)
            + bytes("\r\n\r\n")
        #expect(exact.count == 8192)
        #expect(try readHead(exact).get()?.1 == 8192)
        #expect(try readHead(exact + [0x61]).get()?.1 == 8192)
        #expect(throws: NTRIPHeadError.self) { try readHead(bytes("X") + exact).get() }
    }

    @Test func endlessHeaderOfShortLinesIsRefused() {
        let line = bytes("X-Filler: 0123456789\r\n")
        var input = bytes("HTTP/1.1 200 OK\r\n")
        while input.count < 20_000 { input += line }
        guard case .failure(let error) = readHead(input) else {
            Issue.record("endless header accepted")
            return
        }
        #expect(error.reason.contains("longer than"))
    }

    @Test func statusLineTextIsQuotedSafely() throws {
        let redaction = Redaction(secrets: ["hunter2"])
        let line = "HTTP/1.1 418 hunter2 \t" + String(repeating: "z", count: 200)
        let answer = try readHead(bytes(line + "\r\n\r\n"), redaction: redaction).get()
        guard case .http(let http)? = answer?.0 else {
            Issue.record("not HTTP: \(String(describing: answer))")
            return
        }
        #expect(http.status == 418)
        #expect(http.statusLine.hasPrefix("HTTP/1.1 418 *** ?zzz"))
        #expect(http.statusLine.hasSuffix("..."))
        #expect(http.statusLine.utf8.count == Redaction.quotedLength + 3)
        #expect(!http.statusLine.contains("hunter2"))
    }

    // MARK: Sourcetable

    static let table = """
        Server: NTRIP Caster 2.0\r
        Content-Type: text/plain\r
        \r
        CAS;caster.example.com;2101;EXAMPLE;Op;0;DEU;50.1;8.7;http://example.com\r
        NET;EXAMPLE;Op;B;N;http://example.com;none;op@example.com;none\r
        STR;MOUNT1;Frankfurt;RTCM 3.2;1004(1),1005(10);2;GPS+GLO;EX;DEU;50.12;8.68;0;0;sNTRIP;none;B;N;2400;\r
        STR;MOUNT2;Mainz;RTCM 3.3;1077(1);2;GPS;EX;DEU;50.0;8.27;1;0;sNTRIP;none;B;N;9600;\r
        STR;;empty name;\r
        STR;MOUNT\u{1}3;control;\r
        ENDSOURCETABLE\r
        STR;AFTER;not read\r

        """

    @Test func sourcetableNamesItsMountPointsAtEverySplit() {
        let input = bytes(Self.table)
        let end = input.count - bytes("STR;AFTER;not read\r\n").count
        for split in 0...input.count {
            var table = NTRIPSourcetable()
            var used = table.read(Array(input[0..<split]).span)
            if !table.isComplete { used += table.read(Array(input[split...]).span) }
            #expect(table.isComplete, "split at \(split)")
            #expect(table.mountPoints == ["MOUNT1", "MOUNT2", "MOUNT?3"], "split at \(split)")
            #expect(used == end, "split at \(split)")
        }
    }

    @Test func sourcetableBounds() {
        // Declared length: the table ends there, a last line without its line end included.
        var declared = NTRIPSourcetable(declaredLength: 12)
        declared.read(bytes("STR;A;x\r\nSTR;B;y\r\n").span)
        #expect(declared.isComplete && declared.mountPoints == ["A"] && declared.count == 12)
        // A declared length of 0: complete before any byte.
        #expect(NTRIPSourcetable(declaredLength: 0).isComplete)
        // The size limit.
        var huge = NTRIPSourcetable()
        let line = bytes("STR;NAME;filler filler filler\r\n")
        var fed = 0
        while !huge.isComplete && fed < 2 * NTRIPSourcetable.maximumBytes {
            fed += huge.read(line.span)
        }
        #expect(huge.isComplete && huge.count == NTRIPSourcetable.maximumBytes)
        #expect(huge.mountPoints.count == NTRIPSourcetable.maximumMountPoints)
        // A long line and a long name.
        var long = NTRIPSourcetable()
        long.read((bytes("STR;") + Array(repeating: 0x4D, count: 5000) + bytes(";x\r\n")).span)
        long.finish()
        #expect(long.mountPoints == [String(repeating: "M", count: NTRIPSourcetable.maximumNameLength) + "..."])
        // A last line without line end at the end of the connection.
        var cut = NTRIPSourcetable()
        cut.read(bytes("STR;LAST;x").span)
        #expect(!cut.isComplete && cut.mountPoints.isEmpty)
        cut.finish()
        #expect(cut.isComplete && cut.mountPoints == ["LAST"])
    }

    // MARK: Redaction

    @Test func redactionBlanksBeforeCutting() {
        let redaction = Redaction(secrets: ["secret", ""])
        #expect(redaction.quoted("a secret b secret") == "a *** b ***")
        // The secret straddles the cut: blanked first, so none of it shows.
        let text = String(repeating: "x", count: 77) + "secret"
        #expect(!redaction.quoted(text).contains("sec"))
        #expect(Redaction.none.quoted("\u{1B}[2J\n") == "?[2J?")
        let source = NTRIPSource(host: "h", mountPoint: "M", user: "u", password: "pw")
        let credentials = NTRIPRequest.basicCredentials(for: source)!
        #expect(Redaction(hidingCredentialsOf: source).quoted("pw \(credentials)") == "*** ***")
    }
}
