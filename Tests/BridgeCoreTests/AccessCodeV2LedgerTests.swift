// The Access Code V2 replay ledger: single use over http, reuse over https until expiry,
// bounded memory that fails closed.
import BridgeCore
import TestSupport
import Testing
import TMMProtocol

@Suite("Access Code V2 ledger", .tags(.unit))
struct AccessCodeV2LedgerTests {
    static let now: Int64 = 1_708_624_800
    static let claim = AccessCodeV2.Claim(applicationID: GUID("12345678-1234-1234-1234-123456789abc")!, unixSeconds: now)

    private func digest(_ n: Int) -> [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: n >> ($0 % 8)) &+ UInt8($0) } }

    @Test func aCodeIsSingleUseOverHTTPAndReusableOverTLS() {
        var ledger = AccessCodeV2Ledger()
        #expect(ledger.lookup(digest: digest(1), overTLS: false, now: Self.now) == .unknown)
        let recorded18 = ledger.record(digest: digest(1), claim: Self.claim, now: Self.now)
        #expect(recorded18)
        #expect(ledger.lookup(digest: digest(1), overTLS: false, now: Self.now + 1) == .replayed)
        #expect(ledger.lookup(digest: digest(1), overTLS: true, now: Self.now + 1) == .reusable(Self.claim))
        // Another ciphertext of the same plaintext (OAEP is randomised) is another code.
        #expect(ledger.lookup(digest: digest(2), overTLS: false, now: Self.now) == .unknown)
    }

    @Test func expiredCodesAreUnknownAgainAndForgotten() {
        var ledger = AccessCodeV2Ledger()
        _ = ledger.record(digest: digest(1), claim: Self.claim, now: Self.now)
        #expect(ledger.lookup(digest: digest(1), overTLS: true, now: Self.claim.expiresAt) == .reusable(Self.claim))
        // Unknown once expired: the claim check then refuses it as expired.
        #expect(ledger.lookup(digest: digest(1), overTLS: true, now: Self.claim.expiresAt + 1) == .unknown)
        ledger.forgetExpired(now: Self.claim.expiresAt + 1)
        #expect(ledger.count == 0)
    }

    @Test func aFullLedgerDropsExpiredCodesThenFailsClosed() {
        var ledger = AccessCodeV2Ledger(capacity: 3)
        let old = AccessCodeV2.Claim(applicationID: Self.claim.applicationID, unixSeconds: Self.now - 3_000)
        let recorded38 = ledger.record(digest: digest(1), claim: old, now: Self.now)
        #expect(recorded38)
        let recorded39 = ledger.record(digest: digest(2), claim: Self.claim, now: Self.now)
        #expect(recorded39)
        let recorded40 = ledger.record(digest: digest(3), claim: Self.claim, now: Self.now)
        #expect(recorded40)
        // Full of live codes: refused, and nothing live was forgotten.
        let refused = !ledger.record(digest: digest(4), claim: Self.claim, now: Self.now)
        #expect(refused)
        #expect(ledger.lookup(digest: digest(1), overTLS: false, now: Self.now) == .replayed)
        // Once the old one expires, its place is free.
        let recorded45 = ledger.record(digest: digest(4), claim: Self.claim, now: old.expiresAt + 1)
        #expect(recorded45)
        #expect(ledger.count == 3)
        #expect(ledger.lookup(digest: digest(4), overTLS: false, now: old.expiresAt + 1) == .replayed)
    }
}
