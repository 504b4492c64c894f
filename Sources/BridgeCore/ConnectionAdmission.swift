import TMMProtocol

/// Which new client connections the servers take. Every port shares one limit; the location ports
/// (V1 and V2, before and after the upgrade) together keep out of a reserve only REST may use, so
/// WebSocket clients, which need no access code, never lock out the API. The limit itself stays
/// within what the open-file limit leaves: every client costs a descriptor, and a full table would
/// make accept fail with EMFILE for every listener, the control socket and the registry file.
/// TLS handshakes in progress are counted apart, by the memory each may hold until it completes:
/// within the handshake memory, a new secure connection is taken; beyond it, the oldest handshake
/// in progress gives way to it (the server closes that one first), so a flood of stalled
/// handshakes costs a bounded amount of memory and cannot lock the secure ports either.
public struct ConnectionAdmission: Sendable {
    /// Descriptors kept free of clients for everything else: listeners (up to 12), reserved ports,
    /// epoll, timers, eventfds, the signalfd, gpsd and udev, a private gpsd's pipes, the
    /// registry's temporary file and directory, the spare.
    public static let descriptorHeadroom = 64

    /// The limit in force: `max-connections` as the open-file limit allows.
    public private(set) var maxConnections: Int
    /// What the location ports may hold together: `maxConnections` minus the REST reserve.
    public private(set) var locationBudget: Int
    /// Open connections, all ports, and those of the REST port.
    public private(set) var open = 0
    public private(set) var openREST = 0

    /// The most one TLS handshake in progress holds, measured (docs/security.md, "TLS under
    /// load"): 69 KB resident each with 400 stalled ClientHellos at their limit
    /// (`HandshakeInputLimit` in Sources/TLS): OpenSSL's session, its handshake buffer (which
    /// starts at 16 KiB whatever the hello), its record buffer (a record's worth, kept while a
    /// record is incomplete), the input BIO and the connection's own state; with some margin.
    public static let handshakeCost = 80 * 1024
    /// Handshakes in progress at once: the handshake memory over `handshakeCost` (at least one).
    public private(set) var maxHandshakes = 1
    /// TLS connections accepted whose handshake is not done yet.
    public private(set) var handshakes = 0

    /// `configured` connections (`max-connections`), lowered to what `openFileLimit` (nil: none)
    /// leaves once the headroom and `otherClients` (the control socket's) are set aside;
    /// `handshakeMemory` bytes for TLS handshakes in progress.
    public init(
        configured: Int, openFileLimit: Int?, otherClients: Int,
        handshakeMemory: Int = ServerLimits().tlsHandshakeMemory
    ) {
        maxConnections = 1
        locationBudget = 0
        reconfigure(
            configured: configured, openFileLimit: openFileLimit, otherClients: otherClients,
            handshakeMemory: handshakeMemory)
    }

    /// A new `max-connections` (a reload), clamped as at start. Connections open now stay open
    /// when it is lowered below them; new ones wait until enough have closed.
    public mutating func reconfigure(
        configured: Int, openFileLimit: Int?, otherClients: Int,
        handshakeMemory: Int = ServerLimits().tlsHandshakeMemory
    ) {
        let available = openFileLimit.map { $0 - Self.descriptorHeadroom - otherClients } ?? Int.max
        maxConnections = max(1, min(configured, available))
        locationBudget = maxConnections - Self.restReserve(maxConnections)
        maxHandshakes = max(1, handshakeMemory / Self.handshakeCost)
    }

    /// A new secure connection's handshake would go beyond the handshake memory: the oldest
    /// handshake in progress must give way first.
    public var handshakesFull: Bool { handshakes >= maxHandshakes }

    /// A TLS connection was taken; its handshake is in progress.
    public mutating func handshakeStarted() { handshakes += 1 }

    /// A handshake completed, failed, or its connection closed.
    public mutating func handshakeEnded() { handshakes -= 1 }

    /// Slots only REST connections may take: an eighth of the limit (at least one when the limit
    /// is over one).
    public static func restReserve(_ maxConnections: Int) -> Int { maxConnections > 1 ? max(1, maxConnections / 8) : 0 }

    /// Whether a new connection on `server`'s port fits.
    public func hasRoom(for server: TMMServer) -> Bool {
        guard open < maxConnections else { return false }
        return server.plain == .api || open - openREST < locationBudget
    }

    /// A connection on `server`'s port was taken.
    public mutating func admitted(_ server: TMMServer) {
        open += 1
        if server.plain == .api { openREST += 1 }
    }

    /// A connection on `server`'s port closed.
    public mutating func released(_ server: TMMServer) {
        open -= 1
        if server.plain == .api { openREST -= 1 }
    }
}
