// libFuzzer target for the TLS-facing input path (Sources/TLS: TLSServerSession over OpenSSL's
// memory BIOs, and the Access Code V2 RSA-OAEP decryption). Built by Fuzz/run-tls.sh into ONE
// module with the TLS files that do not need Posix, linked against the system's libssl.
//
// Per input:
// - byte 0 picks how the rest is cut into socket reads (1-256 bytes each, from the byte's value),
//   then every piece goes into a fresh server session followed by a plaintext read: garbage,
//   truncated records and mutated ClientHellos must end as "needs input", a Failure, or (never,
//   without a client key) plaintext; the session's own output is taken each time, and a session
//   that failed stays failed or idle, never crashes or grows without bound.
// - the input (after byte 0) as an Access Code V2 ciphertext: decrypts to nil, or to at most
//   256 - 66 bytes (OAEP-SHA256's capacity for a 2048-bit key); never traps.

let materials: (TLSServerContext, PrivateKey) = {
    do {
        let key = try PrivateKey.generate(.p256)
        let certificate = try Certificate.issue(
            .init(
                commonName: "tmm-api-local.fieldsystems.trimble.com", validityDays: 30,
                isAuthority: false), for: key, by: nil)
        return (try TLSServerContext(chain: [certificate], key: key), try PrivateKey.generate(.rsa(bits: 2048)))
    } catch {
        fatalError("TLSFuzz set-up: \(error)")
    }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let (context, accessCodeKey) = materials
    let piece = Int(input[0]) + 1
    let session: TLSServerSession
    do { session = try TLSServerSession(context: context) } catch { fatalError("TLSServerSession: \(error)") }
    var plaintext: [UInt8] = []
    var output: [UInt8] = []
    var failed = false
    var offset = 1
    while offset < input.count {
        let end = min(input.count, offset + piece)
        input[offset..<end].withUnsafeBytes { session.receive($0) }
        offset = end
        do {
            while case .bytes(let count) = try session.readPlaintext(appendingTo: &plaintext, maxCount: 4_096) {
                if count == 0 { break }
            }
        } catch {
            failed = true
        }
        session.takeOutput(appendingTo: &output)
        if failed { break }
    }
    // No client key exists here, so no record can decrypt to plaintext.
    if !plaintext.isEmpty { fatalError("plaintext from a session without a client: \(plaintext.count) bytes") }
    // A server's flights (ServerHello ... Finished, or an alert) are bounded: a few certificates.
    if output.count > 64 * 1024 { fatalError("session output grew to \(output.count) bytes") }
    if let decrypted = accessCodeKey.decryptOAEPSHA256(Array(input.dropFirst())), decrypted.count > 256 - 66 {
        fatalError("OAEP plaintext of \(decrypted.count) bytes")
    }
    return 0
}
