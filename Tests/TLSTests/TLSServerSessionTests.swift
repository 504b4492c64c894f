// The memory-BIO session against an independent client: Python's `ssl` (OpenSSL underneath, but
// its own client state machine and defaults) over a real loopback socket. The test plays the
// transport: socket bytes into `receive`, `takeOutput` back to the socket. The client is
// tmmtools/peers/tls_ping.py: sends "ping", prints the version, the ALPN protocol and the reply.
import Foundation
import COpenSSL
import Glibc
import TLS
import TestSupport
import Testing

/// One accepted connection served through a `TLSServerSession`: answers `ping` with `pong`.
private final class LoopbackServer: @unchecked Sendable {
    let listener: CInt
    let port: UInt16
    /// What the session said once done: the failure text, or the negotiated details.
    let outcome = Locked<String?>(nil)
    let done = DispatchSemaphore(value: 0)
    /// Queue an unrelated OpenSSL error before each read of an established session.
    var poisonErrorQueue = false

    init() throws {
        let fd = socket(AF_INET, CInt(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        try #require(bound == 0 && listen(fd, 4) == 0)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(listener) }

    /// Serves one client on a thread of its own.
    func serveOne(_ context: TLSServerContext) {
        Thread.detachNewThread { [self] in
            let client = accept(listener, nil, nil)
            defer { close(client); done.signal() }
            do {
                outcome.set(try serve(client, try TLSServerSession(context: context)))
            } catch {
                outcome.set("failure: \(error)")
            }
        }
    }

    private func serve(_ client: CInt, _ session: TLSServerSession) throws -> String {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        var plaintext: [UInt8] = []
        var replied = false
        func flush() {
            var out: [UInt8] = []
            session.takeOutput(appendingTo: &out)
            var offset = 0
            while offset < out.count {
                let sent = out[offset...].withUnsafeBytes {
                    send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if sent <= 0 { return }
                offset += sent
            }
        }
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            chunk.withUnsafeBytes { session.receive(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            do {
                while true {
                    if poisonErrorQueue && session.isEstablished { queueUnrelatedError() }
                    guard case .bytes = try session.readPlaintext(appendingTo: &plaintext, maxCount: 4_096) else {
                        break
                    }
                }
            } catch {
                flush()  // the alert
                return "failure: \(error)"
            }
            flush()
            if !replied && plaintext == Array("ping".utf8) {
                replied = true
                let pong = Array("pong".utf8)
                let taken = try pong.withUnsafeBytes { try session.writePlaintext($0) }
                #expect(taken == 4)
                session.close()
                flush()
                return
                    "\(session.protocolVersion) \(session.applicationProtocol ?? "none") "
                    + "\(session.serverName ?? "no SNI")"
            }
        }
        return "closed before ping"
    }
}

/// d2i_X509 on garbage queues ASN.1 errors and leaves them on the thread's queue.
private func queueUnrelatedError() {
    let garbage: [UInt8] = [0x30, 0x03, 0x02, 0x01]
    garbage.withUnsafeBufferPointer { bytes in
        var cursor: UnsafePointer<UInt8>? = bytes.baseAddress
        _ = d2i_X509(nil, &cursor, bytes.count)
    }
    precondition(ERR_peek_error() != 0)
}

@Suite("TLS server session (Python ssl client)", .tags(.unit))
struct TLSServerSessionTests {
    static let materials = Result { () throws -> (TLSServerContext, String) in
        let state = try Tools.temporaryDirectory("session")
        let loaded = try LocalCertificateAuthority.load(stateDirectory: state)
        return (
            try TLSServerContext(chain: loaded.chain, key: loaded.key),
            LocalCertificateAuthority.directory(inStateDirectory: state) + "/ca.pem"
        )
    }

    private func connect(
        alpn: String, highest: String, poisonErrorQueue: Bool = false
    ) throws -> (client: String, server: String?) {
        let (context, caFile) = try Self.materials.get()
        let server = try LoopbackServer()
        server.poisonErrorQueue = poisonErrorQueue
        server.serveOne(context)
        let client = PythonTools.command("peers.tls_ping", ["\(server.port)", caFile, alpn, highest])
        let run = try Tools.run(client.executable, client.arguments)
        server.done.wait()
        return (run.output.trimmingCharacters(in: .whitespacesAndNewlines) + run.errors, server.outcome.value)
    }

    @Test func tls13WithALPNAndSNI() throws {
        let result = try connect(alpn: "h2,http/1.1", highest: "1.3")
        #expect(result.client == "TLSv1.3 http/1.1 pong")
        #expect(result.server == "TLSv1.3 http/1.1 tmm-api-local.fieldsystems.trimble.com")
    }

    @Test func tls12WithoutALPN() throws {
        let result = try connect(alpn: "-", highest: "1.2")
        #expect(result.client == "TLSv1.2 None pong")
        #expect(result.server == "TLSv1.2 none tmm-api-local.fieldsystems.trimble.com")
    }

    @Test func tls11IsRefused() throws {
        let result = try connect(alpn: "-", highest: "1.1")
        #expect(result.client.hasPrefix("error"), "\(result.client)")
        #expect(result.server?.hasPrefix("failure: ") == true, "\(String(describing: result.server))")
        #expect(result.server?.contains("protocol") == true, "\(String(describing: result.server))")
    }

    @Test func anHTTP2OnlyClientGetsTheALPNAlert() throws {
        let result = try connect(alpn: "h2", highest: "1.3")
        #expect(result.client.contains("no application protocol"), "\(result.client)")
        #expect(result.server?.hasPrefix("failure: ") == true, "\(String(describing: result.server))")
    }

    /// Other OpenSSL calls on the io thread (a failed PEM read, a certificate check) can leave
    /// errors queued; an established session must not mistake them for its own (SSL_get_error
    /// reads the queue). The server here queues one before every read.
    @Test func aStaleErrorQueueDoesNotFailASession() throws {
        let result = try connect(alpn: "http/1.1", highest: "1.3", poisonErrorQueue: true)
        #expect(result.client == "TLSv1.3 http/1.1 pong")
        #expect(result.server == "TLSv1.3 http/1.1 tmm-api-local.fieldsystems.trimble.com")
    }

    @Test func garbageIsAFailureNotACrash() throws {
        let (context, _) = try Self.materials.get()
        let session = try TLSServerSession(context: context)
        Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8).withUnsafeBytes { session.receive($0) }
        var plaintext: [UInt8] = []
        #expect(throws: TLSServerSession.Failure.self) {
            _ = try session.readPlaintext(appendingTo: &plaintext, maxCount: 100)
        }
        #expect(plaintext.isEmpty)
        // A truncated ClientHello is just "more input needed".
        let partial = try TLSServerSession(context: context)
        ([0x16, 0x03, 0x01, 0x02, 0x00, 0x01] as [UInt8]).withUnsafeBytes { partial.receive($0) }
        #expect(try partial.readPlaintext(appendingTo: &plaintext, maxCount: 100) == .needsInput)
        #expect(!partial.isEstablished)
    }
}
