import Foundation
import TestSupport
import Testing
import TMMProtocol

/// A small reference SHA-256 (FIPS 180-4) for tests; the daemon uses OpenSSL's.
func referenceSHA256(_ input: Span<UInt8>) -> InlineArray<32, UInt8> {
    let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]
    var h: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
    var message: [UInt8] = []
    for i in 0..<input.count { message.append(input[i]) }
    let bitLength = UInt64(message.count) * 8
    message.append(0x80)
    while message.count % 64 != 56 { message.append(0) }
    for shift in stride(from: 56, through: 0, by: -8) {
        message.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
    }
    func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { x >> n | x << (32 - n) }
    var w = [UInt32](repeating: 0, count: 64)
    for chunk in stride(from: 0, to: message.count, by: 64) {
        for t in 0..<16 {
            w[t] =
                UInt32(message[chunk + 4 * t]) << 24 | UInt32(message[chunk + 4 * t + 1]) << 16
                | UInt32(message[chunk + 4 * t + 2]) << 8 | UInt32(message[chunk + 4 * t + 3])
        }
        for t in 16..<64 {
            let s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
            let s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
        for t in 0..<64 {
            let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
            let ch = (e & f) ^ (~e & g)
            let t1 = hh &+ s1 &+ ch &+ k[t] &+ w[t]
            let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
            let maj = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ maj
            (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e; h[5] &+= f; h[6] &+= g; h[7] &+= hh
    }
    var out = InlineArray<32, UInt8>(repeating: 0)
    for i in 0..<8 {
        out[4 * i] = UInt8(truncatingIfNeeded: h[i] >> 24)
        out[4 * i + 1] = UInt8(truncatingIfNeeded: h[i] >> 16)
        out[4 * i + 2] = UInt8(truncatingIfNeeded: h[i] >> 8)
        out[4 * i + 3] = UInt8(truncatingIfNeeded: h[i])
    }
    return out
}

private func hex(_ digest: InlineArray<32, UInt8>) -> String {
    var text = ""
    for i in 0..<32 { text += String(format: "%02x", digest[i]) }
    return text
}

private func sha(_ text: String) -> String {
    let bytes = Array(text.utf8)
    return hex(referenceSHA256(bytes.span))
}

/// 2024-02-22T18:00:00Z.
let vectorSecond: Int64 = 1_708_624_800
let vectorID = "12345678-1234-1234-1234-123456789ABC"
let vectorCodeNow = "/T6VQF4SQ/Ix/H8ZfFOrSEzj8qpHsFmA3ug569bPpV0="
let vectorCodePrevious = "fnPXvwyDKtZcxHiE2FbxwNNTyHITngxw+4Z3ZDOX6xs="

@Suite("Access Code V1", .tags(.unit))
struct AccessCodeV1Tests {
    @Test func referenceSHA256MatchesKnownDigests() {
        #expect(sha("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(sha("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(sha(String(repeating: "a", count: 1000)).hasPrefix("41edece42d63e8d9"))
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00Z"),
        (vectorSecond, "2024-02-22T18:00:00Z"),
        (vectorSecond - 1, "2024-02-22T17:59:59Z"),
        (Int64(951_782_400), "2000-02-29T00:00:00Z"),
        (Int64(4_102_444_799), "2099-12-31T23:59:59Z"),
        (Int64(-1), "1969-12-31T23:59:59Z"),
        (Int64(1_709_251_199), "2024-02-29T23:59:59Z"),
        (Int64(253_402_300_799), "9999-12-31T23:59:59Z"),
        (Int64.max, "9999-12-31T23:59:59Z"),
        (Int64.min, "0000-01-01T00:00:00Z"),
    ])
    func timestamp(seconds: Int64, expected: String) {
        #expect(AccessCodeV1.timestamp(unixSeconds: seconds) == expected)
    }

    @Test func timestampMatchesFoundationOverManySeconds() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'Z'"
        var second: Int64 = -2_000_000_000
        while second < 6_000_000_000 {
            let expected = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(second)))
            #expect(AccessCodeV1.timestamp(unixSeconds: second) == expected)
            second += 7_777_777
        }
    }

    @Test func documentVectors() {
        #expect(
            AccessCodeV1.code(applicationID: vectorID, unixSeconds: vectorSecond, sha256: referenceSHA256)
                == vectorCodeNow)
        #expect(
            AccessCodeV1.code(applicationID: vectorID, unixSeconds: vectorSecond - 1, sha256: referenceSHA256)
                == vectorCodePrevious)
        // The ID is lower-cased before hashing.
        #expect(
            AccessCodeV1.code(applicationID: vectorID.lowercased(), unixSeconds: vectorSecond, sha256: referenceSHA256)
                == vectorCodeNow)
    }

    @Test func verifyAcceptsTheNeighbouringSeconds() throws {
        let id = try #require(GUID(vectorID))
        let other = try #require(GUID("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"))
        let ids = [other, id]
        for now in (vectorSecond - 1)...(vectorSecond + 1) {
            #expect(
                AccessCodeV1.verify(
                    headerValue: "Basic " + vectorCodeNow, registeredIDs: ids, now: now,
                    sha256: referenceSHA256) == id)
        }
        for now in [vectorSecond - 2, vectorSecond + 2, 0, Int64.min, Int64.max] {
            #expect(
                AccessCodeV1.verify(
                    headerValue: "Basic " + vectorCodeNow, registeredIDs: ids, now: now,
                    sha256: referenceSHA256) == nil)
        }
        // The MAUI retry: the previous second's code, checked at the current second.
        #expect(
            AccessCodeV1.verify(
                headerValue: "Basic " + vectorCodePrevious, registeredIDs: ids, now: vectorSecond,
                sha256: referenceSHA256) == id)
        // Unregistered ID.
        #expect(
            AccessCodeV1.verify(
                headerValue: "Basic " + vectorCodeNow, registeredIDs: [other], now: vectorSecond,
                sha256: referenceSHA256) == nil)
        #expect(
            AccessCodeV1.verify(
                headerValue: "Basic " + vectorCodeNow, registeredIDs: [GUID](), now: vectorSecond,
                sha256: referenceSHA256) == nil)
    }

    static let headerCases: [(String, Bool)] = {
        let code: String = vectorCodeNow
        var rows: [(String, Bool)] = []
        rows.append(("basic " + code, true))
        rows.append(("BASIC  " + code + " ", true))
        rows.append(("\tBasic\t" + code, true))
        rows.append(("Basic" + code, false))
        rows.append(("Bearer " + code, false))
        rows.append(("AccessCodeV2 " + code, false))
        rows.append((code, false))
        rows.append(("Basic ", false))
        rows.append(("Basic", false))
        rows.append(("", false))
        rows.append(("Basic " + String(code.dropLast()), false))
        rows.append(("Basic " + code + "=", false))
        rows.append(("Basic " + code.lowercased(), false))
        rows.append(("Basic " + String(code.dropFirst()) + "/", false))
        rows.append(("Basic " + code + " x", false))
        return rows
    }()

    @Test(arguments: headerCases)
    func headerForms(header: String, accepted: Bool) throws {
        let id = try #require(GUID(vectorID))
        let result = AccessCodeV1.verify(
            headerValue: header, registeredIDs: [id], now: vectorSecond, sha256: referenceSHA256)
        #expect((result != nil) == accepted)
    }

    @Test func constantTimeEqual() {
        #expect(AccessCodeV1.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!AccessCodeV1.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!AccessCodeV1.constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(AccessCodeV1.constantTimeEqual([], []))
    }
}

