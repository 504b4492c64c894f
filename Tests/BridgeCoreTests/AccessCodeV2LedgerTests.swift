// The Access Code V2 replay ledger, decryption budget and verifier: single use over http (on
// both transports), reuse over https until expiry, and shares: what one peer or one application
// holds or decrypts is bounded, and one of them never locks the others out.
import BridgeCore
import ByteCoding
import TestSupport
import Testing
import TMMProtocol

/// `n` as 8 lower-case hex digits (the first group of a GUID).
func hex8(_ n: Int) -> String {
    let digits = String(n, radix: 16)
    return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}

@Suite("Access Code V2 ledger", .tags(.unit))
struct AccessCodeV2LedgerTests {
    static let now: Int64 = 1_708_624_800
    static let app = GUID("12345678-1234-1234-1234-123456789abc")!
    static let otherApp = GUID("87654321-4321-4321-4321-cba987654321")!
    static let claim = AccessCodeV2.Claim(applicationID: app, unixSeconds: now)
    static let attacker = ClientPeer.localUser(65_534)
    static let victim = ClientPeer.localUser(1000)

    private func digest(_ n: Int) -> [UInt8] {
        (0..<32).map { UInt8(truncatingIfNeeded: n >> (($0 % 4) * 8)) &+ UInt8($0) }
    }

    private func limits(capacity: Int = 100, perPeer: Int = 100, perApplication: Int = 100) -> AccessCodeV2Limits {
        var limits = AccessCodeV2Limits()
        limits.ledgerCapacity = capacity
        limits.ledgerPerPeer = perPeer
        limits.ledgerPerApplication = perApplication
        return limits
    }

