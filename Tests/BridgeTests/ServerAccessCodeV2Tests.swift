// Access Code V2 against the real server, with codes made as the samples make them: what single
// use over http means, and what one client (one local user, one application) can take from the
// others: the replay ledger, the registry through auto-registration, and the RSA decryptions.
import ByteCoding
import Foundation
import Glibc
import Posix
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeCore

@Suite(
    "Server: Access Code V2 single use and shares", .tags(.integration), .serialized,
    .enabled(if: AccessCodeV2Client.isAvailable, "needs python3-cryptography and curl"))
struct ServerAccessCodeV2Tests {
    private func registryIDs(_ bridge: TestBridge) throws -> [String] {
        try ApplicationRegistry.load(path: bridge.stateDirectory + "/" + ApplicationRegistry.fileName).entries.map(
            \.applicationId)
    }

    @Test func aCodeUsedOverHTTPIsSpentOverHTTPSToo() throws {
        let bridge = try TestBridge.start()
        let client = try AccessCodeV2Client(bridge)
        let code = try client.code()
        #expect(try client.overHTTP(code).status == 200)
        // Before: accepted again over https (reuse there) although http had used it up.
        let again = try client.overHTTPS(code)
        #expect(again.status == 401, "\(again)")
        #expect(again.body.contains("this code was used before"), "\(again)")
        #expect(try client.overHTTP(code).status == 401)

        // A code first used over https stays reusable there until it expires, and is refused
        // over http (seen before).
        let secure = try client.code()
        #expect(try client.overHTTPS(secure).status == 200)
        #expect(try client.overHTTPS(secure).status == 200)
        #expect(try client.overHTTP(secure).status == 401)
        #expect(try client.overHTTPS(secure).status == 200)
    }

    @Test func aCodeWithoutItsLeadingZeroByteIsNotASecondCode() throws {
        let bridge = try TestBridge.start()
        let client = try AccessCodeV2Client(bridge)
        let code = try client.code(firstByteZero: true)
        let ciphertext = try #require(Base64.decode(code))
        try #require(ciphertext.count == 256 && ciphertext[0] == 0)
        #expect(try client.overHTTP(code).status == 200)
        // Before: the same number without its leading zero decrypted, and the ledger (keyed on
        // the bytes) took it for a code never seen: a second use over http.
        let shortened = try client.overHTTP(Base64.encode(Array(ciphertext.dropFirst())))
        #expect(shortened.status == 401, "\(shortened)")
        #expect(shortened.text.contains("256"), "the refusal says what length a code has: \(shortened)")
        #expect(try client.overHTTPS(Base64.encode(Array(ciphertext.dropFirst()))).status == 401)
    }

    /// Under `open`, a code anyone can make registers any id. Before, 1,000 ids filled the
    /// registry in seconds, `tmmregister` was refused after that, and every refused save logged
    /// a line of its own.
    @Test func autoRegistrationsAreBoundedRateLimitedAndLeaveRoomForTheControlSocket() throws {
        let bridge = try TestBridge.start {
            $0.limits.maxRegisteredApplications = 20
            $0.limits.accessCodeV2.decryptionsPerSecondPerPeer = 1000
        }
        let client = try AccessCodeV2Client(bridge)
        let ids = applicationIDs(40)
        let codes = try client.codes(for: ids)
        let connection = try RawClient(port: bridge.ports.api)
        for code in codes {
            // Every valid code is answered: only the registration is held back.
            try connection.send(
                "GET /api/v1/receiver HTTP/1.1\r\nHost: x\r\nAuthorization: AccessCodeV2 \(code)\r\n\r\n")
            #expect(try connection.response().status == 200)
        }
        // The control socket's registration queues behind the saves under way, so once it is
        // answered they are all done.
        let reply = try bridge.register("99999999-1234-4234-8234-123456789abc")
        guard case .ok("OK", _) = reply else {
            Issue.record("tmmregister was refused after auto-registrations: \(reply)")
            return
        }
        let registered = try registryIDs(bridge)
        #expect(registered.contains("99999999-1234-4234-8234-123456789abc"))
        let automatic = registered.count - 1
        // At most the burst at once, and never into the places kept for the control socket.
        #expect(automatic <= AccessCodeV2Limits().autoRegistrationBurst, "\(automatic) registered by their codes")
        #expect(automatic <= RegistrationDesk.autoRegistrationLimit(maxRegisteredApplications: 20))
        #expect(automatic > 0)
        // The refusals are one line and a summary, not one line each.
        try bridge.waitForLog("not registered by its Access Code V2")
        let lines =
            bridge.logLines(containing: "not registered by its Access Code V2")
            + bridge.logLines(containing: "cannot save the registration")
        #expect(lines <= 3, "\(bridge.logs.joined(separator: "\n"))")
    }