/// `presentedDigest`: the server's table lookup accepts exactly the codes `verify` compares equal.
@Suite("AccessCodeV1 presented digest", .tags(.unit))
struct AccessCodeV1PresentedDigestTests {
    @Test func theDocumentVectorDecodesToItsDigest() throws {
        let digest = try #require(AccessCodeV1.presentedDigest(headerValue: "Basic " + vectorCodeNow))
        let expected = AccessCodeV1.digest(
            idBytes: Array(vectorID.lowercased().utf8),
            timestamp: AccessCodeV1.timestampUTF8(unixSeconds: vectorSecond),
            sha256: referenceSHA256)
        #expect(digest == (0..<32).map { expected[$0] })
        #expect(AccessCodeV1.presentedDigest(headerValue: "  basic\t" + vectorCodeNow + " ") != nil)
    }

    /// Tolerant Base64 would map these to the same 32 bytes; `verify` refuses them, so must the table.
    @Test(arguments: [
        vectorCodeNow.replacingOccurrences(of: "/", with: "_"),  // URL-safe letters
        String(vectorCodeNow.dropLast()),  // padding dropped
        String(vectorCodeNow.dropLast(2)) + "1=",  // low bits of the last sextet set
        "Bearer " + vectorCodeNow,
        String(repeating: "A", count: 40),
    ])
    func nonCanonicalCodesAreRefused(_ code: String) {
        let header = code.hasPrefix("Bearer") ? code : "Basic " + code
        #expect(AccessCodeV1.presentedDigest(headerValue: header) == nil, "\(code)")
        #expect(
            AccessCodeV1.verify(
                headerValue: header, registeredIDs: [GUID(vectorID)!], now: vectorSecond,
                sha256: referenceSHA256) == nil)
    }
}