    @Test func aCodeIsSingleUseOverHTTPAndReusableOverTLS() {
        var ledger = AccessCodeV2Ledger()
        #expect(ledger.lookup(digest: digest(1), overTLS: true, now: Self.now) == .unknown)
        #expect(
            ledger.record(digest: digest(1), claim: Self.claim, peer: Self.victim, overTLS: true, now: Self.now)
                == .recorded)
        #expect(ledger.lookup(digest: digest(1), overTLS: true, now: Self.now + 1) == .reusable(Self.claim))
        #expect(ledger.lookup(digest: digest(1), overTLS: false, now: Self.now + 1) == .replayed)
        // Another ciphertext of the same plaintext (OAEP is randomised) is another code.
        #expect(ledger.lookup(digest: digest(2), overTLS: false, now: Self.now) == .unknown)
    }

    @Test func aCodeAcceptedOverHTTPIsSpentOverTLSToo() {
        var ledger = AccessCodeV2Ledger()
        #expect(
            ledger.record(digest: digest(1), claim: Self.claim, peer: Self.victim, overTLS: false, now: Self.now)
                == .recorded)
        #expect(ledger.lookup(digest: digest(1), overTLS: false, now: Self.now) == .replayed)
        #expect(ledger.lookup(digest: digest(1), overTLS: true, now: Self.now) == .replayed)
    }

    @Test func expiredCodesAreUnknownAgainAndForgotten() {
        var ledger = AccessCodeV2Ledger()
        _ = ledger.record(digest: digest(1), claim: Self.claim, peer: Self.victim, overTLS: true, now: Self.now)
        #expect(ledger.lookup(digest: digest(1), overTLS: true, now: Self.claim.expiresAt) == .reusable(Self.claim))
        // Unknown once expired: the claim check then refuses it as expired.
        #expect(ledger.lookup(digest: digest(1), overTLS: true, now: Self.claim.expiresAt + 1) == .unknown)
        ledger.forgetExpired(now: Self.claim.expiresAt + 1)
        #expect(ledger.count == 0 && ledger.count(of: Self.victim) == 0 && ledger.count(of: Self.app) == 0)
    }

    /// Before, the ledger was one pool that refused every new code once full: one client holding
    /// 16,384 live codes locked out every other over http and https for an hour.
    @Test func onePeerFillsOnlyItsOwnShare() {
        var ledger = AccessCodeV2Ledger(limits: limits(capacity: 10, perPeer: 4))
        for n in 0..<4 {
            let claim = AccessCodeV2.Claim(
                applicationID: GUID(hex8(n + 1) + "-0000-4000-8000-000000000000")!,
                unixSeconds: Self.now)
            #expect(
                ledger.record(digest: digest(n), claim: claim, peer: Self.attacker, overTLS: false, now: Self.now)
                    == .recorded)
        }
        #expect(
            ledger.record(digest: digest(4), claim: Self.claim, peer: Self.attacker, overTLS: false, now: Self.now)
                == .peerFull)
        // Nothing of its own was forgotten to make room: every code it used stays spent.
        for n in 0..<4 { #expect(ledger.lookup(digest: digest(n), overTLS: false, now: Self.now) == .replayed) }
        #expect(
            ledger.record(digest: digest(100), claim: Self.claim, peer: Self.victim, overTLS: false, now: Self.now)
                == .recorded)
        // Its share frees as its codes expire.
        let later = Self.claim.expiresAt + 1
        let fresh = AccessCodeV2.Claim(applicationID: Self.app, unixSeconds: later)
        #expect(
            ledger.record(digest: digest(5), claim: fresh, peer: Self.attacker, overTLS: false, now: later) == .recorded
        )
        #expect(ledger.count(of: Self.attacker) == 1)
    }

    @Test func oneApplicationFillsOnlyItsOwnShareFromAnyNumberOfPeers() {
        var ledger = AccessCodeV2Ledger(limits: limits(capacity: 10, perApplication: 3))
        for n in 0..<3 {
            #expect(
                ledger.record(
                    digest: digest(n), claim: Self.claim, peer: .network(0, UInt64(n)), overTLS: true,
                    now: Self.now) == .recorded)
        }
        #expect(
            ledger.record(digest: digest(3), claim: Self.claim, peer: .network(0, 9), overTLS: true, now: Self.now)
                == .applicationFull)
        let other = AccessCodeV2.Claim(applicationID: Self.otherApp, unixSeconds: Self.now)
        #expect(
            ledger.record(digest: digest(4), claim: other, peer: .network(0, 9), overTLS: true, now: Self.now)
                == .recorded)
    }

    @Test func aFullLedgerMakesTheBiggestHolderGiveWayNeverTheNewcomer() {
        var ledger = AccessCodeV2Ledger(limits: limits(capacity: 6, perPeer: 4))
        for n in 0..<4 {
            _ = ledger.record(digest: digest(n), claim: Self.claim, peer: Self.attacker, overTLS: false, now: Self.now)
        }
        for n in 10..<12 {
            _ = ledger.record(digest: digest(n), claim: Self.claim, peer: .network(1, 1), overTLS: false, now: Self.now)
        }
        #expect(ledger.count == 6)
        #expect(
            ledger.record(digest: digest(20), claim: Self.claim, peer: Self.victim, overTLS: false, now: Self.now)
                == .recorded)
        #expect(ledger.count == 6)
        // The attacker's oldest went; the rest of everyone's stays.
        #expect(ledger.count(of: Self.attacker) == 3)
        #expect(ledger.lookup(digest: digest(0), overTLS: false, now: Self.now) == .unknown)
        #expect(ledger.lookup(digest: digest(1), overTLS: false, now: Self.now) == .replayed)
        #expect(ledger.count(of: .network(1, 1)) == 2 && ledger.count(of: Self.victim) == 1)
        #expect(ledger.count(of: Self.app) == 6)
    }

    @Test func theDefaultsKeepOneClientsHourAtTodaysRate() {
        let limits = AccessCodeV2Limits()
        // A fresh code per request at 4.5 requests a second for an hour fits one peer's share,
        // and four such peers fit the ledger.
        #expect(limits.ledgerPerPeer >= 16_200)
        #expect(limits.ledgerCapacity >= 4 * limits.ledgerPerPeer)
        #expect(limits.ledgerPerApplication < limits.ledgerCapacity)
    }
}

@Suite("Access Code V2 decryption budget and token bucket", .tags(.unit))
struct AccessCodeV2DecryptionBudgetTests {
    private func limits(all: Int, perPeer: Int) -> AccessCodeV2Limits {
        var limits = AccessCodeV2Limits()
        limits.decryptionsPerSecond = all
        limits.decryptionsPerSecondPerPeer = perPeer
        return limits
    }

    @Test func aRateBudgetGivesItsBurstThenOnePerInterval() {
        var bucket = RateBudget(burst: 3, refillInterval: 100)
        #expect(bucket.available(now: 0) == 3)
        let taken = [0, 0, 0, 99, 100, 150].map { bucket.take(now: $0) }
        #expect(taken == [true, true, true, false, true, false])
        #expect(bucket.available(now: 1_000_000) == 3)
        // A long pause fills it, never beyond the burst.
        let afterPause = (0..<4).map { _ in bucket.take(now: 1_000_000) }
        #expect(afterPause == [true, true, true, false])
        #expect(RateBudget(perSecond: 20) == RateBudget(burst: 20, refillInterval: 50_000_000))
    }

