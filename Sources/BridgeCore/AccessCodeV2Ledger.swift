import TMMProtocol

/// What one client may take of what Access Code V2 shares between all clients: places in the
/// replay ledger, RSA decryptions, auto-registrations (docs/security.md, "Access Code V2 and
/// auto-registration under load"). Not options: the defaults leave a well-behaved client far
/// from every limit; tests make them small.
public struct AccessCodeV2Limits: Sendable, Equatable {
    /// Live codes the replay ledger holds for all clients together (about 130 bytes each, so
    /// about 9 MB when full). When it is full, the peer that holds the most gives way.
    public var ledgerCapacity = 65_536
    /// Live codes of one peer (`ClientPeer`): an hour of a fresh code per request at 4.5
    /// requests a second, what the whole ledger held before it was shared.
    public var ledgerPerPeer = 16_384
    /// Live codes of one application, from however many peers: half the ledger.
    public var ledgerPerApplication = 32_768
    /// RSA decryptions a second for all clients (one is about 0.4 ms of the io thread, so the
    /// flood of every client together costs it at most 8 %), with a burst of one second's worth.
    public var decryptionsPerSecond = 200
    /// RSA decryptions a second for one peer, with a burst of one second's worth (a sample makes
    /// one code per REST request; over https a code can be reused without any).
    public var decryptionsPerSecondPerPeer = 50
    /// Applications a code may register at once, and then one every `autoRegistrationInterval`.
    public var autoRegistrationBurst = 10
    public var autoRegistrationInterval: Int64 = 10_000_000_000

    public init() {}
}

/// The Access Code V2 codes this bridge has accepted, each kept until it expires (TMM-API.md
/// §4.2). Over plain http a code is single-use: a code accepted over http is spent on both
/// transports, and any code seen before is refused over http. Over https a code may be reused
/// until it expires (the web sample sends one code for a GET then a PUT), and a code seen
/// before is answered from here without another RSA decryption.
///
/// Codes are keyed by a digest of their ciphertext, not their plaintext: RSA-OAEP is randomised,
/// so the Android, iOS and MAUI samples' fresh code per request differs even when a GET, a PUT
/// and a GET fall in the same second and share the plaintext. (A ciphertext is one byte string
/// only because the decryption takes nothing but the modulus's length: PrivateKey.)
///
/// Shared fairly: one peer holds at most `ledgerPerPeer` live codes and one application at most
/// `ledgerPerApplication`; a code beyond its own peer's or application's share is refused, for
/// that client alone. When the whole ledger is full, the peer that holds the most codes loses
/// its oldest, so a newcomer is never refused because of others (the forgotten code could be
/// replayed over http once more: a cost that falls on the biggest holder).
public struct AccessCodeV2Ledger {
    /// A SHA-256 digest as a key (four words: no allocation per code).
    struct Key: Hashable {
        var a: UInt64, b: UInt64, c: UInt64, d: UInt64

        init(_ digest: [UInt8]) {
            var words: [UInt64] = [0, 0, 0, 0]
            for (index, byte) in digest.prefix(32).enumerated() {
                words[index / 8] = words[index / 8] << 8 | UInt64(byte)
            }
            (a, b, c, d) = (words[0], words[1], words[2], words[3])
        }
    }

    private struct Entry {
        var claim: AccessCodeV2.Claim
        var peer: ClientPeer
        /// Accepted over plain http: spent, on both transports.
        var spent: Bool
    }

    /// One peer's codes, oldest first (`order[head...]`), to forget its oldest in O(1).
    private struct Holding {
        var order: [Key] = []
        var head = 0
        var count: Int { order.count - head }
    }

    public let limits: AccessCodeV2Limits
    private var codes: [Key: Entry] = [:]
    private var holdings: [ClientPeer: Holding] = [:]
    private var perApplication: [GUID: Int] = [:]
    /// The second expired codes were last dropped (a full ledger drops them at most once a second).
    private var sweptAt: Int64?

    public init(limits: AccessCodeV2Limits = AccessCodeV2Limits()) {
        self.limits = limits
    }

    /// What the ledger knows of a presented code.
    public enum Lookup: Equatable, Sendable {
        /// Never accepted (or expired and forgotten): decrypt and check it.
        case unknown
        /// Accepted before over TLS only, still live, presented over TLS: this application, no
        /// decryption.
        case reusable(AccessCodeV2.Claim)
        /// Accepted before and presented over plain http, or accepted over plain http before:
        /// refuse.
        case replayed
    }

