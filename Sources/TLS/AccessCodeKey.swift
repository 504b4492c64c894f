import Posix

/// The RSA key pair behind Access Code V2 (`GET /api/v1/publicKey` serves its public half):
/// made once and kept in the state directory, so codes a client made before a restart still
/// decrypt after it (they live an hour).
public enum AccessCodeKey {
    public static let fileName = "access-code-v2.key"
    /// 2048 bits: what TMM-API.md §4.2 expects (344-character codes); the samples take any size.
    public static let kind = PrivateKey.Kind.rsa(bits: 2048)

    /// Reads `<stateDirectory>/access-code-v2.key`, or makes it (mode 0600) when missing. A file
    /// that is there but is not a 2048-bit RSA key is an error to fix by hand: replacing it
    /// would silently invalidate every code clients hold. So is a key that is not the daemon's
    /// (`FileTrust`: another owner than this user or `dropUser`, writable by others): whoever
    /// planted it can decrypt every code.
    public static func load(
        stateDirectory: String, alsoOwnedBy dropUser: UserID? = nil
    ) throws(TLSMaterialError) -> (key: PrivateKey, created: Bool) {
        let path = stateDirectory + "/" + fileName
        if let pem = try LocalCertificateAuthority.read(path, trusting: .ours(mode: 0o600, alsoOwnedBy: dropUser)) {
            let key = try LocalCertificateAuthority.parse(path) { () throws(CryptoError) in try PrivateKey(pem: pem) }
            guard key.kind == kind else {
                throw .invalid(
                    path: path,
                    reason: "not a 2048-bit RSA key; remove it to make a new one "
                        + "(codes made with the old public key stop working)")
            }
            return (key, false)
        }
        let key: PrivateKey
        do { key = try PrivateKey.generate(kind) } catch { throw .crypto(path: path, error) }
        let pem: [UInt8]
        do { pem = try key.pem() } catch { throw .crypto(path: path, error) }
        do { try AtomicFile.write(pem, to: path, mode: 0o600) } catch { throw .file(error) }
        return (key, true)
    }
}
