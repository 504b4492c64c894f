import BridgeCore
import Posix
import TMMProtocol

// The control socket (ControlProtocol): registration requests handed over by `tmm-bridge open`.
//
// A registration is answered only after the registry file is on disk, so an application told
// `OK` stays registered across a crash or restart; a request that cannot be saved is refused with
// an error and changes nothing. The file is written on the worker thread (its fsync can take
// milliseconds to seconds), one registration at a time in arrival order (`RegistrationQueue`);
// the io thread goes on serving meanwhile and answers the client when the write is done.

/// One control-socket client: a request line being read, then the reply.
final class ControlClient {
    let socket: SocketConnection
    var input: [UInt8] = []
    let openedAt: Int64
    /// Set once its request is answered later (a registration waiting for the registry file):
    /// nothing more is read from it.
    var awaitingReply = false

    init(socket: consuming SocketConnection, now: Int64) {
        self.socket = socket
        openedAt = now
    }
}

/// Registrations waiting for the registry file to be written, oldest first; the first is being
/// written when `writing` is set.
struct RegistrationQueue {
    struct Pending {
        /// The control client to answer, if it is still there.
        weak var client: ControlClient?
        var request: RegistrationRequest
        var id: GUID
    }

    var pending: [Pending] = []
    var writing = false
}

@available(*, unavailable, message: "control clients belong to the io thread")
extension ControlClient: Sendable {}

extension BridgeServer {
    func acceptControlClients() {
        for _ in 0..<16 {
            let result: AcceptResult
            do {
                result = try controlListener.accept()
            } catch {
                // EMFILE: refuse with the spare descriptor (or pause), as the TCP listeners do.
                if refuseWithoutDescriptor(error, listener: controlListener.descriptor.rawValue) { continue }
                return
            }
            switch consume result {
            case .wouldBlock:
                return
            case .accepted(let socket):
                // Bounded: the oldest client gives way. A real client (`tmm-bridge open`) sends its
                // line at once and is answered in the same turn of the loop, so only idle ones are
                // ever evicted, and idle ones cannot lock `open` out for their 10 s.
                if controlClients.count >= Self.maxControlClients,
                   let oldest = controlClients.min(by: { $0.value.openedAt < $1.value.openedAt })?.key {
                    statistics.controlClientsEvicted += 1
                    closeControlClient(oldest)
                }
                let client = ControlClient(socket: socket, now: monotonicNanoseconds())
                let fd = client.socket.descriptor.rawValue
                do {
                    try loop.register(fd, interest: .readable) { [unowned self] event in controlClientEvent(event) }
                } catch {
                    continue
                }
                registerControlClient(fd, client)
            }
        }
    }

    func controlClientEvent(_ event: SelectorEvent) {
        guard let client = controlClients[event.descriptor] else { return }
        if client.awaitingReply {
            // Its line is read: only a hang-up or an error can come now. The registration goes
            // on (it is written, and the app can still use it); there is no one left to tell.
            if event.isHangUp || event.isError { closeControlClient(event.descriptor) }
            return
        }
        let result: IOResult
        // Room for the longest line and its CR LF, and no more: a longer line is refused whether
        // or not its newline has arrived.
        let room = ControlProtocol.maximumLineLength + 2 - client.input.count
        do {
            result = try client.socket.read(appendingTo: &client.input, maxCount: max(1, room))
        } catch {
            closeControlClient(event.descriptor)
            return
        }
        switch result {
        case .wouldBlock: return
        case .processed(0):
            closeControlClient(event.descriptor)
            return
        case .processed: break
        }
        let reply: ControlProtocol.Reply
        let tooLong = ControlProtocol.Reply.error("request line longer than \(ControlProtocol.maximumLineLength) bytes")
        if let newline = client.input.firstIndex(of: UInt8(ascii: "\n")) {
            var line = Array(client.input[..<newline])
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            if line.count > ControlProtocol.maximumLineLength {
                reply = tooLong
            } else if let text = String(validating: line, as: UTF8.self) {
                switch ControlProtocol.parseRequest(text) {
                case .success(.open(let url)):
                    guard let answer = handleOpen(url, from: client) else {
                        client.awaitingReply = true
                        return
                    }
                    reply = answer
                case .failure(let failure): reply = .error(failure.message)
                }
            } else {
                reply = .error("the request is not UTF-8 text")
            }
        } else if client.input.count > ControlProtocol.maximumLineLength + 1 {
            reply = tooLong  // the longest line plus a CR, and still no LF
        } else {
            return  // wait for the rest of the line
        }
        // One short line on a fresh unix socket: it fits in the send buffer.
        _ = try? client.socket.write(Array(ControlProtocol.formatReply(reply).utf8))
        closeControlClient(event.descriptor)
    }