    /// Looks up the code whose ciphertext digest is `digest`, presented over TLS or not.
    public func lookup(digest: [UInt8], overTLS: Bool, now: Int64) -> Lookup {
        guard let entry = codes[Key(digest)], entry.claim.expiresAt >= now else { return .unknown }
        return overTLS && !entry.spent ? .reusable(entry.claim) : .replayed
    }

    /// How `record` ended.
    public enum Recorded: Equatable, Sendable {
        case recorded
        /// The presenting peer holds its share of live codes already: refused, for it alone.
        case peerFull
        /// The code's application holds its share already: refused, for it alone.
        case applicationFull
    }

    /// Records a code just accepted from `peer` (over TLS or not), or marks a known one spent
    /// when it is now accepted over http.
    public mutating func record(
        digest: [UInt8], claim: AccessCodeV2.Claim, peer: ClientPeer, overTLS: Bool,
        now: Int64
    ) -> Recorded {
        let key = Key(digest)
        if codes[key] != nil {
            if !overTLS { codes[key]?.spent = true }
            return .recorded
        }
        if isOverAShare(claim.applicationID, peer) || codes.count >= limits.ledgerCapacity {
            forgetExpired(now: now, atMostOncePerSecond: true)
        }
        if holdings[peer, default: Holding()].count >= limits.ledgerPerPeer { return .peerFull }
        if perApplication[claim.applicationID, default: 0] >= limits.ledgerPerApplication { return .applicationFull }
        if codes.count >= limits.ledgerCapacity { forgetOldestOfTheBiggestHolder() }
        codes[key] = Entry(claim: claim, peer: peer, spent: !overTLS)
        holdings[peer, default: Holding()].order.append(key)
        perApplication[claim.applicationID, default: 0] += 1
        return .recorded
    }

    /// Drops the codes that have expired (the server calls it from its periodic tick too, so
    /// memory follows the live codes, not the peak).
    public mutating func forgetExpired(now: Int64) {
        forgetExpired(now: now, atMostOncePerSecond: false)
    }

    /// Live and expired codes held.
    public var count: Int { codes.count }

    /// Codes held for `peer` (tests, and the status).
    public func count(of peer: ClientPeer) -> Int { holdings[peer]?.count ?? 0 }

    /// Codes held for `application`.
    public func count(of application: GUID) -> Int { perApplication[application] ?? 0 }

    // MARK: - Inside

    private func isOverAShare(_ application: GUID, _ peer: ClientPeer) -> Bool {
        (holdings[peer]?.count ?? 0) >= limits.ledgerPerPeer
            || (perApplication[application] ?? 0) >= limits.ledgerPerApplication
    }

    private mutating func forgetExpired(now: Int64, atMostOncePerSecond: Bool) {
        if atMostOncePerSecond && sweptAt == now { return }
        sweptAt = now
        let before = codes.count
        codes = codes.filter { $0.value.claim.expiresAt >= now }
        guard codes.count != before else { return }
        var kept: [ClientPeer: Holding] = [:]
        for (peer, holding) in holdings {
            let order = holding.order[holding.head...].filter { codes[$0] != nil }
            if !order.isEmpty { kept[peer] = Holding(order: order) }
        }
        holdings = kept
        perApplication = [:]
        for entry in codes.values { perApplication[entry.claim.applicationID, default: 0] += 1 }
    }

    /// The ledger is full of live codes: the peer holding the most forgets its oldest. A scan of
    /// the peers, which only a full ledger pays for, and at most once per decryption (the
    /// decryptions are rate-limited).
    private mutating func forgetOldestOfTheBiggestHolder() {
        guard let (peer, holding) = holdings.max(by: { $0.value.count < $1.value.count }) else { return }
        var shrunk = holding
        let key = shrunk.order[shrunk.head]
        shrunk.head += 1
        if shrunk.count == 0 {
            holdings[peer] = nil
        } else {
            // Compact now and then, so the array does not keep what it handed out.
            if shrunk.head > 1024 && shrunk.head * 2 > shrunk.order.count {
                shrunk = Holding(order: Array(shrunk.order[shrunk.head...]))
            }
            holdings[peer] = shrunk
        }
        if let entry = codes.removeValue(forKey: key) {
            let application = entry.claim.applicationID
            let left = (perApplication[application] ?? 1) - 1
            perApplication[application] = left > 0 ? left : nil
        }
    }
}

