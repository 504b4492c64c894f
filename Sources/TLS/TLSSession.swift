import COpenSSL
import Posix

/// A TLS session over memory buffers, either end: the socket's bytes go in with `receive`, the
/// plaintext comes out of `readPlaintext`; plaintext goes in with `writePlaintext` and the
/// bytes for the socket come out of `takeOutput`. OpenSSL never touches the socket, so nothing
/// here blocks: a handshake simply progresses as records arrive (swift-nio-ssl's shape). The
/// ends differ only in how they are made (`TLSServerSession`, `TLSClientSession`).
///
/// Loop-confined: one session belongs to one connection on one thread.
public class TLSSession {
    let ssl: OpaquePointer
    /// Network → OpenSSL (ciphertext the peer sent) and OpenSSL → network.
    private let incoming: OpaquePointer
    private let outgoing: OpaquePointer
    /// A server's bound on what the client may send before the handshake is done (nil for a
    /// client session, and once the handshake is done).
    var handshakeInputLimit: HandshakeInputLimit?
    /// Why `receive` refused the peer's bytes; the next read throws it.
    private var refusal: Failure?
    /// OpenSSL failed the session (a fatal alert went out): it must not send close_notify now.
    private var hasFailed = false

    /// A read's outcome.
    public enum ReadResult: Equatable {
        /// `count` plaintext bytes were appended.
        case bytes(Int)
        /// OpenSSL needs more bytes from the peer (mid-record, or mid-handshake).
        case needsInput
        /// The peer sent close_notify: no more plaintext will come.
        case closed
        /// A record without plaintext was handled (a post-handshake KeyUpdate, a refused
        /// renegotiation: `controlRecords` counts them) and more input may wait: read again.
        /// Only a server session returns it: its context handles one such record per read, so
        /// the caller can budget them and stop between two.
        case handledRecord
    }

