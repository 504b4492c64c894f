import Posix

/// The certificates the secure ports serve when none is configured: a local certificate
/// authority made on the first start, and a server certificate it issues for the name TMM
/// clients connect to. Kept in `<state directory>/tls/` and reused, so a user trusts the CA once
/// (`tmm-bridge tls ca`, docs/tls.md); the server certificate is re-issued by the same CA before
/// it expires, which needs no new trust.
public enum LocalCertificateAuthority {
    /// The one host name TMM offers TLS under (TMM-API.md §7); it resolves to 127.0.0.1.
    public static let hostName = "tmm-api-local.fieldsystems.trimble.com"
    /// What the server certificate names: the Trimble host name (CN and SAN: OkHttp, Chrome and
    /// iOS read only the SAN; the Kotlin sample's `LocalTmmSsl` looks for the CN), and loopback.
    public static let subjectAlternativeNames = ["DNS:\(hostName)", "DNS:localhost", "IP:127.0.0.1", "IP:::1"]
    /// iOS refuses TLS server certificates valid for more than 825 days (Apple, "Requirements
    /// for trusted certificates in iOS 13"); 397 is also under the 398 days browsers allow
    /// publicly trusted ones, so no client has a reason to refuse the span.
    public static let serverValidityDays = 397
    /// Re-issued when fewer days than this are left (at start-up, and by `renewIfDue`).
    public static let renewalDays = 30
    /// The CA outlives many server certificates: trusting it is the user's one manual step.
    public static let authorityValidityDays = 3_650

    /// The file names in `<state directory>/tls/`. Keys are written 0600 and never logged.
    public enum File {
        public static let authorityCertificate = "ca.pem"
        public static let authorityKey = "ca.key"
        public static let serverCertificate = "server.pem"
        public static let serverKey = "server.key"
    }

    /// What `load` found or made.
    public struct Materials {
        /// The server certificate then the CA (sent as the chain: a client that has the CA in
        /// its store builds the path either way; one that compares a CN finds it in the leaf).
        public let chain: [Certificate]
        public let key: PrivateKey
        public let authority: Certificate
        /// Kept by the daemon to re-issue the server certificate while it runs.
        public let authorityKey: PrivateKey
        /// What changed on disk: nothing, a new CA and server certificate, or a renewed server
        /// certificate (for the start-up log).
        public let change: Change
    }

    public enum Change: Equatable, Sendable {
        case reused
        case created
        case renewed(reason: String)
    }

    /// The directory holding the files.
    public static func directory(inStateDirectory state: String) -> String { state + "/tls" }

