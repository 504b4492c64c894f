import COpenSSL

/// What every secure port serves: one certificate chain and key, TLS 1.2 and 1.3 only, the
/// modern cipher suites, ALPN `http/1.1` (an `SSL_CTX`).
///
/// Made once at start-up and read-only afterwards; OpenSSL allows sessions on any thread to
/// share a context then.
public final class TLSServerContext: @unchecked Sendable {
    let pointer: OpaquePointer

    /// TLS 1.2's suites: ECDHE key exchange (forward secrecy) with AEAD ciphers only, ECDSA
    /// first (the generated certificate is P-256), RSA for configured RSA certificates. TLS 1.3's
    /// suites are OpenSSL's defaults (all AEAD). Mozilla's "intermediate" list without DHE.
    static let tls12Ciphers = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    /// `chain`: the server's certificate first, then the intermediates to send with it.
    public init(chain: [Certificate], key: PrivateKey) throws(CryptoError) {
        guard let leaf = chain.first else { throw CryptoError("SSL_CTX_use_certificate", reason: "no certificate") }
        pointer = try CryptoError.check(SSL_CTX_new(TLS_server_method()), "SSL_CTX_new")
        try CryptoError.check(tmm_ssl_ctx_set_protocol_range(pointer), "SSL_CTX_set_min/max_proto_version")
        tmm_ssl_ctx_set_server_options(pointer)
        tmm_ssl_ctx_set_partial_writes(pointer)
        tmm_ssl_ctx_select_http11(pointer)
        try CryptoError.check(SSL_CTX_set_cipher_list(pointer, Self.tls12Ciphers), "SSL_CTX_set_cipher_list")
        try CryptoError.check(SSL_CTX_use_certificate(pointer, leaf.pointer), "SSL_CTX_use_certificate")
        for intermediate in chain.dropFirst() {
            try CryptoError.check(tmm_ssl_ctx_add_chain_certificate(pointer, intermediate.pointer), "SSL_CTX_add1_chain_cert")
        }
        try CryptoError.check(SSL_CTX_use_PrivateKey(pointer, key.pointer), "SSL_CTX_use_PrivateKey")
        try CryptoError.check(SSL_CTX_check_private_key(pointer), "SSL_CTX_check_private_key")
    }

    deinit { SSL_CTX_free(pointer) }
}

/// One client's TLS session over memory buffers: the socket's bytes go in with `receive`, the
/// plaintext comes out of `readPlaintext`; plaintext goes in with `writePlaintext` and the
/// bytes for the socket come out of `takeOutput`. OpenSSL never touches the socket, so nothing
/// here blocks: a handshake simply progresses as records arrive (swift-nio-ssl's shape).
///
/// Loop-confined: one session belongs to one connection on one thread.
public final class TLSServerSession {
    private let ssl: OpaquePointer
    /// Network → OpenSSL (ciphertext the client sent) and OpenSSL → network.
    private let incoming: OpaquePointer
    private let outgoing: OpaquePointer
    /// The context stays alive as long as a session uses it.
    private let context: TLSServerContext

    /// A read's outcome.
    public enum ReadResult: Equatable {
        /// `count` plaintext bytes were appended.
        case bytes(Int)
        /// OpenSSL needs more bytes from the client (mid-record, or mid-handshake).
        case needsInput
        /// The client sent close_notify: no more plaintext will come.
        case closed
    }

