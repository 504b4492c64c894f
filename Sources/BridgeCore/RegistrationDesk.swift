import TMMProtocol

// Registrations (`tmm-bridge open URL` over the control socket) and the LocationV2 lock, as a
// state machine: requests, registry writes done and authenticated REST calls in; replies, registry
// writes, access codes, events and log lines out. The io loop (Bridge) holds the registry and its
// file, and carries the actions out.
//
// A registration is answered only once the registry file is on disk, so an application told `OK`
// stays registered across a crash or restart; one that cannot be saved is refused with an error
// and changes nothing. Writes go one at a time, in arrival order.
//
// V2 (LocationV2 and `/events`) is locked until an application registers or makes an
// authenticated REST call (TMM-API.md §6.2), and stays unlocked while the daemon runs.
//
// A valid Access Code V2 registers its application too, and anyone who can reach the public key
// can make one for any id the policy admits (under `open`, any id). So these auto-registrations
// are bounded apart from the control socket's (whose callers the socket's group vouches for): a
// burst, then one per interval, and never into the last tenth of `max-registered-apps`, which is
// kept for `tmm-bridge open`. A code that does not register is still accepted; its application
// can register through the control socket, or with a later code.

extension GUID {
    /// How an application is named in log lines: its last four hex digits. The full id is a
    /// credential (Access Code V1 is computed from it and the clock) and the log is readable by
    /// more people than the registry (journald's readers, a terminal); four digits are enough for
    /// an operator to tell a handful of apps apart and reveal 16 of its 122 random bits.
    public var logName: String { "application …" + canonical.suffix(4) }
}

/// The control socket's registrations and the LocationV2 lock (see the file comment).
public struct RegistrationDesk {
    /// A control client, as the loop numbers them (a reply goes to it if it is still there).
    public struct Client: Hashable, Sendable {
        public let number: UInt64

        public init(number: UInt64) {
            self.number = number
        }
    }

    /// What the loop does, in order.
    public enum Action: Equatable, Sendable {
        /// Send this reply to the client (nil: none is waiting), then close it.
        case reply(ControlProtocol.Reply, to: Client?)
        /// Write the registry with this application added, and report with `saveFinished`.
        case save(GUID)
        /// A newly registered application: its access codes are valid from now on.
        case addAccessCode(GUID)
        case publish(BridgeEvent)
        /// A line for the log; `key` (the logger's repeat key) for lines a client can make at
        /// will, which are then summarised instead of written one by one.
        case log(String, key: String? = nil)
    }

    /// How a `.save` ended.
    public enum SaveOutcome: Equatable, Sendable {
        /// On disk (`isNew`: added now; false: it was registered already).
        case saved(isNew: Bool)
        /// Not saved; nothing changed.
        case failed(String)
    }

    private struct Pending {
        var client: Client?
        /// What to reply to (nil: a registration by a first Access Code V2, nobody to answer).
        var request: RegistrationRequest?
        var id: GUID
    }

    /// Who may register; a reload may change both.
    public var policy: RegistrationPolicy
    /// Named in the log line of a refusal.
    public var mode: RegistrationMode
    /// Reported in every reply.
    public let ports: PortAssignment
    public private(set) var isLocationV2Unlocked = false
    /// Registrations waiting for the registry file, oldest first; the first is being saved when
    /// `saving` is set.
    private var pending: [Pending] = []
    private var saving = false
    /// Auto-registrations (a first Access Code V2): a burst, then one per interval.
    private var autoRegistrations: RateBudget

    public init(
        policy: RegistrationPolicy, mode: RegistrationMode, ports: PortAssignment,
        limits: AccessCodeV2Limits = AccessCodeV2Limits()
    ) {
        self.policy = policy
        self.mode = mode
        self.ports = ports
        autoRegistrations = RateBudget(
            burst: limits.autoRegistrationBurst, refillInterval: limits.autoRegistrationInterval)
    }

    /// Registered applications beyond which a code no longer registers its application: the
    /// last tenth of `max-registered-apps` (at least one place) is kept for the control socket.
    public static func autoRegistrationLimit(maxRegisteredApplications: Int) -> Int {
        maxRegisteredApplications - max(1, maxRegisteredApplications / 10)
    }

    /// Registrations not answered yet.
    public var waitingCount: Int { pending.count }

    // MARK: - Events

