// tmm-wsecho: the echo server the WebSocket conformance suite (tmmtools/conformance, Autobahn's
// cases) runs against. Test builds only: it is its own executable, no dependency of tmm-bridge,
// and neither `make install` nor the .deb carries it.
//
// It is the daemon's server, not a copy of it: BridgeServer with the input side injected (no
// gpsd, no receiver, so no position is ever sent) serving WebSocket V1 on 127.0.0.1. A client's
// bytes take the daemon's whole path: the loop's accept and reads, HTTP1's request parsing and
// the upgrade (BridgeCore's HTTPExchange), ClientConnection, WebSocketConnection's frames, the
// outbound queue, the closing and draining steps. The one difference is
// `Environment.dataMessageReply`, nil in the daemon, which here sends every text or binary message
// back as one frame of the same kind (docs/websocket.md, "Conformance").
//
// Usage: tmm-wsecho [--port N] [--ws-max-message BYTES] [--state-dir DIR]
// Prints `secure PORT` (the same server over TLS, with a local CA in the state directory) and then
// `listening PORT` once both listen (ws://127.0.0.1:PORT/); stops on SIGTERM or SIGINT. Without
// --port the port is a free one; a busy --port falls back as the daemon's ports do (logged), so the
// printed port is always the one in use. The state directory (TLS and Access Code V2 keys) is a
// temporary one, removed at exit, unless --state-dir names one.
import Bridge
import BridgeCore
import Foundation
import InputLoop
import Posix
import TMMProtocol
import WebSocket

func fail(_ message: String, status: Int32 = 64) -> Never {
    FileHandle.standardError.write(Data("tmm-wsecho: \(message)\n".utf8))
    exit(status)
}

var configuration = BridgeConfiguration()
configuration.listenAddresses = ["127.0.0.1"]
configuration.registration = .open
configuration.discovery = false
var requestedPort: UInt16?
var stateDirectory: String?
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst() {
    guard let value = arguments.popFirst() else { fail("\(name) needs a value") }
    switch name {
    case "--port":
        guard let port = UInt16(value) else { fail("--port: not a port: \(value)") }
        requestedPort = port
    case "--ws-max-message":
        // The daemon's own option, parsed the daemon's way (64K, 1M, ...).
        do { try configuration.apply("ws-max-message", value) } catch { fail("\(error)") }
    case "--state-dir":
        stateDirectory = value
    default:
        fail("unknown option \(name) (usage: tmm-wsecho [--port N] [--ws-max-message BYTES] [--state-dir DIR])")
    }
}

// Every other server of the plan gets a free port of its own, so the echo never takes TMM's
// ports (or their 9650+ fallbacks) from a daemon running on the same machine.
var ports: [UInt16] = []
while ports.count < 6 {
    guard let port = freeLoopbackPort() else { fail("no free loopback port", status: 1) }
    if !ports.contains(port) && port != requestedPort { ports.append(port) }
}
configuration.basePorts = PortAssignment(
    location: requestedPort ?? ports[0], locationSecure: ports[1], api: ports[2],
    apiSecure: ports[3], locationV2: ports[4], locationV2Secure: ports[5])
configuration.fallbackStart = ports[5] &+ 1

let temporary = stateDirectory == nil
let base = stateDirectory ?? NSTemporaryDirectory() + "tmm-wsecho-\(getpid())"
defer { if temporary { try? FileManager.default.removeItem(atPath: base) } }

do { try SignalDescriptor.block(BridgeServer.stopSignals) } catch { fail("cannot block signals: \(error)", status: 1) }
signal(SIGPIPE, SIG_IGN)

let logger = Logger.standardError(program: "tmm-wsecho")
var environment = BridgeServer.Environment(
    stateDirectory: base + "/state", runtimeDirectory: base + "/run",
    version: "wsecho", notifySystemd: false)
environment.dataMessageReply = { message in
    WebSocketFrame.encode(opcode: message.kind == .text ? .text : .binary, payload: message.payload.span)
}

do {
    let input = try ReceiverInput.injected(log: logger)
    let server = try BridgeServer(configuration: configuration, environment: environment, input: input, log: logger)
    // The listeners are bound (connections wait in their backlog until the loop runs).
    // Unbuffered: a parent reading the pipe sees the lines at once.
    FileHandle.standardOutput.write(
        Data("secure \(server.ports.locationSecure)\nlistening \(server.ports.location)\n".utf8))
    try server.run()
} catch {
    fail("\(error)", status: 1)
}
