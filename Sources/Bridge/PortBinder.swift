import BridgeCore
import Posix
import TMMProtocol

// Binds the six TMM servers on every listen address, following the port plan (TMM-API.md §2.3):
// each server tries its port; if any address has it taken, the server moves to the next free
// port from 9650 up, so one port serves a server on every address and the plan stays the same
// for the life of the process. The three secure servers (wss, https) listen like the others;
// their connections get a TLS transport (BridgeServer.adopt).

/// One bound socket of a server (a class, so arrays can hold the non-copyable listener).
final class BoundSocket {
    let server: TMMServer
    let address: String
    let listener: TCPListener
    /// A `dashboard-listen` socket: plain HTTP answering the dashboard only (as `server`, `.api`).
    let dashboardOnly: Bool

    init(server: TMMServer, address: String, listener: consuming TCPListener, dashboardOnly: Bool = false) {
        self.server = server
        self.address = address
        self.listener = listener
        self.dashboardOnly = dashboardOnly
    }

    var descriptor: CInt { listener.descriptor.rawValue }
}

@available(*, unavailable, message: "listeners belong to the io thread")
extension BoundSocket: Sendable {}

enum PortBinder {
    struct Result {
        var ports: PortAssignment
        /// Listening sockets of every server, on every address.
        var listeners: [BoundSocket]
    }

    static func bind(configuration: BridgeConfiguration, log: Logger) throws(PortBindingError) -> Result {
        var plan: PortPlan
        do {
            plan = try PortPlan(configuration: configuration.portPlanConfiguration)
        } catch {
            throw .badPortPlan(error.description)
        }
        let configured = configuration.listenAddresses != nil
        var addresses = configuration.listenAddresses ?? BridgeConfiguration.defaultListenAddresses
        var listeners: [BoundSocket] = []

        for server in TMMServer.allCases {
            bindServer: while true {
                guard let port = plan.candidate(for: server) else {
                    throw .noFreePort(server: server, fallbackStart: configuration.fallbackStart)
                }
                var bound: [BoundSocket] = []
                for address in addresses {
                    do {
                        let listener = try TCPListener.bind(address: address, port: port, listening: true)
                        bound.append(BoundSocket(server: server, address: address, listener: listener))
                    } catch {
                        if error.isAddressInUse {
                            let next = plan.failed(server)
                            log.warning(
                                "\(server.registrationKey): port \(port) is busy on \(address); "
                                    + (next.map { "trying \($0)" } ?? "no port left"))
                            continue bindServer  // `bound` closes its sockets
                        }
                        let unavailable = error.isAddressUnavailable
                        if unavailable && !configured && addresses.count > 1 {
                            log.warning(
                                "\(address) is not available on this machine (\(error.errno)); listening without it")
                            addresses.removeAll { $0 == address }
                            continue bindServer
                        }
                        throw .cannotListen(error)
                    }
                }
                plan.bound(server)
                listeners += bound
                break
            }
        }
        guard let ports = plan.assignment else {
            preconditionFailure("every server was bound, so the plan is complete")
        }
        log("listening on " + addresses.joined(separator: " and "))
        // The dashboard's own addresses: a fixed port each, no fallback (a page's bookmark names it).
        for entry in configuration.dashboard.listen {
            do {
                let listener = try TCPListener.bind(address: entry.address, port: entry.port, listening: true)
                listeners.append(
                    BoundSocket(server: .api, address: entry.address, listener: listener, dashboardOnly: true))
            } catch {
                throw .cannotListen(error)
            }
            log("the dashboard also listens on \(entry) (dashboard-listen)")
        }
        return Result(ports: ports, listeners: listeners)
    }
}

/// Why the TMM servers could not be bound.
public enum PortBindingError: ExitStatusError, Sendable {
    /// The configured ports and fallback range do not make a plan (exit 78).
    case badPortPlan(String)
    /// Every candidate port of `server` is taken (exit 1: the machine, not the configuration).
    case noFreePort(server: TMMServer, fallbackStart: UInt16)
    /// A listen address cannot be bound (exit 78 when the address is not this machine's, 1 else).
    case cannotListen(ListenerError)

    public var exitStatus: ExitStatus {
        switch self {
        case .badPortPlan: .badConfiguration
        case .noFreePort: .failure
        case .cannotListen(let error): error.isAddressUnavailable ? .badConfiguration : .failure
        }
    }

    public var description: String {
        switch self {
        case .badPortPlan(let reason): reason
        case .noFreePort(let server, let fallbackStart):
            "no free port for \(server.registrationKey): \(server.defaultPort) "
                + "and every port from \(fallbackStart) up are taken"
        case .cannotListen(let error): "cannot listen: \(error)"
        }
    }
}
