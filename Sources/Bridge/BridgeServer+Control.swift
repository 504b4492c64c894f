import Glibc
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
            do { result = try controlListener.accept() } catch { return }
            switch consume result {
            case .wouldBlock:
                return
            case .accepted(let socket):
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
        do {
            result = try client.socket.read(appendingTo: &client.input, maxCount: ControlProtocol.maximumLineLength)
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
        if let newline = client.input.firstIndex(of: UInt8(ascii: "\n")) {
            var line = Array(client.input[..<newline])
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            if let text = String(validating: line, as: UTF8.self) {
                switch ControlProtocol.parseRequest(text) {
                case .success(.open(let url)): reply = handleOpen(url)
                case .failure(let failure): reply = .error(failure.message)
                }
            } else {
                reply = .error("the request is not UTF-8 text")
            }
        } else if client.input.count > ControlProtocol.maximumLineLength {
            reply = .error("request line longer than \(ControlProtocol.maximumLineLength) bytes")
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
        if case .register(let id) = request.kind {
            let result = policy.evaluate(id)
            resultText = result.rawValue
            if result == .ok {
                do {
                    if try registry.register(id, unixSeconds: wallClockMilliseconds() / 1000) {
                        log("registered application \(id)")
                    }
                } catch {
                    log("cannot save the registration of \(id): \(error)")
                    return .error("cannot save the registration: \(error)")
                }
                unlockLocationV2(because: "registration of \(id)")
            } else {
                log("registration of \(id) refused: \(result.rawValue) (registration policy \(configuration.registration.rawValue))")
            }
            publish(.registration(applicationID: id.canonical, result: result))
        }
        return .ok(result: resultText, url: RegistrationURL.reply(to: request, policy: policy, ports: ports))
    }
}
