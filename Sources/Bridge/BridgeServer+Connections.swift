import BridgeCore
import InputLoop
import Posix
import TLS
import TMMProtocol
import WebSocket

// The executor of the client connections: each one's rules are BridgeCore's `ClientConnection`
// (events in, actions out); here its events are read from the socket and the loop, and its
// actions carried out on the transport, the selector and the hub.
//
// An event is fed to the machine by `drive`, which then carries out the actions in order. Doing
// an action can report back (what a write took, a write error); those reports are events too and
// their actions join the same list. The machine never calls back into the loop, so nothing here
// needs to check whether a connection is still the one it was: at `.close`, or when a write or
// the selector fails, the connection is closed and the rest of the list is dropped. (A `.flush`
// before the `.close` is still carried out: that is how a goodbye frame goes out on shutdown.)

extension BridgeServer {
    /// The server as a connection sees it (ClientConnectionHost): read-only questions.
    struct ConnectionHost: ClientConnectionHost {
        let server: BridgeServer
        /// The connection asking (its peer shares Access Code V2's ledger and decryptions).
        let connection: Connection

        func httpDate() -> String { server.httpDate() }
        var ports: PortAssignment { server.ports }
        var version: String { server.environment.version }
        var receiverInfo: ReceiverInfo { server.input.receiverInfo }
        var isLocationV2Unlocked: Bool { server.isLocationV2Unlocked }
        var hasRegisteredApplications: Bool { !server.registry.entries.isEmpty }
        /// The table holds every registered id; the policy in force (reloadable) decides.
        func verifyAccessCode(headerValue: String) -> GUID? {
            server.accessCodes.verify(headerValue: headerValue).flatMap { server.policy.evaluate($0) == .ok ? $0 : nil }
        }
        func verifyAccessCodeV2(headerValue: String, overTLS: Bool, consume: Bool) -> Result<GUID, AccessCodeV2Verifier.Refusal> {
            let key = server.accessCodeV2Key
            return server.accessCodeV2.verify(headerValue: headerValue, overTLS: overTLS, consume: consume,
                                              peer: server.peer(of: connection), now: wallClockMilliseconds() / 1000,
                                              instant: monotonicNanoseconds(),
                                              decrypt: { key.decryptOAEPSHA256($0) },
                                              digest: { bytes in
                                                  let digest = Digest.sha256(bytes)
                                                  return (0..<32).map { digest[$0] }
                                              })
        }
        var accessCodeV2PublicKey: (n: String, e: String) { server.accessCodeV2PublicKey }
        var deviceSettings: DeviceSettings { server.deviceSettings }
        func sha1(_ bytes: Span<UInt8>) -> WebSocketHandshake.SHA1Digest { Digest.sha1(bytes) }

        func reply(toDataMessage message: WebSocketMessage, on channel: ClientChannel) -> [UInt8]? {
            server.environment.dataMessageReply?(message)
        }

        func statusEventFrame() -> [UInt8] {
            let input = server.input
            let status = BridgeStatus(input: input.state, receiver: input.receiverInfo, quality: server.lastQuality)
            let bytes = BridgeEventEncoder.bytes(.status(status), unixMilliseconds: wallClockMilliseconds())
            return WebSocketFrame.text(bytes.span)
        }
    }

    func connectionHost(for connection: Connection) -> ConnectionHost { ConnectionHost(server: self, connection: connection) }

    /// Who is behind `connection`: asked of the kernel once, when it first presents an Access
    /// Code V2 (ClientPeer says what the answer means).
    func peer(of connection: Connection) -> ClientPeer {
        if let known = connection.peer { return known }
        let peer: ClientPeer
        do {
            let client = try tcpClientIdentity(of: connection.fd)
            peer = ClientPeer(owner: client.owner, address: client.address, isLoopback: client.isLoopback)
        } catch {
            // Not connected any more (getpeername failed): it cannot be answered anyway.
            peer = .localUnattributed
        }
        connection.peer = peer
        return peer
    }

    /// Feeds one event to `connection`'s machine and carries out the actions it returns.
    func drive(_ connection: Connection,
               _ event: (inout ClientConnection, inout [ClientConnectionAction]) -> Void) {
        // One list reused across events; an event driven while another is carried out (none
        // today) would simply get a list of its own.
        var actions = actionBuffer
        actionBuffer = []
        event(&connection.machine, &actions)
        carryOut(&actions, for: connection)
        actions.removeAll(keepingCapacity: true)
        actionBuffer = actions
    }

