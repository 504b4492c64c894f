import BridgeCore
import Posix
import TLS

/// The secure ports' transport: OpenSSL between the socket and the connection, through memory
/// buffers (`TLSServerSession`), so a handshake is just bytes in and bytes out and never blocks
/// the loop (swift-nio-ssl's handler, in this codebase's shape).
///
/// Reads: ciphertext from the socket goes into the session; what comes out is plaintext for the
/// server, or nothing yet (`.wouldBlock`: a handshake flight, half a record). The session's own
/// output (handshake flights, alerts, close_notify) is written at once and what the socket does
/// not take waits in `pendingCiphertext` (`hasPendingOutput`), ahead of any later record.
///
/// Writes: plaintext is taken a record's worth at a time; the records it becomes go to the
/// socket, and a remainder waits in `pendingCiphertext`. `.processed(n)` counts plaintext.
///
/// What a client can make the session send without asking for data (KeyUpdate replies, refused
/// renegotiations) is bounded twice: the records it sends for them are budgeted
/// (`keyUpdates`: a burst, then one a second; beyond, the session fails and the connection
/// closes), and once more than `outputBacklogLimit` of our own bytes wait for a client that does
/// not read, its input is left alone (`isOutputBacklogged`) until they are taken.
final class TLSTransport: Transport {
    private let socket: SocketConnection
    private let session: TLSServerSession
    /// Records (or handshake bytes) made but not yet taken by the socket.
    private var pendingCiphertext: [UInt8] = []
    private var pendingStart = 0
    /// See `hasBufferedInput`.
    private var mayHoldPlaintext = false
    /// Records without plaintext the client may still send (KeyUpdates, renegotiation requests),
    /// and how many of the session's `controlRecords` were charged to it.
    private var keyUpdates: RateBudget
    private var controlRecordsCharged = 0
    /// Why the session failed (a refused handshake, a bad record), once it has.
    private(set) var failure: TLSServerSession.Failure?

    /// The largest TLS record's plaintext (RFC 8446 §5.1): one SSL_write per record, and one
    /// socket read's worth of ciphertext.
    static let recordSize = 16_384
    /// A socket read's worth before the handshake is done: a real ClientHello is 0.5-2 KiB, and
    /// OpenSSL's input buffer grows to the largest piece it was handed and keeps that size, so a
    /// stalled handshake holds 4 KiB of it rather than 16.
    static let handshakeReadSize = 4096
    /// Our own unsent bytes past which the client is not read: two records' worth, so an
    /// application record waiting for the socket never stops reading by itself (`write` adds
    /// none while one waits); only replies the client provokes and does not take do.
    static let outputBacklogLimit = 2 * recordSize

    /// `keyUpdateBurst`: KeyUpdates (and refused renegotiations) at once (`tlsKeyUpdateBurst`).
    init(_ socket: consuming SocketConnection, context: TLSServerContext, keyUpdateBurst: Int) throws(CryptoError) {
        self.socket = socket
        session = try TLSServerSession(context: context)
        keyUpdates = RateBudget(burst: keyUpdateBurst, refillInterval: 1_000_000_000)
    }

    var descriptor: CInt { socket.descriptor.rawValue }

    /// The handshake is done: the connection is ready for requests.
    var isEstablished: Bool { session.isEstablished }

    var failureReason: String? { failure?.reason }

    /// What the handshake agreed, for the log (`TLSv1.3 http/1.1`).
    var negotiated: String { "\(session.protocolVersion) \(session.applicationProtocol ?? "no ALPN")" }

    func read(appendingTo buffer: inout [UInt8], maxCount: Int) throws(Errno) -> IOResult {
        try buffer.appendReading(maxCount: maxCount) { spare throws(Errno) in
            let result = try read(into: spare)
            return (result.byteCount, result)
        }
    }