    /// Before, a connection had 4 failures at once and reconnecting bought 4 more: 1,600
    /// decryptions a second from one local user. Now the peer's share counts, whatever the
    /// connection.
    @Test func aPeerGetsItsShareAndTheOthersTheRest() {
        var budget = AccessCodeV2DecryptionBudget(limits: limits(all: 10, perPeer: 4))
        let attacker = ClientPeer.localUser(65_534)
        for _ in 0..<4 { #expect(budget.take(for: attacker, now: 0) == .granted) }
        #expect(budget.take(for: attacker, now: 1) == .peerExhausted)
        for _ in 0..<4 { #expect(budget.take(for: .localUser(1000), now: 2) == .granted) }
        // A peer refused its share spent none of the total.
        #expect(budget.take(for: .localUnattributed, now: 3) == .granted)
        #expect(budget.take(for: .localUnattributed, now: 3) == .granted)
        #expect(budget.take(for: .network(0, 1), now: 3) == .allExhausted)
        // A second later both are back.
        #expect(budget.take(for: attacker, now: 1_000_000_003) == .granted)
        #expect(budget.take(for: .network(0, 1), now: 1_000_000_003) == .granted)
    }

    @Test func theTableOfPeersStaysBounded() {
        var budget = AccessCodeV2DecryptionBudget(limits: limits(all: 1_000_000, perPeer: 2))
        for n in 0..<(AccessCodeV2DecryptionBudget.peersTracked + 500) {
            #expect(budget.take(for: .network(0, UInt64(n)), now: Int64(n)) == .granted)
        }
        #expect(budget.trackedPeers <= AccessCodeV2DecryptionBudget.peersTracked)
    }
}

@Suite("Access Code V2 verifier", .tags(.unit))
struct AccessCodeV2VerifierTests {
    static let now: Int64 = 1_708_624_800
    static let id = "12345678-1234-1234-1234-123456789abc"

    /// A stand-in for RSA: the "ciphertext" is the plaintext padded to 8 bytes with a 0x01 in
    /// front of it, so a test can make codes, garbage and codes of the wrong length at will.
    private static func ciphertext(_ plaintext: [UInt8]) -> [UInt8] { [0x01] + plaintext }
    private static func decrypt(_ ciphertext: [UInt8]) -> [UInt8]? {
        ciphertext.first == 0x01 ? Array(ciphertext.dropFirst()) : nil
    }
    private static let length = 1 + 36 + 1 + 20

    private func header(_ id: String = id, seconds: Int64 = now) -> String {
        let plaintext = AccessCodeV2.plaintext(applicationID: GUID(id)!, unixSeconds: seconds)
        return "AccessCodeV2 " + Base64.encode(Self.ciphertext(plaintext))
    }

    private func verify(
        _ verifier: inout AccessCodeV2Verifier, _ header: String, overTLS: Bool = false,
        peer: ClientPeer = .localUser(1000), instant: Int64 = 0, decryptions: Counter? = nil
    )
        -> Result<GUID, AccessCodeV2Verifier.Refusal>
    {
        verifier.verify(
            headerValue: header, overTLS: overTLS, consume: true, peer: peer, now: Self.now, instant: instant,
            decrypt: {
                decryptions?.count += 1; return Self.decrypt($0)
            }, digest: Self.digest)
    }

    /// Every byte counts (the ledger keys on 32 bytes of digest).
    private static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var folded = [UInt8](repeating: 0, count: 32)
        for (index, byte) in bytes.enumerated() { folded[index % 32] = folded[index % 32] &* 31 &+ byte }
        return folded
    }

    final class Counter { var count = 0 }

    @Test func aCodeOfAnotherLengthIsRefusedBeforeAnyDecryption() {
        var verifier = AccessCodeV2Verifier(policy: .open, ciphertextLength: Self.length)
        let decryptions = Counter()
        let plaintext = AccessCodeV2.plaintext(applicationID: GUID(Self.id)!, unixSeconds: Self.now)
        let short = "AccessCodeV2 " + Base64.encode(Array(Self.ciphertext(plaintext).dropFirst()))
        #expect(verify(&verifier, short, decryptions: decryptions) == .failure(.code(.wrongLength(57, expected: 58))))
        #expect(decryptions.count == 0)
        #expect(
            AccessCodeV2.Refusal.wrongLength(255, expected: 256).description
                == "the code is 255 bytes; a code is the Base64 of the whole 256-byte RSA ciphertext")
        #expect(verify(&verifier, header(), decryptions: decryptions) == .success(GUID(Self.id)!))
    }