    private func carryOut(_ actions: inout [ClientConnectionAction], for connection: Connection) {
        var index = 0
        while index < actions.count {
            let action = actions[index]
            index += 1
            switch action {
            case .close:
                close(connection)
                return
            case .flush:
                flush(connection, into: &actions)
                // A write error closed it: the rest of the list is moot.
                if connection.machine.isClosed {
                    close(connection)
                    return
                }
            case .shutdownWrite:
                connection.transport.shutdownWrite()
            case .setInterest:
                guard updateSelectorInterest(connection) else {
                    close(connection)
                    return
                }
            case .subscribe(let channel):
                joinHub(connection, channel)
            case .unsubscribe:
                leaveHub(connection)
            case .receiverCommand(let connect):
                connection.machine.receiverCommandStarted(runReceiverCommand(connect: connect), now: monotonicNanoseconds(),
                                                          host: connectionHost(for: connection), into: &actions)
            case .authenticated(let id):
                driveDesk { $0.authenticated(id, into: &$1) }
            case .authenticatedByAccessCodeV2(let id):
                let registry = self.registry
                let maximum = configuration.limits.maxRegisteredApplications
                driveDesk {
                    $0.authenticatedByAccessCodeV2(id, isRegistered: registry.contains, registered: registry.entries.count,
                                                   maximum: maximum, now: monotonicNanoseconds(), into: &$1)
                }
            case .saveSettings(let settings):
                saveSettings(settings)
            case .report(let report):
                record(report, on: connection)
            }
        }
    }

    /// Hands `PUT /receiver`'s gpsd commands to the input side's worker (the reply waits for them).
    private func runReceiverCommand(connect: Bool) -> ReceiverCommandOutcome {
        do {
            return .started(ticket: connect ? try input.connect() : try input.disconnect())
        } catch {
            if case .gpsdFailed = error { return .gpsdFailed(error.description) }
            return .refused(error.description)
        }
    }

    private func record(_ report: ClientConnectionReport, on connection: Connection) {
        switch report {
        case .request:
            statistics.requests += 1
        case .upgrade:
            statistics.upgrades += 1
        case .refusedOrigin(let shown):
            statistics.refusedOrigins += 1
            if refusedOriginLog.shouldLog(shown, count: statistics.refusedOrigins, now: monotonicNanoseconds()) {
                log.warning("refused Origin '\(shown)' on \(connection.server.registrationKey) (not in allowed-origins): 403 (\(statistics.refusedOrigins) refused so far)")
            }
        case .accessCodeV2Refused(let refusal):
            recordAccessCodeV2Refusal(refusal)
        case .unexpectedMessage:
            statistics.unexpectedMessages += 1
        case .positionsDropped(let count):
            statistics.positionsDropped += count
        case .slowClientClosed(let behind, let nanoseconds, let dropped):
            statistics.slowClientsClosed += 1
            // Keyed without the numbers: a burst of slow clients is one line and a summary.
            log.warning("closing a slow WebSocket client (1008): \(behind) bytes behind for \(nanoseconds / 1_000_000) ms, \(dropped) positions dropped",
                        key: "closing a slow WebSocket client")
        }
    }

    // MARK: - Socket events

    func connectionEvent(_ event: SelectorEvent) {
        guard let connection = connections[event.descriptor] else { return }
        if event.isWritable {
            drive(connection) { _, actions in actions.append(.flush) }
            if connection.machine.isClosed { return }
        }
        if event.isReadable || event.isHangUp || event.isError {
            let hungUp = event.isHangUp || event.isError
            if connection.isHandshaking && connection.machine.isReading {
                // A hang-up or an error is taken at once: it ends the connection and costs nothing.
                if !hungUp, !takeHandshakeTurn(connection) { return }
                readHandshake(connection)
            } else if wantsInput(connection) {
                readAvailable(connection)
            } else {
                // Not reading (the machine's choice, or our own output backed up), so this is a
                // hang-up or an error: both directions are gone.
                if hungUp { drive(connection) { $0.transportFailed(into: &$1) } }
                return
            }
        }
        // A flush may have drained the transport's own backlog, a read may have made one.
        if !connection.machine.isClosed, !updateSelectorInterest(connection) { close(connection) }
    }

    /// Whether `connection` is read now: its machine reads, its transport's own output is not
    /// backed up, and its handshake does not wait for a turn.
    func wantsInput(_ connection: Connection) -> Bool {
        !connection.machine.isClosed && connection.machine.isReading && !connection.transport.isOutputBacklogged
            && !connection.awaitsHandshakeTurn
    }

    /// Watches what `connection` needs: what its machine asks for (`.setInterest`), without
    /// reading while `wantsInput` says no. False when the selector refused (close it then).
    func updateSelectorInterest(_ connection: Connection) -> Bool {
        var wanted: SelectorInterest = connection.machine.interest.readable && wantsInput(connection) ? .readable : []
        if connection.machine.interest.writable { wanted.insert(.writable) }
        guard wanted != connection.selectorInterest else { return true }
        do {
            try loop.modify(connection.fd, interest: wanted)
        } catch {
            return false
        }
        connection.selectorInterest = wanted
        return true
    }

    /// A read, then the records OpenSSL took off the socket with it, which the selector will not
    /// report (bounded: a client cannot keep the loop here).
    func readAvailable(_ connection: Connection) {
        read(connection)
        var rounds = 0
        while rounds < 16, connection.transport.hasBufferedInput, wantsInput(connection) {
            read(connection)
            rounds += 1
        }
    }

