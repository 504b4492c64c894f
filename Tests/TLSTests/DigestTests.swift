import Foundation
import TLS
import TestSupport
import Testing

private func hex<let N: Int>(_ digest: InlineArray<N, UInt8>) -> String {
    var text = ""
    for index in digest.indices {
        let byte = digest[index]
        text += String(byte >> 4, radix: 16) + String(byte & 0x0F, radix: 16)
    }
    return text
}

private func base64<let N: Int>(_ digest: InlineArray<N, UInt8>) -> String {
    var bytes: [UInt8] = []
    for index in digest.indices { bytes.append(digest[index]) }
    return Data(bytes).base64EncodedString()
}

private let fiftySixBytes = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"

@Suite("OpenSSL digests (FIPS 180 vectors)", .tags(.unit))
struct DigestTests {
    @Test(arguments: [
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        (fiftySixBytes, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
    ])
    func sha1(input: String, expected: String) {
        #expect(hex(Digest.sha1(Array(input.utf8).span)) == expected)
    }

    @Test(arguments: [
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (fiftySixBytes, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func sha256(input: String, expected: String) {
        #expect(hex(Digest.sha256(Array(input.utf8).span)) == expected)
    }

    @Test func millionAs() {
        let input = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(hex(Digest.sha1(input.span)) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
        #expect(hex(Digest.sha256(input)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// RFC 6455 §1.3: the server's Sec-WebSocket-Accept for the sample nonce.
    @Test func webSocketAcceptKey() {
        let key = "dGhlIHNhbXBsZSBub25jZQ==" + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
        #expect(base64(Digest.sha1(Array(key.utf8).span)) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    /// TMM Access Code V1: base64(SHA-256(applicationID + UTC second in ISO 8601)).
    @Test func accessCodeV1Vector() {
        let input = "12345678-1234-1234-1234-123456789abc" + "2024-02-22T18:00:00Z"
        #expect(base64(Digest.sha256(Array(input.utf8).span)) == "/T6VQF4SQ/Ix/H8ZfFOrSEzj8qpHsFmA3ug569bPpV0=")
    }

    @Test func digestOfASlice() {
        let bytes = Array("xxabcxx".utf8)
        #expect(hex(Digest.sha1(bytes.span.extracting(2..<5))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }
}

@Suite("OpenSSL random bytes", .tags(.unit))
struct RandomTests {
    @Test func countsAndVariety() throws {
        #expect(try Random.bytes(count: 0).isEmpty)
        let a = try Random.bytes(count: 32)
        let b = try Random.bytes(count: 32)
        #expect(a.count == 32 && b.count == 32)
        #expect(a != b, "two 256-bit draws colliding means RAND_bytes is broken")
        #expect(Set(try Random.bytes(count: 4096)).count > 200, "4 KiB of random bytes covers most byte values")
    }
}
