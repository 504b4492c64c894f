import COpenSSL

/// What a TLS client trusts and offers: TLS 1.2 and 1.3, the peer's chain verified against
/// `trusting` (the daemon's local CA for the benchmarks), ALPN `http/1.1` (an `SSL_CTX` in
/// client mode).
///
/// Client-only: the bridge never connects out over TLS. It exists so that benchmarks and tests
/// can speak wss to the secure ports without a second TLS stack in the harness. Made once and
/// read-only afterwards, like `TLSServerContext`.
public final class TLSClientContext: @unchecked Sendable {
    let pointer: OpaquePointer

    /// `trusting`: the certificate authorities a server's chain must lead to (at least one).
    public init(trusting authorities: [Certificate]) throws(CryptoError) {
        guard !authorities.isEmpty else { throw CryptoError("X509_STORE_add_cert", reason: "no certificate authority") }
        pointer = try CryptoError.check(SSL_CTX_new(TLS_client_method()), "SSL_CTX_new")
        try CryptoError.check(tmm_ssl_ctx_set_protocol_range(pointer), "SSL_CTX_set_min/max_proto_version")
        tmm_ssl_ctx_set_partial_writes(pointer)
        let store = SSL_CTX_get_cert_store(pointer)
        for authority in authorities {
            try CryptoError.check(X509_STORE_add_cert(store, authority.pointer), "X509_STORE_add_cert")
        }
        SSL_CTX_set_verify(pointer, SSL_VERIFY_PEER, nil)
        // ALPN wire format: a length byte, then the name (RFC 7301 §3.1). Returns 0 on success.
        let http11: [UInt8] = [8] + Array("http/1.1".utf8)
        guard SSL_CTX_set_alpn_protos(pointer, http11, CUnsignedInt(http11.count)) == 0 else {
            throw CryptoError.current("SSL_CTX_set_alpn_protos")
        }
    }

    deinit { SSL_CTX_free(pointer) }
}

/// One TLS client session over memory buffers, the mirror of `TLSServerSession`: `start()`
/// makes the ClientHello, the socket's bytes go in with `receive`, plaintext comes out of
/// `readPlaintext`; plaintext goes in with `writePlaintext`; whatever OpenSSL has for the socket
/// comes out of `takeOutput`. OpenSSL never touches the socket.
///
/// Loop-confined: one session belongs to one connection on one thread.
public final class TLSClientSession {
    private let ssl: OpaquePointer
    private let incoming: OpaquePointer
    private let outgoing: OpaquePointer
    private let context: TLSClientContext

    /// A read's outcome (the server session's).
    public typealias ReadResult = TLSServerSession.ReadResult
    /// A failure of the session: a refused chain ("certificate verify failed: ..."), a bad
    /// record, an alert from the server. Fatal for the connection.
    public typealias Failure = TLSServerSession.Failure

    /// - Parameters:
    ///   - serverName: the name the certificate must carry: a DNS name (also sent as SNI) or an
    ///     IP address (matched against the certificate's IP SANs; no SNI, RFC 6066 §3).
    public init(context: TLSClientContext, serverName: String) throws(CryptoError) {
        self.context = context
        ssl = try CryptoError.check(SSL_new(context.pointer), "SSL_new")
        guard let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw CryptoError.current("BIO_new")
        }
        self.incoming = incoming
        self.outgoing = outgoing
        SSL_set_bio(ssl, incoming, outgoing)
        SSL_set_connect_state(ssl)
        // X509_VERIFY_PARAM_set1_ip_asc fails on anything that is not an address: then a name.
        if X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) != 1 {
            ERR_clear_error()
            guard SSL_set1_host(ssl, serverName) == 1, tmm_ssl_set_server_name(ssl, serverName) == 1 else {
                let error = CryptoError.current("SSL_set1_host")
                SSL_free(ssl)
                throw error
            }
        }
    }

    deinit { SSL_free(ssl) }

    /// Begins the handshake: the ClientHello is then waiting in `takeOutput`.
    public func start() throws(Failure) {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return
        default: throw failure()
        }
    }

    /// Hands OpenSSL bytes read from the socket.
    public func receive(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let written = BIO_write(incoming, base, CInt(bytes.count))
        precondition(written == CInt(bytes.count), "BIO_write on a memory BIO failed")
    }

    /// Runs the handshake as far as the received bytes allow, then reads up to `buffer.count`
    /// bytes of plaintext (one record's worth at most) to its start.
    public func readPlaintext(into buffer: UnsafeMutableRawBufferPointer) throws(Failure) -> ReadResult {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .needsInput }
        var count = 0
        ERR_clear_error()  // SSL_get_error reads the thread's queue (see TLSServerSession)
        let result = SSL_read_ex(ssl, base, buffer.count, &count)
        if result == 1 { return .bytes(count) }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .needsInput
        case SSL_ERROR_ZERO_RETURN: return .closed
        default: throw failure()
        }
    }

    /// Encrypts what it can of `bytes`; returns how many plaintext bytes it took (0 before the
    /// handshake is done).
    public func writePlaintext(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        var written = 0
        ERR_clear_error()
        let result = SSL_write_ex(ssl, base, bytes.count, &written)
        if result == 1 { return written }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return 0
        default: throw failure()
        }
    }

    /// Bytes OpenSSL has for the socket.
    public var pendingOutputCount: Int { Int(tmm_bio_pending(outgoing)) }

    /// Moves the bytes for the socket into `buffer` (appended).
    public func takeOutput(appendingTo buffer: inout [UInt8]) {
        let count = pendingOutputCount
        guard count > 0 else { return }
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: count))
        let read = buffer.withUnsafeMutableBytes { raw in BIO_read(outgoing, raw.baseAddress! + start, CInt(count)) }
        buffer.removeLast(count - max(0, Int(read)))
    }

    /// Queues close_notify (taken with `takeOutput`).
    public func close() {
        guard SSL_is_init_finished(ssl) == 1 else { return }
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// The handshake is complete (and the server's chain and name were accepted).
    public var isEstablished: Bool { SSL_is_init_finished(ssl) == 1 }

    /// `TLSv1.3`, `TLSv1.2` once established.
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// The ALPN protocol the server chose, nil when none.
    public var applicationProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    private func failure() -> Failure {
        let error = CryptoError.current("TLS")
        var reason = error.detail.isEmpty ? "connection error" : error.detail
        // The queue says only "certificate verify failed"; the verifier says why.
        let verify = SSL_get_verify_result(ssl)
        if verify != X509_V_OK { reason += ": " + String(cString: X509_verify_cert_error_string(verify)) }
        return Failure(reason: reason)
    }
}

@available(*, unavailable, message: "a session belongs to one connection on one thread")
extension TLSClientSession: Sendable {}