    func read(into buffer: inout [UInt8]) throws(Errno) -> IOResult {
        let reading: Result<IOResult, Errno> = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(Errno) -> IOResult in try read(into: raw) }
        }
        return try reading.get()
    }

    /// Plaintext into `destination` from its start: what OpenSSL already holds first (a record
    /// larger than the last read took), else one socket read's worth.
    private func read(into destination: UnsafeMutableRawBufferPointer) throws(Errno) -> IOResult {
        if let ready = try decrypt(into: destination) { return ready }
        // Our replies are not being taken: the socket is left alone (the client's bytes wait in
        // the kernel, which bounds them) until they are.
        if isOutputBacklogged { return .wouldBlock }
        // The ciphertext is copied into the session at once, so it is read on the stack rather
        // than into a buffer each connection would keep.
        let size = session.isEstablished ? Self.recordSize : Self.handshakeReadSize
        let reading: Result<IOResult, Errno> = withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { raw in
            Result { () throws(Errno) -> IOResult in
                let received = try socket.read(into: raw)
                if case .processed(let count) = received, count > 0 {
                    session.receive(UnsafeRawBufferPointer(rebasing: raw[0..<count]))
                }
                return received
            }
        }
        let received = try reading.get()
        guard case .processed(let count) = received else { return .wouldBlock }
        if count == 0 { return .processed(0) }  // the client closed (without close_notify)
        let result = try decrypt(into: destination)
        // A handshake flight or a KeyUpdate answer: out at once, before any reply.
        try flushPending()
        return result ?? .wouldBlock
    }

    /// Plaintext out of the session into `destination`: `.processed(n)` for bytes,
    /// `.processed(0)` at the client's close_notify, nil when it needs more input. One SSL_read
    /// returns one record's plaintext and a socket read can bring several (a PUT's head and
    /// body), so it reads until OpenSSL needs input or `destination` is full; full means there
    /// may be more (`hasBufferedInput`); it also stops, the rest left in OpenSSL, when our own
    /// output backs up. A KeyUpdate or renegotiation request beyond the budget fails the
    /// session. A session failure is logged by the server (from `failure`) and ends the
    /// connection as EPROTO.
    private func decrypt(into destination: UnsafeMutableRawBufferPointer) throws(Errno) -> IOResult? {
        var total = 0
        mayHoldPlaintext = false
        do throws(TLSServerSession.Failure) {
            while total < destination.count {
                if isOutputBacklogged {
                    mayHoldPlaintext = true
                    return total > 0 ? .processed(total) : nil
                }
                let result = try session.readPlaintext(
                    into: UnsafeMutableRawBufferPointer(rebasing: destination[total...]))
                try chargeControlRecords()
                switch result {
                case .bytes(let count): total += count
                case .closed: return .processed(total)
                case .needsInput: return total > 0 ? .processed(total) : nil
                case .handledRecord: continue
                }
            }
            mayHoldPlaintext = true
            return .processed(total)
        } catch {
            failure = error
            try? flushPending()  // the alert that tells the client why
            throw Errno.protocolError
        }
    }

    /// The records without plaintext the client sent since the last read, against the budget
    /// (one per read: the session stops after each).
    private func chargeControlRecords() throws(TLSServerSession.Failure) {
        let now = monotonicNanoseconds()
        while controlRecordsCharged < session.controlRecords {
            controlRecordsCharged += 1
            if keyUpdates.spend(now: now) > 0 {
                throw TLSServerSession.Failure(
                    reason:
                        "the client sent KeyUpdates or renegotiation requests faster than \(keyUpdates.burst) "
                        + "at once and one a second"
                )
            }
        }
    }

    func write(_ bytes: [UInt8], from offset: Int) throws(Errno) -> IOResult {
        try flushPending()
        // Records queue behind the ones the socket has not taken; and nothing can be written
        // before the handshake is done (the server only answers requests, which come after it).
        guard !hasPendingOutput, session.isEstablished else { return .wouldBlock }
        let end = min(bytes.count, offset + Self.recordSize)
        let writing: Result<Int, TLSServerSession.Failure> = bytes.withUnsafeBytes { raw in
            Result { () throws(TLSServerSession.Failure) -> Int in
                try session.writePlaintext(UnsafeRawBufferPointer(rebasing: raw[offset..<end]))
            }
        }
        let taken: Int
        switch writing {
        case .success(let count): taken = count
        case .failure(let error):
            failure = error
            throw Errno.protocolError
        }
        try flushPending()
        return taken == 0 ? .wouldBlock : .processed(taken)
    }

    var hasPendingOutput: Bool { pendingStart < pendingCiphertext.count || session.pendingOutputCount > 0 }

    /// More of our own bytes wait than `outputBacklogLimit`: the client is not read meanwhile.
    var isOutputBacklogged: Bool {
        pendingCiphertext.count - pendingStart + session.pendingOutputCount > Self.outputBacklogLimit
    }

    /// The last read filled its buffer: OpenSSL may hold more plaintext, which the socket will
    /// not signal.
    var hasBufferedInput: Bool { mayHoldPlaintext }

    func flushPending() throws(Errno) {
        if pendingStart == pendingCiphertext.count {
            pendingCiphertext.removeAll(keepingCapacity: true)
            pendingStart = 0
        }
        session.takeOutput(appendingTo: &pendingCiphertext)
        while pendingStart < pendingCiphertext.count {
            switch try socket.write(pendingCiphertext, from: pendingStart) {
            case .processed(let count): pendingStart += count
            case .wouldBlock: return
            }
        }
        pendingCiphertext.removeAll(keepingCapacity: true)
        pendingStart = 0
    }

    /// close_notify before the descriptor closes (an idle timeout, the server stopping, a policy
    /// close after the handshake), so the client can tell the end from a truncation: queued
    /// behind what is pending and written only if the socket takes it now. Nothing after a
    /// session failure (OpenSSL's alert said it) or before the handshake is done.
    func prepareToClose() {
        guard failure == nil else { return }
        session.close()
        try? flushPending()
    }

    func shutdownWrite() {
        // close_notify, so the client knows the response was not truncated; then FIN. A socket
        // too full for the alert just gets the FIN (the connection is ending either way).
        session.close()
        try? flushPending()
        socket.shutdownWrite()
    }
}
