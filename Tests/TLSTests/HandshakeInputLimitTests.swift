// What a client may send before its handshake is done (HandshakeInputLimit), on crafted record
// streams: the ClientHello's declared length, cut anywhere into reads and records, the total,
// and where the scan must stop because what follows may be encrypted.
import TestSupport
import Testing

@testable import TLS

private func record(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
    [type, 0x03, 0x03, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
}

/// A handshake message header (type, 24-bit length) and `body` bytes of it.
private func message(_ type: UInt8, declared: Int, body: Int) -> [UInt8] {
    [type, UInt8(declared >> 16), UInt8((declared >> 8) & 0xFF), UInt8(declared & 0xFF)]
        + [UInt8](repeating: 0x41, count: body)
}

/// Feeds `stream` in reads of `piece` bytes; returns the first refusal.
private func admit(_ stream: [UInt8], piece: Int, tls12: Bool = false, limit: inout HandshakeInputLimit) -> String? {
    var offset = 0
    while offset < stream.count {
        let end = min(stream.count, offset + piece)
        let refusal = stream[offset..<end].withUnsafeBytes { limit.admit($0, negotiatedTLS12: tls12) }
        if let refusal { return refusal }
        offset = end
    }
    return nil
}

private func admit(_ stream: [UInt8], piece: Int, tls12: Bool = false) -> String? {
    var limit = HandshakeInputLimit()
    return admit(stream, piece: piece, tls12: tls12, limit: &limit)
}

@Suite("Handshake input limit", .tags(.unit))
struct HandshakeInputLimitTests {
    static let pieces = [1, 3, 5, 7, 4096]

    @Test(arguments: pieces)
    func aClientHelloUpTo16KiBIsTakenAndALargerOneIsRefusedByItsHeader(piece: Int) {
        let limit = HandshakeInputLimit.maxClientHello
        #expect(admit(record(22, message(1, declared: limit, body: limit)), piece: piece) == nil)
        // The header alone is enough to refuse: nothing of the body has to come.
        let refusal = admit(record(22, message(1, declared: limit + 1, body: 0)), piece: piece)
        #expect(refusal == "a ClientHello of \(limit + 1) bytes (at most \(limit) are accepted)")
        #expect(admit(record(22, message(1, declared: 122_880, body: 0)), piece: piece) != nil)
    }

    /// A handshake header split across two records is still read (legal, if unusual).
    @Test func aHeaderSplitAcrossRecordsIsRead() {
        let hello = message(1, declared: 100_000, body: 0)
        let stream = record(22, Array(hello[0..<2])) + record(22, Array(hello[2...]))
        #expect(admit(stream, piece: 4096) != nil)
    }

    /// The second ClientHello of a HelloRetryRequest (after a ChangeCipherSpec, TLS 1.3's
    /// middlebox compatibility) is checked too.
    @Test func aSecondClientHelloIsChecked() {
        let first = record(22, message(1, declared: 512, body: 512))
        let stream = first + record(20, [1]) + record(22, message(1, declared: 50_000, body: 0))
        #expect(admit(stream, piece: 4096) != nil)
    }

    /// Where the rest may be encrypted the scan stops: an encrypted record's bytes must not be
    /// read as a header (they would declare anything).
    @Test func theScanStopsWhereEncryptionMayBegin() {
        let hello = record(22, message(1, declared: 512, body: 512))
        let garbage = record(22, message(1, declared: 0xFF_FFFF, body: 8))
        // TLS 1.2: ClientKeyExchange, then ChangeCipherSpec and the encrypted Finished.
        #expect(admit(hello + record(22, message(16, declared: 33, body: 33)) + garbage, piece: 4096) == nil)
        // TLS 1.2 resumption: ChangeCipherSpec once TLS 1.2 was chosen.
        #expect(admit(hello + record(20, [1]) + garbage, piece: 4096, tls12: true) == nil)
        // TLS 1.3: the client's flight is application-data records.
        #expect(admit(hello + record(23, [1, 2, 3]) + garbage, piece: 4096) == nil)
        // Not TLS at all (plain HTTP): OpenSSL refuses it with an alert; nothing here.
        #expect(admit(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8) + garbage, piece: 4096) == nil)
    }

    @Test func atMost32KiBBeforeTheHandshakeIsDone() {
        var limit = HandshakeInputLimit()
        let stream = record(22, message(1, declared: 512, body: 512)) + record(23, [UInt8](repeating: 0, count: 16_000))
        #expect(admit(stream, piece: 4096, limit: &limit) == nil)
        #expect(admit(record(23, [UInt8](repeating: 0, count: 16_000)), piece: 4096, limit: &limit) == nil)
        let refusal = admit(record(23, [UInt8](repeating: 0, count: 1_000)), piece: 4096, limit: &limit)
        #expect(refusal == "the client sent more than 32768 bytes without finishing the handshake")
    }
}
