// The client session (used by the wss benchmark) against the server session, in memory: the test
// carries each side's output to the other, as two sockets would: the chain checked against the
// daemon's CA, the name (or address) checked, another CA refused, which is what the benchmark
// relies on. (Against independent servers it runs in `tmm-fanout --wss`.)
import TLS
import TestSupport
import Testing

@Suite("TLS client session (round trip with the server session in memory)", .tags(.unit))
struct TLSClientSessionTests {
    /// The daemon's default materials: a local CA and its server certificate.
    static let materials = Result { () throws -> (server: TLSServerContext, ca: Certificate) in
        let state = try Tools.temporaryDirectory("client")
        let loaded = try LocalCertificateAuthority.load(stateDirectory: state)
        let ca = try #require(loaded.chain.last)
        return (try TLSServerContext(chain: loaded.chain, key: loaded.key), ca)
    }

    /// Moves bytes between the two sessions until neither has output; returns the plaintext
    /// each received.
    private func shuttle(
        _ client: TLSClientSession, _ server: TLSServerSession
    ) throws -> (client: [UInt8], server: [UInt8]) {
        var toClient: [UInt8] = [], toServer: [UInt8] = []
        var atClient: [UInt8] = [], atServer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        for _ in 0..<20 {
            client.takeOutput(appendingTo: &toServer)
            if !toServer.isEmpty {
                toServer.withUnsafeBytes { server.receive($0) }
                toServer.removeAll()
            }
            while case .bytes(let count) = try buffer.withUnsafeMutableBytes({ try server.readPlaintext(into: $0) }) {
                atServer += buffer[0..<count]
            }
            server.takeOutput(appendingTo: &toClient)
            if !toClient.isEmpty {
                toClient.withUnsafeBytes { client.receive($0) }
                toClient.removeAll()
            }
            while case .bytes(let count) = try buffer.withUnsafeMutableBytes({ try client.readPlaintext(into: $0) }) {
                atClient += buffer[0..<count]
            }
            if client.pendingOutputCount == 0 && server.pendingOutputCount == 0 && client.isEstablished
                && server.isEstablished
            {
                break
            }
        }
        return (atClient, atServer)
    }

    @Test(arguments: ["127.0.0.1", "tmm-api-local.fieldsystems.trimble.com", "localhost"])
    func roundTrip(serverName: String) throws {
        let (serverContext, ca) = try Self.materials.get()
        let client = try TLSClientSession(context: try TLSClientContext(trusting: [ca]), serverName: serverName)
        let server = try TLSServerSession(context: serverContext)
        try client.start()
        #expect(client.pendingOutputCount > 0)  // the ClientHello
        _ = try shuttle(client, server)
        #expect(client.isEstablished && server.isEstablished)
        #expect(client.protocolVersion == "TLSv1.3")
        #expect(client.applicationProtocol == "http/1.1")
        #expect(server.applicationProtocol == "http/1.1")
        // SNI only for names, not for addresses (RFC 6066 §3).
        #expect(server.serverName == (serverName == "127.0.0.1" ? nil : serverName))

        let request = Array("GET /locationV2 HTTP/1.1\r\n\r\n".utf8)
        #expect(try request.withUnsafeBytes { try client.writePlaintext($0) } == request.count)
        let reply = [UInt8](repeating: 0x5A, count: 40_000)  // three records
        var offset = 0
        while offset < reply.count {
            let end = min(reply.count, offset + 16_384)
            offset += try reply[offset..<end].withUnsafeBytes { try server.writePlaintext($0) }
        }
        let received = try shuttle(client, server)
        #expect(received.server == request)
        #expect(received.client == reply)

        server.close()
        var buffer = [UInt8](repeating: 0, count: 100)
        var alert: [UInt8] = []
        server.takeOutput(appendingTo: &alert)
        alert.withUnsafeBytes { client.receive($0) }
        #expect(try buffer.withUnsafeMutableBytes { try client.readPlaintext(into: $0) } == .closed)
    }

    @Test func aChainFromAnotherAuthorityIsRefused() throws {
        let (serverContext, _) = try Self.materials.get()
        let other = try LocalCertificateAuthority.load(stateDirectory: try Tools.temporaryDirectory("other"))
        let client = try TLSClientSession(
            context: try TLSClientContext(trusting: [try #require(other.chain.last)]),
            serverName: "127.0.0.1")
        let server = try TLSServerSession(context: serverContext)
        try client.start()
        let error = #expect(throws: TLSClientSession.Failure.self) { _ = try shuttle(client, server) }
        #expect(error?.reason.contains("certificate verify failed") == true, "\(String(describing: error))")
        // The server sends its CA with the leaf: a root this client does not trust.
        #expect(
            error?.reason.contains("self-signed certificate in certificate chain") == true,
            "\(String(describing: error))")
        #expect(!client.isEstablished)
    }

    @Test func aNameTheCertificateDoesNotCarryIsRefused() throws {
        let (serverContext, ca) = try Self.materials.get()
        let context = try TLSClientContext(trusting: [ca])
        for name in ["10.1.2.3", "example.com"] {
            let client = try TLSClientSession(context: context, serverName: name)
            let server = try TLSServerSession(context: serverContext)
            try client.start()
            let error = #expect(throws: TLSClientSession.Failure.self) { _ = try shuttle(client, server) }
            #expect(error?.reason.contains("mismatch") == true, "\(name): \(String(describing: error))")
        }
    }

    @Test func noAuthorityIsAnError() {
        #expect(throws: CryptoError.self) { _ = try TLSClientContext(trusting: []) }
    }
}

extension TLSClientSessionTests {
    /// The server session stops after each record without plaintext and counts it, so the
    /// transport can budget KeyUpdates between two; the data behind them still comes out.
    @Test func aServerReadsOneKeyUpdateAtATimeAndCountsIt() throws {
        let (serverContext, ca) = try Self.materials.get()
        let client = try TLSClientSession(context: try TLSClientContext(trusting: [ca]), serverName: "127.0.0.1")
        let server = try TLSServerSession(context: serverContext)
        try client.start()
        _ = try shuttle(client, server)
        #expect(server.isEstablished && server.controlRecords == 0, "the handshake's own records are not counted")

        for _ in 0..<3 { try client.requestKeyUpdate() }
        _ = try Array("ping".utf8).withUnsafeBytes { try client.writePlaintext($0) }
        var wire: [UInt8] = []
        client.takeOutput(appendingTo: &wire)
        wire.withUnsafeBytes { server.receive($0) }  // one socket read: three KeyUpdates and "ping"
        var buffer = [UInt8](repeating: 0, count: 100)
        var handled: [Int] = []
        var plaintext: [UInt8] = []
        for _ in 0..<10 {
            switch try buffer.withUnsafeMutableBytes({ try server.readPlaintext(into: $0) }) {
            case .handledRecord: handled.append(server.controlRecords)
            case .bytes(let count): plaintext += buffer[0..<count]
            case .needsInput, .closed: break
            }
            if !plaintext.isEmpty { break }
        }
        #expect(handled == [1, 2, 3], "one KeyUpdate per read")
        #expect(plaintext == Array("ping".utf8))
        #expect(server.controlRecords == 3)
        // The server answered (update_requested): the client reads the replies and "pong".
        _ = try Array("pong".utf8).withUnsafeBytes { try server.writePlaintext($0) }
        #expect(try shuttle(client, server).client == Array("pong".utf8))
    }
}
