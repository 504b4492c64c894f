// Registration through the control socket against an in-process bridge, the registry across
// restarts, and the port plan with busy ports.
import ByteCoding
import Foundation
import GPSD
import Glibc
import InputLoop
import Logging
import Posix
import Synchronization
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeCore

@Suite("Registration and ports", .tags(.integration), .serialized)
struct ServerRegistrationTests {
    /// Sends `line` as is and returns the reply line.
    private func rawControl(_ bridge: TestBridge, _ line: [UInt8]) throws -> String {
        let socket = try StreamSocket.connect(unixPath: bridge.controlSocket)
        try socket.descriptor.writeAll(line)
        return String(
            decoding: try socket.readUntil(UInt8(ascii: "\n"), limit: 65_536, milliseconds: 3000), as: UTF8.self)
    }

    private func registryIDs(_ bridge: TestBridge) throws -> [String] {
        try ApplicationRegistry.load(path: bridge.stateDirectory + "/registry.json").entries.map(\.applicationId)
    }

    @Test func theIOSReplyCarriesTheResultAndTheRealPortsAsStrings() throws {
        let bridge = try TestBridge.start()
        guard case .ok(let result, let url) = try bridge.register(testAppID, returnURL: "myapp://response/register")
        else { Issue.record("refused"); return }
        #expect(result == "OK")
        let prefix = "myapp://response/register?"
        #expect(url.hasPrefix(prefix))
        let json = try #require(Base64.decode(url.dropFirst(prefix.count)))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        #expect(object["registrationResult"] as? String == "OK")
        for server in TMMServer.allCases {
            #expect(
                object[server.registrationKey] as? String == String(bridge.ports[server]), "\(server.registrationKey)")
        }
        #expect(try registryIDs(bridge) == [testAppID])
    }

    /// The registry file is written on the worker: while the write waits (the worker is held
    /// busy), the loop goes on answering REST at once, the app is not told `OK`, and nothing is
    /// on disk; once the write is done the reply comes and the id is in the file. A second app
    /// and a repeat of the first wait behind the write and are answered too.
    @Test func aRegistrationWaitsForItsWriteWhileTheLoopServes() throws {
        let bridge = try TestBridge.start()
        let release = try WakeUpEvent()
        #expect(bridge.worker.submit { _ = release.wait(milliseconds: 20_000) })
        let otherID = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
        let replies = Mutex<[String: ControlProtocol.Reply]>([:])
        var clients: [OSThread] = []
        for (name, id) in [("first", testAppID), ("second", otherID), ("repeat", testAppID)] {
            clients.append(
                try OSThread(name: name) {
                    let reply = try? bridge.register(id)
                    replies.withLock { $0[name] = reply }
                })
        }
        // The first write to reach the server is queued behind the held job.
        #expect(waitUntil { bridge.worker.queued == 1 })
        let started = monotonicNanoseconds()
        // No app is registered yet, so the API refuses: the point is that it answers at once.
        let ping = try request(bridge.ports.api, "/api/v1/test/ping", authorized: false)
        #expect(ping.status == 401)
        #expect(monotonicNanoseconds() - started < 1_000_000_000, "the loop answered while the write waited")
        #expect(replies.withLock { $0.isEmpty }, "nobody is told OK before the file is written")
        #expect(!FileManager.default.fileExists(atPath: bridge.stateDirectory + "/registry.json"))

        release.signal()
        for client in clients { client.join() }
        let answered = replies.withLock { $0 }
        for name in ["first", "second", "repeat"] {
            let reply = answered[name]
            var isOK = false
            if case .ok(let result, _)? = reply { isOK = result == "OK" }
            #expect(isOK, "\(name): \(String(describing: reply))")
        }
        #expect(try Set(registryIDs(bridge)) == [testAppID, otherID])
        #expect(bridge.logs.filter { $0.contains("registered application") }.count == 2)
    }

    @Test func theWindowsFormAndThePortRequest() throws {
        let bridge = try TestBridge.start()
        let ports = bridge.ports
        let url =
            "trimbleMobileManager://request/tmmRegister?callback=myapp%3A%2F%2Fresponse%2FtmmRegister"
            + "&applicationId=\(testAppID.uppercased())"
        guard case .ok("OK", let reply) = try ControlProtocol.open(url, socketPath: bridge.controlSocket) else {
            Issue.record("refused")
            return
        }
        #expect(
            reply == "myapp://response/tmmRegister?id=tmmRegister&status=success&message=&registrationResult=OK"
                + "&apiPort=\(ports.api)&apiSecurePort=\(ports.apiSecure)&locationPort=\(ports.location)"
                + "&locationSecurePort=\(ports.locationSecure)&locationV2Port=\(ports.locationV2)"
                + "&locationV2SecurePort=\(ports.locationV2Secure)")
        let portRequest = "trimblemobilemanager://request/tmmSocketServerPort?callback=app://ports"
        guard case .ok("-", let portsReply) = try ControlProtocol.open(portRequest, socketPath: bridge.controlSocket)
        else { Issue.record("refused"); return }
        #expect(portsReply.hasPrefix("app://ports?id=tmmSocketServerPort&status=success&message=&apiPort=\(ports.api)"))
        #expect(try registryIDs(bridge) == [testAppID], "the port request registers nothing")
    }

    @Test(arguments: [
        ("not a url", "not a URL"),
        ("http://example.com/?x", "unknown scheme"),
        ("tmmregister://", "no query"),
        ("tmmregister://?not*base64", "not Base64"),
        ("tmmregister://?" + Base64.encode("[1,2]"), "not a JSON object"),
        ("tmmregister://?" + Base64.encode("{\"returl\":\"a://b\"}"), "no application id"),
        ("tmmregister://?" + Base64.encode("{\"application_id\":\"nope\",\"returl\":\"a://b\"}"), "not a GUID"),
        (
            "tmmregister://?" + Base64.encode("{\"application_id\":\"12345678-1234-1234-1234-123456789abc\"}"),
            "no return URL"
        ),
        ("trimblemobilemanager://request/tmm%20Login?callback=a://b", "unknown request"),
        (
            "trimblemobilemanager://request/tmmRegister?applicationId=12345678-1234-1234-1234-123456789abc"
                + "&callback=a://b&callback=c://d",
            "more than once"
        ),
    ])
    func malformedRequestsAreRefusedAndRegisterNothing(_ url: String, _ reason: String) throws {
        let bridge = try TestBridge.start()
        let reply = try ControlProtocol.open(url, socketPath: bridge.controlSocket)
        guard case .error(let message) = reply else { Issue.record("answered \(reply)"); return }
        #expect(message.contains(reason), "\(message)")
        #expect(access(bridge.stateDirectory + "/registry.json", F_OK) != 0, "no registry was written")
        #expect(throws: WebSocketTestClient.Refused.self, "V2 stays locked") {
            _ = try WebSocketTestClient(port: bridge.ports.locationV2)
        }
    }

    @Test func badControlLinesGetAnErrorAndTheDaemonCarriesOn() throws {
        let bridge = try TestBridge.start()
        #expect(try rawControl(bridge, Array("HELLO\n".utf8)).hasPrefix("ERROR unknown request 'HELLO'"))
        #expect(
            try rawControl(bridge, [0x4F, 0x50, 0x45, 0x4E, 0x20, 0xFF, 0xFE, 0x0A])
                == "ERROR the request is not UTF-8 text\n")
        #expect(
            try rawControl(bridge, [UInt8](repeating: 0x41, count: 9000)).hasPrefix("ERROR request line longer than"))
        // A client that connects and says nothing does not block the next one.
        let silent = try StreamSocket.connect(unixPath: bridge.controlSocket)
        guard case .ok("OK", _) = try bridge.register(testAppID) else { Issue.record("refused"); return }
        _ = silent
    }

    @Test func registrationsSurviveARestartAndTheControlSocketIsRemoved() throws {
        let first = try TestBridge.start()
        try first.register(testAppID)
        try first.register("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
        first.stop()
        #expect(access(first.controlSocket, F_OK) != 0, "control socket removed on stop")
        let second = try TestBridge.start(stateDirectory: first.stateDirectory)
        #expect(try request(second.ports.api, "/api/v1/test/ping").status == 200)
        #expect(
            try request(
                second.ports.api, "/api/v1/test/ping",
                headers: ["Authorization: \(accessCode("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"))"],
                authorized: false
            ).status == 200)
        #expect(second.logs.contains { $0.contains("2 registered") })
    }

    @Test func aBrokenRegistryStopsTheStartWithTheReason() throws {
        let state = NSTemporaryDirectory() + "tmm-broken-\(getpid())-\(UUID().uuidString.prefix(6))"
        try makeDirectories(state, mode: 0o700)
        _ = FileManager.default.createFile(atPath: state + "/registry.json", contents: Data("{\"format\":1}".utf8))
        do {
            _ = try TestBridge.start(stateDirectory: state)
            Issue.record("started with a broken registry")
        } catch {
            #expect("\(error)".contains("is not a valid tmm-bridge registry"), "\(error)")
        }
    }

    @Test func aSecondBridgeOnTheSameRuntimeDirectoryIsRefused() throws {
        let first = try TestBridge.start()
        // Same runtime directory, other ports.
        let environment = BridgeServer.Environment(
            stateDirectory: first.stateDirectory + "-2", runtimeDirectory: first.runtimeDirectory, version: "1",
            handleSignals: false, notifySystemd: false)
        var configuration = BridgeConfiguration()
        configuration.listenAddresses = ["127.0.0.1"]
        configuration.basePorts = try freePorts()
        let input = try ReceiverInput.injected(log: Logger(format: .journal) { _ in })
        do {
            _ = try BridgeServer(
                configuration: configuration, environment: environment, input: input,
                log: Logger(format: .journal) { _ in })
            Issue.record("a second server started")
        } catch {
            #expect(error.description.contains("another tmm-bridge is running"), "\(error)")
            #expect(error.exitStatus == .failure)
        }
    }

    @Test func aBusyPortFallsBackAndEveryChannelReportsTheSamePlan() throws {
        var base = try freePorts()
        // Hold the API's and the V2 server's ports; the fallback range starts at a free port too.
        let heldAPI = try TCPListener.bind(address: "127.0.0.1", port: base.api)
        let heldV2 = try TCPListener.bind(address: "127.0.0.1", port: base.locationV2)
        let fallback = try #require(freeLoopbackPort())
        let plannedBase = base
        let bridge = try TestBridge.start {
            $0.basePorts = plannedBase
            $0.fallbackStart = fallback
        }
        let ports = bridge.ports
        #expect(ports.api != base.api && ports.api >= fallback)
        #expect(
            ports.locationV2 != base.locationV2 && ports.locationV2 > ports.api, "servers take fallback ports in order")
        base.api = ports.api
        base.locationV2 = ports.locationV2
        #expect(ports == base, "the others keep their ports")
        #expect(bridge.logs.contains { $0.contains("apiPort: port \(plannedBase.api) is busy") })

        // Registration reply, positionStream and tmmInfo all say the same.
        guard case .ok("OK", let url) = try bridge.register(testAppID) else { Issue.record("refused"); return }
        let json = try #require(Base64.decode(url.split(separator: "?").last!))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: String])
        #expect(object["apiPort"] == String(ports.api) && object["locationV2Port"] == String(ports.locationV2))
        #expect(
            try request(ports.api, "/api/v1/positionStream?format=locationV2").text == "{\"port\":\(ports.locationV2)}")
        let info = try #require(try request(ports.api, "/api/v1/tmmInfo").json)
        #expect(info["apiPort"] as? Int == Int(ports.api) && info["locationV2Port"] as? Int == Int(ports.locationV2))
        _ = try WebSocketTestClient(port: ports.locationV2, path: "/locationV2")
        // Still held (and so still busy) to the end.
        #expect(heldAPI.localPort == plannedBase.api && heldV2.localPort == plannedBase.locationV2)
    }

    @Test func defaultAddressesListenOnBothLoopbacks() throws {
        let bridge = try TestBridge.start { $0.listenAddresses = nil }
        try bridge.register(testAppID)
        // ::1 as well as 127.0.0.1.
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = bridge.ports.api.bigEndian
        address.sin6_addr = in6addr_loopback
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
        #expect(connected == 0, "nothing listens on [::1]:\(bridge.ports.api)")
        #expect(bridge.logs.contains { $0.contains("listening on 127.0.0.1 and ::1") })
    }
}
