import TestSupport
import Testing

@testable import HTTP1

@Suite("Chunked transfer coding", .tags(.unit))
struct ChunkedDecoderTests {
    /// Decodes `input` fed in pieces ending at `splits`; returns body, total consumed, completion.
    private func decode(_ input: [UInt8], splits: [Int] = []) throws(HTTPRequestError) -> ([UInt8], Int, Bool) {
        var decoder = HTTPChunkedDecoder()
        var body: [UInt8] = []
        var consumed = 0
        var start = 0
        for end in splits + [input.count] where end >= start {
            let piece = Array(input[start..<end])
            let used = try decoder.decode(piece.span, into: &body)
            consumed += used
            start = end
            if decoder.isComplete { break }
            #expect(used == piece.count, "an incomplete decoder consumes everything")
        }
        return (body, consumed, decoder.isComplete)
    }

    @Test(arguments: [
        ("5\r\nhello\r\n0\r\n\r\n", "hello"),
        ("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world"),
        ("A\r\n0123456789\r\n0\r\n\r\n", "0123456789"),
        ("a\r\n0123456789\r\n0\r\n\r\n", "0123456789"),
        ("0005\r\nhello\r\n000\r\n\r\n", "hello"),
        ("5;name=value\r\nhello\r\n0;last\r\n\r\n", "hello"),
        ("5 ; name=\"quoted; value\"\r\nhello\r\n0\r\n\r\n", "hello"),
        ("5\nhello\n0\n\n", "hello"),  // bare LF, as in the head
        ("5\r\nhello\r\n0\r\nExpires: never\r\nX-Checksum: abc\r\n\r\n", "hello"),
        ("0\r\n\r\n", ""),
        ("1\r\n\r\r\n0\r\n\r\n", "\r"),  // data may hold any byte
    ])
    func decodes(_ encoded: String, _ expected: String) throws {
        let input = bytes(encoded)
        let (body, consumed, complete) = try decode(input)
        #expect(complete)
        #expect(consumed == input.count)
        #expect(body == bytes(expected))
        // Every split point, and one byte at a time, gives the same body.
        for split in 0...input.count {
            let (splitBody, splitConsumed, splitComplete) = try decode(input, splits: [split])
            #expect(splitBody == body && splitConsumed == consumed && splitComplete, "split at \(split)")
        }
        let (dripBody, _, dripComplete) = try decode(input, splits: Array(1..<input.count))
        #expect(dripBody == body && dripComplete)
    }

    @Test func everyProperPrefixIsIncomplete() throws {
        let input = bytes("5;a=b\r\nhello\r\n0\r\nT: v\r\n\r\n")
        for length in 0..<input.count {
            let (_, consumed, complete) = try decode(Array(input[0..<length]))
            #expect(!complete && consumed == length, "prefix of \(length) bytes")
        }
    }

    @Test func stopsAtTheEndOfTheBody() throws {
        let input = bytes("3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n")
        var decoder = HTTPChunkedDecoder()
        var body: [UInt8] = []
        #expect(try decoder.decode(input.span, into: &body) == 13)
        #expect(decoder.isComplete && decoder.decodedCount == 3)
        // Once complete it consumes nothing more.
        #expect(try decoder.decode(input.span, into: &body) == 0)
    }

    @Test(arguments: [
        ("\r\n", HTTPRequestError.invalidChunkSize),
        ("-1\r\n", .invalidChunkSize),
        ("0x5\r\n", .invalidChunkSize),
        ("5 x\r\n", .invalidChunkSize),
        ("5\r\nhello0\r\n\r\n", .chunkDataNotTerminated),
        ("5\rX", .bareCarriageReturn),
        ("0\r\n\rX", .bareCarriageReturn),
        ("0\r\nA: b\rX", .bareCarriageReturn),
        ("0\r\nA b\r\n\r\n", .whitespaceBeforeColon),
        ("0\r\nA\r\n\r\n", .missingColon),
        ("0\r\n:b\r\n\r\n", .fieldNameNotToken),
        ("0\r\nA(: b\r\n\r\n", .fieldNameNotToken),
        ("0\r\nA: b\u{0}\r\n\r\n", .fieldValueCharacterNotAllowed),
        ("0\r\n b\r\n\r\n", .obsoleteLineFolding),
        ("10001\r\n", .contentTooLarge),
        ("FFFFFFFFFFFFFFFFFFFFFFFF\r\n", .contentTooLarge),
        (
            "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
                + "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
                + "000000000000000000000000000000000000000000000000000000000000000000001\r\n", .chunkLineTooLong
        ),
    ])
    func rejects(_ encoded: String, _ error: HTTPRequestError) {
        #expect(throws: error) { _ = try decode(bytes(encoded)) }
    }
}