    @Test func theNilApplicationIDIsRefusedWithTheReason() {
        var verifier = AccessCodeV2Verifier(policy: .open, ciphertextLength: Self.length)
        let refused = verify(&verifier, header("00000000-0000-0000-0000-000000000000"))
        #expect(refused == .failure(.code(.nilApplicationID)))
        if case .failure(let refusal) = refused { #expect(refusal.description.contains("the nil UUID")) }
    }

    @Test func decryptionsAreRefusedPastThePeersShareButNotForARemembered() {
        var limits = AccessCodeV2Limits()
        limits.decryptionsPerSecondPerPeer = 2
        var verifier = AccessCodeV2Verifier(policy: .open, ciphertextLength: Self.length, limits: limits)
        let attacker = ClientPeer.localUser(65_534)
        let decryptions = Counter()
        let reused = header(seconds: Self.now - 1)
        #expect(
            verify(&verifier, reused, overTLS: true, peer: attacker, decryptions: decryptions)
                == .success(GUID(Self.id)!))
        #expect(verify(&verifier, header(), peer: attacker, decryptions: decryptions) == .success(GUID(Self.id)!))
        let third = verify(&verifier, header(seconds: Self.now - 2), peer: attacker, decryptions: decryptions)
        #expect(third == .failure(.peerDecryptionsSpent(attacker, perSecond: 2)))
        #expect(decryptions.count == 2)
        // A code the ledger knows (over https) needs no decryption, so it is still accepted.
        #expect(
            verify(&verifier, reused, overTLS: true, peer: attacker, decryptions: decryptions)
                == .success(GUID(Self.id)!))
        #expect(decryptions.count == 2)
        // Another peer is not affected.
        #expect(verify(&verifier, header(seconds: Self.now - 3), peer: .localUser(1000)) == .success(GUID(Self.id)!))
    }

    @Test func aPeerPastItsShareOfTheLedgerIsRefusedAlone() {
        var limits = AccessCodeV2Limits()
        limits.ledgerPerPeer = 2
        var verifier = AccessCodeV2Verifier(policy: .open, ciphertextLength: Self.length, limits: limits)
        let attacker = ClientPeer.localUser(65_534)
        #expect(verify(&verifier, header(seconds: Self.now - 1), peer: attacker) == .success(GUID(Self.id)!))
        #expect(verify(&verifier, header(seconds: Self.now - 2), peer: attacker) == .success(GUID(Self.id)!))
        let refused = verify(&verifier, header(seconds: Self.now - 3), peer: attacker)
        #expect(refused == .failure(.peerHoldsItsShare(attacker, limit: 2)))
        if case .failure(let refusal) = refused {
            #expect(refusal.description.hasPrefix("local user uid 65534 holds 2 live Access Code V2 codes"))
            #expect(refusal.kind == "a client's share of live codes")
        }
        #expect(verify(&verifier, header(seconds: Self.now - 3), peer: .localUser(1000)) == .success(GUID(Self.id)!))
    }

    @Test func refusalsOfOneKindShareOneLogKey() {
        let ages: [AccessCodeV2Verifier.Refusal] = [
            .code(.expired(ageSeconds: 3601)), .code(.expired(ageSeconds: 9000)),
        ]
        #expect(Set(ages.map(\.kind)).count == 1)
        let ids: [AccessCodeV2Verifier.Refusal] = [
            .notAllowed(GUID(Self.id)!), .notAllowed(GUID("87654321-4321-4321-4321-cba987654321")!),
        ]
        #expect(Set(ids.map(\.kind)).count == 1)
    }
}

@Suite("Client peer", .tags(.unit))
struct ClientPeerTests {
    private func mapped(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> [UInt8] {
        [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, a, b, c, d]
    }

    @Test func aLocalClientIsItsUserWhateverItsAddress() {
        #expect(ClientPeer(owner: 1000, address: mapped(127, 0, 0, 1), isLoopback: true) == .localUser(1000))
        #expect(ClientPeer(owner: 1000, address: mapped(127, 9, 8, 7), isLoopback: true) == .localUser(1000))
        #expect(ClientPeer(owner: 1000, address: mapped(192, 168, 1, 5), isLoopback: false) == .localUser(1000))
        // Root, a socket already closed (the kernel says root), a loopback socket not found.
        #expect(ClientPeer(owner: 0, address: mapped(127, 0, 0, 1), isLoopback: true) == .localUnattributed)
        #expect(ClientPeer(owner: nil, address: mapped(127, 0, 0, 1), isLoopback: true) == .localUnattributed)
        #expect(ClientPeer.localUser(65_534).description == "local user uid 65534")
    }

    @Test func aNetworkClientIsItsIPv4AddressOrItsIPv6Slash64() {
        let v4 = ClientPeer(owner: nil, address: mapped(192, 0, 2, 7), isLoopback: false)
        #expect(v4.description == "192.0.2.7")
        #expect(v4 != ClientPeer(owner: nil, address: mapped(192, 0, 2, 8), isLoopback: false))
        let a: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8]
        let b: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 9, 9, 9, 9, 9, 9, 9, 9]
        let c: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 3, 1, 2, 3, 4, 5, 6, 7, 8]
        let peer = ClientPeer(owner: nil, address: a, isLoopback: false)
        #expect(peer == ClientPeer(owner: nil, address: b, isLoopback: false))
        #expect(peer != ClientPeer(owner: nil, address: c, isLoopback: false))
        #expect(peer.description == "2001:db8:1:2::/64")
    }
}