    /// Before, the ledger was one pool of 16,384 codes that refused every new code when full:
    /// `nobody`, holding one allowlisted id (or any id under `open`), filled it in 31 s and every
    /// other client was refused over http and https for an hour.
    @Test(.enabled(if: getuid() == 0, "needs root to act as nobody"))
    func oneLocalUserFillsOnlyItsOwnShareOfTheLedger() throws {
        let bridge = try TestBridge.start {
            $0.limits.accessCodeV2.ledgerPerPeer = 6
            $0.limits.accessCodeV2.ledgerCapacity = 12
            $0.limits.accessCodeV2.decryptionsPerSecondPerPeer = 1000
        }
        let client = try AccessCodeV2Client(bridge)
        // Each code on a new connection, as many ids as it likes.
        let statuses = try client.statusesAsUser("nobody", ids: applicationIDs(8))
        #expect(statuses == Array(repeating: 200, count: 6) + [401, 401], "\(statuses)")
        try bridge.waitForLog("local user uid 65534 holds 6 live Access Code V2 codes, as many as one client may")
        // Another user (this process, root) is not affected, over http and https.
        #expect(try client.overHTTP(client.code()).status == 200)
        #expect(try client.overHTTPS(client.code()).status == 200)
        #expect(try client.statusesAsUser("nobody", ids: applicationIDs(1, first: 100)) == [401])
    }

    /// Before, each connection had 4 failed codes at once, and each code (valid or not) was an
    /// RSA decryption on the io thread: reconnecting bought 4 more, 1,600 decryptions a second
    /// from one local user.
    @Test(.enabled(if: getuid() == 0, "needs root to act as nobody"))
    func decryptionsAreCountedPerLocalUserWhateverTheConnections() throws {
        let bridge = try TestBridge.start {
            $0.limits.accessCodeV2.decryptionsPerSecondPerPeer = 3
            $0.limits.accessCodeV2.decryptionsPerSecond = 1000
        }
        let client = try AccessCodeV2Client(bridge)
        let started = monotonicNanoseconds()
        let statuses = try client.statusesAsUser("nobody", ids: applicationIDs(12))
        let seconds = Int((monotonicNanoseconds() - started) / 1_000_000_000)
        // The burst of 3, then at most 3 a second while the run lasted.
        #expect(Array(statuses.prefix(3)) == [200, 200, 200], "\(statuses)")
        #expect(statuses.count { $0 == 200 } <= 3 + 3 * (seconds + 1), "\(statuses) in \(seconds) s")
        #expect(statuses.contains(401), "\(statuses)")
        try bridge.waitForLog("too many new Access Code V2 codes from local user uid 65534 (at most 3 a second)")
        // Another user still has its own.
        #expect(try client.overHTTP(client.code()).status == 200)
    }

    @Test func theNilUUIDIsNoApplicationAnywhere() throws {
        let bridge = try TestBridge.start()
        let client = try AccessCodeV2Client(bridge)
        let response = try client.overHTTP(client.code(for: "00000000-0000-0000-0000-000000000000"))
        #expect(response.status == 401)
        #expect(response.text.contains("(the nil UUID) is not an application id"), "\(response)")
        let reply = try bridge.register("00000000-0000-0000-0000-000000000000")
        guard case .error(let message) = reply else {
            Issue.record("registered the nil UUID: \(reply)")
            return
        }
        #expect(message.contains("(the nil UUID) is not an application id"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: bridge.stateDirectory + "/" + ApplicationRegistry.fileName))
        #expect(!bridge.logs.contains { $0.contains("LocationV2 unlocked") })
    }
}
