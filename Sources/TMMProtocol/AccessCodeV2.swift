import ByteCoding

/// Access Code V2 (TMM-API.md §4.2): `Authorization: AccessCodeV2 <code>` where
/// `code = Base64(RSA-OAEP-SHA256(publicKey, "<application GUID> <yyyy-MM-ddTHH:mm:ssZ>"))` and the
/// public key is the JWK of `GET /api/v1/publicKey`.
///
/// Pure: decryption is injected (OpenSSL in the platform tier), so what is checked here is the
/// header's form and the decrypted claim: which application, and whether its time is inside the
/// window. Replays are the server's ledger's business (a code over plain http is single-use).
public enum AccessCodeV2 {
    /// A code is good for an hour after its timestamp (TMM's documented lifetime).
    public static let lifetimeSeconds: Int64 = 3_600
    /// How far in the future a timestamp may be: a phone's clock running a little ahead of the
    /// box's must not lock it out, but a code minted for tomorrow is refused. Two minutes covers
    /// devices whose clocks are set by the network.
    public static let futureSkewSeconds: Int64 = 120

    /// Why a presented code is refused (for the log; every one is answered with the same 401).
    public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// Not `AccessCodeV2 <base64>`, or the Base64 does not decode.
        case malformedHeader
        /// The ciphertext is not as long as the key's modulus (every RSA ciphertext is; the
        /// length is no secret, so it is said).
        case wrongLength(Int, expected: Int)
        /// The ciphertext does not decrypt with this bridge's key (another key, garbage,
        /// truncated): indistinguishable on purpose.
        case undecryptable
        /// Decrypted, but not `<GUID> <yyyy-MM-ddTHH:mm:ssZ>`.
        case malformedClaim
        /// The id is the nil UUID, which names no application (`GUID.isNil`).
        case nilApplicationID
        /// The timestamp is more than `lifetimeSeconds` old.
        case expired(ageSeconds: Int64)
        /// The timestamp is more than `futureSkewSeconds` ahead.
        case fromTheFuture(aheadSeconds: Int64)

        public var description: String {
            switch self {
            case .malformedHeader: "not an AccessCodeV2 header with Base64 code"
            case .wrongLength(let count, let expected):
                "the code is \(count) bytes; a code is the Base64 of the whole \(expected)-byte RSA ciphertext"
            case .undecryptable: "the code does not decrypt with this bridge's public key"
            case .malformedClaim: "the decrypted code is not \"<application id> <yyyy-MM-ddTHH:mm:ssZ>\""
            case .nilApplicationID: GUID.nilRefusal
            case .expired(let age): "the code is \(age) s old (codes last \(AccessCodeV2.lifetimeSeconds) s)"
            case .fromTheFuture(let ahead): "the code is dated \(ahead) s ahead of this clock"
            }
        }

        /// The refusal without its numbers (the log's repeat key).
        public var kind: String {
            switch self {
            case .malformedHeader: "malformed header"
            case .wrongLength: "wrong length"
            case .undecryptable: "undecryptable"
            case .malformedClaim: "malformed claim"
            case .nilApplicationID: "nil application id"
            case .expired: "expired"
            case .fromTheFuture: "from the future"
            }
        }
    }

    /// A decrypted, in-window code: who presented it and the second it names.
    public struct Claim: Equatable, Sendable {
        public let applicationID: GUID
        public let unixSeconds: Int64

        public init(applicationID: GUID, unixSeconds: Int64) {
            self.applicationID = applicationID
            self.unixSeconds = unixSeconds
        }
        /// The second after which the code is expired (replay records can be dropped then).
        public var expiresAt: Int64 { unixSeconds + AccessCodeV2.lifetimeSeconds }
    }

    /// The ciphertext of an `Authorization` value `AccessCodeV2 <base64>` (scheme
    /// case-insensitive, blanks around the code ignored; padding optional and the URL-safe
    /// letters accepted, since the RSA check decides anyway); nil for another scheme.
    public static func presentedCiphertext(headerValue: some StringProtocol) -> [UInt8]? {
        guard let code = AuthorizationHeader.credentials(headerValue, scheme: "accesscodev2") else { return nil }
        guard let ciphertext = Base64.decode(code.span, options: [.paddingOptional, .urlSafeLetters]),
            !ciphertext.isEmpty
        else { return nil }
        return ciphertext
    }

    /// Whether `headerValue` uses the AccessCodeV2 scheme at all (to tell V1 and V2 apart).
    public static func isAccessCodeV2(headerValue: some StringProtocol) -> Bool {
        AuthorizationHeader.credentials(headerValue, scheme: "accesscodev2") != nil
    }

    /// Reads a decrypted code: `<GUID> <yyyy-MM-ddTHH:mm:ssZ>`, one ASCII space between them, the
    /// GUID in any case (the samples lower-case it), checked against `now` (UTC seconds).
    public static func claim(plaintext: [UInt8], now: Int64) -> Result<Claim, Refusal> {
        guard plaintext.count == 36 + 1 + 20, plaintext[36] == UInt8(ascii: " "),
            let id = GUID(String(decoding: plaintext[0..<36], as: UTF8.self)),
            let seconds = AccessCodeV1.unixSeconds(timestamp: plaintext[37...])
        else { return .failure(.malformedClaim) }
        if id.isNil { return .failure(.nilApplicationID) }
        if seconds > now + futureSkewSeconds { return .failure(.fromTheFuture(aheadSeconds: seconds - now)) }
        if now - seconds > lifetimeSeconds { return .failure(.expired(ageSeconds: now - seconds)) }
        return .success(Claim(applicationID: id, unixSeconds: seconds))
    }

    /// The plaintext a client encrypts for `applicationID` at `unixSeconds` (for tests and tools).
    public static func plaintext(applicationID: GUID, unixSeconds: Int64) -> [UInt8] {
        Array((applicationID.canonical + " ").utf8) + AccessCodeV1.timestampBytes(unixSeconds: unixSeconds)
    }
}

/// The `Authorization` header's `<scheme> <credentials>` form (RFC 9110 §11.4), shared by the
/// access-code schemes.
enum AuthorizationHeader {
    /// The credentials after `scheme` (compared case-insensitively, given in lower case), with
    /// the blanks around them removed; nil for another scheme or empty credentials.
    static func credentials(_ headerValue: some StringProtocol, scheme: String) -> [UInt8]? {
        let bytes = Array(headerValue.utf8)
        var i = 0
        while i < bytes.count && ASCII.isBlank(bytes[i]) { i += 1 }
        let name = Array(scheme.utf8)
        guard bytes.count - i > name.count else { return nil }
        for k in 0..<name.count where ASCII.lowercased(bytes[i + k]) != name[k] { return nil }
        i += name.count
        guard ASCII.isBlank(bytes[i]) else { return nil }
        while i < bytes.count && ASCII.isBlank(bytes[i]) { i += 1 }
        var end = bytes.count
        while end > i && ASCII.isBlank(bytes[end - 1]) { end -= 1 }
        guard end > i else { return nil }
        return Array(bytes[i..<end])
    }
}
