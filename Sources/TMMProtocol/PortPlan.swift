/// The six TMM servers, in the order of the iOS Register reply (§8.1).
public enum TMMServer: Int, CaseIterable, Sendable, Hashable {
    case location, locationSecure, api, apiSecure, locationV2, locationV2Secure

    /// The key that names this server's port in Register replies, `tmmSocketServerPort` and tmmInfo.
    public var registrationKey: String {
        switch self {
        case .location: "locationPort"
        case .locationSecure: "locationSecurePort"
        case .api: "apiPort"
        case .apiSecure: "apiSecurePort"
        case .locationV2: "locationV2Port"
        case .locationV2Secure: "locationV2SecurePort"
        }
    }

    /// TMM's default port (§2.2): 9635...9640.
    public var defaultPort: UInt16 { UInt16(9635 + rawValue) }

    /// The TLS twins (wss, https, §7).
    public var isSecure: Bool { self == .locationSecure || self == .apiSecure || self == .locationV2Secure }

    /// What a server serves: the plain server whose handlers its TLS twin shares.
    public var plain: TMMServer {
        switch self {
        case .locationSecure: .location
        case .apiSecure: .api
        case .locationV2Secure: .locationV2
        default: self
        }
    }

    /// Key order of the iOS JSON reply (§8.1) and of tmmInfo.
    public static let iOSOrder: [TMMServer] = [
        .location, .locationSecure, .api, .apiSecure, .locationV2, .locationV2Secure,
    ]
    /// Key order of the Windows query reply (§8.2).
    public static let windowsOrder: [TMMServer] = [
        .api, .apiSecure, .location, .locationSecure, .locationV2, .locationV2Secure,
    ]
}

/// One port per server.
public struct PortAssignment: Equatable, Hashable, Sendable {
    public var location: UInt16
    public var locationSecure: UInt16
    public var api: UInt16
    public var apiSecure: UInt16
    public var locationV2: UInt16
    public var locationV2Secure: UInt16

    public init(
        location: UInt16, locationSecure: UInt16, api: UInt16, apiSecure: UInt16, locationV2: UInt16,
        locationV2Secure: UInt16
    ) {
        self.location = location
        self.locationSecure = locationSecure
        self.api = api
        self.apiSecure = apiSecure
        self.locationV2 = locationV2
        self.locationV2Secure = locationV2Secure
    }

    /// TMM's defaults, 9635...9640.
    public static let defaults = PortAssignment(
        location: 9635, locationSecure: 9636, api: 9637, apiSecure: 9638,
        locationV2: 9639, locationV2Secure: 9640)

    public subscript(server: TMMServer) -> UInt16 {
        get {
            switch server {
            case .location: location
            case .locationSecure: locationSecure
            case .api: api
            case .apiSecure: apiSecure
            case .locationV2: locationV2
            case .locationV2Secure: locationV2Secure
            }
        }
        set {
            switch server {
            case .location: location = newValue
            case .locationSecure: locationSecure = newValue
            case .api: api = newValue
            case .apiSecure: apiSecure = newValue
            case .locationV2: locationV2 = newValue
            case .locationV2Secure: locationV2Secure = newValue
            }
        }
    }
}

/// A configuration the port plan refuses.
public enum PortPlanError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A base port or the fallback start is 0 (ephemeral ports could not be reported before binding).
    case zeroPort(String)
    /// Two servers were given the same base port.
    case duplicateBasePort(UInt16)
    /// The fallback range is empty (`fallbackStart > fallbackEnd`).
    case emptyFallbackRange(start: UInt16, end: UInt16)

    public var description: String {
        switch self {
        case .zeroPort(let what): "port plan: \(what) must not be 0"
        case .duplicateBasePort(let port): "port plan: base port \(port) is configured for two servers"
        case .emptyFallbackRange(let start, let end): "port plan: fallback range \(start)-\(end) is empty"
        }
    }
}

/// Which port each of the six servers listens on (§2.3): its base port (TMM default unless
/// configured), else the next free port counting up from the fallback start (9650), skipping ports
/// that are another server's base port, that another server holds or tries, or that already failed.
///
/// Driven step by step by the binder, one server at a time or interleaved:
///
/// ```
/// var plan = try PortPlan()
/// for server in TMMServer.allCases {
///     while let port = plan.candidate(for: server) {
///         if bind(port) { plan.bound(server); break } else { plan.failed(server) }
///     }
/// }
/// let ports = plan.assignment   // non-nil once all six are bound
/// ```
///
/// Once a server is bound its port never changes (`failed` is then ignored), so the plan is stable
/// for the life of the process. `resolve(isFree:)` runs the same loop over a predicate.
public struct PortPlan: Sendable {
    public struct Configuration: Equatable, Sendable {
        public var basePorts: PortAssignment
        public var fallbackStart: UInt16
        public var fallbackEnd: UInt16

