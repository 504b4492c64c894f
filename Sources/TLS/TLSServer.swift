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
        tmm_ssl_ctx_one_record_per_read(pointer)
        tmm_ssl_ctx_select_http11(pointer)
        try CryptoError.check(SSL_CTX_set_cipher_list(pointer, Self.tls12Ciphers), "SSL_CTX_set_cipher_list")
        try CryptoError.check(SSL_CTX_use_certificate(pointer, leaf.pointer), "SSL_CTX_use_certificate")
        for intermediate in chain.dropFirst() {
            try CryptoError.check(
                tmm_ssl_ctx_add_chain_certificate(pointer, intermediate.pointer), "SSL_CTX_add1_chain_cert")
        }
        try CryptoError.check(SSL_CTX_use_PrivateKey(pointer, key.pointer), "SSL_CTX_use_PrivateKey")
        try CryptoError.check(SSL_CTX_check_private_key(pointer), "SSL_CTX_check_private_key")
    }

    deinit { SSL_CTX_free(pointer) }
}

/// The server end of a client's TLS session (see `TLSSession`): made in accept state on the
/// secure ports' context, with the bounds a client must keep to: `HandshakeInputLimit` before
/// the handshake is done, and `controlRecords` counted after it.
public final class TLSServerSession: TLSSession {
    /// The context stays alive as long as a session uses it.
    private let context: TLSServerContext
    /// What OpenSSL's message callback counts (`countControlRecords`); freed with the session.
    private let counter: UnsafeMutablePointer<ControlRecordCount>

    struct ControlRecordCount {
        /// The client's Finished came: the handshake is over for it.
        var afterHandshake = false
        var records = 0
    }

    public init(context: TLSServerContext) throws(CryptoError) {
        self.context = context
        let counter = UnsafeMutablePointer<ControlRecordCount>.allocate(capacity: 1)
        counter.initialize(to: ControlRecordCount())
        self.counter = counter
        do {
            try super.init(context: context.pointer) { ssl throws(CryptoError) in SSL_set_accept_state(ssl) }
        } catch {
            counter.deallocate()
            throw error
        }
        handshakeInputLimit = HandshakeInputLimit()
        SSL_set_msg_callback(ssl, countControlRecords)
        tmm_ssl_set_msg_callback_arg(ssl, counter)
    }

    deinit {
        // TLSSession's deinit frees the session after this one: nothing may reach the counter
        // through it by then.
        SSL_set_msg_callback(ssl, nil)
        counter.deinitialize(count: 1)
        counter.deallocate()
    }

    /// Records without application data the client sent after its Finished: KeyUpdates,
    /// renegotiation requests (TLS 1.2; refused), alerts. Each costs a key derivation or a reply,
    /// and with one such record handled per read (`handledRecord`) the caller can budget them.
    public override var controlRecords: Int { counter.pointee.records }

    /// The host name the client asked for with SNI, if any (accepted whatever it is: the
    /// bridge has one certificate; a client that checks names checks them itself).
    public var serverName: String? {
        guard let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) else { return nil }
        return String(cString: name)
    }
}

/// OpenSSL's message callback of a server session (`arg`: its `ControlRecordCount`): marks the
/// client's Finished, and counts every record the client sends after it whose content type is
/// not application data. TLS 1.3 hides the type: every record's header says application data
/// and the real one is reported as the inner content type, so both are looked at.
private func countControlRecords(
    writing: CInt, version: CInt, contentType: CInt, bytes: UnsafeRawPointer?, count: Int,
    ssl: OpaquePointer?, arg: UnsafeMutableRawPointer?
) {
    guard writing == 0, count > 0, let bytes, let arg else { return }
    let counter = arg.assumingMemoryBound(to: TLSServerSession.ControlRecordCount.self)
    let first = CInt(bytes.load(as: UInt8.self))
    switch contentType {
    case SSL3_RT_HANDSHAKE where first == SSL3_MT_FINISHED:
        counter.pointee.afterHandshake = true
    case SSL3_RT_HEADER, SSL3_RT_INNER_CONTENT_TYPE:
        if counter.pointee.afterHandshake && first != SSL3_RT_APPLICATION_DATA { counter.pointee.records += 1 }
    default:
        break
    }
}