    /// A registration or port request URL from `client`: parsed, judged by the policy and
    /// answered, or, for an application not yet on disk, queued for the registry file.
    public mutating func open(
        _ url: String, from client: Client?, isRegistered: (GUID) -> Bool,
        into actions: inout [Action]
    ) {
        let request: RegistrationRequest
        do {
            request = try RegistrationURL.parse(url)
        } catch {
            actions.append(.log("refused a registration request: \(error)"))
            actions.append(.reply(.error("cannot answer this URL: \(error)"), to: client))
            return
        }
        var resultText = "-"
        // Ids appear in logs only as `logName` (a registered id is a credential; docs/security.md).
        if case .register(let id) = request.kind {
            let result = policy.evaluate(id)
            resultText = result.rawValue
            if result == .ok {
                if !isRegistered(id) || pending.contains(where: { $0.id == id }) {
                    pending.append(Pending(client: client, request: request, id: id))
                    saveNext(into: &actions)
                    return
                }
                unlockLocationV2(because: "registration of \(id.logName)", into: &actions)
            } else {
                actions.append(
                    .log(
                        "registration of \(id.logName) refused: \(result.rawValue) "
                            + "(registration policy \(mode.rawValue))"
                    ))
            }
            actions.append(.publish(.registration(result: result)))
        }
        actions.append(
            .reply(
                .ok(result: resultText, url: RegistrationURL.reply(to: request, policy: policy, ports: ports)),
                to: client))
    }

    /// The `.save` under way ended: its registration is answered, and the next one saved.
    public mutating func saveFinished(_ outcome: SaveOutcome, into actions: inout [Action]) {
        guard saving, !pending.isEmpty else { return }
        saving = false
        let done = pending.removeFirst()
        let name = done.id.logName
        switch outcome {
        case .failed(let failure):
            // Keyed: under `open`, codes anyone can make could fill the registry and make one
            // such line each.
            actions.append(
                .log("cannot save the registration of \(name): \(failure)", key: "cannot save a registration"))
            actions.append(.reply(.error("cannot save the registration: \(failure)"), to: done.client))
        case .saved(let isNew):
            if isNew {
                actions.append(.addAccessCode(done.id))
                actions.append(.log("registered \(name)"))
            }
            unlockLocationV2(because: "registration of \(name)", into: &actions)
            actions.append(.publish(.registration(result: .ok)))
            if let request = done.request {
                actions.append(
                    .reply(
                        .ok(
                            result: RegistrationResult.ok.rawValue,
                            url: RegistrationURL.reply(to: request, policy: policy, ports: ports)),
                        to: done.client))
            }
        }
        saveNext(into: &actions)
    }

    /// A REST call carried a valid access code of `id`.
    public mutating func authenticated(_ id: GUID, into actions: inout [Action]) {
        unlockLocationV2(because: "authenticated REST call by \(id.logName)", into: &actions)
    }

    /// A REST call carried a valid Access Code V2 of `id` (an id the policy admits: the verifier
    /// checked) at monotonic `now`: V2 unlocks, and an application not registered yet is
    /// registered, as the first use of a code does in TMM (TMM-API.md §4.2), so its Access Code
    /// V1 works from then on too; within the bounds of auto-registrations (see the file comment).
    /// `registered`: how many applications the registry holds, `maximum`: max-registered-apps.
    public mutating func authenticatedByAccessCodeV2(
        _ id: GUID, isRegistered: (GUID) -> Bool, registered: Int,
        maximum: Int, now: Int64, into actions: inout [Action]
    ) {
        unlockLocationV2(because: "Access Code V2 of \(id.logName)", into: &actions)
        guard !isRegistered(id), !pending.contains(where: { $0.id == id }) else { return }
        let limit = Self.autoRegistrationLimit(maxRegisteredApplications: maximum)
        if registered + pending.count >= limit {
            actions.append(
                .log(
                    """
                    \(id.logName) not registered by its Access Code V2: codes register at most \(limit) applications \
                    of max-registered-apps \(maximum), the rest is kept for the control socket \
                    (register it with tmm-bridge open)
                    """,
                    key: "not registered by its Access Code V2: limit"))
            return
        }
        guard autoRegistrations.take(now: now) else {
            let seconds = autoRegistrations.refillInterval / 1_000_000_000
            actions.append(
                .log(
                    """
                    \(id.logName) not registered by its Access Code V2 yet: codes register \(autoRegistrations.burst) \
                    applications at once, then one every \(seconds) s (a later code registers it, or tmm-bridge open)
                    """,
                    key: "not registered by its Access Code V2: rate"))
            return
        }
        pending.append(Pending(client: nil, request: nil, id: id))
        saveNext(into: &actions)
    }

    // MARK: - Inside

    private mutating func saveNext(into actions: inout [Action]) {
        guard !saving, let first = pending.first else { return }
        saving = true
        actions.append(.save(first.id))
    }

    private mutating func unlockLocationV2(because reason: String, into actions: inout [Action]) {
        guard !isLocationV2Unlocked else { return }
        isLocationV2Unlocked = true
        actions.append(.log("LocationV2 unlocked: \(reason)"))
    }
}
