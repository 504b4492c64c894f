import Posix

// The seam between a client's socket and the server's logic: every byte a connection reads or
// writes passes through its `Transport`, as a handler sits between the channel and the protocol
// in swift-nio. `PlainTransport` passes them as they are (the plain ports, today every port);
// the secure ports' TLS transport puts OpenSSL in between, with memory BIOs: its reads
// may yield no plaintext (a handshake record), and it may have bytes of its own to write
// (`hasPendingOutput`), so the loop asks for writability on its behalf. Neither ever blocks.

/// A connection's byte layer. Loop-confined, like the connection that owns it.
protocol Transport: AnyObject {
    /// The socket's descriptor (what the selector watches).
    var descriptor: CInt { get }

    /// Appends up to `maxCount` bytes for the server to `buffer`: `.processed(0)` when the client
    /// closed, `.wouldBlock` when nothing is there (yet).
    func read(appendingTo buffer: inout [UInt8], maxCount: Int) throws(Errno) -> IOResult

    /// Reads into `buffer` from its start (a shared scratch buffer), as `read(appendingTo:)`.
    func read(into buffer: inout [UInt8]) throws(Errno) -> IOResult

    /// Takes what it can of `bytes[offset...]`: `.processed(n)` for the bytes taken (the rest is
    /// offered again when the socket is writable), `.wouldBlock` for none.
    func write(_ bytes: [UInt8], from offset: Int) throws(Errno) -> IOResult

    /// Bytes of its own still to go out (a handshake, a close notification): the loop keeps
    /// watching writability and calls `flushPending` until this is false.
    var hasPendingOutput: Bool { get }
    func flushPending() throws(Errno)

    /// No more output from the server: end the write side (after any pending output).
    func shutdownWrite()

    /// The connection is about to close: a last word of the transport's own, if the socket
    /// takes it at once (TLS: close_notify). Never blocks.
    func prepareToClose()

    /// Bytes of its own wait that the client does not take (TLS: replies it provoked): the
    /// server stops reading the connection until they are written.
    var isOutputBacklogged: Bool { get }

    /// Input already taken off the socket and not yet returned (TLS: records OpenSSL holds).
    /// The selector cannot report it, so the server reads again while this is true.
    var hasBufferedInput: Bool { get }

    /// Whether the transport's own set-up is done (TLS: the handshake), so requests may come.
    var isEstablished: Bool { get }

    /// Why the transport failed, once a read or write threw for a reason of its own (TLS: a
    /// refused handshake, a bad record), for the server's count and log; nil for socket errors.
    var failureReason: String? { get }
}

/// The plain transport: the socket's bytes as they are.
final class PlainTransport: Transport {
    private let socket: SocketConnection

    init(_ socket: consuming SocketConnection) {
        self.socket = socket
    }

    var descriptor: CInt { socket.descriptor.rawValue }

    func read(appendingTo buffer: inout [UInt8], maxCount: Int) throws(Errno) -> IOResult {
        try socket.read(appendingTo: &buffer, maxCount: maxCount)
    }

    func read(into buffer: inout [UInt8]) throws(Errno) -> IOResult {
        let result: Result<IOResult, Errno> = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(Errno) -> IOResult in try socket.read(into: raw) }
        }
        return try result.get()
    }

    func write(_ bytes: [UInt8], from offset: Int) throws(Errno) -> IOResult {
        try socket.write(bytes, from: offset)
    }

    var hasPendingOutput: Bool { false }
    func flushPending() throws(Errno) {}
    var hasBufferedInput: Bool { false }
    var isOutputBacklogged: Bool { false }
    var isEstablished: Bool { true }
    var failureReason: String? { nil }

    func shutdownWrite() { socket.shutdownWrite() }
    func prepareToClose() {}
}
