import COpenSSL

/// An X.509 certificate held by OpenSSL (`X509`). Immutable once made, so it may be shared.
public final class Certificate: @unchecked Sendable {
    let pointer: OpaquePointer

    init(adopting pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { X509_free(pointer) }

    /// Every certificate in a PEM text, in order (a leaf then its intermediates, as
    /// `tls-certificate` files hold them). Throws when there is none, or when a block after the
    /// first is malformed.
    public static func chain(pem: [UInt8]) throws(CryptoError) -> [Certificate] {
        var certificates: [Certificate] = []
        try MemoryBIO.reading(pem) { bio throws(CryptoError) in
            while true {
                guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else {
                    // The end of the text shows as "no start line"; anything else is a bad block.
                    let code = ERR_peek_last_error()
                    if !certificates.isEmpty && tmm_error_is_pem_end(code) == 1 {
                        ERR_clear_error()
                        return
                    }
                    throw CryptoError.current("PEM_read_bio_X509")
                }
                certificates.append(Certificate(adopting: certificate))
            }
        }
        return certificates
    }

    /// The first certificate of a PEM text.
    public convenience init(pem: [UInt8]) throws(CryptoError) {
        let first = try MemoryBIO.reading(pem) { bio throws(CryptoError) in
            try CryptoError.check(PEM_read_bio_X509(bio, nil, nil, nil), "PEM_read_bio_X509")
        }
        self.init(adopting: first)
    }

    /// The certificate as PEM (`-----BEGIN CERTIFICATE-----`).
    public func pem() throws(CryptoError) -> [UInt8] {
        try MemoryBIO.writing("PEM_write_bio_X509") { bio in PEM_write_bio_X509(bio, pointer) }
    }

    /// The subject's common name (the first CN), nil when it has none.
    public var commonName: String? {
        let name = X509_get_subject_name(pointer)
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
            let data = X509_NAME_ENTRY_get_data(entry)
        else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let count = ASN1_STRING_to_UTF8(&utf8, data)
        guard count >= 0, let utf8 else { return nil }
        defer { CRYPTO_free(utf8, #fileID, #line) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(count)), as: UTF8.self)
    }

    /// Whole days from now until the certificate expires (negative once expired), by OpenSSL's
    /// reading of the system clock.
    public var daysUntilExpiry: Int {
        var days: CInt = 0
        var seconds: CInt = 0
        guard ASN1_TIME_diff(&days, &seconds, nil, X509_get0_notAfter(pointer)) == 1 else { return -1 }
        return Int(days)
    }

    /// True when the certificate is not yet valid (its notBefore is in the future).
    public var isNotYetValid: Bool {
        X509_cmp_current_time(X509_get0_notBefore(pointer)) > 0
    }

    /// The expiry date as OpenSSL prints it (`Mar  1 12:00:00 2028 GMT`), for messages.
    public var notAfterText: String {
        (try? MemoryBIO.writing("ASN1_TIME_print") { bio in ASN1_TIME_print(bio, X509_get0_notAfter(pointer)) })
            .map { String(decoding: $0, as: UTF8.self) } ?? "?"
    }

    /// True when `key` is the private half of this certificate's public key.
    public func isCertified(_ key: PrivateKey) -> Bool {
        defer { ERR_clear_error() }
        return X509_check_private_key(pointer, key.pointer) == 1
    }

    /// True when the certificate names `host` (a SAN DNS name; the CN only when the certificate
    /// has no DNS SAN, as RFC 6125 allows).
    public func covers(host: String) -> Bool {
        defer { ERR_clear_error() }
        return X509_check_host(pointer, host, host.utf8.count, 0, nil) == 1
    }

    /// True when the certificate names the IP address `address` (`127.0.0.1`, `::1`) in a SAN.
    public func covers(ipAddress address: String) -> Bool {
        defer { ERR_clear_error() }
        return X509_check_ip_asc(pointer, address, 0) == 1
    }

    /// True when `issuer` issued this certificate: names match and `issuer`'s key signed it.
    public func isIssued(by issuer: Certificate) -> Bool {
        defer { ERR_clear_error() }
        guard X509_check_issued(issuer.pointer, pointer) == X509_V_OK,
            let key = X509_get0_pubkey(issuer.pointer)
        else { return false }
        return X509_verify(pointer, key) == 1
    }

    // MARK: Issuing

    /// What a new certificate says.
    public struct Profile: Sendable {
        public var commonName: String
        public var validityDays: Int
        /// A certificate authority (basicConstraints CA:TRUE, pathlen 0; keyCertSign, cRLSign)
        /// or a TLS server (CA:FALSE; digitalSignature, keyEncipherment; EKU serverAuth).
        public var isAuthority: Bool
        /// SAN entries in OpenSSL's configuration syntax: `DNS:localhost`, `IP:127.0.0.1`.
        public var subjectAlternativeNames: [String]

        public init(commonName: String, validityDays: Int, isAuthority: Bool, subjectAlternativeNames: [String] = []) {
            self.commonName = commonName
            self.validityDays = validityDays
            self.isAuthority = isAuthority
            self.subjectAlternativeNames = subjectAlternativeNames
        }
    }

    /// A new X.509 v3 certificate for `key`'s public half, signed with SHA-256 by `issuer`
    /// (itself when nil: a self-signed root). Valid from an hour ago (clocks of clients that
    /// lag a little) for `profile.validityDays`, with a random 127-bit serial number.
    public static func issue(
        _ profile: Profile, for key: PrivateKey,
        by issuer: (certificate: Certificate, key: PrivateKey)?
    ) throws(CryptoError) -> Certificate {
        let certificate = Certificate(adopting: try CryptoError.check(X509_new(), "X509_new"))
        let x509 = certificate.pointer
        try CryptoError.check(X509_set_version(x509, 2), "X509_set_version")
        try setRandomSerial(x509)
        guard X509_gmtime_adj(X509_getm_notBefore(x509), -3_600) != nil,
            X509_gmtime_adj(X509_getm_notAfter(x509), profile.validityDays * 86_400) != nil
        else {
            throw CryptoError.current("X509_gmtime_adj")
        }
        let subject = try CryptoError.check(X509_NAME_new(), "X509_NAME_new")
        defer { X509_NAME_free(subject) }
        try CryptoError.check(
            X509_NAME_add_entry_by_txt(
                subject, "CN", MBSTRING_UTF8, profile.commonName,
                -1, -1, 0), "X509_NAME_add_entry_by_txt")
        try CryptoError.check(X509_set_subject_name(x509, subject), "X509_set_subject_name")
        let issuerName = issuer.map { X509_get_subject_name($0.certificate.pointer) } ?? subject
        try CryptoError.check(X509_set_issuer_name(x509, issuerName), "X509_set_issuer_name")
        try CryptoError.check(X509_set_pubkey(x509, key.pointer), "X509_set_pubkey")

        var extensions: [(CInt, String)]
        if profile.isAuthority {
            extensions = [
                (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
                (NID_key_usage, "critical,keyCertSign,cRLSign"),
            ]
        } else {
            extensions = [
                (NID_basic_constraints, "critical,CA:FALSE"),
                (NID_key_usage, "critical,digitalSignature,keyEncipherment"),
                (NID_ext_key_usage, "serverAuth"),
            ]
        }
        if !profile.subjectAlternativeNames.isEmpty {
            extensions.append((NID_subject_alt_name, profile.subjectAlternativeNames.joined(separator: ",")))
        }
        // The key identifiers last: the authority's refers to the issuer's subject identifier,
        // which for a root is the one just added.
        extensions.append((NID_subject_key_identifier, "hash"))
        extensions.append((NID_authority_key_identifier, "keyid:always"))
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.certificate.pointer ?? x509, x509, nil, nil, 0)
        for (nid, value) in extensions {
            let ext = try CryptoError.check(
                X509V3_EXT_conf_nid(nil, &context, nid, value), "X509V3_EXT_conf_nid(\(value))")
            defer { X509_EXTENSION_free(ext) }
            try CryptoError.check(X509_add_ext(x509, ext, -1), "X509_add_ext")
        }
        let signer = issuer?.key ?? key
        guard X509_sign(x509, signer.pointer, EVP_sha256()) > 0 else { throw CryptoError.current("X509_sign") }
        return certificate
    }

    private static func setRandomSerial(_ x509: OpaquePointer) throws(CryptoError) {
        let number = try CryptoError.check(BN_new(), "BN_new")
        defer { BN_free(number) }
        // 127 bits: positive in DER's signed encoding, unpredictable (CA/B forum wants >= 64).
        try CryptoError.check(BN_rand(number, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY), "BN_rand")
        guard BN_to_ASN1_INTEGER(number, X509_get_serialNumber(x509)) != nil else {
            throw CryptoError.current("BN_to_ASN1_INTEGER")
        }
    }
}