    /// Reads connections whose transport holds input the selector cannot report (TLS records
    /// left when reading stopped for backpressure, or after the bounded rounds above): once per
    /// tick, so such input waits at most a tick.
    func readBufferedInput() {
        for connection in Array(connections.values) where connection.transport.hasBufferedInput && wantsInput(connection) {
            read(connection)
            if !connection.machine.isClosed, !updateSelectorInterest(connection) { close(connection) }
        }
    }

    /// One read into `readScratch`, handed to the machine.
    private func read(_ connection: Connection) {
        let result: IOResult
        do {
            result = try connection.transport.read(into: &readScratch)
        } catch {
            if let tls = connection.transport as? TLSTransport, let failure = tls.failure {
                recordTLSFailure(failure, on: connection, established: tls.isEstablished)
            }
            drive(connection) { $0.transportFailed(into: &$1) }
            return
        }
        let now = monotonicNanoseconds()
        if connection.isHandshaking, let tls = connection.transport as? TLSTransport, tls.isEstablished {
            handshakeEnded(connection)
        }
        // A TLS handshake flight the socket did not take at once: wait for writability for it.
        if connection.transport.hasPendingOutput {
            drive(connection) { _, actions in actions.append(.flush) }
            if connection.machine.isClosed { return }
        }
        switch result {
        case .wouldBlock:
            return
        case .processed(0):
            drive(connection) { $0.endOfInput(now: now, into: &$1) }
        case .processed(let count):
            let bytes = readScratch[0..<count]
            let host = connectionHost(for: connection)
            drive(connection) { $0.bytesRead(bytes, now: now, host: host, into: &$1) }
        }
    }

    /// Writes as much of the machine's output as the transport takes, and reports how it went.
    private func flush(_ connection: Connection, into actions: inout [ClientConnectionAction]) {
        let now = monotonicNanoseconds()
        // The transport's own bytes first (a TLS handshake): queued output waits behind them.
        if connection.transport.hasPendingOutput {
            do { try connection.transport.flushPending() } catch {
                connection.machine.transportFailed(into: &actions)
                return
            }
            if connection.transport.hasPendingOutput {
                connection.machine.flushEnded(blocked: true, now: now, into: &actions)
                return
            }
        }
        var blocked = false
        writing: while let (bytes, offset) = connection.machine.output.nextChunk {
            let result: IOResult
            do {
                result = try connection.transport.write(bytes, from: offset)
            } catch {
                // EPIPE, ECONNRESET: the client is gone.
                connection.machine.transportFailed(into: &actions)
                return
            }
            switch result {
            case .processed(let count):
                connection.machine.wrote(count, now: now)
                if count < bytes.count - offset {
                    blocked = true
                    break writing
                }
            case .wouldBlock:
                blocked = true
                break writing
            }
        }
        connection.machine.flushEnded(blocked: blocked, now: now, into: &actions)
    }

    /// Closes the socket and forgets the connection (the machine has said `.close`), after the
    /// transport's last word (TLS: close_notify).
    func close(_ connection: Connection) {
        let fd = connection.fd
        // Once: by its machine's `.close`, or when the selector refused it (the machine may not
        // know yet, so a later event of the same pass could ask again).
        guard connections[fd] === connection else { return }
        connection.transport.prepareToClose()
        if connection.isHandshaking { handshakeEnded(connection) }
        connection.awaitsHandshakeTurn = false
        leaveHub(connection)
        try? loop.deregister(fd)
        connections[fd] = nil  // the last reference: the socket closes with the object
        admission.released(connection.server)
        log.debug("closed a connection on \(connection.server.registrationKey) (\(admission.open) open)")
    }

    // MARK: - Events from the loop and the input side

    /// Every `tickInterval`: ending deadlines, WebSocket keepalive, slow clients, HTTP time-outs
    /// and deferred replies.
    func tickConnections(now: Int64) {
        for connection in Array(connections.values) {
            let host = connectionHost(for: connection)
            drive(connection) { $0.tick(now: now, host: host, into: &$1) }
        }
    }

    /// A receiver connected: deferred `PUT /receiver {"isConnected":true}` replies are answered.
    func answerDeferredWhenConnected() {
        let now = monotonicNanoseconds()
        for connection in Array(connections.values) where connection.machine.isWaitingForReceiver {
            let host = connectionHost(for: connection)
            drive(connection) { $0.receiverConnected(now: now, host: host, into: &$1) }
        }
    }

    /// The gpsd commands of a `PUT /receiver` are done (`failure`: why they failed).
    func receiverControlFinished(ticket: Int, failure: String?) {
        guard let connection = connections.values.first(where: { $0.machine.awaitingTicket == ticket }) else { return }
        let message = failure.map { ReceiverControlError.gpsdFailed($0).description }
        let host = connectionHost(for: connection)
        let now = monotonicNanoseconds()
        drive(connection) { $0.receiverCommandFinished(failure: message, now: now, host: host, into: &$1) }
    }

    /// The server stops: WebSocket clients are told (1001), every connection closes.
    func closeAllConnections() {
        for connection in Array(connections.values) {
            drive(connection) { $0.serverStopping(into: &$1) }
        }
    }
}