    /// Loads the CA and server certificate from `<stateDirectory>/tls/`, making what is missing
    /// and re-issuing a server certificate that is expiring, expired, not issued by the CA, or
    /// does not name `hostName`. A CA that is unreadable is an error to fix by hand (deleting
    /// it would silently invalidate the trust the user gave it).
    ///
    /// Only the daemon's own files are used (`FileTrust`: this user's, or `dropUser`'s, not
    /// writable by others): a CA another user planted is refused (it would make the daemon serve
    /// a certificate that user can forge); a planted server certificate or key is replaced, like
    /// an expired one, since the CA issues another and nothing a client trusts changes.
    public static func load(
        stateDirectory: String, alsoOwnedBy dropUser: UserID? = nil
    ) throws(TLSMaterialError) -> Materials {
        let folder = directory(inStateDirectory: stateDirectory)
        // The state directory first, private: `tmm-bridge tls ca` may be the first to make it,
        // and it holds the other keys too.
        do {
            try makeDirectories(stateDirectory, mode: 0o700, alsoOwnedBy: dropUser)
            try makeDirectories(folder, mode: 0o700, alsoOwnedBy: dropUser)
        } catch {
            throw .file(error)
        }
        let secret = FileTrust.ours(mode: 0o600, alsoOwnedBy: dropUser)
        let published = FileTrust.ours(mode: 0o644, alsoOwnedBy: dropUser)
        let authorityPath = folder + "/" + File.authorityCertificate
        let authorityKeyPath = folder + "/" + File.authorityKey

        var change = Change.reused
        let authority: Certificate
        let authorityKey: PrivateKey
        if let certificatePEM = try read(authorityPath, trusting: published) {
            guard let keyPEM = try read(authorityKeyPath, trusting: secret) else {
                throw .invalid(
                    path: authorityKeyPath,
                    reason: "the CA certificate is there but its key is missing; "
                        + "remove \(folder) to make a new CA (clients must then trust the new one)")
            }
            authority = try parse(authorityPath) { () throws(CryptoError) in try Certificate(pem: certificatePEM) }
            authorityKey = try parse(authorityKeyPath) { () throws(CryptoError) in try PrivateKey(pem: keyPEM) }
            guard authority.isCertified(authorityKey) else {
                throw .invalid(path: authorityKeyPath, reason: "it is not the key of \(authorityPath)")
            }
        } else {
            authorityKey = try crypto(authorityKeyPath) { () throws(CryptoError) in try PrivateKey.generate(.p256) }
            authority = try crypto(authorityPath) { () throws(CryptoError) in
                try Certificate.issue(
                    .init(
                        commonName: "tmm-bridge local CA (\(hostIdentity()))",
                        validityDays: authorityValidityDays, isAuthority: true),
                    for: authorityKey, by: nil)
            }
            try write(authorityKeyPath, mode: 0o600) { () throws(CryptoError) in try authorityKey.pem() }
            try write(authorityPath, mode: 0o644) { () throws(CryptoError) in try authority.pem() }
            change = .created
        }

        let serverPath = folder + "/" + File.serverCertificate
        let serverKeyPath = folder + "/" + File.serverKey
        var server: (certificate: Certificate, key: PrivateKey)?
        if change == .reused {
            var stored: (certificate: [UInt8], key: [UInt8])?
            do {
                if let certificatePEM = try read(serverPath, trusting: published),
                    let keyPEM = try read(serverKeyPath, trusting: secret)
                {
                    stored = (certificatePEM, keyPEM)
                }
            } catch {
                guard case .file(let failure) = error, failure.isUntrusted else { throw error }
                change = .renewed(reason: "the stored one is not the daemon's to use (\(failure))")
            }
            if let stored {
                let certificate = try? Certificate(pem: stored.certificate)
                let key = try? PrivateKey(pem: stored.key)
                if let certificate, let key, let reason = renewalReason(certificate, key: key, authority: authority) {
                    change = .renewed(reason: reason)
                } else if let certificate, let key {
                    server = (certificate, key)
                } else {
                    change = .renewed(reason: "the stored server certificate or key did not parse")
                }
            } else if change == .reused {
                change = .renewed(reason: "no server certificate was stored")
            }
        }
        if server == nil {
            let issued = try crypto(serverPath) { () throws(CryptoError) in
                try issueServerCertificate(by: (authority, authorityKey))
            }
            try write(serverKeyPath, mode: 0o600) { () throws(CryptoError) in try issued.key.pem() }
            try write(serverPath, mode: 0o644) { () throws(CryptoError) in try issued.certificate.pem() }
            server = issued
        }
        return Materials(
            chain: [server!.certificate, authority], key: server!.key, authority: authority,
            authorityKey: authorityKey, change: change)
    }

    /// A new server certificate (and P-256 key) for `hostName` from the CA: what `load` stores,
    /// and what a running daemon serves when its certificate comes within `renewalDays` of
    /// expiry (in memory: the next start checks the stored one and re-issues it too).
    public static func issueServerCertificate(
        by authority: (certificate: Certificate, key: PrivateKey)
    )
        throws(CryptoError) -> (certificate: Certificate, key: PrivateKey)
    {
        let key = try PrivateKey.generate(.p256)
        let certificate = try Certificate.issue(
            .init(
                commonName: hostName, validityDays: serverValidityDays, isAuthority: false,
                subjectAlternativeNames: subjectAlternativeNames),
            for: key, by: authority)
        return (certificate, key)
    }

    /// Why a stored server certificate must be re-issued, nil when it is good.
    static func renewalReason(_ certificate: Certificate, key: PrivateKey, authority: Certificate) -> String? {
        if !certificate.isCertified(key) { return "the server key does not match its certificate" }
        if !certificate.isIssued(by: authority) { return "the server certificate was not issued by this CA" }
        if !certificate.covers(host: hostName) { return "the server certificate does not name \(hostName)" }
        let days = certificate.daysUntilExpiry
        if days < renewalDays { return "the server certificate expires in \(days) days (\(certificate.notAfterText))" }
        if certificate.isNotYetValid { return "the server certificate is not valid yet (the clock moved back)" }
        return nil
    }

    /// The CA certificate's PEM, for `tmm-bridge tls ca`; nil when no CA has been made yet.
    /// Like the daemon, it reads only a certificate of this user's or of `owner` (the state
    /// directory's owner: the daemon's user, when root runs it).
    public static func authorityPEM(
        stateDirectory: String, alsoOwnedBy owner: UserID? = nil
    ) throws(TLSMaterialError) -> [UInt8]? {
        let path = directory(inStateDirectory: stateDirectory) + "/" + File.authorityCertificate
        guard let pem = try read(path, trusting: .ours(mode: 0o644, alsoOwnedBy: owner)) else { return nil }
        // Parsed before it is printed: a user is about to trust it.
        _ = try parse(path) { () throws(CryptoError) in try Certificate(pem: pem) }
        return pem
    }

