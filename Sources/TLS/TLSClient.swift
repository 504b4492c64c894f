import COpenSSL

/// What a TLS client trusts and offers: TLS 1.2 and 1.3, the peer's chain verified against
/// `trusting` (the daemon's local CA for the benchmarks), ALPN `http/1.1` (an `SSL_CTX` in
/// client mode).
///
/// Two uses: the benchmarks and tests speak wss to the secure ports with it (no second TLS
/// stack in the harness), and the corrections client reaches NTRIP casters on TLS (`ntrips://`)
/// with it. Made once and read-only afterwards, like `TLSServerContext`.
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

    /// For a server on the Internet (an NTRIP caster): the system's trust store (OpenSSL's default
    /// paths, /etc/ssl/certs on Debian) plus the certificates in `authorityFile` if given (PEM, a
    /// private caster's CA); no ALPN (NTRIP is not negotiated).
    public init(systemTrustAnd authorityFile: String?) throws(CryptoError) {
        pointer = try CryptoError.check(SSL_CTX_new(TLS_client_method()), "SSL_CTX_new")
        try CryptoError.check(tmm_ssl_ctx_set_protocol_range(pointer), "SSL_CTX_set_min/max_proto_version")
        tmm_ssl_ctx_set_partial_writes(pointer)
        guard SSL_CTX_set_default_verify_paths(pointer) == 1 else {
            throw CryptoError.current("SSL_CTX_set_default_verify_paths")
        }
        if let authorityFile {
            guard SSL_CTX_load_verify_locations(pointer, authorityFile, nil) == 1 else {
                throw CryptoError.current("SSL_CTX_load_verify_locations(\(authorityFile))")
            }
        }
        SSL_CTX_set_verify(pointer, SSL_VERIFY_PEER, nil)
    }

    deinit { SSL_CTX_free(pointer) }
}

/// The client end of a TLS session (see `TLSSession`), for wss clients and NTRIP casters: made in
/// connect state with the name the server's certificate must carry; `start()` makes the
/// ClientHello.
public final class TLSClientSession: TLSSession {
    private let context: TLSClientContext

    /// - Parameters:
    ///   - serverName: the name the certificate must carry: a DNS name (also sent as SNI) or an
    ///     IP address (matched against the certificate's IP SANs; no SNI, RFC 6066 §3).
    public init(context: TLSClientContext, serverName: String) throws(CryptoError) {
        self.context = context
        try super.init(context: context.pointer) { ssl throws(CryptoError) in
            SSL_set_connect_state(ssl)
            // X509_VERIFY_PARAM_set1_ip_asc fails on anything that is not an address: then a name.
            if X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) != 1 {
                ERR_clear_error()
                guard SSL_set1_host(ssl, serverName) == 1, tmm_ssl_set_server_name(ssl, serverName) == 1 else {
                    throw CryptoError.current("SSL_set1_host")
                }
            }
        }
    }

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

    /// Sends a TLS 1.3 KeyUpdate asking the server to update its keys too (RFC 8446 §4.6.3); the
    /// record is then waiting in `takeOutput`. For tests of what a server does with many.
    public func requestKeyUpdate() throws(Failure) {
        ERR_clear_error()
        guard SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) == 1 else { throw failure() }
        let result = SSL_do_handshake(ssl)
        if result == 1 { return }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return
        default: throw failure()
        }
    }

    /// The queue says only "certificate verify failed"; the verifier says why.
    override func failure() -> Failure {
        var reason = super.failure().reason
        let verify = SSL_get_verify_result(ssl)
        if verify != X509_V_OK { reason += ": " + String(cString: X509_verify_cert_error_string(verify)) }
        return Failure(reason: reason)
    }
}
