import BridgeCore
import Posix
import TMMProtocol

// The control socket (ControlProtocol): registration requests handed over by `tmm-bridge open`,
// and status requests from `tmm-bridge status` (answered at once from `daemonStatus()`).
//
// A registration is handed to the registrations (Registrations: BridgeCore's RegistrationDesk),
// which answer it here once its registry file is written; a status request is answered at once
// with the document the server assembles. The socket is bounded: at most `maxClients` at once
// (the oldest idle one gives way), each for at most `clientLifetime`.

/// One control-socket client: a request line being read, then the reply.
final class ControlClient {
    let socket: SocketConnection
    /// How the desk names it (replies to it go by this number).
    let desk: RegistrationDesk.Client
    var input: [UInt8] = []
    let openedAt: Int64
    /// Set once its request is answered later (a registration waiting for the registry file):
    /// nothing more is read from it.
    var awaitingReply = false
    /// The part of its reply the socket did not take yet (a status document larger than the
    /// socket's buffer, or a client that reads slowly), sent when it is writable again.
    var unsentReply: ArraySlice<UInt8> = []

    init(socket: consuming SocketConnection, desk: RegistrationDesk.Client, now: Int64) {
        self.socket = socket
        self.desk = desk
        openedAt = now
    }
}

@available(*, unavailable, message: "control clients belong to the io thread")
extension ControlClient: Sendable {}

/// The control socket's listener and clients. Loop-confined.
final class ControlServer {
    /// Control-socket clients at once; a new one beyond this replaces the oldest (idle) one.
    static let maxClients = 16
    /// How long a control client may stay (a real one is answered in one turn of the loop, or
    /// when its registration is on disk).
    static let clientLifetime: Int64 = 10_000_000_000

    let listener: UnixListener
    private var clients: [CInt: ControlClient] = [:]
    /// The number the next client gets (`RegistrationDesk.Client`).
    private var nextClientNumber: UInt64 = 0
    /// Clients closed to make room for a new one.
    private(set) var evicted = 0
    private unowned let loop: EventLoop
    private let shortage: DescriptorShortage
    /// A registration URL from a client (the registrations answer with `reply(_:to:)`), and the
    /// status document as JSON; the server wires both.
    var open: (String, RegistrationDesk.Client) -> Void = { _, _ in }
    var status: () -> String = { "{}" }

    /// Opens the socket at `path` (mode 0660).
    init(path: String, loop: EventLoop, shortage: DescriptorShortage) throws(ListenerError) {
        listener = try UnixListener.bind(path: path, mode: 0o660)
        self.loop = loop
        self.shortage = shortage
    }

    /// Watches the listener (the loop runs).
    func start() throws(Errno) {
        try loop.register(listener.descriptor.rawValue, interest: .readable) { [unowned self] _ in accept() }
    }

    private func accept() {
        for _ in 0..<Self.maxClients {
            let result: AcceptResult
            do {
                result = try listener.accept()
            } catch {
                // EMFILE: refuse with the spare descriptor (or pause), as the TCP listeners do.
                if shortage.acceptFailed(error, listener: listener.descriptor.rawValue) { continue }
                return
            }
            switch consume result {
            case .wouldBlock:
                return
            case .accepted(let socket):
                // Bounded: the oldest client gives way. A real client (`tmm-bridge open`) sends its
                // line at once and is answered in the same turn of the loop, so only idle ones are
                // ever evicted, and idle ones cannot lock `open` out for their 10 s.
                if clients.count >= Self.maxClients,
                    let oldest = clients.min(by: { $0.value.openedAt < $1.value.openedAt })?.key
                {
                    evicted += 1
                    close(oldest)
                }
                nextClientNumber += 1
                let client = ControlClient(
                    socket: socket, desk: RegistrationDesk.Client(number: nextClientNumber),
                    now: monotonicNanoseconds())
                let fd = client.socket.descriptor.rawValue
                do {
                    try loop.register(fd, interest: .readable) { [unowned self] event in clientEvent(event) }
                } catch {
                    continue
                }
                clients[fd] = client
            }
        }
    }

    private func clientEvent(_ event: SelectorEvent) {
        guard let client = clients[event.descriptor] else { return }
        if !client.unsentReply.isEmpty {
            if event.isHangUp || event.isError { close(event.descriptor) } else { sendReply(to: event.descriptor) }
            return
        }
        if client.awaitingReply {
            // Its line is read: only a hang-up or an error can come now. The registration goes
            // on (it is written, and the app can still use it); there is no one left to tell.
            if event.isHangUp || event.isError { close(event.descriptor) }
            return
        }
        let result: IOResult
        do {
            result = try client.socket.read(
                appendingTo: &client.input,
                maxCount: ControlProtocol.readLimit(buffered: client.input.count))
        } catch {
            close(event.descriptor)
            return
        }
        switch result {
        case .wouldBlock: return
        case .processed(0):
            close(event.descriptor)
            return
        case .processed: break
        }
        switch ControlProtocol.readRequestLine(client.input) {
        case .needMore:
            return
        case .request(.open(let url)):
            open(url, client.desk)
            // Not answered yet (and so still here): a registration waiting for the file.
            if clients[event.descriptor] != nil { client.awaitingReply = true }
        case .request(.status):
            reply(.status(json: status()), to: event.descriptor)
        case .refused(let reply):
            self.reply(reply, to: event.descriptor)
        }
    }

    /// The registrations' answer for the client the desk calls `deskClient`, if it is still here.
    func reply(_ reply: ControlProtocol.Reply, to deskClient: RegistrationDesk.Client) {
        guard let fd = clients.first(where: { $0.value.desk == deskClient })?.key else { return }
        self.reply(reply, to: fd)
    }

    /// Sends `reply` to a control client and closes it once the whole line is written.
    private func reply(_ reply: ControlProtocol.Reply, to fd: CInt) {
        guard let client = clients[fd] else { return }
        client.unsentReply = ArraySlice(ControlProtocol.formatReply(reply).utf8)
        sendReply(to: fd)
    }

    /// Writes what the socket takes of the client's unsent reply; closes the client when it is
    /// all written (or the client is gone), else waits for the socket to be writable. A short
    /// line fits a fresh unix socket's buffer at once; a status document usually does too.
    private func sendReply(to fd: CInt) {
        guard let client = clients[fd] else { return }
        while !client.unsentReply.isEmpty {
            let result: IOResult
            do {
                result = try client.unsentReply.withUnsafeBytes { bytes throws(Errno) in try client.socket.write(bytes)
                }
            } catch {
                close(fd)
                return
            }
            guard case .processed(let count) = result, count > 0 else {
                // Full: the rest when the client has read some (the 10 s limit still applies).
                if (try? loop.modify(fd, interest: .writable)) == nil { close(fd) }
                return
            }
            client.unsentReply = client.unsentReply.dropFirst(count)
        }
        close(fd)
    }

    /// Every tick: clients past their lifetime are closed.
    func tick(now: Int64) {
        for (fd, client) in clients where now - client.openedAt > Self.clientLifetime { close(fd) }
    }

    private func close(_ fd: CInt) {
        try? loop.deregister(fd)
        clients[fd] = nil
    }

    /// The server stops.
    func closeAll() {
        for fd in Array(clients.keys) { close(fd) }
    }
}

@available(*, unavailable, message: "it belongs to the io thread")
extension ControlServer: Sendable {}
