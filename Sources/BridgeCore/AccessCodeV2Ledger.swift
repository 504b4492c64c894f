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
