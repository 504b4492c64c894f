import Posix
import TLS

// The byte layer between the corrections client and an NTRIP caster: a TCP socket the io loop
// opened without waiting (Posix's OutboundConnection), and for `ntrips://` an OpenSSL client
// session on memory BIOs in between, as the secure ports' TLSTransport does for servers. It never
// blocks: what the socket does not take now waits here (bounded: the request and GGA sentences
// only) and goes out when the loop reports the socket writable.

/// One connection to a caster. Loop-confined; the socket closes when it goes away.
final class CasterLink {
    private let socket: SocketConnection
    private let session: TLSClientSession?
    /// Bytes (ciphertext when over TLS) the socket has not taken yet.
    private var pending: [UInt8] = []
    private var pendingStart = 0
    /// Plaintext written before the TLS handshake finished: sent when it has.
    private var heldPlaintext: [UInt8] = []

    /// The most of our own bytes that may wait for a caster that does not read: a request and a
    /// few GGA sentences are far less; more means the caster is not reading (closed by the caller).
    static let pendingLimit = 64 * 1024
    /// One socket read: a TLS record's worth.
    static let readSize = 16_384

    init(
        _ socket: consuming SocketConnection, tls: (context: TLSClientContext, serverName: String)?
    ) throws(CryptoError) {
        self.socket = socket
        if let tls {
            let session = try TLSClientSession(context: tls.context, serverName: tls.serverName)
            self.session = session
        } else {
            session = nil
        }
    }

    var descriptor: CInt { socket.descriptor.rawValue }

    /// The TLS handshake is done (always true without TLS).
    var isEstablished: Bool { session?.isEstablished ?? true }

    /// Our own bytes wait for the socket: the loop watches writability until this is false.
    var hasPendingOutput: Bool { pendingStart < pending.count || (session?.pendingOutputCount ?? 0) > 0 }

    /// Begins the TLS handshake (the ClientHello goes out when the socket takes it).
    func start() throws(TLSSession.Failure) {
        guard let session else { return }
        try session.start()
        try? flush()
    }

    /// Queues `bytes` (a request, a GGA sentence) and writes what the socket takes now.
    /// Throws `.protocolError` when the caster has left more than `pendingLimit` unread.
    func send(_ bytes: [UInt8]) throws(Errno) {
        if let session {
            guard session.isEstablished else {
                heldPlaintext += bytes
                return
            }
            let written: Result<Int, TLSSession.Failure> = bytes.withUnsafeBytes { raw in
                Result { () throws(TLSSession.Failure) -> Int in try session.writePlaintext(raw) }
            }
            guard case .success = written else { throw .protocolError }
        } else {
            pending += bytes
        }
        guard pending.count - pendingStart <= Self.pendingLimit else { throw .protocolError }
        try flush()
    }

    /// Writes what waits, as far as the socket takes it.
    func flush() throws(Errno) {
        if let session {
            session.takeOutput(appendingTo: &pending)
            if session.isEstablished && !heldPlaintext.isEmpty {
                let held = heldPlaintext
                heldPlaintext = []
                try send(held)
                return
            }
        }
        while pendingStart < pending.count {
            switch try socket.write(pending, from: pendingStart) {
            case .processed(let count): pendingStart += count
            case .wouldBlock: return
            }
        }
        pending.removeAll(keepingCapacity: true)
        pendingStart = 0
    }

    /// What arrived, in plaintext: the bytes appended to `buffer` and `.processed(n)`,
    /// `.processed(0)` when the caster closed, `.wouldBlock` when nothing (or only handshake
    /// records) came. A TLS failure throws `.protocolError`; `failureReason` says why.
    func read(into buffer: inout [UInt8]) throws(Errno) -> IOResult {
        guard let session else { return try socket.read(appendingTo: &buffer, maxCount: Self.readSize) }
        var ciphertext: [UInt8] = []
        let received = try socket.read(appendingTo: &ciphertext, maxCount: Self.readSize)
        if case .processed(0) = received { return received }
        if !ciphertext.isEmpty { ciphertext.withUnsafeBytes { session.receive($0) } }
        var total = 0
        readLoop: while true {
            let before = buffer.count
            let result: Result<TLSSession.ReadResult, TLSSession.Failure> = Result {
                () throws(TLSSession.Failure) -> TLSSession.ReadResult in
                try session.readPlaintext(appendingTo: &buffer, maxCount: Self.readSize)
            }
            switch result {
            case .failure(let error):
                failureReason = error.reason
                throw .protocolError
            case .success(.bytes): total += buffer.count - before
            case .success(.closed): return total > 0 ? .processed(total) : .processed(0)
            case .success(.needsInput): break readLoop
            case .success(.handledRecord): continue
            }
        }
        // Handshake flights and the held request go out as soon as there is something to send.
        try flush()
        return total > 0 ? .processed(total) : .wouldBlock
    }

    /// Why TLS failed (a certificate the trust store does not vouch for, a bad record).
    private(set) var failureReason: String?

    /// close_notify if the socket takes it now; the descriptor closes with the object.
    func close() {
        session?.close()
        try? flush()
    }
}

@available(*, unavailable, message: "a caster link belongs to the io thread")
extension CasterLink: Sendable {}