        public init(basePorts: PortAssignment = .defaults, fallbackStart: UInt16 = 9650, fallbackEnd: UInt16 = 65535) {
            self.basePorts = basePorts
            self.fallbackStart = fallbackStart
            self.fallbackEnd = fallbackEnd
        }
    }

    private enum State: Equatable, Sendable {
        case trying(UInt16)
        case bound(UInt16)
        case exhausted
    }

    public let configuration: Configuration
    private var states: [State]
    /// Ports that failed to bind for any server (not retried by the fallback scan).
    private var busy: Set<UInt16> = []

    public init(configuration: Configuration = Configuration()) throws(PortPlanError) {
        var seen: Set<UInt16> = []
        for server in TMMServer.allCases {
            let port = configuration.basePorts[server]
            if port == 0 { throw .zeroPort(server.registrationKey) }
            if !seen.insert(port).inserted { throw .duplicateBasePort(port) }
        }
        if configuration.fallbackStart == 0 { throw .zeroPort("fallback start") }
        if configuration.fallbackStart > configuration.fallbackEnd {
            throw .emptyFallbackRange(start: configuration.fallbackStart, end: configuration.fallbackEnd)
        }
        self.configuration = configuration
        states = TMMServer.allCases.map { .trying(configuration.basePorts[$0]) }
    }

    /// The port `server` should try now (its base port first), its port once bound, or nil when the
    /// fallback range is exhausted.
    public func candidate(for server: TMMServer) -> UInt16? {
        switch states[server.rawValue] {
        case .trying(let port), .bound(let port): port
        case .exhausted: nil
        }
    }

    /// Records that `server` is listening on its candidate; from now on its port is fixed.
    public mutating func bound(_ server: TMMServer) {
        if case .trying(let port) = states[server.rawValue] { states[server.rawValue] = .bound(port) }
    }

    /// Records that binding `server`'s candidate failed and moves it to the next free fallback port.
    /// Returns the new candidate (nil when exhausted). Ignored for a bound server.
    @discardableResult
    public mutating func failed(_ server: TMMServer) -> UInt16? {
        guard case .trying(let port) = states[server.rawValue] else { return candidate(for: server) }
        busy.insert(port)
        states[server.rawValue] = nextFallback(for: server).map { .trying($0) } ?? .exhausted
        return candidate(for: server)
    }

    /// True when `server` is bound.
    public func isBound(_ server: TMMServer) -> Bool {
        if case .bound = states[server.rawValue] { return true }
        return false
    }

    /// The final ports, once all six servers are bound.
    public var assignment: PortAssignment? {
        var result = configuration.basePorts
        for server in TMMServer.allCases {
            guard case .bound(let port) = states[server.rawValue] else { return nil }
            result[server] = port
        }
        return result
    }

    /// The lowest port from the fallback start that is not busy, not another server's base port and
    /// not held or tried by another server.
    private func nextFallback(for server: TMMServer) -> UInt16? {
        var taken = busy
        for other in TMMServer.allCases where other != server {
            taken.insert(configuration.basePorts[other])
            switch states[other.rawValue] {
            case .trying(let port), .bound(let port): taken.insert(port)
            case .exhausted: break
            }
        }
        var port = configuration.fallbackStart
        while true {
            if !taken.contains(port) { return port }
            if port == configuration.fallbackEnd { return nil }
            port += 1
        }
    }

    /// Runs the stepwise plan over `isFree` (servers in `TMMServer.allCases` order); nil when some
    /// server finds no free port.
    public static func resolve(
        configuration: Configuration = Configuration(),
        isFree: (UInt16) -> Bool
    ) throws(PortPlanError) -> PortAssignment? {
        var plan = try PortPlan(configuration: configuration)
        for server in TMMServer.allCases {
            while let port = plan.candidate(for: server) {
                if isFree(port) {
                    plan.bound(server)
                    break
                }
                plan.failed(server)
            }
        }
        return plan.assignment
    }
}
