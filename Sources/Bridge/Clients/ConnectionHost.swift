import BridgeCore
import InputLoop
import Posix
import TLS
import TMMProtocol
import WebSocket

/// The server as a connection sees it (BridgeCore's ClientConnectionHost): read-only questions,
/// each answered by the part that owns the answer.
struct ConnectionHost: ClientConnectionHost {
    unowned let servers: ClientServers
    /// The connection asking (its peer shares Access Code V2's ledger and decryptions).
    let connection: Connection

    private var parts: ClientServers.Parts { servers.parts }

    func httpDate() -> String { servers.httpDate() }
    var ports: PortAssignment { parts.ports }
    var version: String { parts.version }
    var receiverInfo: ReceiverInfo { parts.input.receiverInfo }
    var isLocationV2Unlocked: Bool { parts.registrations.isLocationV2Unlocked }
    var locationV2Broadcast: LocationV2Broadcast { parts.outputs.locationV2.broadcast }
    var hasRegisteredApplications: Bool { !parts.registrations.registry.entries.isEmpty }
    func verifyAccessCode(headerValue: String) -> GUID? {
        parts.registrations.verifyAccessCode(headerValue: headerValue)
    }
    func verifyAccessCodeV2(
        headerValue: String, overTLS: Bool, consume: Bool
    ) -> Result<GUID, AccessCodeV2Verifier.Refusal> {
        parts.registrations.verifyAccessCodeV2(
            headerValue: headerValue, overTLS: overTLS, consume: consume,
            peer: servers.peer(of: connection))
    }
    var accessCodeV2PublicKey: (n: String, e: String) { parts.secure.accessCodeV2PublicKey }
    var deviceSettings: DeviceSettings { parts.settings.settings }
    var correctionsState: DaemonStatus.Corrections? { parts.corrections.status(now: monotonicNanoseconds()) }
    func dashboardFile(_ path: String) -> StaticFile? { DashboardAssets.byPath[path] }
    func sha1(_ bytes: Span<UInt8>) -> WebSocketHandshake.SHA1Digest { Digest.sha1(bytes) }

    func reply(toDataMessage message: WebSocketMessage, on channel: ClientChannel) -> [UInt8]? {
        parts.dataMessageReply?(message)
    }

    func dashboardHello(_ message: WebSocketMessage) -> DashboardHello.Verdict {
        DashboardHello.verdict(
            message, fromLoopback: servers.peer(of: connection).isThisMachine,
            tokenDigest: servers.dashboardTokenDigest, sha256: Digest.sha256)
    }

    func statusEventFrame() -> [UInt8] {
        let input = parts.input
        let status = BridgeStatus(
            input: input.state, receiver: input.receiverInfo,
            quality: parts.outputs.locationV2.quality.current)
        let bytes = BridgeEventEncoder.bytes(.status(status), unixMilliseconds: wallClockMilliseconds())
        return WebSocketFrame.text(bytes.span)
    }
}

extension ClientServers {
    func host(for connection: Connection) -> ConnectionHost { ConnectionHost(servers: self, connection: connection) }

    /// Who is behind `connection`: asked of the kernel once, when it first presents an Access
    /// Code V2 (ClientPeer says what the answer means).
    func peer(of connection: Connection) -> ClientPeer {
        if let known = connection.peer { return known }
        let peer: ClientPeer
        do {
            let client = try tcpClientIdentity(of: connection.fd)
            peer = ClientPeer(owner: client.owner, address: client.address, isLoopback: client.isLoopback)
        } catch {
            // Not connected any more (getpeername failed): it cannot be answered anyway.
            peer = .localUnattributed
        }
        connection.peer = peer
        return peer
    }
}
