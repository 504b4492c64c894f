import TMMProtocol

/// Which new client connections the servers take. Every port shares one limit; the location ports
/// (V1 and V2, before and after the upgrade) together keep out of a reserve only REST may use, so
/// WebSocket clients, which need no access code, never lock out the API. The limit itself stays
/// within what the open-file limit leaves: every client costs a descriptor, and a full table would
/// make accept fail with EMFILE for every listener, the control socket and the registry file.
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

    /// `configured` connections (`max-connections`), lowered to what `openFileLimit` (nil: none)
    /// leaves once the headroom and `otherClients` (the control socket's) are set aside.
    public init(configured: Int, openFileLimit: Int?, otherClients: Int) {
        maxConnections = 1
        locationBudget = 0
        reconfigure(configured: configured, openFileLimit: openFileLimit, otherClients: otherClients)
    }

    /// A new `max-connections` (a reload), clamped as at start. Connections open now stay open
    /// when it is lowered below them; new ones wait until enough have closed.
    public mutating func reconfigure(configured: Int, openFileLimit: Int?, otherClients: Int) {
        let available = openFileLimit.map { $0 - Self.descriptorHeadroom - otherClients } ?? Int.max
        maxConnections = max(1, min(configured, available))
        locationBudget = maxConnections - Self.restReserve(maxConnections)
    }

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
