// The state's codes and sentences, and HTTP1's chunked decoder in the stream mode the session uses.
import Corrections
import HTTP1
import TestSupport
import Testing

@Suite("Corrections state and chunked streams", .tags(.unit))
struct CorrectionsStateTests {
    @Test func codesAndDescriptions() {
        let table: [(CorrectionsState, String, String)] = [
            (.off, "off", "corrections are off"),
            (.connecting, "connecting", "connecting to the caster"),
            (.streaming, "streaming", "receiving RTCM corrections"),
            (.loginRefused, "login-refused", "the caster refused the user name or password"),
            (.noSuchMountPoint(offered: []), "no-such-mount-point", "no such mount point; the caster named no other"),
            (
                .noSuchMountPoint(offered: ["A", "B", "C"]), "no-such-mount-point",
                "no such mount point; the caster offers: A, B, C"
            ),
            (
                .unreachable(reason: "Connection refused"), "unreachable",
                "the caster is unreachable: Connection refused"
            ),
            (.noData, "no-data", "no valid RTCM data from the caster"),
            (
                .protocolError(reason: "the status line is malformed: \"x\""), "protocol-error",
                "the caster's answer is not NTRIP: the status line is malformed: \"x\""
            ),
        ]
        for (state, code, description) in table {
            #expect(state.code == code)
            #expect(state.description == description)
            #expect(state.isFailure == ![.off, .connecting, .streaming].contains(state))
        }
        let many = (1...12).map { "M\($0)" }
        #expect(
            CorrectionsState.noSuchMountPoint(offered: many).description
                == "no such mount point; the caster offers: M1, M2, M3, M4, M5, M6, M7, M8, M9, M10 and 2 more")
    }

    @Test func healthStartsEmpty() {
        let health = CorrectionsHealth()
        #expect(health.state == .off && health.since == 0 && health.revision == nil && health.bytes == 0)
        #expect(health.frames == 0 && health.damagedFrames == 0 && health.lastFrameAt == nil && health.ggaSent == 0)
        #expect(health.connectAttempts == 0 && health.nextAttemptAt == nil && health.referenceStationID == nil)
    }

    // MARK: HTTPChunkedDecoder's stream mode

    @Test func streamModeHasNoLimitOnTheWholeBody() throws {
        var decoder = HTTPChunkedDecoder(streamWithMaximumChunkBytes: 4096)
        let data = Array(repeating: UInt8(0x42), count: 4096)
        let encoded = Array("1000\r\n".utf8) + data + [0x0D, 0x0A]
        var total = 0
        for _ in 0..<100 {  // 400 KiB: far past the request limit of 64 KiB
            var body: [UInt8] = []
            #expect(try decoder.decode(encoded.span, into: &body) == encoded.count)
            #expect(body == data)
            total += body.count
        }
        #expect(total == 409_600 && decoder.decodedCount == 409_600 && !decoder.isComplete)
        // The request decoder still stops at 64 KiB.
        var request = HTTPChunkedDecoder()
        var body: [UInt8] = []
        #expect(throws: HTTPRequestError.contentTooLarge) {
            for _ in 0..<17 { _ = try request.decode(encoded.span, into: &body) }
        }
    }

    @Test func streamModeCapsEachChunk() throws {
        var atLimit = HTTPChunkedDecoder(streamWithMaximumChunkBytes: 4096)
        var body: [UInt8] = []
        #expect(try atLimit.decode(Array("1000\r\n".utf8).span, into: &body) == 6)
        var over = HTTPChunkedDecoder(streamWithMaximumChunkBytes: 4096)
        #expect(throws: HTTPRequestError.contentTooLarge) { try over.decode(Array("1001\r\n".utf8).span, into: &body) }
        // An endless size line of F: refused at the digit that passes the limit, never overflowing.
        var endless = HTTPChunkedDecoder(streamWithMaximumChunkBytes: 65_536)
        let line = Array(repeating: UInt8(ascii: "F"), count: 40)
        for digits in 1...4 {
            #expect(try endless.decode(Array(line[(digits - 1)..<digits]).span, into: &body) == 1)
        }
        #expect(throws: HTTPRequestError.contentTooLarge) { try endless.decode(Array(line[4...]).span, into: &body) }
    }
}