/// How many Access Code V2 codes are decrypted: one RSA private-key operation each, on the io
/// thread. At most `decryptionsPerSecond` for all clients and `decryptionsPerSecondPerPeer` for
/// one peer, each with a burst of a second's worth: a peer over its share is refused without
/// spending the others', and reconnecting buys nothing (a connection's own budget counts only
/// failures and starts afresh).
public struct AccessCodeV2DecryptionBudget {
    /// Peers whose buckets are remembered. A full bucket is as good as a forgotten one, so only
    /// peers that decrypted within the last second need a place.
    public static let peersTracked = 4096

    public enum Verdict: Equatable, Sendable {
        case granted
        case peerExhausted
        case allExhausted
    }

    private var all: RateBudget
    private let fresh: RateBudget
    private var peers: [ClientPeer: RateBudget] = [:]

    public init(limits: AccessCodeV2Limits) {
        all = RateBudget(perSecond: limits.decryptionsPerSecond)
        fresh = RateBudget(perSecond: limits.decryptionsPerSecondPerPeer)
    }

    /// Takes a decryption for `peer` at monotonic `now`, if its share and the total allow.
    public mutating func take(for peer: ClientPeer, now: Int64) -> Verdict {
        var bucket = peers[peer] ?? fresh
        guard bucket.available(now: now) > 0 else { return .peerExhausted }
        guard all.take(now: now) else { return .allExhausted }
        _ = bucket.take(now: now)
        if peers[peer] == nil && peers.count >= Self.peersTracked { makeRoom(now: now) }
        peers[peer] = bucket
        return .granted
    }

    /// Peers remembered (tests: the table stays bounded).
    public var trackedPeers: Int { peers.count }

    private mutating func makeRoom(now: Int64) {
        peers = peers.filter { $0.value.available(now: now) < $0.value.burst }
        guard peers.count >= Self.peersTracked else { return }
        // Every one decrypted within the last second: the one closest to full loses least.
        if let fullest = peers.max(by: { $0.value.available(now: now) < $1.value.available(now: now) })?.key {
            peers[fullest] = nil
        }
    }
}

/// Access Code V2 checks as the server makes them: the header's form and length, the replay
/// ledger, the decryption budget, the decryption (injected: OpenSSL lives in the platform tier),
/// the claim's window and the registration policy. Pure apart from the two injected functions, so
/// every path has a test.
public struct AccessCodeV2Verifier {
    /// Replaced by a reload; the ledger stays.
    public var policy: RegistrationPolicy
    /// The length every code's ciphertext has: the key's modulus length (256 for RSA-2048).
    public let ciphertextLength: Int
    public private(set) var ledger: AccessCodeV2Ledger
    public private(set) var decryptions: AccessCodeV2DecryptionBudget

    public init(policy: RegistrationPolicy, ciphertextLength: Int, limits: AccessCodeV2Limits = AccessCodeV2Limits()) {
        self.policy = policy
        self.ciphertextLength = ciphertextLength
        ledger = AccessCodeV2Ledger(limits: limits)
        decryptions = AccessCodeV2DecryptionBudget(limits: limits)
    }

    /// Why a code was refused (the 401's message and the log line say it).
    public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        case code(AccessCodeV2.Refusal)
        /// Used over plain http before, or seen before and presented over plain http.
        case replayed
        /// A valid code of an application the registration policy does not admit.
        case notAllowed(GUID)
        /// The peer holds its share of live codes (`AccessCodeV2Limits.ledgerPerPeer`).
        case peerHoldsItsShare(ClientPeer, limit: Int)
        /// The application holds its share of live codes (`ledgerPerApplication`).
        case applicationHoldsItsShare(GUID, limit: Int)
        /// The peer decrypted its share this second (`decryptionsPerSecondPerPeer`).
        case peerDecryptionsSpent(ClientPeer, perSecond: Int)
        /// All clients together did (`decryptionsPerSecond`).
        case decryptionsSpent(perSecond: Int)

