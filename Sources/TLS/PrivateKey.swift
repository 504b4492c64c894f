import ByteCoding
import COpenSSL

/// A private key (and its public half) held by OpenSSL: an `EVP_PKEY`.
///
/// Immutable once made: OpenSSL reads a key from several threads safely, so it may be shared
/// (the TLS context on the io thread, the Access Code V2 check on another).
public final class PrivateKey: @unchecked Sendable {
    /// The key kinds the bridge makes: RSA for Access Code V2 (RSA-OAEP is what every sample
    /// encrypts with), P-256 for the local certificate authority and the TLS server (fast
    /// handshakes, accepted by every client the samples run on).
    public enum Kind: Sendable, Equatable {
        case rsa(bits: Int)
        case p256
    }

    let pointer: OpaquePointer

    private init(adopting pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }

    /// A new key from OpenSSL's generator (seeded by the kernel).
    public static func generate(_ kind: Kind) throws(CryptoError) -> PrivateKey {
        let id: CInt
        switch kind {
        case .rsa: id = EVP_PKEY_RSA
        case .p256: id = EVP_PKEY_EC
        }
        let context = try CryptoError.check(EVP_PKEY_CTX_new_id(id, nil), "EVP_PKEY_CTX_new_id")
        defer { EVP_PKEY_CTX_free(context) }
        try CryptoError.check(EVP_PKEY_keygen_init(context), "EVP_PKEY_keygen_init")
        switch kind {
        case .rsa(let bits):
            try CryptoError.check(
                EVP_PKEY_CTX_set_rsa_keygen_bits(context, CInt(bits)), "EVP_PKEY_CTX_set_rsa_keygen_bits")
        case .p256:
            try CryptoError.check(
                EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1),
                "EVP_PKEY_CTX_set_ec_paramgen_curve_nid")
        }
        var key: OpaquePointer?
        try CryptoError.check(EVP_PKEY_keygen(context, &key), "EVP_PKEY_keygen")
        return PrivateKey(adopting: try CryptoError.check(key, "EVP_PKEY_keygen"))
    }

    /// Reads an unencrypted PEM private key (PKCS #8 `PRIVATE KEY`, or the traditional
    /// `RSA PRIVATE KEY` / `EC PRIVATE KEY`).
    public convenience init(pem: [UInt8]) throws(CryptoError) {
        let key = try MemoryBIO.reading(pem) { bio throws(CryptoError) in
            try CryptoError.check(PEM_read_bio_PrivateKey(bio, nil, nil, nil), "PEM_read_bio_PrivateKey")
        }
        self.init(adopting: key)
    }

    /// The key as unencrypted PKCS #8 PEM (for a 0600 file in the state directory; never logged).
    public func pem() throws(CryptoError) -> [UInt8] {
        try MemoryBIO.writing("PEM_write_bio_PrivateKey") { bio in
            PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil)
        }
    }

    /// What kind of key this is (nil for kinds the bridge does not make, e.g. Ed25519).
    public var kind: Kind? {
        switch EVP_PKEY_get_base_id(pointer) {
        case EVP_PKEY_RSA: .rsa(bits: Int(EVP_PKEY_get_bits(pointer)))
        case EVP_PKEY_EC where EVP_PKEY_get_bits(pointer) == 256: .p256
        default: nil
        }
    }

    // MARK: RSA

    /// The public half as a JSON Web Key (RFC 7517, RFC 7518 §6.3.1): `kty` RSA, the modulus
    /// `n` and exponent `e` in unpadded base64url of their big-endian bytes. What the samples
    /// read from `GET /api/v1/publicKey`.
    public func rsaPublicJWK() throws(CryptoError) -> (n: String, e: String) {
        guard case .rsa = kind else { throw CryptoError("rsaPublicJWK", reason: "not an RSA key") }
        return (
            Base64.encodeURLSafeUnpadded(try bigNumberParameter("n")),
            Base64.encodeURLSafeUnpadded(try bigNumberParameter("e"))
        )
    }

    /// The big-endian bytes of an integer parameter of the key (`n`, `e`), without leading zeros.
    private func bigNumberParameter(_ name: String) throws(CryptoError) -> [UInt8] {
        var number: OpaquePointer?
        try CryptoError.check(EVP_PKEY_get_bn_param(pointer, name, &number), "EVP_PKEY_get_bn_param(\(name))")
        defer { BN_free(number) }
        let count = Int((BN_num_bits(number) + 7) / 8)
        var bytes = [UInt8](repeating: 0, count: count)
        _ = bytes.withUnsafeMutableBufferPointer { BN_bn2bin(number, $0.baseAddress) }
        return bytes
    }

    /// The length of every RSA ciphertext under this key: the modulus's, in bytes (RFC 8017's
    /// k; 256 for RSA-2048). Nil for a key that is not RSA.
    public var rsaCiphertextLength: Int? {
        guard case .rsa = kind else { return nil }
        return Int(EVP_PKEY_get_size(pointer))
    }

    /// Decrypts an RSA-OAEP ciphertext (SHA-256 and MGF1-SHA-256, empty label; see
    /// `tmm_pkey_ctx_set_oaep_sha256`). Nil for any ciphertext that does not decrypt: the
    /// caller answers every such case the same way, so a wrong length, a bad padding and a
    /// wrong key stay indistinguishable (Manger's attack needs the difference).
    ///
    /// Only a ciphertext of exactly `rsaCiphertextLength` bytes is decrypted (RFC 8017 §7.1.2,
    /// step 1). OpenSSL reads a shorter one as the same number with leading zeros left out, so
    /// a code whose first byte is 0x00 (one in 256) would decrypt without it too: two different
    /// byte strings, one code, and a replay check keyed on the bytes would take them for two.
    public func decryptOAEPSHA256(_ ciphertext: [UInt8]) -> [UInt8]? {
        guard let modulusLength = rsaCiphertextLength, ciphertext.count == modulusLength else { return nil }
        guard let context = EVP_PKEY_CTX_new(pointer, nil) else {
            ERR_clear_error()
            return nil
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_decrypt_init(context) == 1, tmm_pkey_ctx_set_oaep_sha256(context) == 1 else {
            ERR_clear_error()
            return nil
        }
        var plaintext = [UInt8](repeating: 0, count: Int(EVP_PKEY_get_size(pointer)))
        var length = plaintext.count
        let ok = ciphertext.withUnsafeBufferPointer { input in
            plaintext.withUnsafeMutableBufferPointer { output in
                EVP_PKEY_decrypt(context, output.baseAddress, &length, input.baseAddress, input.count)
            }
        }
        // The queue holds why it failed; nobody may learn that, so it is dropped here.
        ERR_clear_error()
        guard ok == 1 else { return nil }
        plaintext.removeLast(plaintext.count - length)
        return plaintext
    }
}
