import BridgeCore
import InputLoop
import Posix
import TMMProtocol
import WebSocket

// The executor of the client connections: each one's rules are BridgeCore's `ClientConnection`
// (events in, actions out); here its events are read from the socket and the loop, and its
// actions carried out on the transport, the selector and the other parts of the server.
//
// An event is fed to the machine by `drive`, which then carries out the actions in order. The
// machine is never changed from inside its own action list: what an action leads to that the
// machine must know (what a `.flush` wrote, that it failed, how a receiver command started) is
// kept as a follow-up and fed to the machine as its next event once the list is done; its
// actions are carried out the same way. A write that fails ends the list there. At `.close`, the
// connection is closed and the rest of the list and the follow-ups are dropped. (A `.flush`
// before the `.close` is still carried out: that is how a goodbye frame goes out on shutdown.)

/// What the actions of one list leave for the machine, in the order it is told. Fixed size: no
/// allocation per event.
struct ConnectionFollowUps {
    /// Bytes the `.flush`es of the list wrote from the first unsent one, where the next flush of
    /// the list goes on from (the output does not change within a list), and whether the last
    /// left output the transport would not take (nil: no flush).
    var written = 0
    var position: OutboundQueue.WritePosition?
    var blocked: Bool?
    /// A write failed (EPIPE, ECONNRESET, a TLS failure): the client is gone.
    var writeFailed = false
    /// How the gpsd commands of a `.receiverCommand` started.
    var receiverCommand: ReceiverCommandOutcome?

    var isEmpty: Bool { blocked == nil && !writeFailed && receiverCommand == nil }
}

extension ClientServers {
    /// Feeds one event to `connection`'s machine, carries out the actions it returns, then feeds
    /// it the follow-ups those left (and carries out theirs) until none is left.
    func drive(
        _ connection: Connection,
        _ event: (inout ClientConnection, inout [ClientConnectionAction]) -> Void
    ) {
        // One list reused across events; an event driven while another is carried out (none
        // today) would simply get a list of its own.
        var actions = actionBuffer
        actionBuffer = []
        defer {
            actions.removeAll(keepingCapacity: true)
            actionBuffer = actions
        }
        event(&connection.machine, &actions)
        var followUps = ConnectionFollowUps()
        guard carryOut(actions, for: connection, followUps: &followUps) else { return }
        while !followUps.isEmpty {
            let now = monotonicNanoseconds()
            let next = followUps
            followUps = ConnectionFollowUps()
            actions.removeAll(keepingCapacity: true)
            if next.writeFailed {
                connection.machine.transportFailed(into: &actions)
            } else {
                if let blocked = next.blocked {
                    connection.machine.written(next.written, blocked: blocked, now: now, into: &actions)
                }
                if let outcome = next.receiverCommand {
                    connection.machine.receiverCommandStarted(
                        outcome, now: now, host: host(for: connection), into: &actions)
                }
            }
            guard carryOut(actions, for: connection, followUps: &followUps) else { return }
        }
    }

    /// Carries out one action list; false once the connection is closed (nothing more is for it).
    private func carryOut(
        _ actions: [ClientConnectionAction], for connection: Connection,
        followUps: inout ConnectionFollowUps
    ) -> Bool {
        for action in actions {
            switch action {
            case .close:
                close(connection)
                return false
            case .flush:
                flush(connection, followUps: &followUps)
                // The client is gone: the rest of the list is moot (nothing more is subscribed or
                // authenticated for it); its machine hears of it next, and closes.
                if followUps.writeFailed { return true }
            case .shutdownWrite:
                connection.transport.shutdownWrite()
            case .setInterest:
                guard updateSelectorInterest(connection) else {
                    close(connection)
                    return false
                }
            case .subscribe(let channel):
                parts.outputs.subscribe(connection, to: channel)
            case .unsubscribe:
                parts.outputs.unsubscribe(connection)
            case .receiverCommand(let connect):
                followUps.receiverCommand = runReceiverCommand(connect: connect)
            case .authenticated(let id):
                parts.registrations.authenticated(id)
            case .authenticatedByAccessCodeV2(let id):
                parts.registrations.authenticatedByAccessCodeV2(id)
            case .setLocationV2Interval(let interval):
                parts.outputs.locationV2.request(interval: interval)
            case .saveSettings(let settings):
                settingsChanged(settings)
            case .report(let report):
                record(report, on: connection)
            }
        }
        return true
    }