        public var description: String {
            switch self {
            case .code(let refusal): refusal.description
            case .replayed:
                """
                this code was used before: over http each Access Code V2 is single-use, on http and https \
                (make a new one per request, or use https and reuse it there)
                """
            case .notAllowed(let id): "\(id.logName) is not allowed to register here (registration policy)"
            case .peerHoldsItsShare(let peer, let limit):
                """
                \(peer) holds \(limit) live Access Code V2 codes, as many as one client may: reuse a code over https, \
                or wait until older ones expire (an hour after their time)
                """
            case .applicationHoldsItsShare(let id, let limit):
                """
                \(id.logName) has \(limit) live Access Code V2 codes, as many as one application may: \
                reuse a code over https, or wait until older ones expire (an hour after their time)
                """
            case .peerDecryptionsSpent(let peer, let perSecond):
                """
                too many new Access Code V2 codes from \(peer) (at most \(perSecond) a second): \
                try again in a second, or reuse a code over https
                """
            case .decryptionsSpent(let perSecond):
                """
                too many new Access Code V2 codes from all clients (at most \(perSecond) a second): \
                try again in a second
                """
            }
        }

        /// The same for every refusal of one kind, whatever its numbers, id or peer: the log's
        /// repeat key, so a client varying them still gets one line and a summary.
        public var kind: String {
            switch self {
            case .code(let refusal): refusal.kind
            case .replayed: "replayed"
            case .notAllowed: "application not allowed"
            case .peerHoldsItsShare: "a client's share of live codes"
            case .applicationHoldsItsShare: "an application's share of live codes"
            case .peerDecryptionsSpent: "a client's decryptions per second"
            case .decryptionsSpent: "decryptions per second"
            }
        }
    }

    /// Checks the `Authorization` value `headerValue` from `peer` at UTC second `now` (monotonic
    /// `instant` for the decryption budget). `overTLS`: the request came over a secure port
    /// (reuse allowed). `consume`: record the code (false for the look before `100 Continue`, so
    /// that the request itself can still use a single-use code).
    public mutating func verify(
        headerValue: String, overTLS: Bool, consume: Bool, peer: ClientPeer, now: Int64,
        instant: Int64, decrypt: ([UInt8]) -> [UInt8]?,
        digest: ([UInt8]) -> [UInt8]
    ) -> Result<GUID, Refusal> {
        guard let ciphertext = AccessCodeV2.presentedCiphertext(headerValue: headerValue) else {
            return .failure(.code(.malformedHeader))
        }
        guard ciphertext.count == ciphertextLength else {
            return .failure(.code(.wrongLength(ciphertext.count, expected: ciphertextLength)))
        }
        let key = digest(ciphertext)
        let claim: AccessCodeV2.Claim
        switch ledger.lookup(digest: key, overTLS: overTLS, now: now) {
        case .replayed:
            return .failure(.replayed)
        case .reusable(let known):
            claim = known
        case .unknown:
            switch decryptions.take(for: peer, now: instant) {
            case .granted: break
            case .peerExhausted:
                return .failure(.peerDecryptionsSpent(peer, perSecond: ledger.limits.decryptionsPerSecondPerPeer))
            case .allExhausted: return .failure(.decryptionsSpent(perSecond: ledger.limits.decryptionsPerSecond))
            }
            guard let plaintext = decrypt(ciphertext) else { return .failure(.code(.undecryptable)) }
            switch AccessCodeV2.claim(plaintext: plaintext, now: now) {
            case .success(let fresh): claim = fresh
            case .failure(let refusal): return .failure(.code(refusal))
            }
        }
        guard policy.evaluate(claim.applicationID) == .ok else { return .failure(.notAllowed(claim.applicationID)) }
        if consume {
            switch ledger.record(digest: key, claim: claim, peer: peer, overTLS: overTLS, now: now) {
            case .recorded: break
            case .peerFull: return .failure(.peerHoldsItsShare(peer, limit: ledger.limits.ledgerPerPeer))
            case .applicationFull:
                return .failure(
                    .applicationHoldsItsShare(claim.applicationID, limit: ledger.limits.ledgerPerApplication))
            }
        }
        return .success(claim.applicationID)
    }

    /// Drops expired codes (the server's periodic tick).
    public mutating func forgetExpired(now: Int64) { ledger.forgetExpired(now: now) }
}
