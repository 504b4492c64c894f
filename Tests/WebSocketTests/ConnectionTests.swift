// The connection state machine: RFC 6455 §5.7 exchanges, fragmentation, control frames, limits,
// the closing handshake from either side, keepalive, and what each state still reads and writes.
import TestSupport
import Testing
import WebSocket

@Suite("Connection", .tags(.unit))
struct ConnectionTests {
    static let hello = hex("81 85 37 fa 21 3d 7f 9f 4d 51 58")

    @Test func rfcMaskedHelloIsDelivered() {
        let (actions, connection) = run(Self.hello)
        #expect(actions == [.deliver(WebSocketMessage(kind: .text, payload: Array("Hello".utf8)))])
        #expect(actions.first.flatMap(text) == "Hello")
        #expect(connection.state == .open && connection.canSend && connection.termination == nil)
    }

    @Test func rfcUnmaskedHelloFailsTheConnection() {
        // §5.7 "A single-frame unmasked text message" is what a server sends; from a client it is
        // a protocol error (§5.1).
        let (actions, connection) = run(hex("81 05 48 65 6c 6c 6f"))
        #expect(
            actions == [.writeAndClose(WebSocketFrame.close(code: .protocolError, reason: "client frame not masked"))])
        #expect(connection.termination == .protocolError(.unmaskedClientFrame))
    }

    @Test func rfcFragmentedHello() {
        // §5.7 "A fragmented unmasked text message": 0x01 0x03 "Hel", 0x80 0x02 "lo"; masked here.
        let wire = clientFrame(0x1, Array("Hel".utf8), fin: false) + clientFrame(0x0, Array("lo".utf8))
        #expect(Array(wire.prefix(2)) == [0x01, 0x83] && Array(wire[9...10]) == [0x80, 0x82])
        let (actions, _) = run(wire)
        #expect(actions.map(text) == ["Hello"])
    }

    @Test func rfcPingIsAnsweredWithAPongCarryingTheSamePayload() {
        // §5.7: a ping with body "Hello"; the pong must carry "identical Application data" (§5.5.3).
        let (actions, _) = run(clientFrame(0x9, Array("Hello".utf8)))
        #expect(actions == [.write(hex("8a 05 48 65 6c 6c 6f"))])
        let (empty, _) = run(clientFrame(0x9, []))
        #expect(empty == [.write(hex("8a 00"))])
        let (full, _) = run(clientFrame(0x9, [UInt8](repeating: 7, count: 125)))
        #expect(full == [.write(hex("8a 7d") + [UInt8](repeating: 7, count: 125))])
    }

    @Test func rfcBinaryLengthFormsAreDelivered() {
        for length in [0, 125, 126, 256, 65_535, 65_536] {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 31) }
            let (actions, _) = run(clientFrame(0x2, payload, key: 0xDEAD_BEEF))
            #expect(actions == [.deliver(WebSocketMessage(kind: .binary, payload: payload))], "length \(length)")
        }
    }

    @Test func pongsAreSilentAndControlFramesMayInterleaveFragments() {
        let wire =
            clientFrame(0x1, Array("Hel".utf8), fin: false) + clientFrame(0xA, Array("unsolicited".utf8))
            + clientFrame(0x9, [1, 2]) + clientFrame(0x0, [], fin: false) + clientFrame(0x0, Array("lo".utf8))
        let (actions, _) = run(wire)
        #expect(
            actions == [
                .write(hex("8a 02 01 02")), .deliver(WebSocketMessage(kind: .text, payload: Array("Hello".utf8))),
            ])
    }

    @Test func emptyMessagesAndManyFramesInOneRead() {
        let wire = clientFrame(0x1, []) + clientFrame(0x2, []) + clientText("a") + clientText("b")
        let (actions, _) = run(wire)
        #expect(
            actions == [
                .deliver(WebSocketMessage(kind: .text, payload: [])),
                .deliver(WebSocketMessage(kind: .binary, payload: [])),
                .deliver(WebSocketMessage(kind: .text, payload: [0x61])),
                .deliver(WebSocketMessage(kind: .text, payload: [0x62])),
            ])
    }

    @Test func messageLimitCountsAllFragments() {
        let configuration = WebSocketConnection.Configuration(maxFrameSize: 100, maxMessageSize: 150)
        let atLimit =
            clientFrame(0x2, [UInt8](repeating: 1, count: 100), fin: false)
            + clientFrame(0x0, [UInt8](repeating: 2, count: 50))
        #expect(run(atLimit, configuration: configuration).actions.count == 1)
        let over =
            clientFrame(0x2, [UInt8](repeating: 1, count: 100), fin: false)
            + clientFrame(0x0, [UInt8](repeating: 2, count: 51))
        let (actions, connection) = run(over, configuration: configuration)
        #expect(
            actions == [
                .writeAndClose(WebSocketFrame.close(code: .messageTooBig, reason: "message of 151 bytes is too large"))
            ])
        #expect(connection.termination == .protocolError(.messageTooLarge(151)))
        // The declared length alone triggers it: the payload never has to arrive.
        let header = Array(clientFrame(0x2, [UInt8](repeating: 0, count: 101)).prefix(8))
        #expect(run(header, configuration: configuration).actions.count == 1)
    }

    // MARK: Closing handshake

    @Test func peerInitiatedCloseIsEchoedThenTheServerCloses() {
        let (actions, connection) = run(clientClose(1000, reason: Array("bye".utf8)))
        // §5.5.1: echo the status code; §7.1.1: the server closes TCP first.
        #expect(actions == [.writeAndClose(hex("88 02 03 e8"))])
        #expect(connection.state == .closingByPeer && !connection.canSend && !connection.isReading)
        #expect(connection.termination == .closedByPeer(code: .normalClosure, reason: "bye"))
    }

    @Test func closeWithoutBodyIsAnsweredWithoutBody() {
        let (actions, connection) = run(clientClose(nil))
        #expect(actions == [.writeAndClose(hex("88 00"))])
        #expect(connection.termination == .closedByPeer(code: nil, reason: ""))
    }

    @Test func bytesAfterThePeersCloseAreDiscarded() {
        // §1.4: "after receiving a control frame indicating the connection should be closed, a
        // peer discards any further data received." Even garbage.
        var connection = WebSocketConnection()
        let actions = feed(&connection, clientClose(1001) + clientText("late") + clientFrame(0x9, []) + [0xFF, 0xFF])
        #expect(actions == [.writeAndClose(hex("88 02 03 e9"))])
        #expect(feed(&connection, clientText("later")).isEmpty)
        connection.transportClosed()
        #expect(connection.state == .closed && connection.termination == .closedByPeer(code: .goingAway, reason: ""))
    }

    @Test func serverInitiatedClose() {
        var connection = WebSocketConnection()
        #expect(
            connection.close(code: .goingAway, reason: "restart") == .write(hex("88 09 03 e9") + Array("restart".utf8)))
        #expect(connection.state == .closingByUs && !connection.canSend && connection.isReading)
        #expect(connection.close() == nil, "one Close only")
        // Still reading: data the client sent before it saw our Close is delivered; pings are not
        // answered any more (nothing is written after our Close).
        let actions = feed(
            &connection, clientText("in flight") + clientFrame(0x9, [9]) + clientClose(1001) + clientText("after"))
        #expect(actions == [.deliver(WebSocketMessage(kind: .text, payload: Array("in flight".utf8))), .close])
        #expect(
            connection.state == .closed && connection.termination == .closeAcknowledged(code: .goingAway, reason: ""))
    }

    @Test func protocolErrorAfterOurCloseSendsNoSecondClose() {
        var connection = WebSocketConnection()
        _ = connection.close()
        #expect(feed(&connection, hex("81 05 48 65 6c 6c 6f")) == [.close])
        #expect(connection.termination == .protocolError(.unmaskedClientFrame))
    }

    @Test func closeTimeoutBoundsTheWaitForThePeersClose() {
        var connection = WebSocketConnection()
        _ = connection.close()
        #expect(connection.idle(now: 100_000_000_000) == nil)  // the wait starts at this tick
        #expect(connection.idle(now: 104_000_000_000) == nil)
        #expect(connection.idle(now: 105_000_000_000) == .close)
        #expect(connection.state == .closed && connection.termination == .closeTimeout)
        #expect(connection.idle(now: 200_000_000_000) == nil)
    }

    @Test func ownerFailsASlowClientWithPolicyViolation() {
        var connection = WebSocketConnection()
        #expect(
            connection.fail(code: .policyViolation, reason: "too slow")
                == .writeAndClose(hex("88 0a 03 f0") + Array("too slow".utf8)))
        #expect(connection.state == .closed && connection.termination == .failedByOwner(.policyViolation))
        #expect(connection.fail(code: .policyViolation) == nil)
        #expect(feed(&connection, Self.hello).isEmpty)
        var closing = WebSocketConnection()
        _ = closing.close()
        #expect(closing.fail(code: .policyViolation) == .close)
    }

    @Test func transportLossWhileOpen() {
        var connection = WebSocketConnection()
        _ = feed(&connection, Array(Self.hello.prefix(4)))
        connection.transportClosed()
        #expect(connection.state == .closed && connection.termination == .transportClosed)
        #expect(feed(&connection, Array(Self.hello.dropFirst(4))).isEmpty)
    }

    // MARK: Keepalive

    static let second: Int64 = 1_000_000_000

    @Test func silentClientIsPingedThenDropped() {
        var connection = WebSocketConnection()
        #expect(connection.idle(now: 0) == nil)
        #expect(connection.idle(now: 19 * Self.second) == nil)
        #expect(connection.idle(now: 20 * Self.second) == .write(hex("89 00")))
        #expect(connection.idle(now: 21 * Self.second) == nil, "one ping per silence")
        #expect(connection.idle(now: 39 * Self.second) == nil)
        #expect(
            connection.idle(now: 40 * Self.second)
                == .writeAndClose(WebSocketFrame.close(code: .goingAway, reason: "ping timeout")))
        #expect(connection.state == .closed && connection.termination == .keepaliveTimeout)
    }

    @Test func anyBytesFromTheClientCountAsLife() {
        var connection = WebSocketConnection()
        _ = connection.idle(now: 0)
        #expect(connection.idle(now: 20 * Self.second) == .write(hex("89 00")))
        #expect(feed(&connection, clientFrame(0xA, [])).isEmpty)  // the pong
        #expect(connection.idle(now: 30 * Self.second) == nil)
        #expect(connection.idle(now: 45 * Self.second) == nil)
        #expect(connection.idle(now: 50 * Self.second) == .write(hex("89 00")), "20 s after the tick that saw the pong")
        // A client that pings more often than the interval (every 15 s here) is never pinged.
        var chatty = WebSocketConnection()
        for tick in 0...24 {
            if tick % 3 == 0 { _ = feed(&chatty, clientFrame(0x9, [])) }
            #expect(chatty.idle(now: Int64(tick) * 5 * Self.second) == nil)
        }
    }

    @Test func clockOddities() {
        var connection = WebSocketConnection()
        _ = connection.idle(now: 10 * Self.second)
        #expect(connection.idle(now: 0) == nil, "a clock going backwards is no silence")
        #expect(connection.idle(now: .max) == .write(hex("89 00")))
        var negative = WebSocketConnection()
        _ = negative.idle(now: .min)
        #expect(negative.idle(now: .max) == .write(hex("89 00")), "saturating, no overflow trap")
    }

    @Test func emptyInputConsumesNothing() {
        var connection = WebSocketConnection()
        let none: [UInt8] = []
        let step = connection.receive(none.span)
        #expect(step == WebSocketConnection.Step(consumed: 0, action: nil))
    }
}
