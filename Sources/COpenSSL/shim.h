#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

// OpenSSL spells several calls as function-like macros over SSL_CTX_ctrl/BIO_ctrl, and its
// option bits as 64-bit shifted constants; Swift imports neither. These inline functions give
// them one typed name each (and nothing else lives here: the logic is in Sources/TLS).

/// TLS 1.2 and 1.3 only.
static inline int tmm_ssl_ctx_set_protocol_range(SSL_CTX *ctx) {
    return SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)
        && SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
}

/// No renegotiation (a client-initiated renegotiation costs the server a handshake per request),
/// no TLS compression (CRIME), a fresh ECDHE key per handshake.
static inline void tmm_ssl_ctx_set_server_options(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_SINGLE_ECDH_USE);
}

/// SSL_write may take part of a buffer, and the rest may be offered again from another address.
static inline void tmm_ssl_ctx_set_partial_writes(SSL_CTX *ctx) {
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER
                            | SSL_MODE_RELEASE_BUFFERS);
}

/// A server's SSL_read handles at most one record that holds no application data (a KeyUpdate,
/// a refused renegotiation) and then returns "want read" while more input waits, instead of
/// working through every such record the peer sent (AUTO_RETRY): the caller can count them and
/// stop reading a peer that sends thousands (TLSTransport's budget).
static inline void tmm_ssl_ctx_one_record_per_read(SSL_CTX *ctx) {
    SSL_CTX_clear_mode(ctx, SSL_MODE_AUTO_RETRY);
}

/// Adds a certificate to the chain sent after the leaf (the context takes its own reference).
static inline int tmm_ssl_ctx_add_chain_certificate(SSL_CTX *ctx, X509 *certificate) {
    return (int)SSL_CTX_add1_chain_cert(ctx, certificate);
}

/// ALPN (RFC 7301): the servers speak HTTP/1.1 only. A client that offers ALPN without
/// `http/1.1` (h2 only) gets the fatal no_application_protocol alert the RFC requires, rather
/// than a handshake after which it would send an HTTP/2 preface we cannot read.
static int tmm_select_http11(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                             const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl;
    (void)arg;
    static const unsigned char http11[] = "\x08http/1.1";
    unsigned char *selected = NULL;
    if (SSL_select_next_proto(&selected, outlen, http11, sizeof http11 - 1, in, inlen)
        != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

static inline void tmm_ssl_ctx_select_http11(SSL_CTX *ctx) {
    SSL_CTX_set_alpn_select_cb(ctx, tmm_select_http11, NULL);
}

/// The pointer a session's message callback (SSL_set_msg_callback) is handed.
static inline void tmm_ssl_set_msg_callback_arg(SSL *ssl, void *arg) {
    SSL_set_msg_callback_arg(ssl, arg);
}

/// SNI (RFC 6066 §3) for a client session: the host name it asks for.
static inline int tmm_ssl_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// Bytes waiting in a memory BIO.
static inline size_t tmm_bio_pending(BIO *bio) { return BIO_ctrl_pending(bio); }

/// RSA-OAEP with SHA-256 as both the label hash and MGF1's hash, empty label: the padding the
/// TMM samples use for Access Code V2 (.NET OaepSHA256, Java OAEPWithSHA-256AndMGF1Padding with
/// MGF1-SHA256, Apple rsaEncryptionOAEPSHA256, Node oaepHash sha256).
static inline int tmm_pkey_ctx_set_oaep_sha256(EVP_PKEY_CTX *ctx) {
    return EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0
        && EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) > 0
        && EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) > 0;
}

/// True when the error queue's last entry is PEM's "no start line": the end of a PEM file
/// rather than a malformed block.
static inline int tmm_error_is_pem_end(unsigned long code) {
    return ERR_GET_LIB(code) == ERR_LIB_PEM && ERR_GET_REASON(code) == PEM_R_NO_START_LINE;
}
