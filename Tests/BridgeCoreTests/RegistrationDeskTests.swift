// Registrations and the LocationV2 lock as a state machine: requests in, replies, registry writes,
// events and log lines out, with the registry's contents and the writes' outcomes set by the test.
import TMMProtocol
import TestSupport
import Testing

@testable import BridgeCore

private let first = GUID("12345678-1234-1234-1234-123456789abc")!
private let second = GUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")!
private let client1 = RegistrationDesk.Client(number: 1)
private let client2 = RegistrationDesk.Client(number: 2)

private func registerURL(_ id: GUID) -> String {
    "trimblemobilemanager://request/tmmRegister?applicationId=\(id.canonical)"
        + "&callback=myapp%3A%2F%2Fresponse%2FtmmRegister"
}

private func desk(_ policy: RegistrationPolicy = .open) -> RegistrationDesk {
    RegistrationDesk(policy: policy, mode: policy == .open ? .open : .allowlist, ports: .defaults)
}

private func open(
    _ url: String, from client: RegistrationDesk.Client?, registered: Set<GUID> = [],
    on desk: inout RegistrationDesk
) -> [RegistrationDesk.Action] {
    var actions: [RegistrationDesk.Action] = []
    desk.open(url, from: client, isRegistered: { registered.contains($0) }, into: &actions)
    return actions
}

private func finish(
    _ outcome: RegistrationDesk.SaveOutcome, on desk: inout RegistrationDesk
) -> [RegistrationDesk.Action] {
    var actions: [RegistrationDesk.Action] = []
    desk.saveFinished(outcome, into: &actions)
    return actions
}

private func replies(_ actions: [RegistrationDesk.Action]) -> [(ControlProtocol.Reply, RegistrationDesk.Client?)] {
    actions.compactMap { if case .reply(let reply, let client) = $0 { (reply, client) } else { nil } }
}

private func isOK(_ reply: ControlProtocol.Reply, result: String) -> Bool {
    if case .ok(result, _) = reply { true } else { false }
}

@Suite("RegistrationDesk", .tags(.unit))
struct RegistrationDeskTests {
    @Test func aNewApplicationIsAnsweredOnlyOnceItIsOnDisk() {
        var desk = desk()
        let asked = open(registerURL(first), from: client1, on: &desk)
        #expect(asked == [.save(first)])
        #expect(!desk.isLocationV2Unlocked)
        let done = finish(.saved(isNew: true), on: &desk)
        #expect(done.contains(.addAccessCode(first)))
        #expect(done.contains(.log("registered application …9abc")))
        #expect(done.contains(.log("LocationV2 unlocked: registration of application …9abc")))
        #expect(done.contains(.publish(.registration(result: .ok))))
        let answers = replies(done)
        #expect(answers.count == 1 && answers[0].1 == client1 && isOK(answers[0].0, result: "OK"))
        #expect(desk.isLocationV2Unlocked && desk.waitingCount == 0)
    }

    @Test func aRegisteredApplicationIsAnsweredAtOnceAndUnlocksV2() {
        var desk = desk()
        let actions = open(registerURL(first), from: client1, registered: [first], on: &desk)
        #expect(!actions.contains(.save(first)))
        #expect(actions.contains(.publish(.registration(result: .ok))))
        #expect(replies(actions).count == 1 && isOK(replies(actions)[0].0, result: "OK"))
        #expect(desk.isLocationV2Unlocked)
    }

