import BridgeCore
import Posix
import TMMProtocol

// The control socket (ControlProtocol): registration requests handed over by `tmm-bridge open`,
// and status requests from `tmm-bridge status` (answered at once from `daemonStatus()`).
//
// What to answer, when the registry file is written and when V2 unlocks are BridgeCore's
// RegistrationDesk; here its actions are carried out. The registry file is written on the worker
// thread (its fsync can take milliseconds to seconds), one registration at a time; the io thread
// goes on serving meanwhile and the desk answers the client when the write is done.

/// One control-socket client: a request line being read, then the reply.
final class ControlClient {
    let socket: SocketConnection
    /// How the desk names it (replies to it go by this number).
    let desk: RegistrationDesk.Client
    var input: [UInt8] = []
    let openedAt: Int64
    /// Set once its request is answered later (a registration waiting for the registry file):
    /// nothing more is read from it.
    var awaitingReply = false
    /// The part of its reply the socket did not take yet (a status document larger than the
    /// socket's buffer, or a client that reads slowly), sent when it is writable again.
    var unsentReply: ArraySlice<UInt8> = []

    init(socket: consuming SocketConnection, desk: RegistrationDesk.Client, now: Int64) {
        self.socket = socket
        self.desk = desk
        openedAt = now
    }
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
                nextControlClientNumber += 1
                let client = ControlClient(socket: socket, desk: RegistrationDesk.Client(number: nextControlClientNumber),
                                           now: monotonicNanoseconds())
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
        if !client.unsentReply.isEmpty {
            if event.isHangUp || event.isError { closeControlClient(event.descriptor) } else { sendReply(to: event.descriptor) }
            return
        }
        if client.awaitingReply {
            // Its line is read: only a hang-up or an error can come now. The registration goes
            // on (it is written, and the app can still use it); there is no one left to tell.
            if event.isHangUp || event.isError { closeControlClient(event.descriptor) }
            return
        }
        let result: IOResult
        do {
            result = try client.socket.read(appendingTo: &client.input,
                                            maxCount: ControlProtocol.readLimit(buffered: client.input.count))
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
        switch ControlProtocol.readRequestLine(client.input) {
        case .needMore:
            return
        case .request(.open(let url)):
            let registry = registry
            driveDesk { $0.open(url, from: client.desk, isRegistered: registry.contains, into: &$1) }
            // Not answered yet (and so still here): a registration waiting for the file.
            if controlClients[event.descriptor] != nil { client.awaitingReply = true }
        case .request(.status):
            reply(.status(json: daemonStatus().json()), to: event.descriptor)
        case .refused(let reply):
            self.reply(reply, to: event.descriptor)
        }
    }

    /// Sends `reply` to a control client and closes it once the whole line is written.
    func reply(_ reply: ControlProtocol.Reply, to fd: CInt) {
        guard let client = controlClients[fd] else { return }
        client.unsentReply = ArraySlice(ControlProtocol.formatReply(reply).utf8)
        sendReply(to: fd)
    }

    /// Writes what the socket takes of the client's unsent reply; closes the client when it is
    /// all written (or the client is gone), else waits for the socket to be writable. A short
    /// line fits a fresh unix socket's buffer at once; a status document usually does too.
    private func sendReply(to fd: CInt) {
        guard let client = controlClients[fd] else { return }
        while !client.unsentReply.isEmpty {
            let result: IOResult
            do {
                result = try client.unsentReply.withUnsafeBytes { bytes throws(Errno) in try client.socket.write(bytes) }
            } catch {
                closeControlClient(fd)
                return
            }
            guard case .processed(let count) = result, count > 0 else {
                // Full: the rest when the client has read some (the 10 s limit still applies).
                if (try? loop.modify(fd, interest: .writable)) == nil { closeControlClient(fd) }
                return
            }
            client.unsentReply = client.unsentReply.dropFirst(count)
        }
        closeControlClient(fd)
    }

    func closeControlClient(_ fd: CInt) {
        try? loop.deregister(fd)
        unregisterControlClient(fd)
    }

    /// Feeds one event to the desk and carries out its actions (a save that ends at once reports
    /// back into the same list).
    func driveDesk(_ event: (inout RegistrationDesk, inout [RegistrationDesk.Action]) -> Void) {
        var actions: [RegistrationDesk.Action] = []
        event(&desk, &actions)
        var index = 0
        while index < actions.count {
            let action = actions[index]
            index += 1
            switch action {
            case .reply(let reply, let client):
                guard let client, let fd = controlClients.first(where: { $0.value.desk == client })?.key else { continue }
                self.reply(reply, to: fd)
            case .save(let id):
                if let outcome = startSaving(id) { desk.saveFinished(outcome, into: &actions) }
            case .addAccessCode(let id):
                accessCodes.add(id)
            case .publish(let event):
                publish(event)
            case .log(let line, let key):
                log(line, key: key)
            }
        }
    }

    /// Hands the registry with `id` added to the worker; returns how the save ended when it ended
    /// at once (registered already, the registry full, the daemon stopping).
    private func startSaving(_ id: GUID) -> RegistrationDesk.SaveOutcome? {
        let next: ApplicationRegistry?
        do {
            next = try registry.registering(id, unixSeconds: wallClockMilliseconds() / 1000,
                                            maximum: configuration.limits.maxRegisteredApplications)
        } catch {
            return .failed("\(error)")
        }
        guard let next else { return .saved(isNew: false) }  // registered by an earlier request of the queue
        let results = workerResults
        let submitted = worker.submit {
            var failure: String?
            do { try next.save() } catch { failure = "\(error)" }
            results.post(.registrySaved(next, failure: failure))
        }
        return submitted ? nil : .failed("the daemon is stopping")
    }

    /// From the worker: the registry file for the registration being saved is written (or not).
    func registrySaved(_ next: ApplicationRegistry, failure: String?) {
        if failure == nil { registry = next }
        driveDesk { $0.saveFinished(failure.map { .failed($0) } ?? .saved(isNew: true), into: &$1) }
    }
}
