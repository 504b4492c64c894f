import BridgeCore
import Posix
import TLS
import TMMProtocol
import WebSocket

// The registered applications and who may use the servers: the registry and its file, the
// registration desk (BridgeCore's RegistrationDesk: what to answer, when the file is written,
// when V2 unlocks), and the access codes a request may carry (V1: the table a worker keeps; V2:
// the verifier with its replay ledger and the key's decryption).
//
// The registry file is written on the server's worker thread (its fsync can take milliseconds
// to seconds), one registration at a time; the io thread goes on serving meanwhile and the desk
// answers the control client once the write is done.

/// Registrations, access codes and the V2 lock. Loop-confined.
final class Registrations {
    /// The registered applications (replaced once a registration is on disk).
    private(set) var registry: ApplicationRegistry
    /// Who may register and use the servers (reloadable).
    private(set) var policy: RegistrationPolicy
    private var desk: RegistrationDesk
    /// Valid Access Code V1 values of the current window, for every registered id (the policy
    /// is applied when a code is checked, so a reload that allows an id again needs no new table).
    private let accessCodes: AccessCodeTable
    /// Access Code V2: the verifier with its replay ledger and each client's share.
    private var accessCodeV2: AccessCodeV2Verifier
    private let accessCodeV2Key: PrivateKey
    private var maximumRegistered: Int
    private var lastLedgerSweep: Int64 = 0
    private let worker: Worker
    private let results: Inbox<WorkerResult>
    private let log: Logger
    /// Where the desk's replies go (the control server) and its events (the hub); the server
    /// wires them.
    var replyToControlClient: (ControlProtocol.Reply, RegistrationDesk.Client) -> Void = { _, _ in }
    var publish: (BridgeEvent) -> Void = { _ in }

    /// The registry as loaded at start-up; starts the access-code worker.
    init(
        registry: ApplicationRegistry, configuration: BridgeConfiguration, ports: PortAssignment,
        accessCodeKey: PrivateKey, worker: Worker, results: Inbox<WorkerResult>, log: Logger
    ) throws(BridgeServerError) {
        self.registry = registry
        policy = configuration.registrationPolicy
        desk = RegistrationDesk(
            policy: policy, mode: configuration.registration, ports: ports,
            limits: configuration.limits.accessCodeV2)
        accessCodeV2Key = accessCodeKey
        // The key is RSA-2048 (AccessCodeKey.load refuses any other), so it has a length.
        accessCodeV2 = AccessCodeV2Verifier(
            policy: policy, ciphertextLength: accessCodeKey.rsaCiphertextLength ?? 0,
            limits: configuration.limits.accessCodeV2)
        maximumRegistered = configuration.limits.maxRegisteredApplications
        self.worker = worker
        self.results = results
        self.log = log
        do {
            // Every registered id, allowed now or not (see `accessCodes`).
            accessCodes = try AccessCodeTable(ids: registry.applicationIDs)
        } catch {
            throw .accessCodeWorker(error)
        }
        if registry.entries.count > maximumRegistered {
            log.warning(
                "the registry holds \(registry.entries.count) applications, "
                    + "more than max-registered-apps (\(maximumRegistered)): they stay registered, new ones are refused"
            )
        }
    }

    /// V2 is locked until a registration or an authenticated REST call (TMM-API.md §6.2).
    var isLocationV2Unlocked: Bool { desk.isLocationV2Unlocked }

    // MARK: - Events

    /// `tmm-bridge open`'s registration URL, from a control client.
    func open(_ url: String, from client: RegistrationDesk.Client) {
        let registry = registry
        driveDesk { $0.open(url, from: client, isRegistered: registry.contains, into: &$1) }
    }

    /// A REST call carried a valid access code of `id`.
    func authenticated(_ id: GUID) {
        driveDesk { $0.authenticated(id, into: &$1) }
    }

    /// A REST call carried a valid Access Code V2 of `id` (its first use registers it).
    func authenticatedByAccessCodeV2(_ id: GUID) {
        let (registry, maximum) = (registry, maximumRegistered)
        driveDesk {
            $0.authenticatedByAccessCodeV2(
                id, isRegistered: registry.contains, registered: registry.entries.count,
                maximum: maximum, now: monotonicNanoseconds(), into: &$1)
        }
    }

