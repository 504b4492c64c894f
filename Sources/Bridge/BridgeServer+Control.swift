import Posix
import TMMProtocol

// The control socket (ControlProtocol): registration requests handed over by `tmm-bridge open`.
//
// A registration is answered only after the registry file is on disk, so an application told
// `OK` stays registered across a crash or restart; a request that cannot be saved is refused with
// an error and changes nothing.

/// One control-socket client: a request line being read, then the reply.
final class ControlClient {
    let socket: SocketConnection
    var input: [UInt8] = []
    let openedAt: Int64

    init(socket: consuming SocketConnection, now: Int64) {
        self.socket = socket
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
                let client = ControlClient(socket: socket, now: monotonicNanoseconds())
                let fd = client.socket.descriptor.rawValue
                do { try selector.register(fd, interest: .readable) } catch { continue }
                registerControlClient(fd, client)
            }
        }
    }

    func controlClientEvent(_ event: SelectorEvent) {
        guard let client = controlClients[event.descriptor] else { return }
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
                case .success(.open(let url)): reply = handleOpen(url)
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
        try? selector.deregister(fd)
        unregisterControlClient(fd)
    }

    /// A registration or port request URL: parse, apply the policy, persist, reply.
    func handleOpen(_ url: String) -> ControlProtocol.Reply {
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
                do {
                    if try registry.register(id, unixSeconds: wallClockMilliseconds() / 1000,
                                             maximum: configuration.limits.maxRegisteredApplications) {
                        accessCodes.add(id)
                        log("registered \(name)")
                    }
                } catch {
                    log("cannot save the registration of \(name): \(error)")
                    return .error("cannot save the registration: \(error)")
                }
                unlockLocationV2(because: "registration of \(name)")
            } else {
                log("registration of \(name) refused: \(result.rawValue) (registration policy \(configuration.registration.rawValue))")
            }
            publish(.registration(result: result))
        }
        return .ok(result: resultText, url: RegistrationURL.reply(to: request, policy: policy, ports: ports))
    }
}