    @Test func anApplicationOutsideTheAllowlistIsRefusedAndLogged() {
        var desk = desk(.allowlist([first]))
        let actions = open(registerURL(second), from: client1, on: &desk)
        #expect(
            actions.contains(
                .log("registration of application …30c8 refused: Unauthorized (registration policy allowlist)")))
        #expect(actions.contains(.publish(.registration(result: .unauthorized))))
        #expect(replies(actions).count == 1 && isOK(replies(actions)[0].0, result: "Unauthorized"))
        #expect(!desk.isLocationV2Unlocked)
    }

    @Test func aMalformedURLIsAnError() {
        var desk = desk()
        let actions = open("tmmregister://?not*base64", from: client1, on: &desk)
        guard case .error(let message) = replies(actions).first?.0 else { Issue.record("\(actions)"); return }
        #expect(message.hasPrefix("cannot answer this URL"))
        #expect(
            actions.contains {
                if case .log(let line, _) = $0 { line.hasPrefix("refused a registration request") } else { false }
            })
    }

    @Test func registrationsAreSavedOneAtATimeInArrivalOrder() {
        var desk = desk()
        #expect(open(registerURL(first), from: client1, on: &desk) == [.save(first)])
        // The second waits behind the first's write, even for the same id.
        #expect(open(registerURL(second), from: client2, on: &desk).isEmpty)
        #expect(open(registerURL(first), from: nil, on: &desk).isEmpty)
        #expect(desk.waitingCount == 3)
        let firstDone = finish(.saved(isNew: true), on: &desk)
        #expect(replies(firstDone).map(\.1) == [client1] && firstDone.last == .save(second))
        let secondDone = finish(.failed("disk full"), on: &desk)
        #expect(
            secondDone.contains(
                .log(
                    "cannot save the registration of application …30c8: disk full",
                    key: "cannot save a registration")))
        #expect(replies(secondDone).map(\.1) == [client2] && secondDone.last == .save(first))
        if case .error(let message) = replies(secondDone).first?.0 {
            #expect(message == "cannot save the registration: disk full")
        }
        // Registered by the first request meanwhile: answered, no new access code, nobody to tell.
        let thirdDone = finish(.saved(isNew: false), on: &desk)
        #expect(!thirdDone.contains(.addAccessCode(first)))
        #expect(replies(thirdDone).count == 1 && replies(thirdDone)[0].1 == nil)
        #expect(desk.waitingCount == 0)
    }

    @Test func aFailedSaveChangesNothing() {
        var desk = desk()
        _ = open(registerURL(first), from: client1, on: &desk)
        let done = finish(.failed("the daemon is stopping"), on: &desk)
        #expect(!desk.isLocationV2Unlocked)
        #expect(!done.contains(.addAccessCode(first)) && !done.contains(.publish(.registration(result: .ok))))
        // A save report with nothing being saved is ignored.
        #expect(finish(.saved(isNew: true), on: &desk).isEmpty)
    }

    @Test func theNilUUIDIsRefusedWithTheReason() {
        var desk = desk()
        let actions = open(registerURL(GUID("00000000-0000-0000-0000-000000000000")!), from: client1, on: &desk)
        guard case .error(let message) = replies(actions).first?.0 else { Issue.record("\(actions)"); return }
        #expect(
            message
                == """
                cannot answer this URL: 00000000-0000-0000-0000-000000000000 (the nil UUID) is not an application id: \
                use the application's own GUID
                """
        )
        #expect(!actions.contains { if case .save = $0 { true } else { false } })
        #expect(!desk.isLocationV2Unlocked)
    }

    /// Before, every valid code registered its application at once: under `open`, codes anyone
    /// can make filled the registry (1,000 in 4 s), and `tmmregister` was refused after that.
    @Test func codesRegisterABurstThenOnePerIntervalAndNeverTheControlSocketsTenth() {
        var limits = AccessCodeV2Limits()
        limits.autoRegistrationBurst = 3
        limits.autoRegistrationInterval = 1_000
        var desk = RegistrationDesk(policy: .open, mode: .open, ports: .defaults, limits: limits)
        var registered: Set<GUID> = []
        func code(_ n: Int, at now: Int64, maximum: Int = 100) -> [RegistrationDesk.Action] {
            let id = GUID(hex8(n) + "-0000-4000-8000-000000000000")!
            var actions: [RegistrationDesk.Action] = []
            desk.authenticatedByAccessCodeV2(
                id, isRegistered: { registered.contains($0) }, registered: registered.count,
                maximum: maximum, now: now, into: &actions)
            // The save of each one ends at once.
            if actions.contains(.save(id)) {
                var done: [RegistrationDesk.Action] = []
                desk.saveFinished(.saved(isNew: true), into: &done)
                registered.insert(id)
            }
            return actions
        }
        for n in 1...3 { #expect(code(n, at: 0).contains { if case .save = $0 { true } else { false } }) }
        let held = code(4, at: 10)
        #expect(
            held.contains(
                .log(
                    """
                    application …0000 not registered by its Access Code V2 yet: codes register 3 applications at once, \
                    then one every 0 s (a later code registers it, or tmm-bridge open)
                    """,
                    key: "not registered by its Access Code V2: rate")))
        #expect(registered.count == 3)
        #expect(code(4, at: 1_000).contains { if case .save = $0 { true } else { false } })
        // A maximum of 5 keeps 1 place for the control socket: the fifth is not taken by a code.
        #expect(RegistrationDesk.autoRegistrationLimit(maxRegisteredApplications: 5) == 4)
        #expect(RegistrationDesk.autoRegistrationLimit(maxRegisteredApplications: 1000) == 900)
        let full = code(5, at: 1_000_000, maximum: 5)
        #expect(
            full.contains {
                if case .log(_, let key) = $0 { key == "not registered by its Access Code V2: limit" } else { false }
            })
        #expect(registered.count == 4)
        // The control socket still registers into the kept place.
        #expect(open(registerURL(second), from: client1, registered: registered, on: &desk) == [.save(second)])
    }

    @Test func anAuthenticatedCallUnlocksV2OnceAndForAll() {
        var desk = desk()
        var actions: [RegistrationDesk.Action] = []
        desk.authenticated(first, into: &actions)
        desk.authenticated(second, into: &actions)
        #expect(actions == [.log("LocationV2 unlocked: authenticated REST call by application …9abc")])
        #expect(desk.isLocationV2Unlocked)
    }
}

@Suite("ControlProtocol request lines", .tags(.unit))
struct ControlRequestLineTests {
    private func read(_ text: String) -> ControlProtocol.LineReading {
        ControlProtocol.readRequestLine(Array(text.utf8))
    }

    @Test func aWholeLineIsARequestWithOrWithoutCR() {
        #expect(read("OPEN x://y\n") == .request(.open(url: "x://y")))
        #expect(read("OPEN x://y\r\nrest") == .request(.open(url: "x://y")))
        #expect(read("OPEN x://y") == .needMore)
    }

    @Test func brokenLinesAreRefusedWithAReason() {
        #expect(read("HELLO\n") == .refused(.error("unknown request 'HELLO': expected OPEN <url> or STATUS")))
        #expect(ControlProtocol.readRequestLine([0xFF, 0x0A]) == .refused(.error("the request is not UTF-8 text")))
        let tooLong = ControlProtocol.LineReading.refused(
            .error("request line longer than \(ControlProtocol.maximumLineLength) bytes"))
        let longest = String(repeating: "a", count: ControlProtocol.maximumLineLength)
        #expect(read(longest + "\r") == .needMore)
        #expect(read(longest + "a\r") == tooLong)  // no LF yet, and already too long
        #expect(read("OPEN " + longest + "\n") == tooLong)
    }

    @Test func readsStopAtTheLongestLineAndItsCRLF() {
        #expect(ControlProtocol.readLimit(buffered: 0) == ControlProtocol.maximumLineLength + 2)
        #expect(ControlProtocol.readLimit(buffered: ControlProtocol.maximumLineLength + 2) == 1)
    }
}
