import ByteCoding

// The operator dashboard's options (docs/dashboard.md): `dashboard = on|off`, `dashboard-token`,
// `dashboard-listen`. The page and its socket are served on the REST ports (`apiPort` and its TLS
// twin), where every server listens (loopback unless `listen` says otherwise); `dashboard-listen`
// adds addresses that answer the dashboard and nothing else, for a phone or laptop beside the box.
// A page connecting from another machine must give `dashboard-token` (DashboardHello), so
// `dashboard-listen` without a token is refused at start.

/// The dashboard's configuration.
public struct DashboardConfiguration: Sendable, Equatable {
    /// The shortest token accepted: 16 characters (about 95 bits when random printable ASCII).
    public static let minimumTokenLength = 16

    /// `dashboard = on` (the default) or `off`: the page, its files and its socket answer 404.
    public var isOn = true
    /// What a page connecting from another machine must give (nil: other machines are refused).
    public var token: String?
    /// Extra listeners that serve only the dashboard (`dashboard-listen`, repeatable).
    public var listen: [DashboardListenAddress] = []

    public init() {}
}

/// One `dashboard-listen` value: a numeric address and a port, `ADDRESS:PORT` (`[v6]:PORT`).
public struct DashboardListenAddress: Sendable, Hashable, CustomStringConvertible {
    public var address: String
    public var port: UInt16

    public init(address: String, port: UInt16) {
        self.address = address
        self.port = port
    }

    /// `192.168.1.20:9641`, `[fe80::1]:9641`.
    public var description: String { URLAuthority.hostForURL(address) + ":\(port)" }
}
