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

    /// `dropUser`: the user a root daemon drops to, whose files are the daemon's too.
    static func load(configuration: BridgeConfiguration, stateDirectory: String, alsoOwnedBy dropUser: UserID?)
        throws(BridgeServerError) -> SecureMaterials {
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
                let local = try LocalCertificateAuthority.load(stateDirectory: stateDirectory, alsoOwnedBy: dropUser)
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
                throw .tls("\(error)", isConfiguration: error.isUntrustedFile)
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
            let loaded = try AccessCodeKey.load(stateDirectory: stateDirectory, alsoOwnedBy: dropUser)
            accessCodeKey = loaded.key
            publicKey = try loaded.key.rsaPublicJWK()
            if loaded.created {
                notes.append((.notice, "Access Code V2: made an RSA key in \(stateDirectory)/\(AccessCodeKey.fileName)"))
            }
        } catch {
            throw .tls("Access Code V2 key: \(error)", isConfiguration: (error as? TLSMaterialError)?.isUntrustedFile == true)
        }
        return SecureMaterials(context: context, serverCertificate: chain[0], authority: authority,
                               accessCodeKey: accessCodeKey, publicKey: publicKey, notes: notes)
    }
}

extension DeviceSettings {
    /// `<state directory>/settings.json`, or the defaults when it does not exist yet. Only the
    /// daemon's own file (`FileTrust`, as the registry).
    static func load(stateDirectory: String, alsoOwnedBy dropUser: UserID?) throws(BridgeServerError) -> DeviceSettings {
        let path = stateDirectory + "/" + fileName
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, limit: 1 << 20, trusting: .ours(mode: 0o600, alsoOwnedBy: dropUser))
        } catch {
            throw .settings(path, "\(error)")
        }
        guard let bytes else { return DeviceSettings() }
        switch parseFile(bytes) {
        case .success(let settings): return settings
        case .failure(let failure):
            throw .settings(path, "\(failure.message) (fix or remove it; REST writes it as JSON)")
        }
    }
}

extension BridgeServer {
    /// The thread that keeps `settings.json` up to date with the latest settings.
    static func makeSettingsWriter(stateDirectory: String, results: Inbox<WorkerResult>)
        throws(Errno) -> LatestValueWriter<DeviceSettings> {
        let path = stateDirectory + "/" + DeviceSettings.fileName
        return try LatestValueWriter(name: "settings-writer") { settings in
            var failure: String?
            do { try AtomicFile.write(settings.fileBytes(), to: path, mode: 0o600) } catch { failure = "\(error)" }
            results.post(.settingsSaved(failure: failure))
        }
    }

    /// REST changed the settings: served from memory at once (the client's 200 says these
    /// settings), written to disk by the settings writer. Every PUT's settings are the whole
    /// state, so the writer keeps only the latest: what a client was answered is on disk unless
    /// a later PUT replaced it, however slow the disk; it refuses only once the server stopped
    /// serving, which no request can see.
    func saveSettings(_ settings: DeviceSettings) {
        deviceSettings = settings
        identity.antennaHeight = settings.antenna.appliedHeight
        if !settingsWriter.submit(settings) { log.error("cannot save the settings: the settings writer has stopped") }
    }

    /// A TLS session failed (a refused handshake, a bad record): counted and logged. A client
    /// can cause these at will (a scanner), so the logger's repeat rule holds back copies of the
    /// same failure (keyed without the running count) and summarises them with the latest count.
    func recordTLSFailure(_ failure: TLSServerSession.Failure, on connection: Connection, established: Bool) {
        statistics.tlsFailures += 1
        let what = "TLS \(established ? "session" : "handshake") failed on \(connection.server.registrationKey): \(failure.reason)"
        log.warning(what + " (\(statistics.tlsFailures) TLS failures so far)", key: what)
    }

    /// An Access Code V2 was refused: counted, logged like TLS failures, keyed by the kind of
    /// refusal (a client can vary the numbers, ids and ages in the text at will).
    func recordAccessCodeV2Refusal(_ refusal: AccessCodeV2Verifier.Refusal) {
        statistics.accessCodeV2Refused += 1
        log.warning("Access Code V2 refused: \(refusal) (\(statistics.accessCodeV2Refused) refused so far)",
                    key: "Access Code V2 refused: " + refusal.kind)
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