    /// A failure of the session (a bad record, a refused handshake): fatal for the connection.
    /// The text comes from OpenSSL's error queue ("wrong version number", "no shared cipher").
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    public init(context: TLSServerContext) throws(CryptoError) {
        self.context = context
        ssl = try CryptoError.check(SSL_new(context.pointer), "SSL_new")
        guard let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw CryptoError.current("BIO_new")
        }
        self.incoming = incoming
        self.outgoing = outgoing
        // The session takes both BIOs (freed with it). An empty incoming BIO reads as "retry",
        // which OpenSSL reports as SSL_ERROR_WANT_READ: needs input.
        SSL_set_bio(ssl, incoming, outgoing)
        SSL_set_accept_state(ssl)
    }

    deinit { SSL_free(ssl) }

    /// Hands OpenSSL bytes read from the socket.
    public func receive(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        // A memory BIO grows as needed; it only fails when memory does.
        let written = BIO_write(incoming, base, CInt(bytes.count))
        precondition(written == CInt(bytes.count), "BIO_write on a memory BIO failed")
    }

    /// Runs the handshake as far as the received bytes allow, then reads up to `buffer.count`
    /// bytes of plaintext (one record's worth at most) to its start.
    public func readPlaintext(into buffer: UnsafeMutableRawBufferPointer) throws(Failure) -> ReadResult {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .needsInput }
        var count = 0
        // SSL_get_error reads the thread's error queue: an entry left by any earlier OpenSSL call
        // on this thread would turn "needs input" into a failure (SSL_get_error(3)).
        ERR_clear_error()
        let result = SSL_read_ex(ssl, base, buffer.count, &count)
        if result == 1 { return .bytes(count) }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            // WANT_WRITE: the handshake wrote a flight; the caller takes it with takeOutput.
            return .needsInput
        case SSL_ERROR_ZERO_RETURN:
            return .closed
        default:
            throw failure()
        }
    }

    /// `readPlaintext(into:)`, appending up to `maxCount` bytes to `buffer` (straight into its
    /// spare capacity: nothing is zero-filled first).
    public func readPlaintext(appendingTo buffer: inout [UInt8], maxCount: Int) throws(Failure) -> ReadResult {
        var outcome: Result<ReadResult, Failure> = .success(.needsInput)
        buffer.append(addingCapacity: maxCount) { output in
            output.withUnsafeMutableBufferPointer { spare, initialized in
                do throws(Failure) {
                    let result = try readPlaintext(into: UnsafeMutableRawBufferPointer(spare))
                    if case .bytes(let count) = result { initialized = count }
                    outcome = .success(result)
                } catch {
                    outcome = .failure(error)
                }
            }
        }
        return try outcome.get()
    }

    /// Encrypts what it can of `bytes` (up to one record's worth per call is fine); returns how
    /// many plaintext bytes it took (0 before the handshake is done).
    public func writePlaintext(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        var written = 0
        ERR_clear_error()  // as in readPlaintext
        let result = SSL_write_ex(ssl, base, bytes.count, &written)
        if result == 1 { return written }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return 0
        default:
            throw failure()
        }
    }

    /// Bytes OpenSSL has for the socket (handshake flights, records, alerts).
    public var pendingOutputCount: Int { Int(tmm_bio_pending(outgoing)) }

    /// Moves up to `maxCount` of the bytes for the socket into `buffer` (appended).
    public func takeOutput(appendingTo buffer: inout [UInt8], maxCount: Int = .max) {
        let count = min(pendingOutputCount, maxCount)
        guard count > 0 else { return }
        // Straight into the array's spare capacity: nothing is zero-filled first (every record
        // of every wss client passes here).
        buffer.append(addingCapacity: count) { output in
            output.withUnsafeMutableBufferPointer { spare, initialized in
                initialized = max(0, Int(BIO_read(outgoing, spare.baseAddress, CInt(count))))
            }
        }
    }

    /// Queues close_notify (taken with `takeOutput`). The peer's own close_notify is not
    /// awaited: the connection closes after ours is flushed (RFC 8446 §6.1 allows it).
    public func close() {
        guard SSL_is_init_finished(ssl) == 1 else { return }
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// The handshake is complete.
    public var isEstablished: Bool { SSL_is_init_finished(ssl) == 1 }


    /// `TLSv1.3`, `TLSv1.2` once established.
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// The ALPN protocol agreed (`http/1.1`), nil when the client offered none.
    public var applicationProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The host name the client asked for with SNI, if any (accepted whatever it is: the
    /// bridge has one certificate; a client that checks names checks them itself).
    public var serverName: String? {
        guard let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) else { return nil }
        return String(cString: name)
    }

    private func failure() -> Failure {
        let error = CryptoError.current("TLS")
        return Failure(reason: error.detail.isEmpty ? "connection error" : error.detail)
    }
}
