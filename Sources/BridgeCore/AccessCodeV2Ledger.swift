import TMMProtocol

/// The Access Code V2 codes this bridge has accepted, each kept until it expires (TMM-API.md
/// §4.2): over plain http a code is single-use, so a code seen before is a replay; over https a
/// code may be reused until it expires (the web sample sends one code for a GET then a PUT), and
/// a code seen before is answered from here without another RSA decryption.
///
/// Codes are keyed by a digest of their ciphertext, not their plaintext: RSA-OAEP is randomised,
/// so the Android, iOS and MAUI samples' fresh code per request differs even when a GET, a PUT
/// and a GET fall in the same second and share the plaintext.
///
/// Bounded: at `capacity` live codes, expired ones are dropped; if all are live, a new code is
/// refused (fails closed: forgetting a live code would let it be replayed over http).
public struct AccessCodeV2Ledger {
    /// An hour of codes at more than four requests a second, every second: far above what the
    /// samples make (one per REST call), at 32 bytes of key and a few of value each.
    public static let defaultCapacity = 16_384

    public let capacity: Int
    private var codes: [[UInt8]: AccessCodeV2.Claim] = [:]

    public init(capacity: Int = defaultCapacity) {
        self.capacity = capacity
    }

    /// What the ledger knows of a presented code.
    public enum Lookup: Equatable, Sendable {
        /// Never accepted (or expired and forgotten): decrypt and check it.
        case unknown
        /// Accepted before and still live, presented over TLS: this application, no decryption.
        case reusable(AccessCodeV2.Claim)
        /// Accepted before and presented again over plain http: refuse.
        case replayed
    }

    /// Looks up the code whose ciphertext digest is `digest`, presented over TLS or not.
    public func lookup(digest: [UInt8], overTLS: Bool, now: Int64) -> Lookup {
        guard let claim = codes[digest], claim.expiresAt >= now else { return .unknown }
        return overTLS ? .reusable(claim) : .replayed
    }

    /// Records a code just accepted. False when the ledger is full of live codes: the caller
    /// refuses the code (and says why in its log).
    public mutating func record(digest: [UInt8], claim: AccessCodeV2.Claim, now: Int64) -> Bool {
        if codes.count >= capacity && codes[digest] == nil {
            forgetExpired(now: now)
            guard codes.count < capacity else { return false }
        }
        codes[digest] = claim
        return true
    }

    /// Drops the codes that have expired (the server calls it from its periodic tick too, so
    /// memory follows the live codes, not the peak).
    public mutating func forgetExpired(now: Int64) {
        codes = codes.filter { $0.value.expiresAt >= now }
    }

    /// Live and expired codes held.
    public var count: Int { codes.count }
}

/// Access Code V2 checks as the server makes them: the header's form, the replay ledger, the
/// decryption (injected: OpenSSL lives in the platform tier), the claim's window and the
/// registration policy. Pure apart from the two injected functions, so every path has a test.
public struct AccessCodeV2Verifier {
    /// Replaced by a reload; the ledger stays.
    public var policy: RegistrationPolicy
    public private(set) var ledger: AccessCodeV2Ledger

    public init(policy: RegistrationPolicy, ledger: AccessCodeV2Ledger = AccessCodeV2Ledger()) {
        self.policy = policy
        self.ledger = ledger
    }

    /// Why a code was refused (the 401's message and the log line say it).
    public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        case code(AccessCodeV2.Refusal)
        /// Seen before and presented again over plain http (single use there).
        case replayed
        /// A valid code of an application the registration policy does not admit.
        case notAllowed(GUID)
        /// The ledger is full of live codes (fails closed; see AccessCodeV2Ledger).
        case ledgerFull

        public var description: String {
            switch self {
            case .code(let refusal): refusal.description
            case .replayed: "this code was used before: over http each Access Code V2 is single-use (make a new one per request, or use https)"
            case .notAllowed(let id): "\(id.logName) is not allowed to register here (registration policy)"
            case .ledgerFull: "too many live Access Code V2 codes: try again later"
            }
        }
    }

    /// Checks the `Authorization` value `headerValue` at UTC second `now`. `overTLS`: the
    /// request came over a secure port (reuse allowed). `consume`: record the code (false for the
    /// look before `100 Continue`, so that the request itself can still use a single-use code).
    public mutating func verify(headerValue: String, overTLS: Bool, consume: Bool, now: Int64,
                                decrypt: ([UInt8]) -> [UInt8]?, digest: ([UInt8]) -> [UInt8]) -> Result<GUID, Refusal> {
        guard let ciphertext = AccessCodeV2.presentedCiphertext(headerValue: headerValue) else {
            return .failure(.code(.malformedHeader))
        }
        let key = digest(ciphertext)
        let claim: AccessCodeV2.Claim
        switch ledger.lookup(digest: key, overTLS: overTLS, now: now) {
        case .replayed:
            return .failure(.replayed)
        case .reusable(let known):
            claim = known
        case .unknown:
            guard let plaintext = decrypt(ciphertext) else { return .failure(.code(.undecryptable)) }
            switch AccessCodeV2.claim(plaintext: plaintext, now: now) {
            case .success(let fresh): claim = fresh
            case .failure(let refusal): return .failure(.code(refusal))
            }
        }
        guard policy.evaluate(claim.applicationID) == .ok else { return .failure(.notAllowed(claim.applicationID)) }
        if consume && !ledger.record(digest: key, claim: claim, now: now) { return .failure(.ledgerFull) }
        return .success(claim.applicationID)
    }

    /// Drops expired codes (the server's periodic tick).
    public mutating func forgetExpired(now: Int64) { ledger.forgetExpired(now: now) }
}