    /// Hands `PUT /receiver`'s gpsd commands to the input side's worker (the reply waits for them).
    private func runReceiverCommand(connect: Bool) -> ReceiverCommandOutcome {
        do {
            return .started(ticket: connect ? try parts.input.connect() : try parts.input.disconnect())
        } catch {
            if case .gpsdFailed = error { return .gpsdFailed(error.description) }
            return .refused(error.description)
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

    /// Reads after the first one, for records a TLS transport holds, before the connection
    /// waits for the next tick: 16 records are 256 KiB, more than one socket read brings, so
    /// only a client that keeps its transport full is ever cut short (and read again next tick).
    static let bufferedReadRounds = 16

    /// A read, then the records OpenSSL took off the socket with it, which the selector will not
    /// report (bounded: a client cannot keep the loop here).
    func readAvailable(_ connection: Connection) {
        read(connection)
        var rounds = 0
        while rounds < Self.bufferedReadRounds, connection.transport.hasBufferedInput, wantsInput(connection) {
            read(connection)
            rounds += 1
        }
    }

    /// Reads connections whose transport holds input the selector cannot report (TLS records
    /// left when reading stopped for backpressure, or after the bounded rounds above): once per
    /// tick, so such input waits at most a tick.
    func readBufferedInput() {
        for connection in Array(connections.values)
        where connection.transport.hasBufferedInput && wantsInput(connection) {
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
            if let reason = connection.transport.failureReason {
                recordTransportFailure(reason, on: connection, established: connection.transport.isEstablished)
            }
            drive(connection) { $0.transportFailed(into: &$1) }
            return
        }
        let now = monotonicNanoseconds()
        if connection.isHandshaking, connection.transport.isEstablished {
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
            let host = host(for: connection)
            drive(connection) { $0.bytesRead(bytes, now: now, host: host, into: &$1) }
        }
    }

    /// A `.flush`: writes as much of the machine's output as the transport takes, from the first
    /// byte no earlier flush of the same list wrote, and keeps what it wrote as a follow-up.
    private func flush(_ connection: Connection, followUps: inout ConnectionFollowUps) {
        guard !followUps.writeFailed else { return }
        // The transport's own bytes first (a TLS handshake): queued output waits behind them.
        if connection.transport.hasPendingOutput {
            do { try connection.transport.flushPending() } catch {
                followUps.writeFailed = true
                return
            }
            if connection.transport.hasPendingOutput {
                followUps.blocked = true
                return
            }
        }
        let output = connection.machine.output
        var position = followUps.position ?? output.unsentStart
        defer { followUps.position = position }
        var blocked = false
        writing: while let (bytes, offset) = output.chunk(at: position) {
            let result: IOResult
            do {
                result = try connection.transport.write(bytes, from: offset)
            } catch {
                // EPIPE, ECONNRESET: the client is gone.
                followUps.writeFailed = true
                return
            }
            switch result {
            case .processed(let count):
                output.advance(&position, by: count)
                followUps.written += count
                if count < bytes.count - offset {
                    blocked = true
                    break writing
                }
            case .wouldBlock:
                blocked = true
                break writing
            }
        }
        followUps.blocked = blocked
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
        parts.outputs.unsubscribe(connection)
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
            let host = host(for: connection)
            drive(connection) { $0.tick(now: now, host: host, into: &$1) }
        }
    }

    /// A receiver connected: deferred `PUT /receiver {"isConnected":true}` replies are answered.
    func answerDeferredWhenConnected() {
        let now = monotonicNanoseconds()
        for connection in Array(connections.values) where connection.machine.isWaitingForReceiver {
            let host = host(for: connection)
            drive(connection) { $0.receiverConnected(now: now, host: host, into: &$1) }
        }
    }

    /// The gpsd commands of a `PUT /receiver` are done (`failure`: why they failed).
    func receiverControlFinished(ticket: Int, failure: String?) {
        guard let connection = connections.values.first(where: { $0.machine.awaitingTicket == ticket }) else { return }
        let message = failure.map { ReceiverControlError.gpsdFailed($0).description }
        let host = host(for: connection)
        let now = monotonicNanoseconds()
        drive(connection) { $0.receiverCommandFinished(failure: message, now: now, host: host, into: &$1) }
    }

    /// The server stops: WebSocket clients are told (1001), every connection closes.
    func closeAllConnections() {
        for connection in Array(connections.values) {
            drive(connection) { $0.serverStopping(into: &$1) }
        }
    }

    /// Queues a shared frame for one client (the hub's outputs): BridgeCore's
    /// `ClientConnection.deliver` applies the queue policy and, once written, the slow-client rule.
    func deliver(_ frame: [UInt8], _ kind: OutboundQueue.Kind, to connection: Connection) {
        drive(connection) { $0.deliver(frame, kind, into: &$1) }
    }
}
