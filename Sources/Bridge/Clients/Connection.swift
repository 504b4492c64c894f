import BridgeCore
import Posix
import TMMProtocol

/// One accepted client socket: its transport, and the state machine that decides everything
/// else (BridgeCore's `ClientConnection`). Loop-confined: created, used and dropped on the io
/// thread; the socket closes when the object goes away.
final class Connection {
    /// The client's bytes pass through this (see Transport.swift); the socket closes with it.
    let transport: any Transport
    /// When the connection is read, answered, upgraded and closed.
    var machine: ClientConnection
    /// The hub list it is in (`.subscribe`), and its index there; -1 while not subscribed.
    var hubChannel: ClientChannel?
    var hubSlot = -1
    /// When it was accepted (a TLS handshake must finish within `tlsHandshakeTimeout` of it).
    let acceptedAt: Int64
    /// Who is behind it, once asked (`BridgeServer.peer(of:)`).
    var peer: ClientPeer?
    /// What the selector watches now (see `BridgeServer.updateSelectorInterest`).
    var selectorInterest: SelectorInterest = .readable
    /// A TLS connection whose handshake is in progress (counted by the admission).
    var isHandshaking = false
    /// Its handshake input waits in the server's handshake queue (not read meanwhile).
    var awaitsHandshakeTurn = false

    init(transport: any Transport, server: TMMServer, settings: ClientConnection.Settings, now: Int64) {
        self.transport = transport
        acceptedAt = now
        machine = ClientConnection(server: server, settings: settings, now: now)
    }

    var fd: CInt { transport.descriptor }
    var server: TMMServer { machine.server }
}

@available(*, unavailable, message: "a connection belongs to the io thread")
extension Connection: Sendable {}
