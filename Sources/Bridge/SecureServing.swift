import BridgeCore
import Logging
import Posix
import TLS
import TMMProtocol

// What the secure ports and the modern client flow need from disk, loaded once at start-up
// (before a root daemon drops its privileges: the keys stay root's): the TLS certificate and key
// (configured, or the local CA's, docs/tls.md), the Access Code V2 key pair, and the settings
// REST changes (antenna, correction source).

/// The TLS context, the Access Code V2 key and what start-up says about them.
struct SecureMaterials {
    let context: TLSServerContext
    /// The certificate served (its expiry is watched while the daemon runs).
    let serverCertificate: Certificate
    /// The local CA, when it made the certificate (nil for a configured one): a running daemon
    /// re-issues from it before expiry.
    let authority: (certificate: Certificate, key: PrivateKey)?
    let accessCodeKey: PrivateKey
    let publicKey: (n: String, e: String)
    /// Log lines for the start-up (which certificate, made or reused, warnings), with their level.
    let notes: [(level: LogLevel, text: String)]

    static func load(configuration: BridgeConfiguration, stateDirectory: String) throws(BridgeServerError) -> SecureMaterials {
        var notes: [(level: LogLevel, text: String)] = []
        let chain: [Certificate]
        let key: PrivateKey
        var authority: (certificate: Certificate, key: PrivateKey)?
        if let certificatePath = configuration.tlsCertificate, let keyPath = configuration.tlsKey {
            do {
                let configured = try ConfiguredCertificate.load(certificate: certificatePath, key: keyPath)
                (chain, key) = (configured.chain, configured.key)
                notes.append((.info, "TLS: certificate \(certificatePath) (expires \(configured.chain[0].notAfterText))"))
                notes += configured.warnings.map { (.warning, "TLS: warning: " + $0) }
            } catch {
                throw .tls("\(error)", isConfiguration: true)
            }
        } else {
            do {
                let local = try LocalCertificateAuthority.load(stateDirectory: stateDirectory)
                (chain, key) = (local.chain, local.key)
                authority = (local.authority, local.authorityKey)
                let folder = LocalCertificateAuthority.directory(inStateDirectory: stateDirectory)
                switch local.change {
                case .created:
                    notes.append((.notice, "TLS: made a local CA and a server certificate in \(folder); trust the CA on clients (tmm-bridge tls ca, docs/tls.md)"))
                case .renewed(let reason):
                    notes.append((.notice, "TLS: issued a new server certificate from the local CA in \(folder): \(reason)"))
                case .reused:
                    notes.append((.info, "TLS: local CA certificate in \(folder) (server certificate expires \(local.chain[0].notAfterText))"))
                }
            } catch {
                throw .tls("\(error)", isConfiguration: false)
            }
        }
        let context: TLSServerContext
        do {
            context = try TLSServerContext(chain: chain, key: key)
        } catch {
            throw .tls("the TLS certificate and key cannot serve: \(error)", isConfiguration: configuration.tlsCertificate != nil)
        }
        let accessCodeKey: PrivateKey
        let publicKey: (n: String, e: String)
        do {
            let loaded = try AccessCodeKey.load(stateDirectory: stateDirectory)
            accessCodeKey = loaded.key
            publicKey = try loaded.key.rsaPublicJWK()
            if loaded.created {
                notes.append((.notice, "Access Code V2: made an RSA key in \(stateDirectory)/\(AccessCodeKey.fileName)"))
            }
        } catch {
            throw .tls("Access Code V2 key: \(error)", isConfiguration: false)
        }
        return SecureMaterials(context: context, serverCertificate: chain[0], authority: authority,
                               accessCodeKey: accessCodeKey, publicKey: publicKey, notes: notes)
    }
}

extension DeviceSettings {
    /// `<state directory>/settings.json`, or the defaults when it does not exist yet.
    static func load(stateDirectory: String) throws(BridgeServerError) -> DeviceSettings {
        let path = stateDirectory + "/" + fileName
        let bytes: [UInt8]?
        do { bytes = try AtomicFile.read(path, limit: 1 << 20) } catch { throw .settings(path, "\(error)") }
        guard let bytes else { return DeviceSettings() }
        switch parseFile(bytes) {
        case .success(let settings): return settings
        case .failure(let failure):
            throw .settings(path, "\(failure.message) (fix or remove it; REST writes it as JSON)")
        }
    }
}

extension BridgeServer {
    /// REST changed the settings: served from memory at once, written to disk by the worker
    /// (an fsync must not hold up the loop); writes keep their order.
    func saveSettings(_ settings: DeviceSettings) {
        deviceSettings = settings
        identity.antennaHeight = settings.antenna.appliedHeight
        let path = environment.stateDirectory + "/" + DeviceSettings.fileName
        let bytes = settings.fileBytes()
        let results = workerResults
        let submitted = worker.submit {
            var failure: String?
            do { try AtomicFile.write(bytes, to: path, mode: 0o600) } catch { failure = "\(error)" }
            results.post(.settingsSaved(failure: failure))
        }
        if !submitted { log.error("cannot save the settings: the daemon is stopping") }
    }

    /// A TLS session failed (a refused handshake, a bad record): counted and logged. A client
    /// can cause these at will (a scanner), so the logger's repeat rule holds back copies of the
    /// same failure (keyed without the running count) and summarises them with the latest count.
    func recordTLSFailure(_ failure: TLSServerSession.Failure, on connection: Connection, established: Bool) {
        statistics.tlsFailures += 1
        let what = "TLS \(established ? "session" : "handshake") failed on \(connection.server.registrationKey): \(failure.reason)"
        log.warning(what + " (\(statistics.tlsFailures) TLS failures so far)", key: what)
    }

    /// An Access Code V2 was refused: counted, logged like TLS failures.
    func recordAccessCodeV2Refusal(_ reason: String) {
        statistics.accessCodeV2Refused += 1
        let what = "Access Code V2 refused: \(reason)"
        log.warning(what + " (\(statistics.accessCodeV2Refused) refused so far)", key: what)
    }

    /// Hourly: a certificate from the local CA that comes within `renewalDays` of expiry is
    /// re-issued and served to new connections (a daemon may run longer than a certificate
    /// lives); a configured one is warned about once a day instead (it is the operator's).
    func watchCertificateExpiry(now: Int64) {
        guard now - lastCertificateCheck >= 3_600_000_000_000 else { return }
        lastCertificateCheck = now
        let days = serverCertificate.daysUntilExpiry
        guard days < LocalCertificateAuthority.renewalDays else { return }
        guard let authority = tlsAuthority else {
            if now - lastCertificateWarning >= 86_400_000_000_000 {
                lastCertificateWarning = now
                log.warning("TLS: warning: the configured certificate expires in \(days) days (\(serverCertificate.notAfterText)); replace tls-certificate")
            }
            return
        }
        do {
            let issued = try LocalCertificateAuthority.issueServerCertificate(by: authority)
            tlsContext = try TLSServerContext(chain: [issued.certificate, authority.certificate], key: issued.key)
            serverCertificate = issued.certificate
            log.notice("TLS: the server certificate expires in \(days) days; issued a new one from the local CA (expires \(issued.certificate.notAfterText))")
        } catch {
            log.error("TLS: cannot re-issue the server certificate (\(error)); it expires in \(days) days")
        }
    }

}
