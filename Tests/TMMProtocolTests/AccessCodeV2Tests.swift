// Access Code V2's pure half: the header's form and the decrypted claim against the clock
// (the RSA half is tested in TLSTests against python3-cryptography).
import TestSupport
import Testing
import TMMProtocol

@Suite("Access Code V2 claims", .tags(.unit))
struct AccessCodeV2ClaimTests {
    /// 2024-02-22T18:00:00Z.
    static let now: Int64 = 1_708_624_800
    static let id = GUID("12345678-1234-1234-1234-123456789abc")!

    private func claim(_ text: String, now: Int64 = now) -> Result<AccessCodeV2.Claim, AccessCodeV2.Refusal> {
        AccessCodeV2.claim(plaintext: Array(text.utf8), now: now)
    }

    @Test func theDocumentedPlaintextIsAccepted() {
        let plaintext = AccessCodeV2.plaintext(applicationID: Self.id, unixSeconds: Self.now)
        #expect(
            String(decoding: plaintext, as: UTF8.self) == "12345678-1234-1234-1234-123456789abc 2024-02-22T18:00:00Z")
        #expect(
            claim("12345678-1234-1234-1234-123456789abc 2024-02-22T18:00:00Z")
                == .success(.init(applicationID: Self.id, unixSeconds: Self.now)))
        // The GUID in capitals names the same application.
        #expect(
            claim("12345678-1234-1234-1234-123456789ABC 2024-02-22T18:00:00Z")
                == .success(.init(applicationID: Self.id, unixSeconds: Self.now)))
    }

    struct WindowRow: Sendable, CustomTestStringConvertible {
        let offset: Int64
        let expected: AccessCodeV2.Refusal?
        var testDescription: String { "timestamp now\(offset >= 0 ? "+" : "")\(offset)s" }
    }

    /// An hour back is the documented lifetime; two minutes ahead is the chosen skew.
    static let window: [WindowRow] = [
        .init(offset: 0, expected: nil),
        .init(offset: -3_600, expected: nil),
        .init(offset: -3_601, expected: .expired(ageSeconds: 3_601)),
        .init(offset: -86_400, expected: .expired(ageSeconds: 86_400)),
        .init(offset: 120, expected: nil),
        .init(offset: 121, expected: .fromTheFuture(aheadSeconds: 121)),
        .init(offset: 86_400 * 365, expected: .fromTheFuture(aheadSeconds: 86_400 * 365)),
    ]

    @Test(arguments: window)
    func timestampWindow(_ row: WindowRow) {
        let text = String(
            decoding: AccessCodeV2.plaintext(applicationID: Self.id, unixSeconds: Self.now + row.offset), as: UTF8.self)
        switch claim(text) {
        case .success(let claim):
            #expect(row.expected == nil)
            #expect(claim.expiresAt == Self.now + row.offset + 3_600)
        case .failure(let refusal):
            #expect(refusal == row.expected)
        }
    }

    /// Decrypted text that is not `<GUID> <yyyy-MM-ddTHH:mm:ssZ>`.
    static let malformed = [
        "",
        "12345678-1234-1234-1234-123456789abc",
        "12345678-1234-1234-1234-123456789abc2024-02-22T18:00:00Z",
        "12345678-1234-1234-1234-123456789abc  2024-02-22T18:00:00Z",
        "12345678-1234-1234-1234-123456789abc\t2024-02-22T18:00:00Z",
        "12345678-1234-1234-1234-123456789abc 2024-02-22T18:00:00",
        "12345678-1234-1234-1234-123456789abc 2024-02-22T18:00:00.000Z",
        "12345678-1234-1234-1234-123456789abc 2024-02-22 18:00:00Z",
        "12345678-1234-1234-1234-123456789abc 2024-02-30T18:00:00Z",
        "12345678-1234-1234-1234-123456789abc 2023-02-29T18:00:00Z",
        "12345678-1234-1234-1234-123456789abc 2024-13-01T18:00:00Z",
        "12345678-1234-1234-1234-123456789abc 2024-02-22T24:00:00Z",
        "12345678-1234-1234-1234-123456789abc 2024-02-22T18:60:00Z",
        "12345678-1234-1234-1234-123456789abc 2024-02-22T18:00:60Z",
        "12345678-1234-1234-1234-123456789abc +024-02-22T18:00:00Z",
        "{12345678-1234-1234-1234-123456789ab} 2024-02-22T18:00:00Z",
        "12345678-1234-1234-1234-123456789abg 2024-02-22T18:00:00Z",
        "2024-02-22T18:00:00Z 12345678-1234-1234-1234-123456789abc",
        "12345678-1234-1234-1234-123456789abc 2024-02-22T18:00:00Z ",
    ]

    @Test(arguments: malformed)
    func malformedClaimsAreRefused(_ text: String) {
        #expect(claim(text) == .failure(.malformedClaim))
    }

    @Test func theNilUUIDIsNoApplication() {
        let refused = claim("00000000-0000-0000-0000-000000000000 2024-02-22T18:00:00Z")
        #expect(refused == .failure(.nilApplicationID))
        #expect(
            AccessCodeV2.Refusal.nilApplicationID.description
                == """
                00000000-0000-0000-0000-000000000000 (the nil UUID) is not an application id: \
                use the application's own GUID
                """
        )
    }

    @Test func leapDayAndCenturyDatesParse() {
        // 2024-02-29 and 2000-02-29 exist; the times are exact seconds.
        let leap = GUID("00000000-0000-0000-0000-000000000001")!
        #expect(
            claim("00000000-0000-0000-0000-000000000001 2024-02-29T00:00:00Z", now: 1_709_164_800)
                == .success(.init(applicationID: leap, unixSeconds: 1_709_164_800)))
        #expect(
            claim("00000000-0000-0000-0000-000000000001 2000-02-29T23:59:59Z", now: 951_868_799)
                == .success(.init(applicationID: leap, unixSeconds: 951_868_799)))
        #expect(
            claim("00000000-0000-0000-0000-000000000001 1970-01-01T00:00:00Z", now: 0)
                == .success(.init(applicationID: leap, unixSeconds: 0)))
    }

    @Test func headerForms() {
        #expect(AccessCodeV2.presentedCiphertext(headerValue: "AccessCodeV2 AAEC") == [0, 1, 2])
        #expect(AccessCodeV2.presentedCiphertext(headerValue: "accesscodev2   AAEC  ") == [0, 1, 2])
        #expect(AccessCodeV2.presentedCiphertext(headerValue: "ACCESSCODEV2\tAAE") == [0, 1])
        #expect(AccessCodeV2.presentedCiphertext(headerValue: "AccessCodeV2 -_-_") == [0xFB, 0xFF, 0xBF])
        #expect(AccessCodeV2.presentedCiphertext(headerValue: "AccessCodeV2 A") == nil)
        #expect(AccessCodeV2.presentedCiphertext(headerValue: "AccessCodeV2 not base64!") == nil)
        #expect(AccessCodeV2.presentedCiphertext(headerValue: "AccessCodeV2") == nil)
        #expect(AccessCodeV2.presentedCiphertext(headerValue: "AccessCodeV2 ") == nil)
        #expect(AccessCodeV2.presentedCiphertext(headerValue: "AccessCodeV2AAEC") == nil)
        #expect(AccessCodeV2.presentedCiphertext(headerValue: "Basic AAEC") == nil)
        #expect(AccessCodeV2.isAccessCodeV2(headerValue: "AccessCodeV2 garbage!"))
        #expect(!AccessCodeV2.isAccessCodeV2(headerValue: "Basic AAEC"))
        // V1 still reads its own scheme through the shared header parser.
        #expect(AccessCodeV1.presentedCode(headerValue: " basic  abc ") == Array("abc".utf8))
        #expect(AccessCodeV1.presentedCode(headerValue: "AccessCodeV2 abc") == nil)
    }
}
