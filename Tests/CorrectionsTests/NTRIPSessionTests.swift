// NTRIPSession driven by byte scripts, as a caster would answer, with a fake clock: each caster
// behaviour of issue 23 and the state, actions and retry it leads to; the request bytes; the
// backoff; GGA's schedule; and the password, which no action, log line or state may hold.
import Corrections
import GNSS
import Logging
import TestSupport
import Testing

@Suite("NTRIP session", .tags(.unit))
struct NTRIPSessionTests {
    static let frames = [
        KnownFrames.standard1005, makeFrame(payload(message: 1077, length: 200)), KnownFrames.pyrtcm1007,
        makeFrame(payload(message: 1006, station: 42, length: 21)),
    ]
    static let stream = frames.flatMap { $0 }

    // MARK: Request

    @Test func requestBytesExactly() throws {
        var driver = SessionDriver(url: "ntrip://rover:\(testPassword)@caster.example.com/MOUNT")
        let start = driver.start()
        #expect(
            start == [
                .stateChanged(.connecting),
                .log(.info, "NTRIP: connecting to ntrip://rover@caster.example.com:2101/MOUNT"),
                .log(.debug, "NTRIP: attempt 1, NTRIP 2.0 request"),
                .connect(host: "caster.example.com", port: 2101, tls: false),
            ])
        let credentials = "cm92ZXI6UzNjcjN0IXB3"  // base64("rover:S3cr3t!pw")
        let rev2 =
            "GET /MOUNT HTTP/1.1\r\nHost: caster.example.com:2101\r\nNtrip-Version: Ntrip/2.0\r\n"
            + "User-Agent: NTRIP tmm-bridge/1.0\r\nAuthorization: Basic \(credentials)\r\nConnection: close\r\n\r\n"
        #expect(driver.connected() == [.send(bytes(rev2))])
        #expect(driver.session.request == bytes(rev2))
        // Refused: the next request is Rev 1.
        driver.receive("HTTP/1.1 400 Bad Request\r\n\r\n")
        let rev1 =
            "GET /MOUNT HTTP/1.0\r\nHost: caster.example.com:2101\r\nUser-Agent: NTRIP tmm-bridge/1.0\r\n"
            + "Authorization: Basic \(credentials)\r\nConnection: close\r\n\r\n"
        #expect(driver.connected() == [.send(bytes(rev1))])
        #expect(driver.session.requestRevision == .version1)
    }

    @Test func requestEncodesTheMountAndWritesHostAsHTTPWants() {
        let anonymous = NTRIPSource(host: "2001:db8::1", port: 443, mountPoint: "A B/ü", usesTLS: true)
        #expect(
            String(
                decoding: NTRIPRequest.bytes(for: anonymous, userAgent: "NTRIP x\r\nEvil: 1", revision: .version2),
                as: UTF8.self)
                == "GET /A%20B%2F%C3%BC HTTP/1.1\r\nHost: [2001:db8::1]\r\nNtrip-Version: Ntrip/2.0\r\n"
                + "User-Agent: NTRIP xEvil: 1\r\nConnection: close\r\n\r\n")
        let plain = NTRIPSource(host: "h", port: 80, mountPoint: "M", user: "u")
        #expect(
            String(decoding: NTRIPRequest.bytes(for: plain, userAgent: "NTRIP y", revision: .version1), as: UTF8.self)
                == "GET /M HTTP/1.0\r\nHost: h\r\nUser-Agent: NTRIP y\r\nAuthorization: Basic dTo=\r\n"
                + "Connection: close\r\n\r\n")
    }

    // MARK: Casters that stream

    @Test func rev2ChunkedInEveryPieceSize() {
        // Chunks that cut frames anywhere, with an extension; the chunk framing never reaches the receiver.
        let body =
            chunk(Array(Self.stream[0..<7]), extensions: ";x=y") + chunk(Array(Self.stream[7..<240]))
            + chunk(Array(Self.stream[240...]))
        for piece in [1, 2, 3, 5, 7, 64, 1000, Int.max] {
            var driver = SessionDriver()
            driver.startAndConnect()
            let actions = driver.receive(bytes(ntrip2Chunked) + body, piece: piece)
            #expect(actions.delivered == Self.frames, "pieces of \(piece)")
            #expect(actions.states == [.streaming])
            #expect(driver.session.health.revision == 2)
            #expect(driver.session.health.bytes == Self.stream.count)
            #expect(driver.session.health.frames == 4 && driver.session.health.skippedBytes == 0)
            #expect(driver.session.health.referenceStationID == 42)
            #expect(driver.session.health.lastMessageNumber == 1006)
        }
    }

    @Test func rev2Unchunked() {
        var driver = SessionDriver()
        driver.startAndConnect()
        let actions = driver.receive(bytes(ntrip2OK) + Self.stream, piece: 9)
        #expect(actions.delivered == Self.frames)
        #expect(driver.state == .streaming && driver.session.health.revision == 2)
    }

    @Test func rev1ICYEvenToARev2Request() {
        var driver = SessionDriver()
        driver.startAndConnect()
        let actions = driver.receive(bytes(icyOK) + Self.stream, piece: 4)
        #expect(actions.delivered == Self.frames)
        #expect(driver.state == .streaming && driver.session.health.revision == 1)
        #expect(driver.session.requestRevision == .version2)
    }

    @Test func icyWithHeaderLinesSkipsThemAsGarbage() {
        var driver = SessionDriver()
        driver.startAndConnect()
        let headers = "Server: SNIP\r\nDate: today\r\n\r\n"
        let actions = driver.receive(bytes(icyOK + headers) + Self.stream)
        #expect(actions.delivered == Self.frames)
        #expect(driver.session.health.skippedBytes == headers.utf8.count)
    }

    @Test func firstFrameAfterStreamingKeepsStateAndCountsHealth() {
        var driver = SessionDriver()
        driver.startAndConnect()
        driver.receive(icyOK)
        #expect(driver.state == .streaming)
        driver.now += 3 * second
        driver.receive(Self.frames[0])
        let health = driver.session.health
        #expect(health.lastFrameAt == driver.now && health.frames == 1 && health.referenceStationID == 2003)
        #expect(health.since == driver.now - 3 * second)
        #expect(health.connectAttempts == 1 && health.nextAttemptAt == nil)
    }

    // MARK: Casters that refuse

    /// An answer, and what the session must make of it.
    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let answer: [UInt8]
        let state: CorrectionsState
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "401", answer: bytes("HTTP/1.1 401 Unauthorized\r\n\r\n"), state: .loginRefused),
        Refusal(name: "403", answer: bytes("HTTP/1.0 403 Forbidden\r\n\r\n"), state: .loginRefused),
        Refusal(name: "Rev 1 bad password", answer: bytes("ERROR - Bad Password\r\n"), state: .loginRefused),
        Refusal(
            name: "Rev 1 bad mount", answer: bytes("ERROR - Bad Mountpoint\r\n"),
            state: .noSuchMountPoint(offered: [])),
        Refusal(
            name: "other Rev 1 error", answer: bytes("ERROR - Server full\r\n"),
            state: .protocolError(reason: "the caster answered \"ERROR - Server full\"")),
        Refusal(
            name: "500", answer: bytes("HTTP/1.1 500 Internal Server Error\r\nX: y\r\n\r\n"),
            state: .protocolError(reason: "the caster answered \"HTTP/1.1 500 Internal Server Error\"")),
        Refusal(
            name: "redirect", answer: bytes("HTTP/1.1 301 Moved\r\nLocation: /x\r\n\r\n"),
            state: .protocolError(reason: "the caster answered \"HTTP/1.1 301 Moved\"")),
        Refusal(
            name: "web page", answer: bytes("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html>"),
            state: .protocolError(reason: "the server answered with a web page (text/html)")),
        Refusal(
            name: "binary instead of a head", answer: [0xD3, 0x00, 0x13, 0x3E],
            state: .protocolError(reason: "the answer starts with binary data, not a status line")),
        Refusal(
            name: "banner", answer: bytes("SSH-2.0-OpenSSH\r\n"),
            state: .protocolError(reason: "the answer does not start with a status line: \"SS\"")),
        Refusal(
            name: "chunk size overflow",
            answer: bytes(ntrip2Chunked + "FFFFFFFFFFFFFFFFFFFF\r\n"),
            state: .protocolError(reason: "a chunk of the stream is larger than 65536 bytes")),
        Refusal(
            name: "garbage chunk framing", answer: bytes(ntrip2Chunked + "zz\r\n"),
            state: .protocolError(reason: "the chunked framing is broken: a chunk size is not a hexadecimal number")),
        Refusal(
            name: "chunk data not terminated", answer: bytes(ntrip2Chunked + "2\r\nabX"),
            state: .protocolError(reason: "the chunked framing is broken: chunk data is not followed by CRLF")),
    ]

    @Test(arguments: refusals)
    func refusalDisconnectsShowsItsStateAndRetries(_ row: Refusal) {
        for piece in [1, Int.max] {
            var driver = SessionDriver()
            driver.startAndConnect()
            let actions = driver.receive(row.answer, piece: piece)
            #expect(actions.disconnects == 1, "pieces of \(piece)")
            #expect(actions.states.last == row.state, "pieces of \(piece)")
            #expect(driver.state == row.state)
            #expect(driver.session.health.nextAttemptAt == driver.now + second)
            #expect(actions.logs.contains { $0.contains("next attempt in 1 s") })
            // Bytes after the failure are ignored; the retry comes after 1 s, in the failure's state.
            #expect(driver.receive("more").isEmpty)
            #expect(driver.tick(after: second - 1).isEmpty)
            let retry = driver.tick(after: 1)
            #expect(retry.connects == 1 && retry.states.isEmpty)
            #expect(driver.state == row.state)
            // The state stays until an attempt succeeds.
            driver.connected()
            driver.receive(icyOK)
            #expect(driver.state == .streaming)
        }
    }

    @Test func sourcetableNamesTheMountPointsOffered() {
        let table =
            "SOURCETABLE 200 OK\r\nServer: NTRIP Caster\r\nContent-Type: text/plain\r\n\r\n"
            + "STR;ALPHA;a;RTCM 3.2;;2;GPS;X;DEU;50;8;0;0;x;none;B;N;0;\r\n"
            + "CAS;caster.example.com;2101;X;Y;0;DEU;0;0\r\nSTR;BRAVO;b;RTCM 3\r\nSTR;CHARLIE;c\r\nENDSOURCETABLE\r\n"
        for piece in [1, 13, Int.max] {
            var driver = SessionDriver()
            driver.startAndConnect()
            let actions = driver.receive(table, piece: piece)
            #expect(actions.states == [.noSuchMountPoint(offered: ["ALPHA", "BRAVO", "CHARLIE"])])
            #expect(actions.disconnects == 1 && driver.session.health.revision == 1)
            #expect(driver.state.description == "no such mount point; the caster offers: ALPHA, BRAVO, CHARLIE")
        }
    }

    @Test func rev2SourcetableWithLengthChunkedOrEndedByClose() {
        let body = "STR;ONE;x\r\nSTR;TWO;y\r\nENDSOURCETABLE\r\n"
        let length = "HTTP/1.1 200 OK\r\nContent-Type: gnss/sourcetable\r\nContent-Length: 22\r\n\r\n" + body
        var driver = SessionDriver()
        driver.startAndConnect()
        #expect(driver.receive(length).states == [.noSuchMountPoint(offered: ["ONE", "TWO"])])

        let chunked =
            bytes("HTTP/1.1 200 OK\r\nContent-Type: gnss/sourcetable\r\nTransfer-Encoding: chunked\r\n\r\n")
            + chunk(bytes("STR;ONE;x\r\nST")) + chunk(bytes("R;TWO;y\r\n")) + bytes("0\r\n\r\n")
        driver = SessionDriver()
        driver.startAndConnect()
        #expect(driver.receive(chunked, piece: 3).states == [.noSuchMountPoint(offered: ["ONE", "TWO"])])

        // Without ENDSOURCETABLE: the close ends it, and what came counts.
        driver = SessionDriver()
        driver.startAndConnect()
        #expect(driver.receive("SOURCETABLE 200 OK\r\n\r\nSTR;ONE;x\r\nSTR;TW").isEmpty)
        let closed = driver.closed()
        #expect(closed.states == [.noSuchMountPoint(offered: ["ONE", "TW"])] && closed.disconnects == 1)

        // A sourcetable that never ends: its time-out ends it.
        driver = SessionDriver()
        driver.startAndConnect()
        driver.receive("SOURCETABLE 200 OK\r\n\r\nSTR;ONE;x\r\n")
        #expect(driver.wait(seconds: 29).isEmpty)
        #expect(driver.wait(seconds: 1).states == [.noSuchMountPoint(offered: ["ONE"])])
    }

    @Test func longSourcetableIsCappedInTheDescription() {
        var table = "SOURCETABLE 200 OK\r\n"
        for i in 0..<25 { table += "STR;M\(i);x\r\n" }
        var driver = SessionDriver()
        driver.startAndConnect()
        driver.receive(table + "ENDSOURCETABLE\r\n")
        #expect(
            driver.state.description
                == "no such mount point; the caster offers: M0, M1, M2, M3, M4, M5, M6, M7, M8, M9 and 15 more")
    }

    // MARK: Falling back to Rev 1

    @Test(arguments: ["HTTP/1.1 400 Bad Request", "HTTP/1.1 404 Not Found", "HTTP/1.1 505 HTTP Version Not Supported"])
    func rev2RefusedMeansRev1AtOnce(_ statusLine: String) {
        var driver = SessionDriver()
        driver.startAndConnect()
        let actions = driver.receive(statusLine + "\r\n\r\n")
        #expect(actions.first == .disconnect && actions.connects == 1 && actions.states.isEmpty)
        #expect(driver.state == .connecting)
        #expect(driver.session.requestRevision == .version1)
        #expect(driver.session.health.connectAttempts == 2)
        let request = driver.connected().sent.first.map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(request.hasPrefix("GET /MOUNT HTTP/1.0\r\n") && !request.contains("Ntrip-Version"))
        driver.receive(icyOK)
        #expect(driver.state == .streaming)
        // Remembered: after a later failure the request is still Rev 1.
        driver.closed()
        driver.wait(seconds: 1)
        #expect(String(decoding: driver.connected().sent.first ?? [], as: UTF8.self).hasPrefix("GET /MOUNT HTTP/1.0"))
    }

    @Test func closeWithNoAnswerMeansRev1ThenUnreachable() {
        var driver = SessionDriver()
        driver.startAndConnect()
        let first = driver.closed()
        #expect(
            first == [
                .disconnect,
                .log(
                    .info,
                    "NTRIP: ntrip://rover@caster.example.com:2101/MOUNT: the caster closed the connection without "
                        + "answering; trying an NTRIP 1.0 request"
                ),
                .log(.debug, "NTRIP: attempt 2, NTRIP 1.0 request"),
                .connect(host: "caster.example.com", port: 2101, tls: false),
            ])
        driver.connected()
        let second = driver.closed()
        #expect(second.states == [.unreachable(reason: "the caster closed the connection without answering")])
        #expect(second.connects == 0 && second.disconnects == 1)
    }

    @Test func readErrorBeforeAnyAnswerAlsoFallsBack() {
        var driver = SessionDriver()
        driver.startAndConnect()
        let actions = driver.failed("connection reset by peer")
        #expect(actions.connects == 1 && driver.session.requestRevision == .version1)
    }

    @Test func rev1404IsNoSuchMountPoint() {
        var driver = SessionDriver()
        driver.startAndConnect()
        driver.receive("HTTP/1.1 404 Not Found\r\n\r\n")
        driver.connected()
        let actions = driver.receive("HTTP/1.0 404 Not Found\r\n\r\n")
        #expect(actions.states == [.noSuchMountPoint(offered: [])])
    }

    // MARK: Heads that never end, casters that never answer

    @Test func endlessHeaderIsAProtocolError() {
        var driver = SessionDriver()
        driver.startAndConnect()
        var actions: [Action] = driver.receive("HTTP/1.1 200 OK\r\n")
        var fed = 0
        while actions.states.isEmpty && fed < 1_000_000 {
            actions = driver.receive("X-Pad: 0123456789abcdef\r\n")
            fed += 25
        }
        #expect(fed <= NTRIPSession.maximumHeadBytes + 25)
        #expect(actions.states == [.protocolError(reason: "the answer's head is longer than 8192 bytes")])
        #expect(actions.disconnects == 1)
    }

    @Test func tenMegabyteLineInPiecesStopsAtTheHeadLimit() {
        var driver = SessionDriver()
        driver.startAndConnect()
        let piece = Array(repeating: UInt8(ascii: "A"), count: 4096)
        var failedAfter: Int?
        var fed = 0
        var stateChanges = 0
        while fed < 10_000_000 {
            let actions = driver.receive(fed == 0 ? bytes("HTTP/1.1 200 OK\r\nX: ") + piece : piece)
            fed += piece.count
            stateChanges += actions.states.count
            if failedAfter == nil && !actions.states.isEmpty { failedAfter = fed }
        }
        #expect(failedAfter == 8192)
        #expect(
            stateChanges == 1 && driver.state == .protocolError(reason: "the answer's head is longer than 8192 bytes"))
    }

    @Test func slowDripBeyondTheAnswerTimeout() {
        var driver = SessionDriver()
        driver.startAndConnect()
        var actions: [Action] = []
        // A byte every quarter second: each one is progress, but the head never completes.
        for c in ("HTTP/1.1 200 OK\r\nServer: " + String(repeating: "s", count: 100)).utf8 {
            driver.receive([c])
            actions += driver.tick(after: second / 4)
            if !actions.states.isEmpty { break }
        }
        #expect(actions.states.count == 1)
        guard case .protocolError(let reason) = actions.states.first else {
            Issue.record("not a protocol error: \(actions.states)")
            return
        }
        #expect(reason.hasPrefix("the answer's head was not complete within 10 s"))
        #expect(driver.now - 1_000 * second == NTRIPSession.answerTimeout)
    }

    @Test func casterThatNeverSends() {
        var driver = SessionDriver()
        driver.startAndConnect()
        #expect(driver.wait(seconds: 9).isEmpty)
        let actions = driver.wait(seconds: 1)
        #expect(actions.states == [.unreachable(reason: "no answer within 10 s")] && actions.disconnects == 1)
    }

    @Test func connectThatNeverCompletes() {
        var driver = SessionDriver()
        driver.start()
        #expect(driver.wait(seconds: 9).isEmpty)
        let actions = driver.wait(seconds: 1)
        #expect(actions.states == [.unreachable(reason: "no connection within 10 s")] && actions.disconnects == 1)
        // A late `connected` for the abandoned attempt is ignored.
        #expect(driver.connected().isEmpty)
    }

    @Test func connectFailureIsUnreachableWithTheReason() {
        var driver = SessionDriver()
        driver.start()
        let actions = driver.failed("Connection refused")
        #expect(actions.states == [.unreachable(reason: "Connection refused")])
        #expect(actions.disconnects == 1)
        #expect(driver.state.description == "the caster is unreachable: Connection refused")
    }

    @Test func closeInTheMiddleOfTheHead() {
        var driver = SessionDriver()
        driver.startAndConnect()
        driver.receive("HTTP/1.1 200")
        #expect(
            driver.closed().states == [
                .protocolError(reason: "the caster closed the connection in the middle of its answer")
            ])
    }

    // MARK: Streams that stop

    @Test func silenceWhileStreamingIsNoData() {
        var driver = SessionDriver()
        driver.startAndConnect()
        driver.receive(bytes(icyOK) + Self.stream)
        #expect(driver.wait(seconds: 29).isEmpty)
        let actions = driver.wait(seconds: 1)
        #expect(actions.states == [.noData] && actions.disconnects == 1)
        #expect(actions.logs.contains { $0.contains("no data for 30 s") })
        // The frame reset the backoff: the retry comes after 1 s.
        #expect(driver.session.health.nextAttemptAt == driver.now + second)
    }

    @Test func garbageInsteadOfRTCMIsNoData() {
        var driver = SessionDriver()
        driver.startAndConnect()
        driver.receive(ntrip2OK)
        var actions: [Action] = []
        for _ in 0..<30 {
            actions += driver.receive(bytes("$GPGGA,not RTCM\r\n") + [0xD3, 0x00, 0x05, 1, 2, 3, 4, 5, 6, 7, 8])
            actions += driver.tick(after: second)
        }
        #expect(actions.delivered.isEmpty)
        #expect(actions.states == [.noData])
        #expect(actions.logs.contains { $0.contains("no valid RTCM frame for 30 s") })
        #expect(driver.session.health.damagedFrames > 0 && driver.session.health.skippedBytes > 0)
    }

    @Test func chunkThatNeverEndsIsSilence() {
        var driver = SessionDriver()
        driver.startAndConnect()
        let actions = driver.receive(bytes(ntrip2Chunked) + bytes("FFFF\r\n") + Self.frames[0])
        #expect(actions.delivered == [Self.frames[0]])
        #expect(driver.wait(seconds: 30).states == [.noData])
    }

    @Test func streamClosedAfterFramesIsJustAReconnect() {
        var driver = SessionDriver()
        driver.startAndConnect()
        driver.receive(bytes(icyOK) + Self.stream)
        let actions = driver.closed()
        #expect(actions.states == [.connecting] && actions.disconnects == 1)
        #expect(actions.logs.contains { $0.contains("the caster closed the stream after 4 frames") })
    }

    @Test func streamClosedBeforeAnyFrameIsNoData() {
        var driver = SessionDriver()
        driver.startAndConnect()
        driver.receive(icyOK + "junk")
        #expect(driver.closed().states == [.noData])
    }

    @Test func lastChunkEndsTheStream() {
        var driver = SessionDriver()
        driver.startAndConnect()
        let actions = driver.receive(bytes(ntrip2Chunked) + chunk(Self.frames[0]) + bytes("0\r\n\r\n"))
        #expect(actions.delivered == [Self.frames[0]])
        #expect(actions.states == [.streaming, .connecting] && actions.disconnects == 1)
    }

    @Test func framesBeforeAChunkErrorAreStillDelivered() {
        var driver = SessionDriver()
        driver.startAndConnect()
        let actions = driver.receive(bytes(ntrip2Chunked) + chunk(Self.frames[0]) + bytes("!!\r\n"))
        #expect(actions.delivered == [Self.frames[0]])
        #expect(
            driver.state
                == .protocolError(reason: "the chunked framing is broken: a chunk size is not a hexadecimal number"))
    }

    // MARK: Backoff

    @Test func backoffDoublesToThirtySecondsAndResetsAfterAFrame() {
        var driver = SessionDriver()
        driver.start()
        var delays: [Int64] = []
        for _ in 0..<7 {
            driver.failed("Connection refused")
            let next = driver.session.health.nextAttemptAt!
            delays.append((next - driver.now) / second)
            #expect(driver.tick(after: next - driver.now - 1).connects == 0)
            #expect(driver.tick(after: 1).connects == 1)
        }
        #expect(delays == [1, 2, 4, 8, 16, 30, 30])
        #expect(driver.session.health.connectAttempts == 8)
        // Streaming without a frame does not reset it...
        driver.connected()
        driver.receive(icyOK)
        driver.closed()
        #expect(driver.session.health.nextAttemptAt! - driver.now == 30 * second)
        // ...a delivered frame does.
        driver.wait(seconds: 30)
        driver.connected()
        driver.receive(bytes(icyOK) + Self.frames[0])
        driver.closed()
        #expect(driver.session.health.nextAttemptAt! - driver.now == second)
        #expect((1...8).map { NTRIPSession.retryDelay(afterFailures: $0) / second } == [1, 2, 4, 8, 16, 30, 30, 30])
    }

    @Test func waitingStateIsConnectingForAFailureWithoutOwnState() {
        var driver = SessionDriver()
        driver.startAndConnect()
        driver.receive(bytes(icyOK) + Self.frames[0])
        driver.closed()
        #expect(driver.state == .connecting && driver.session.health.nextAttemptAt != nil)
        #expect(driver.session.nextDeadline == driver.session.health.nextAttemptAt)
    }

    // MARK: GGA

    @Test func ggaFirstAtFixThenEveryIntervalNeverFasterThanOnceASecond() {
        var driver = SessionDriver(ggaIntervalSeconds: 5)
        driver.startAndConnect()
        driver.receive(icyOK)
        // No fix: nothing.
        #expect(driver.position(fixPosition(quality: .noFix)).ggas.isEmpty)
        #expect(driver.wait(seconds: 3).ggas.isEmpty)
        // The first fix goes out at once.
        #expect(driver.position(fixPosition()).ggas.count == 1)
        // More positions within the interval: nothing.
        for _ in 0..<4 {
            driver.now += second
            #expect(driver.position(fixPosition()).ggas.isEmpty)
        }
        // The interval has passed: the next position or tick sends.
        driver.now += second
        #expect(driver.position(fixPosition()).ggas.count == 1)
        #expect(driver.wait(seconds: 4).ggas.isEmpty)
        #expect(driver.wait(seconds: 1).ggas.count == 1)
        #expect(driver.session.health.ggaSent == 3 && driver.session.health.lastGGAAt == driver.now)
        // The last fix keeps going out while positions stop (a VRS needs it to keep the stream).
        driver.receive(Self.stream)
        #expect(driver.wait(seconds: 5).ggas.count == 1)
    }

    @Test func ggaRightAfterConnectingWhenAFixIsKnown() {
        var driver = SessionDriver()
        driver.start()
        #expect(driver.position(fixPosition()).ggas.isEmpty)  // not streaming yet
        driver.connected()
        let actions = driver.receive(icyOK)
        #expect(actions.ggas.count == 1)
        #expect(actions.ggas.first?.hasPrefix("$GPGGA,123519.50,4807.03800000,N,01131.00000000,W,4,") == true)
    }

    @Test func ggaNeverMoreThanOnceASecondAcrossReconnects() {
        var driver = SessionDriver(ggaIntervalSeconds: 1)
        driver.startAndConnect()
        driver.position(fixPosition())
        driver.receive(icyOK)
        #expect(driver.all.ggas.count == 1)
        // An immediate reconnect (Rev 1 fallback is immediate; here a close and a 1 s retry).
        driver.receive(Self.frames[0])
        driver.closed()
        driver.now += second / 2
        var actions = driver.tick(after: second / 2)
        #expect(actions.connects == 1)
        driver.connected()
        actions = driver.receive(icyOK)
        #expect(actions.ggas.count == 1)
        var sendTimes: [Int64] = []
        for _ in 0..<20 {
            driver.now += second / 4
            if !driver.position(fixPosition()).ggas.isEmpty { sendTimes.append(driver.now) }
        }
        #expect(zip(sendTimes, sendTimes.dropFirst()).allSatisfy { $1 - $0 >= second })
        #expect(sendTimes.count == 5)
    }

    @Test func ggaIntervalZeroNeverSends() {
        var driver = SessionDriver(ggaIntervalSeconds: 0)
        driver.startAndConnect()
        driver.position(fixPosition())
        driver.receive(bytes(icyOK) + Self.stream)
        for _ in 0..<20 {
            driver.position(fixPosition())
            driver.receive(Self.frames[0])
            driver.wait(seconds: 1)
        }
        #expect(driver.all.ggas.isEmpty && driver.session.health.ggaSent == 0)
    }

    @Test func aFixThatCannotBeWrittenIsNotKept() {
        var driver = SessionDriver(ggaIntervalSeconds: 1)
        driver.startAndConnect()
        driver.receive(icyOK)
        #expect(driver.position(fixPosition(latitude: 95)).ggas.isEmpty)
        // Nothing is due: the next deadline is the silence limit, not a GGA that never goes out.
        #expect(driver.session.nextDeadline == driver.now + NTRIPSession.silenceLimit)
        #expect(driver.wait(seconds: 5).ggas.isEmpty)
        #expect(GGAWriter.isWritable(fixPosition()) && !GGAWriter.isWritable(fixPosition(latitude: 95)))
    }

    // MARK: Stop, start, stale events

    @Test func stopDisconnectsAndTurnsOff() {
        var driver = SessionDriver()
        driver.startAndConnect()
        driver.receive(bytes(icyOK) + Self.stream)
        let actions = driver.stop()
        #expect(actions.first == .disconnect && actions.states == [.off])
        #expect(driver.session.nextDeadline == nil && driver.session.health.nextAttemptAt == nil)
        // Everything after stop is ignored until the next start.
        #expect(driver.receive(Self.stream).isEmpty && driver.wait(seconds: 60).isEmpty && driver.closed().isEmpty)
        #expect(driver.stop().isEmpty)
        #expect(driver.start().connects == 1 && driver.state == .connecting)
    }

    @Test func stopWhileWaitingHasNothingToDisconnect() {
        var driver = SessionDriver()
        driver.start()
        driver.failed("refused")
        let actions = driver.stop()
        #expect(actions.disconnects == 0 && actions.states == [.off])
    }

    @Test func everyConnectIsEndedByExactlyOneDisconnect() {
        // Whatever happens, .connect and .disconnect alternate.
        var driver = SessionDriver()
        driver.start()
        driver.failed("refused")
        driver.wait(seconds: 1)
        driver.connected()
        driver.closed()  // Rev 1 fallback
        driver.connected()
        driver.receive("HTTP/1.0 401 Unauthorized\r\n\r\n")
        driver.wait(seconds: 2)
        driver.connected()
        driver.receive(bytes(icyOK) + Self.stream)
        driver.wait(seconds: 31)
        driver.wait(seconds: 1)
        driver.stop()
        var open = false
        for action in driver.all {
            if case .connect = action {
                #expect(!open)
                open = true
            } else if action == .disconnect {
                #expect(open)
                open = false
            }
        }
        #expect(!open)
        #expect(driver.all.connects == 5)
    }

    @Test func nextDeadlineSaysWhenTickHasWork() {
        var driver = SessionDriver()
        #expect(driver.session.nextDeadline == nil)
        driver.start()
        #expect(driver.session.nextDeadline == driver.now + NTRIPSession.connectTimeout)
        driver.connected()
        #expect(driver.session.nextDeadline == driver.now + NTRIPSession.answerTimeout)
        driver.receive(icyOK)
        #expect(driver.session.nextDeadline == driver.now + NTRIPSession.silenceLimit)
        driver.position(fixPosition())
        #expect(driver.session.nextDeadline == driver.now + 10 * second)
    }

    // MARK: The password

    @Test func passwordNeverInAnyActionLogOrState() {
        let echo = "HTTP/1.1 401 \(testPassword) is wrong\r\n\r\n"
        let table = "SOURCETABLE 200 OK\r\nSTR;\(testPassword);x\r\nSTR;OK;y\r\nENDSOURCETABLE\r\n"
        var driver = SessionDriver()
        driver.start()
        driver.failed("cannot resolve rover:\(testPassword)@caster")
        driver.wait(seconds: 1)
        driver.connected()
        driver.receive(echo)
        driver.wait(seconds: 2)
        driver.connected()
        driver.receive(table)
        driver.wait(seconds: 4)
        driver.connected()
        driver.receive("ERROR - Bad Password \(testPassword)\r\n")
        driver.wait(seconds: 8)
        driver.connected()
        driver.receive("HTTP/1.1 599 " + String(repeating: "x", count: 70) + testPassword + "\r\n\r\n")
        driver.wait(seconds: 16)
        driver.connected()
        driver.receive(bytes(icyOK) + Self.stream)
        driver.position(fixPosition())
        driver.wait(seconds: 40)
        driver.stop()
        let credentials = NTRIPRequest.basicCredentials(for: driver.session.settings.source)!
        var texts: [String] = driver.all.logs + driver.all.states.map(\.description) + driver.all.states.map(\.code)
        for case .noSuchMountPoint(let offered) in driver.all.states { texts += offered }
        for case .connect(let host, _, _) in driver.all { texts.append(host) }
        for case .send(let bytes) in driver.all {
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(!text.contains(testPassword))
        }
        for text in texts {
            #expect(!text.contains(testPassword), "\(text)")
            #expect(!text.contains(credentials), "\(text)")
            #expect(!text.contains("S3cr3t"), "\(text)")
        }
        #expect(driver.all.states.contains(.noSuchMountPoint(offered: ["***", "OK"])))
        #expect(texts.count > 10)
    }
}
