// Which new clients the servers take: the shared limit, the REST reserve, the open-file limit.
import BridgeCore
import TMMProtocol
import TestSupport
import Testing

@Suite("ConnectionAdmission", .tags(.unit))
struct ConnectionAdmissionTests {
    @Test func theLocationPortsKeepOutOfTheRESTReserve() {
        var admission = ConnectionAdmission(configured: 16, openFileLimit: nil, otherClients: 16)
        #expect(admission.maxConnections == 16 && admission.locationBudget == 14)
        for _ in 0..<14 { admission.admitted(.locationV2) }
        #expect(!admission.hasRoom(for: .location) && admission.hasRoom(for: .api))
        admission.admitted(.api)
        admission.admitted(.api)
        #expect(!admission.hasRoom(for: .api))
        admission.released(.api)
        #expect(admission.hasRoom(for: .api) && !admission.hasRoom(for: .locationV2))
        admission.released(.location)
        #expect(admission.hasRoom(for: .locationV2))
    }

    @Test(arguments: [(1, 0), (2, 1), (8, 1), (16, 2), (4096, 512)])
    func theReserveIsAnEighthAndAtLeastOne(_ limit: Int, _ reserve: Int) {
        #expect(ConnectionAdmission.restReserve(limit) == reserve)
    }

    @Test func theLimitStaysWithinTheOpenFileLimit() {
        let lowered = ConnectionAdmission(configured: 4096, openFileLimit: 1024, otherClients: 16)
        #expect(lowered.maxConnections == 1024 - ConnectionAdmission.descriptorHeadroom - 16)
        #expect(ConnectionAdmission(configured: 4096, openFileLimit: 10, otherClients: 16).maxConnections == 1)
        #expect(ConnectionAdmission(configured: 100, openFileLimit: 1_000_000, otherClients: 16).maxConnections == 100)
    }

    /// TLS handshakes in progress are counted apart, by their memory: full at the handshake
    /// memory over each one's most (at least one), free again as they end.
    @Test func handshakesAreCountedByTheirMemory() {
        var admission = ConnectionAdmission(
            configured: 4096, openFileLimit: nil, otherClients: 16,
            handshakeMemory: 3 * ConnectionAdmission.handshakeCost + 1)
        #expect(admission.maxHandshakes == 3)
        for _ in 0..<3 {
            #expect(!admission.handshakesFull)
            admission.handshakeStarted()
        }
        #expect(admission.handshakesFull)
        admission.handshakeEnded()
        #expect(!admission.handshakesFull)
        #expect(
            ConnectionAdmission(configured: 10, openFileLimit: nil, otherClients: 0, handshakeMemory: 0).maxHandshakes
                == 1)
        #expect(
            ConnectionAdmission(configured: 10, openFileLimit: nil, otherClients: 0).maxHandshakes
                == ServerLimits().tlsHandshakeMemory / ConnectionAdmission.handshakeCost)
    }
}