    // MARK: Helpers

    private static func hostIdentity() -> String {
        let name = CurrentProcess.hostName
        return name.isEmpty ? "localhost" : name
    }

    /// `path`'s contents (at most 1 MiB); `trust` for the daemon's own files, nil for the
    /// configured ones (the administrator's).
    static func read(_ path: String, trusting trust: FileTrust? = nil) throws(TLSMaterialError) -> [UInt8]? {
        do { return try AtomicFile.read(path, limit: 1 << 20, trusting: trust) } catch { throw .file(error) }
    }

    private static func write(
        _ path: String, mode: FileMode, _ bytes: () throws(CryptoError) -> [UInt8]
    ) throws(TLSMaterialError) {
        let contents = try crypto(path, bytes)
        do { try AtomicFile.write(contents, to: path, mode: mode) } catch { throw .file(error) }
    }

    static func parse<T>(_ path: String, _ body: () throws(CryptoError) -> T) throws(TLSMaterialError) -> T {
        do { return try body() } catch { throw .invalid(path: path, reason: error.description) }
    }

    private static func crypto<T>(_ path: String, _ body: () throws(CryptoError) -> T) throws(TLSMaterialError) -> T {
        do { return try body() } catch { throw .crypto(path: path, error) }
    }
}

/// Why the TLS materials (certificates, keys) could not be loaded or made. Each names the file.
public enum TLSMaterialError: Error, Sendable, CustomStringConvertible {
    /// Reading, writing or creating a file or directory failed.
    case file(AtomicFile.Failure)
    /// A file holds something other than what it should (not PEM, the wrong key, no certificate).
    case invalid(path: String, reason: String)
    /// OpenSSL failed to make a key or certificate for `path`.
    case crypto(path: String, CryptoError)

    /// A file of the daemon's that it may not use (another user's, open to others, a symbolic
    /// link): for the operator to look at, like a bad configuration.
    public var isUntrustedFile: Bool {
        if case .file(let failure) = self { failure.isUntrusted } else { false }
    }

    public var description: String {
        switch self {
        case .file(let failure): "\(failure)"
        case .invalid(let path, let reason): "\(path): \(reason)"
        case .crypto(let path, let error): "\(path): \(error)"
        }
    }
}

/// A certificate the configuration names (`tls-certificate`, `tls-key`) instead of the local CA's.
public enum ConfiguredCertificate {
    /// The chain and key, checked: the key must be the certificate's, the certificate must be
    /// valid now. `warnings`: what is allowed but will likely make clients refuse it (it does not
    /// name the Trimble host, it expires within `LocalCertificateAuthority.renewalDays`).
    public static func load(
        certificate certificatePath: String, key keyPath: String
    )
        throws(TLSMaterialError) -> (chain: [Certificate], key: PrivateKey, warnings: [String])
    {
        guard let chainPEM = try LocalCertificateAuthority.read(certificatePath) else {
            throw .invalid(path: certificatePath, reason: "no such file (tls-certificate)")
        }
        guard let keyPEM = try LocalCertificateAuthority.read(keyPath) else {
            throw .invalid(path: keyPath, reason: "no such file (tls-key)")
        }
        let chain = try LocalCertificateAuthority.parse(certificatePath) { () throws(CryptoError) in
            try Certificate.chain(pem: chainPEM)
        }
        let key = try LocalCertificateAuthority.parse(keyPath) { () throws(CryptoError) in try PrivateKey(pem: keyPEM) }
        let leaf = chain[0]
        guard leaf.isCertified(key) else {
            throw .invalid(path: keyPath, reason: "not the private key of the first certificate in \(certificatePath)")
        }
        if leaf.daysUntilExpiry < 0 {
            throw .invalid(path: certificatePath, reason: "the certificate expired on \(leaf.notAfterText)")
        }
        var warnings: [String] = []
        if !leaf.covers(host: LocalCertificateAuthority.hostName) {
            warnings.append(
                "\(certificatePath) does not name \(LocalCertificateAuthority.hostName); "
                    + "TMM clients connect by that name and will refuse it")
        }
        if leaf.daysUntilExpiry < LocalCertificateAuthority.renewalDays {
            warnings.append("\(certificatePath) expires in \(leaf.daysUntilExpiry) days (\(leaf.notAfterText))")
        }
        return (chain, key, warnings)
    }
}