    /// From the worker: the registry file for the registration being saved is written (or not).
    func saved(_ next: ApplicationRegistry, failure: String?) {
        if failure == nil { registry = next }
        driveDesk { $0.saveFinished(failure.map { .failed($0) } ?? .saved(isNew: true), into: &$1) }
    }

    /// Every tick: expired Access Code V2 codes leave the ledger once a minute.
    func tick(now: Int64) {
        guard now - lastLedgerSweep > 60_000_000_000 else { return }
        lastLedgerSweep = now
        accessCodeV2.forgetExpired(now: wallClockMilliseconds() / 1000)
    }

    /// A reload: registrations, Access Code V1 and V2 judge by the new policy.
    func reconfigure(_ configuration: BridgeConfiguration) {
        policy = configuration.registrationPolicy
        desk.policy = policy
        desk.mode = configuration.registration
        accessCodeV2.policy = policy
    }

    func stop() {
        accessCodes.stop()
    }

    // MARK: - Questions a request asks

    /// The registered application whose Access Code V1 `headerValue` carries now, if the policy
    /// in force allows it.
    func verifyAccessCode(headerValue: String) -> GUID? {
        accessCodes.verify(headerValue: headerValue).flatMap { policy.evaluate($0) == .ok ? $0 : nil }
    }

    /// The application whose Access Code V2 `headerValue` carries, decrypted with the key and
    /// checked against the ledger; `peer` is charged for it.
    func verifyAccessCodeV2(
        headerValue: String, overTLS: Bool, consume: Bool, peer: ClientPeer
    )
        -> Result<GUID, AccessCodeV2Verifier.Refusal>
    {
        let key = accessCodeV2Key
        return accessCodeV2.verify(
            headerValue: headerValue, overTLS: overTLS, consume: consume, peer: peer,
            now: wallClockMilliseconds() / 1000, instant: monotonicNanoseconds(),
            decrypt: { key.decryptOAEPSHA256($0) },
            digest: { bytes in
                let digest = Digest.sha256(bytes)
                return (0..<32).map { digest[$0] }
            })
    }

    // MARK: - The desk's actions

    /// Feeds one event to the desk and carries out its actions. A save that ends at once (the
    /// id registered already, the registry full) is the desk's next event, after the list.
    private func driveDesk(_ event: (inout RegistrationDesk, inout [RegistrationDesk.Action]) -> Void) {
        var actions: [RegistrationDesk.Action] = []
        event(&desk, &actions)
        while !actions.isEmpty {
            var finished: [RegistrationDesk.SaveOutcome] = []
            for action in actions {
                switch action {
                case .reply(let reply, let client):
                    if let client { replyToControlClient(reply, client) }
                case .save(let id):
                    if let outcome = startSaving(id) { finished.append(outcome) }
                case .addAccessCode(let id):
                    accessCodes.add(id)
                case .publish(let event):
                    publish(event)
                case .log(let line, let key):
                    log(line, key: key)
                }
            }
            actions.removeAll()
            for outcome in finished { desk.saveFinished(outcome, into: &actions) }
        }
    }

    /// Hands the registry with `id` added to the worker; returns how the save ended when it ended
    /// at once (registered already, the registry full, the daemon stopping).
    private func startSaving(_ id: GUID) -> RegistrationDesk.SaveOutcome? {
        let next: ApplicationRegistry?
        do {
            next = try registry.registering(id, unixSeconds: wallClockMilliseconds() / 1000, maximum: maximumRegistered)
        } catch {
            return .failed("\(ApplicationRegistry.Failure(error, path: registry.path))")
        }
        guard let next else { return .saved(isNew: false) }  // registered by an earlier request of the queue
        let results = results
        let submitted = worker.submit {
            var failure: String?
            do { try next.save() } catch { failure = "\(error)" }
            results.post(.registrySaved(next, failure: failure))
        }
        return submitted ? nil : .failed("the daemon is stopping")
    }
}

@available(*, unavailable, message: "it belongs to the io thread")
extension Registrations: Sendable {}