    func closeControlClient(_ fd: CInt) {
        try? loop.deregister(fd)
        unregisterControlClient(fd)
    }

    /// A registration or port request URL: parse, apply the policy, and reply; a new
    /// registration is queued for the registry file instead (nil: `client` is answered when the
    /// file is written, by `registrySaved`).
    func handleOpen(_ url: String, from client: ControlClient? = nil) -> ControlProtocol.Reply? {
        let request: RegistrationRequest
        do {
            request = try RegistrationURL.parse(url)
        } catch {
            log("refused a registration request: \(error)")
            return .error("cannot answer this URL: \(error)")
        }
        var resultText = "-"
        // Ids appear in logs only as `logName` (a registered id is a credential; docs/security.md).
        if case .register(let id) = request.kind {
            let name = ApplicationRegistry.logName(id)
            let result = policy.evaluate(id)
            resultText = result.rawValue
            if result == .ok {
                if !registry.contains(id) || registrations.pending.contains(where: { $0.id == id }) {
                    registrations.pending.append(RegistrationQueue.Pending(client: client, request: request, id: id))
                    writeNextRegistration()
                    return nil
                }
                unlockLocationV2(because: "registration of \(name)")
            } else {
                log("registration of \(name) refused: \(result.rawValue) (registration policy \(configuration.registration.rawValue))")
            }
            publish(.registration(result: result))
        }
        return .ok(result: resultText, url: RegistrationURL.reply(to: request, policy: policy, ports: ports))
    }

    /// Starts writing the registry for the oldest queued registration, unless a write is under
    /// way; one that needs no write (registered meanwhile) or cannot be queued is answered at once.
    func writeNextRegistration() {
        while !registrations.writing, let first = registrations.pending.first {
            let next: ApplicationRegistry?
            do {
                next = try registry.registering(first.id, unixSeconds: wallClockMilliseconds() / 1000,
                                                maximum: configuration.limits.maxRegisteredApplications)
            } catch {
                finishRegistration(failure: "\(error)", isNew: false)
                continue
            }
            guard let next else {
                finishRegistration(failure: nil, isNew: false)  // registered by an earlier request of the queue
                continue
            }
            let results = workerResults
            let submitted = worker.submit {
                var failure: String?
                do { try next.save() } catch { failure = "\(error)" }
                results.post(.registrySaved(next, failure: failure))
            }
            guard submitted else {
                finishRegistration(failure: "the daemon is stopping", isNew: false)
                continue
            }
            registrations.writing = true
        }
    }

    /// From the worker: the registry file for the oldest queued registration is written (or not).
    func registrySaved(_ next: ApplicationRegistry, failure: String?) {
        registrations.writing = false
        if failure == nil { registry = next }
        finishRegistration(failure: failure, isNew: failure == nil)
        writeNextRegistration()
    }

    /// Answers the oldest queued registration: registered (the registry is current) or refused
    /// with `failure`, which changed nothing. `isNew`: its id was added to the registry just now.
    private func finishRegistration(failure: String?, isNew: Bool) {
        guard !registrations.pending.isEmpty else { return }
        let done = registrations.pending.removeFirst()
        let name = ApplicationRegistry.logName(done.id)
        let reply: ControlProtocol.Reply
        if let failure {
            log("cannot save the registration of \(name): \(failure)")
            reply = .error("cannot save the registration: \(failure)")
        } else {
            if isNew {
                accessCodes.add(done.id)
                log("registered \(name)")
            }
            unlockLocationV2(because: "registration of \(name)")
            publish(.registration(result: .ok))
            reply = .ok(result: RegistrationResult.ok.rawValue,
                        url: RegistrationURL.reply(to: done.request, policy: policy, ports: ports))
        }
        guard let client = done.client else { return }
        let fd = client.socket.descriptor.rawValue
        guard controlClients[fd] === client else { return }  // closed meanwhile
        _ = try? client.socket.write(Array(ControlProtocol.formatReply(reply).utf8))
        closeControlClient(fd)
    }
}
