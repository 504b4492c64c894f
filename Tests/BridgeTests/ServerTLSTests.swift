// The secure ports under hostile input: clients that stall mid-handshake, talk garbage or plain
// HTTP, and another local user reaching for the keys. Each must cost only its own connection.
import BridgeCore
import Foundation
import Glibc
import Posix
import TestSupport
import Testing
import TMMProtocol

@testable import Bridge

@Suite("Secure ports under hostile clients", .tags(.integration), .serialized)
struct ServerTLSTests {
    /// A real TLS 1.3 ClientHello's first bytes (record header and part of the handshake): the
    /// server waits for the rest.
    static let partialClientHello: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03]

    @Test func stalledHandshakesAreClosedAfterTheTimeoutAndBlockNobody() throws {
        let bridge = try TestBridge.start { $0.limits.tlsHandshakeTimeout = 500_000_000 }
        var stalled: [RawClient] = []
        for _ in 0..<50 {
            let client = try RawClient(port: bridge.ports.apiSecure)
            try client.send(Self.partialClientHello)
            stalled.append(client)
        }
        // Meanwhile plain clients are answered at once.
        let plain = try RawClient(port: bridge.ports.api)
        try plain.send("GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try plain.response(milliseconds: 1000).status == 404)
        // Every stalled handshake is closed once its time is up (0.5 s, checked each tick).
        for client in stalled {
            #expect(try client.isClosedByServer(milliseconds: 3000))
        }
        #expect(bridge.logLines(containing: "TLS handshake failed") == 0, "a time-out is not a failure to log")
    }

    @Test func garbageAndPlainHTTPOnASecurePortCostOnlyThatConnection() throws {
        let bridge = try TestBridge.start()
        let garbage = try RawClient(port: bridge.ports.locationV2Secure)
        try garbage.send(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(try garbage.isClosedByServer(milliseconds: 2000))
        // The alert OpenSSL sends before closing is not an HTTP response.
        #expect(!String(decoding: garbage.buffer, as: UTF8.self).contains("HTTP/1.1"))
        try bridge.waitForLog("TLS handshake failed on locationV2SecurePort")
        var random = SplitMix64(state: 11)
        for _ in 0..<20 {
            let client = try RawClient(port: bridge.ports.apiSecure)
            try client.send((0..<600).map { _ in UInt8.random(in: 0...255, using: &random) })
            #expect(try client.isClosedByServer(milliseconds: 2000))
        }
        // After all that, a real handshake still succeeds.
        #expect(try bridge.realTLSHandshakeSucceeds())
    }

    /// The private keys are the daemon's alone: another local user (here `nobody`, through
    /// setpriv) can read neither the TLS keys nor the Access Code V2 key.
    @Test(.enabled(if: getuid() == 0, "needs root to act as nobody"))
    func anotherUserCannotReadTheKeys() throws {
        let bridge = try TestBridge.start()
        let state = bridge.stateDirectory
        for path in [state + "/tls/server.key", state + "/tls/ca.key", state + "/access-code-v2.key"] {
            let attempt = try Process.run(
                URL(fileURLWithPath: "/usr/bin/setpriv"),
                arguments: [
                    "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", "/bin/cat", path,
                ]
            ) { _ in }
            attempt.waitUntilExit()
            #expect(attempt.terminationStatus != 0, "nobody read \(path)")
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(path)")
        }
        // The CA certificate is public (it is what users trust).
        let certificate = try Process.run(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            arguments: [
                "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", "/usr/bin/test", "-r",
                state + "/tls/ca.pem",
            ]
        ) { _ in }
        certificate.waitUntilExit()
        // The state directory itself is 0700: nobody cannot even reach the CA there.
        #expect(certificate.terminationStatus != 0)
    }
}
