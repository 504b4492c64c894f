import BridgeCore
import Logging
import Posix
import TLS
import TMMProtocol

// What the secure ports and the modern client flow need from disk, loaded once at start-up
// (before a root daemon drops its privileges: the keys stay root's): the TLS certificate and key
// (configured, or the local CA's, docs/tls.md) and the Access Code V2 key pair. While the daemon
// runs, a certificate from the local CA is re-issued before it expires.

/// The TLS context new secure connections use, the Access Code V2 key, and the certificate's
/// renewal. Loop-confined.
final class SecureServing {
    /// What new TLS connections are served with; replaced when the certificate is re-issued.
    private(set) var context: TLSServerContext
    /// The certificate served (its expiry is watched).
    private(set) var serverCertificate: Certificate
    /// The local CA, when it made the certificate (nil for a configured one).
    private let authority: (certificate: Certificate, key: PrivateKey)?
    let accessCodeV2Key: PrivateKey
    /// Its public half as `GET /api/v1/publicKey` serves it (unpadded base64url `n` and `e`).
    let accessCodeV2PublicKey: (n: String, e: String)
    /// What start-up says about the materials (logged by `run`), with their level.
    let notes: [(level: LogLevel, text: String)]
    private let log: Logger
    private var lastCertificateCheck: Int64 = 0
    private var lastCertificateWarning: Int64 = -86_400_000_000_000

    /// `dropUser`: the user a root daemon drops to, whose files are the daemon's too.
    init(
        configuration: BridgeConfiguration, stateDirectory: String, alsoOwnedBy dropUser: UserID?, log: Logger
    )
        throws(SecureMaterialsError)
    {
        self.log = log
        var notes: [(level: LogLevel, text: String)] = []
        let chain: [Certificate]
        let key: PrivateKey
        if let certificatePath = configuration.tlsCertificate, let keyPath = configuration.tlsKey {
            let configured: (chain: [Certificate], key: PrivateKey, warnings: [String])
            do {
                configured = try ConfiguredCertificate.load(certificate: certificatePath, key: keyPath)
            } catch {
                throw .configuredCertificate(error)
            }
            (chain, key) = (configured.chain, configured.key)
            authority = nil
            notes.append((.info, "TLS: certificate \(certificatePath) (expires \(configured.chain[0].notAfterText))"))
            notes += configured.warnings.map { (.warning, "TLS: warning: " + $0) }
        } else {
            let local: LocalCertificateAuthority.Materials
            do {
                local = try LocalCertificateAuthority.load(stateDirectory: stateDirectory, alsoOwnedBy: dropUser)
            } catch {
                throw .localAuthority(error)
            }
            (chain, key) = (local.chain, local.key)
            authority = (local.authority, local.authorityKey)
            let folder = LocalCertificateAuthority.directory(inStateDirectory: stateDirectory)
            switch local.change {
            case .created:
                notes.append(
                    (
                        .notice,
                        "TLS: made a local CA and a server certificate in \(folder); "
                            + "trust the CA on clients (tmm-bridge tls ca, docs/tls.md)"
                    ))
            case .renewed(let reason):
                notes.append(
                    (.notice, "TLS: issued a new server certificate from the local CA in \(folder): \(reason)"))
            case .reused:
                notes.append(
                    (
                        .info,
                        "TLS: local CA certificate in \(folder) "
                            + "(server certificate expires \(local.chain[0].notAfterText))"
                    ))
            }
        }
        do {
            context = try TLSServerContext(chain: chain, key: key)
        } catch {
            throw .unusable(error, configured: configuration.tlsCertificate != nil)
        }
        serverCertificate = chain[0]
        let loaded: (key: PrivateKey, created: Bool)
        do {
            loaded = try AccessCodeKey.load(stateDirectory: stateDirectory, alsoOwnedBy: dropUser)
        } catch {
            throw .accessCodeKey(error)
        }
        do {
            accessCodeV2PublicKey = try loaded.key.rsaPublicJWK()
        } catch {
            throw .accessCodePublicKey(error)
        }
        accessCodeV2Key = loaded.key
        if loaded.created {
            notes.append((.notice, "Access Code V2: made an RSA key in \(stateDirectory)/\(AccessCodeKey.fileName)"))
        }
        self.notes = notes
    }

    /// A TLS transport for a new connection on a secure port.
    func transport(for socket: consuming SocketConnection, keyUpdateBurst: Int) throws(CryptoError) -> TLSTransport {
        try TLSTransport(socket, context: context, keyUpdateBurst: keyUpdateBurst)
    }

    /// Hourly: a certificate from the local CA that comes within `renewalDays` of expiry is
    /// re-issued and served to new connections (a daemon may run longer than a certificate
    /// lives); a configured one is warned about once a day instead (it is the operator's).
    func watchCertificateExpiry(now: Int64) {
        guard now - lastCertificateCheck >= 3_600_000_000_000 else { return }
        lastCertificateCheck = now
        let days = serverCertificate.daysUntilExpiry
        guard days < LocalCertificateAuthority.renewalDays else { return }
        guard let authority else {
            if now - lastCertificateWarning >= 86_400_000_000_000 {
                lastCertificateWarning = now
                log.warning(
                    "TLS: warning: the configured certificate expires in \(days) days "
                        + "(\(serverCertificate.notAfterText)); replace tls-certificate"
                )
            }
            return
        }
        do {
            let issued = try LocalCertificateAuthority.issueServerCertificate(by: authority)
            context = try TLSServerContext(chain: [issued.certificate, authority.certificate], key: issued.key)
            serverCertificate = issued.certificate
            log.notice(
                "TLS: the server certificate expires in \(days) days; "
                    + "issued a new one from the local CA (expires \(issued.certificate.notAfterText))"
            )
        } catch {
            log.error("TLS: cannot re-issue the server certificate (\(error)); it expires in \(days) days")
        }
    }
}

@available(*, unavailable, message: "it belongs to the io thread")
extension SecureServing: Sendable {}

/// Why the secure materials cannot be loaded or made at start-up.
public enum SecureMaterialsError: Error, Sendable, CustomStringConvertible {
    /// `tls-certificate` / `tls-key` cannot be used (exit 78).
    case configuredCertificate(TLSMaterialError)
    /// The local CA or its server certificate in the state directory cannot be read or made
    /// (exit 78 for a file that is not the daemon's, 1 otherwise).
    case localAuthority(TLSMaterialError)
    /// OpenSSL refused the certificate and key together.
    case unusable(CryptoError, configured: Bool)
    /// The Access Code V2 key cannot be read or made.
    case accessCodeKey(TLSMaterialError)
    case accessCodePublicKey(CryptoError)

    /// An operator's file to fix (exit 78) rather than a failure of the daemon (exit 1).
    public var isConfiguration: Bool {
        switch self {
        case .configuredCertificate: true
        case .localAuthority(let error), .accessCodeKey(let error): error.isUntrustedFile
        case .unusable(_, let configured): configured
        case .accessCodePublicKey: false
        }
    }

    public var description: String {
        switch self {
        case .configuredCertificate(let error), .localAuthority(let error): "\(error)"
        case .unusable(let error, _): "the TLS certificate and key cannot serve: \(error)"
        case .accessCodeKey(let error): "Access Code V2 key: \(error)"
        case .accessCodePublicKey(let error): "Access Code V2 key: \(error)"
        }
    }
}
