// The server's parts alone, each with only what it owns: the control server on its own loop and
// socket with its two wires (registration, status) answered by the test; the registrations with
// their registry file, worker and access codes, without a socket or a loop; the secure materials
// in a state directory of their own; the settings with their writer thread. BridgeServer only
// makes these and routes between them; the server's own suites drive the same parts end to end.
@testable import Bridge
import BridgeCore
import ByteCoding
import Foundation
import Logging
import Posix
import Synchronization
import TLS
import TMMProtocol
import TestSupport
import Testing

@Suite("Server parts alone", .tags(.integration), .serialized)
struct PartsTests {
    /// The control server reads a request, hands a registration to its wire and sends the answer
    /// it is given for that client; a status request gets the document its other wire makes.
    @Test func theControlServerAnswersThroughItsWires() throws {
        let directory = NSTemporaryDirectory() + "tmm-control-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/control.sock"
        let loop = try EventLoop()
        let control = try ControlServer(
            path: path, loop: loop, shortage: DescriptorShortage(loop: loop, log: Logger(format: .journal) { _ in }))
        var opened: [String] = []
        control.open = { [unowned control] url, client in
            opened.append(url)
            control.reply(.ok(result: "registered", url: "app://back"), to: client)
        }
        control.status = { "{\"probe\":1}" }
        try control.start()

        let replies = Mutex<[ControlProtocol.Reply?]>([])
        let stop = loop.stopHandle
        let client = try OSThread(name: "control-client") {
            let open = try? ControlProtocol.open("tmmregister://?abc", socketPath: path, timeoutMilliseconds: 5000)
            let status = try? ControlProtocol.exchange(
                "STATUS\n", socketPath: path, limit: 1024,
                timeoutMilliseconds: 5000
            ) { _ in "unreachable" }
            replies.withLock { $0 = [open, status] }
            stop.stop()
        }
        loop.schedule(afterNanoseconds: 20_000_000_000) { _ in loop.stop() }  // a hung client fails, not hangs
        _ = try loop.run()
        client.join()
        #expect(opened == ["tmmregister://?abc"])
        #expect(
            replies.withLock { $0 } == [.ok(result: "registered", url: "app://back"), .status(json: "{\"probe\":1}")])
    }

    /// A registration is answered only once its id is in the registry file; from then on V2 is
    /// unlocked and the application's Access Code V1 is valid.
    @Test func registrationsAnswerOnceTheRegistryIsOnDisk() throws {
        let directory = NSTemporaryDirectory() + "tmm-registrations-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = BridgeConfiguration()
        configuration.registration = .open
        let worker = try Worker(name: "parts-worker")
        defer { worker.stop() }
        let results = try Inbox<WorkerResult>(capacity: 16)
        let registrations = try Registrations(
            registry: ApplicationRegistry(path: directory + "/" + ApplicationRegistry.fileName),
            configuration: configuration, ports: try freePorts(),
            accessCodeKey: try PrivateKey.generate(.rsa(bits: 2048)),
            worker: worker, results: results, log: Logger(format: .journal) { _ in })
        defer { registrations.stop() }
        var replies: [ControlProtocol.Reply] = []
        var events: [BridgeEvent] = []
        registrations.replyToControlClient = { reply, _ in replies.append(reply) }
        registrations.publish = { events.append($0) }

        let json = "{\"application_id\":\"\(testAppID)\",\"returl\":\"testapp://response/register\"}"
        registrations.open(
            "tmmregister://?" + Base64.encode(Array(json.utf8)), from: RegistrationDesk.Client(number: 1))
        #expect(replies.isEmpty, "not answered before the file is written")
        #expect(!registrations.isLocationV2Unlocked)

        var saved: [WorkerResult] = []
        for _ in 0..<50 where saved.isEmpty { saved = results.wait(milliseconds: 100) }
        guard case .registrySaved(let next, let failure) = try #require(saved.first) else {
            Issue.record("expected the registry write, got \(saved)")
            return
        }
        #expect(failure == nil)
        let file = try String(contentsOfFile: next.path, encoding: .utf8)
        #expect(file.contains(testAppID), "on disk before the answer")
        registrations.saved(next, failure: failure)
        guard case .ok(let result, _) = try #require(replies.first) else {
            Issue.record("expected OK, got \(replies)")
            return
        }
        #expect(result == RegistrationResult.ok.rawValue)
        #expect(events.contains(.registration(result: .ok)))
        #expect(registrations.isLocationV2Unlocked)
        #expect(registrations.verifyAccessCode(headerValue: accessCode()) == GUID(testAppID))
        #expect(registrations.verifyAccessCode(headerValue: wrongCode) == nil)
    }

    /// The secure materials alone: made in an empty state directory, the same key and CA reused
    /// from it next time; a configured certificate that does not exist is the operator's to fix.
    @Test func secureMaterialsAreMadeOnceAndReused() throws {
        let directory = try Self.temporaryDirectory("secure")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = Logger(format: .journal) { _ in }
        let first = try SecureServing(
            configuration: BridgeConfiguration(), stateDirectory: directory, alsoOwnedBy: nil,
            log: log)
        #expect(first.notes.contains { $0.level == .notice && $0.text.contains("made a local CA") })
        let second = try SecureServing(
            configuration: BridgeConfiguration(), stateDirectory: directory, alsoOwnedBy: nil,
            log: log)
        #expect(second.notes.contains { $0.level == .info && $0.text.contains("local CA certificate in") })
        #expect(second.accessCodeV2PublicKey == first.accessCodeV2PublicKey, "the key is kept, not made again")
        #expect(second.serverCertificate.notAfterText == first.serverCertificate.notAfterText)

        var configured = BridgeConfiguration()
        configured.tlsCertificate = directory + "/missing.pem"
        configured.tlsKey = directory + "/missing.key"
        #expect {
            _ = try SecureServing(configuration: configured, stateDirectory: directory, alsoOwnedBy: nil, log: log)
        } throws: { error in
            guard let error = error as? SecureMaterialsError, case .configuredCertificate = error else { return false }
            return error.isConfiguration && error.description.contains("missing.pem")
        }
    }

    /// The settings alone: served from memory at once, written by their own thread, read back.
    @Test func settingsAreServedAtOnceAndWrittenBehind() throws {
        let directory = try Self.temporaryDirectory("settings")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let results = try Inbox<WorkerResult>(capacity: 16)
        let store = try DeviceSettingsStore(
            DeviceSettings(), stateDirectory: directory, results: results,
            log: Logger(format: .journal) { _ in })
        let next = DeviceSettings(antenna: AntennaSettings(measuredHeight: 1.8, isAntennaHeightApplied: true))
        store.save(next)
        #expect(store.settings == next, "served from memory before the file is written")
        var written: [WorkerResult] = []
        for _ in 0..<50 where written.isEmpty { written = results.wait(milliseconds: 100) }
        guard case .settingsSaved(let failure) = try #require(written.first) else {
            Issue.record("expected the settings write, got \(written)")
            return
        }
        #expect(failure == nil)
        store.stop()
        #expect(try DeviceSettings.load(stateDirectory: directory, alsoOwnedBy: nil) == next)
    }

    private static func temporaryDirectory(_ name: String) throws -> String {
        let directory = NSTemporaryDirectory() + "tmm-\(name)-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }
}
