// UTF-8 validation: a table of well-formed and ill-formed sequences (Unicode Table 3-7), each
// checked by the validator, by the stdlib as a second opinion, and through a connection, whole and
// split across two fragments at every byte.
import TestSupport
import Testing
import WebSocket

@Suite("UTF-8", .tags(.unit))
struct UTF8Tests {
    static let valid: [(String, [UInt8])] = [
        ("empty", []),
        ("ASCII", Array("Hello, world".utf8)),
        ("Greek kosme", hex("ce ba e1 bd b9 cf 83 ce bc ce b5")),
        ("U+0080", hex("c2 80")), ("U+07FF", hex("df bf")), ("U+0800", hex("e0 a0 80")),
        ("U+D7FF, last before surrogates", hex("ed 9f bf")), ("U+E000, first after surrogates", hex("ee 80 80")),
        ("U+FFFD", hex("ef bf bd")), ("U+FFFF", hex("ef bf bf")), ("U+10000", hex("f0 90 80 80")),
        ("U+10FFFF, the last code point", hex("f4 8f bf bf")),
        ("emoji", Array("\u{1F6F0} \u{1F30D}".utf8)),
        ("NUL", [0x00]),
    ]

    static let invalid: [(String, [UInt8])] = [
        ("lone continuation 80", hex("80")), ("lone continuation bf", hex("bf")),
        ("overlong / (c0 af)", hex("c0 af")), ("overlong c1 bf", hex("c1 bf")),
        ("overlong 3-byte e0 80 af", hex("e0 80 af")), ("overlong U+07FF in 3 bytes", hex("e0 9f bf")),
        ("overlong 4-byte f0 80 80 af", hex("f0 80 80 af")), ("overlong U+FFFF in 4 bytes", hex("f0 8f bf bf")),
        ("high surrogate U+D800", hex("ed a0 80")), ("low surrogate U+DFFF", hex("ed bf bf")),
        ("surrogate pair (CESU-8)", hex("ed a0 bd ed b2 a9")),
        ("above U+10FFFF (f4 90)", hex("f4 90 80 80")), ("f5 lead", hex("f5 80 80 80")), ("fe", hex("fe")),
        ("ff", hex("ff")),
        ("truncated 2-byte", hex("c2")), ("truncated 3-byte", hex("e0 a0")), ("truncated 4-byte", hex("f0 90 80")),
        ("ASCII where a continuation belongs", hex("c2 41")),
        ("lead byte where a continuation belongs", hex("e1 80 e1 80 80")),
        ("valid text then a truncated character", Array("Hello ".utf8) + hex("f0 9f 98")),
        ("kosme with a bad byte", hex("ce ba e1 bd b9 cf 83 ce bc ce b5 ed a0 80 65 64 69 74 65 64")),
    ]

    @Test(arguments: valid)
    func acceptsWellFormed(name: String, bytes: [UInt8]) {
        #expect(isValidUTF8(bytes), "\(name)")
        #expect(String(validating: bytes, as: UTF8.self) != nil, "stdlib disagrees on \(name)")
        for split in 0...bytes.count {
            #expect(outcome(bytes, split: split) == .delivered(bytes), "\(name) split at \(split)")
        }
    }

    @Test(arguments: invalid)
    func rejectsIllFormed(name: String, bytes: [UInt8]) {
        #expect(!isValidUTF8(bytes), "\(name)")
        #expect(String(validating: bytes, as: UTF8.self) == nil, "stdlib disagrees on \(name)")
        for split in 0...bytes.count {
            #expect(outcome(bytes, split: split) == .closed(1007), "\(name) split at \(split)")
        }
    }

    @Test func agreesWithTheStandardLibraryOnEveryTwoByteSequenceAndRandomText() {
        for a in 0...255 {
            for b in 0...255 {
                let bytes = [UInt8(a), UInt8(b)]
                #expect(isValidUTF8(bytes) == (String(validating: bytes, as: UTF8.self) != nil))
            }
        }
        var random = SplitMix64(state: 3629)
        let alphabet: [UInt8] = [
            0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5,
        ]
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 1...6, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            #expect(isValidUTF8(bytes) == (String(validating: bytes, as: UTF8.self) != nil), "\(hexString(bytes))")
        }
    }

    @Test func invalidByteFailsBeforeTheMessageEnds() {
        // §8.1 fail fast: the first fragment carries the bad byte and is not final; the connection
        // fails on it, without waiting for the rest of the message.
        let first = clientFrame(0x1, Array("ok ".utf8) + [0xFF], fin: false)
        let (actions, connection) = run(first)
        #expect(actions.count == 1 && connection.state == .closed)
        if case .writeAndClose(let frame) = actions.first { #expect(closeCode(of: frame) == 1007) }
        // Even inside one frame whose end has not arrived yet.
        let long = clientFrame(
            0x1, [UInt8](repeating: 0x61, count: 100) + [0xC0] + [UInt8](repeating: 0x61, count: 100))
        let (early, _) = run(Array(long.prefix(8 + 101)))  // 8-byte header (16-bit length)
        #expect(early.count == 1)
    }

    enum Outcome: Equatable {
        case delivered([UInt8])
        case closed(UInt16?)
        case other
    }

    /// `bytes` as a text message in two fragments split at `split` (one frame if `split` is 0).
    func outcome(_ bytes: [UInt8], split: Int) -> Outcome {
        let wire =
            split == 0
            ? clientFrame(0x1, bytes)
            : clientFrame(0x1, Array(bytes[..<split]), fin: false) + clientFrame(0x0, Array(bytes[split...]))
        let (actions, _) = run(wire)
        switch actions.first {
        case .deliver(let message) where actions.count == 1 && message.kind == .text: return .delivered(message.payload)
        case .writeAndClose(let frame) where actions.count == 1: return .closed(closeCode(of: frame))
        default: return .other
        }
    }
}