    /// A failure of the session (a bad record, a refused handshake or chain, an alert from the
    /// peer): fatal for the connection. The text comes from OpenSSL's error queue ("wrong version
    /// number", "no shared cipher").
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }

        public init(reason: String) { self.reason = reason }
    }

    /// A session on `context` (an `SSL_CTX`), which it keeps alive; `configure` sets the end
    /// (accept or connect state, names) before any byte moves, and frees nothing on failure.
    init(context: OpaquePointer, _ configure: (OpaquePointer) throws(CryptoError) -> Void) throws(CryptoError) {
        ssl = try CryptoError.check(SSL_new(context), "SSL_new")
        guard let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw CryptoError.current("BIO_new")
        }
        self.incoming = incoming
        self.outgoing = outgoing
        // The session takes both BIOs (freed with it). An empty incoming BIO reads as "retry",
        // which OpenSSL reports as SSL_ERROR_WANT_READ: needs input.
        SSL_set_bio(ssl, incoming, outgoing)
        do {
            try configure(ssl)
        } catch {
            SSL_free(ssl)
            throw error
        }
    }

    deinit { SSL_free(ssl) }

    /// Hands OpenSSL bytes read from the socket. A server session refuses bytes beyond its
    /// handshake limits (`HandshakeInputLimit`): they are dropped and the next read fails.
    public func receive(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty, refusal == nil else { return }
        if var limit = handshakeInputLimit {
            if isEstablished {
                handshakeInputLimit = nil
            } else {
                if let reason = limit.admit(bytes, negotiatedTLS12: SSL_version(ssl) == TLS1_2_VERSION) {
                    refusal = Failure(reason: reason)
                    return
                }
                handshakeInputLimit = limit
            }
        }
        // A memory BIO grows as needed; it only fails when memory does.
        let written = BIO_write(incoming, base, CInt(bytes.count))
        precondition(written == CInt(bytes.count), "BIO_write on a memory BIO failed")
    }

    /// Runs the handshake as far as the received bytes allow, then reads up to `buffer.count`
    /// bytes of plaintext (one record's worth at most) to its start.
    public func readPlaintext(into buffer: UnsafeMutableRawBufferPointer) throws(Failure) -> ReadResult {
        if let refusal {
            hasFailed = true
            throw refusal
        }
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .needsInput }
        var retriedWithoutInput = false
        while true {
            var count = 0
            let waiting = tmm_bio_pending(incoming)
            let handled = controlRecords
            // SSL_get_error reads the thread's error queue: an entry left by any earlier OpenSSL
            // call on this thread would turn "needs input" into a failure (SSL_get_error(3)).
            ERR_clear_error()
            let result = SSL_read_ex(ssl, base, buffer.count, &count)
            if result == 1 { return .bytes(count) }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                // WANT_WRITE: the handshake wrote a flight; the caller takes it with takeOutput.
                // A server's read also stops after each record without plaintext, saying "want
                // read" with more input waiting, in the BIO or already inside OpenSSL (after a
                // KeyUpdate it reads the next record before it returns); and it may give that
                // answer once without taking input, finishing its own post-handshake work, and
                // return the waiting record the time after. So it reads again while input is
                // taken, and once more after that while input waits: every second try takes
                // input, so this ends. A counted record goes back to the caller first.
                if controlRecords != handled { return .handledRecord }
                let left = tmm_bio_pending(incoming)
                if left < waiting {
                    retriedWithoutInput = false
                } else if left == 0 || retriedWithoutInput {
                    return .needsInput
                } else {
                    retriedWithoutInput = true
                }
            case SSL_ERROR_ZERO_RETURN:
                return .closed
            default:
                hasFailed = true
                throw failure()
            }
        }
    }

    /// Records without application data the peer sent after the handshake (KeyUpdates,
    /// renegotiation requests, alerts): a server session counts them, a client does not.
    public var controlRecords: Int { 0 }

    /// `readPlaintext(into:)`, appending up to `maxCount` bytes to `buffer` (straight into its
    /// spare capacity: nothing is zero-filled first).
    public func readPlaintext(appendingTo buffer: inout [UInt8], maxCount: Int) throws(Failure) -> ReadResult {
        try buffer.appendReading(maxCount: maxCount) { spare throws(Failure) in
            let result = try readPlaintext(into: spare)
            if case .bytes(let count) = result { return (count, result) }
            return (0, result)
        }
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
            hasFailed = true
            throw failure()
        }
    }

    /// Bytes OpenSSL has for the socket (handshake flights, records, alerts).
    public var pendingOutputCount: Int { Int(tmm_bio_pending(outgoing)) }

    /// Moves up to `maxCount` of the bytes for the socket into `buffer` (appended).
    public func takeOutput(appendingTo buffer: inout [UInt8], maxCount: Int = .max) {
        let count = min(pendingOutputCount, maxCount)
        guard count > 0 else { return }
        // Straight into the array's spare capacity (every record of every wss client passes here).
        buffer.appendReading(maxCount: count) { spare in
            (max(0, Int(BIO_read(outgoing, spare.baseAddress, CInt(count)))), ())
        }
    }

    /// Queues close_notify (taken with `takeOutput`), once, on an established session that has
    /// not failed (after a fatal alert OpenSSL must not send another). The peer's own
    /// close_notify is not awaited: the connection closes after ours is flushed (RFC 8446 §6.1
    /// allows it).
    public func close() {
        guard SSL_is_init_finished(ssl) == 1, !hasFailed, SSL_get_shutdown(ssl) & SSL_SENT_SHUTDOWN == 0 else { return }
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// The handshake is complete.
    public var isEstablished: Bool { SSL_is_init_finished(ssl) == 1 }

    /// `TLSv1.3`, `TLSv1.2` once established.
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// The ALPN protocol agreed (`http/1.1`), nil when none was.
    public var applicationProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The failure on OpenSSL's queue now (a client session adds the verifier's reason).
    func failure() -> Failure {
        let error = CryptoError.current("TLS")
        return Failure(reason: error.detail.isEmpty ? "connection error" : error.detail)
    }
}

@available(*, unavailable, message: "a session belongs to one connection on one thread")
extension TLSSession: Sendable {}
