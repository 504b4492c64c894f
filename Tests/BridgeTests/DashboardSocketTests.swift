// The dashboard's socket over real sockets against an in-process bridge (docs/dashboard.md): the
// hello, snapshots of the served receiver at most four a second whatever its rate, no credential
// in them, `dashboard = off`, a `dashboard-listen` address that answers the dashboard only, and
// the same limits as every WebSocket (a frame too large, a page that never says hello).
import Foundation
import GNSS
import Input
import Posix
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeCore

@Suite("Dashboard socket", .tags(.integration))
struct DashboardSocketTests {
    private static let hello = Array(#"{"type":"hello","token":null}"#.utf8)

    private func snapshot(_ frame: ServerFrame?) throws -> [String: Any] {
        let frame = try #require(frame, "no snapshot")
        #expect(frame.opcode == 1)
        return try #require(try JSONSerialization.jsonObject(with: Data(frame.payload)) as? [String: Any])
    }

    @Test func aPageGetsTheServedReceiverAtMostFourTimesASecondAndNoApplicationID() throws {
        let bridge = try TestBridge.start()
        defer { bridge.stop() }
        try bridge.register(testAppID)
        try bridge.connectReceiver()
        let client = try WebSocketTestClient(port: bridge.ports.api, path: "/dashboard/socket")
        // Nothing before the hello.
        #expect(try client.frame(milliseconds: 600) == nil)
        try client.send(opcode: 0x1, Self.hello)
        var first = try snapshot(try client.frame())
        #expect(first["type"] as? String == "snapshot" && first["position"] is NSNull)
        #expect((first["clients"] as? [String: Any])?["dashboard"] as? Int == 1)

        // A 20 Hz receiver for two seconds: every epoch marks the snapshot due, at most 4 go out a second.
        let positions = try capturePositions().filter(\.hasFix)
        let started = monotonicNanoseconds()
        var frames: [ServerFrame] = []
        for position in positions.prefix(40) {
            bridge.input.post(.position(position))
            while let frame = try client.frame(milliseconds: 1) { frames.append(frame) }
            sleep(for: .milliseconds(50))  // the receiver's pace
        }
        let seconds = Double(monotonicNanoseconds() - started) / 1e9
        while let frame = try client.frame(milliseconds: 400) { frames.append(frame) }
        #expect(frames.count >= 4, "\(frames.count) snapshots in \(seconds) s")
        #expect(Double(frames.count) <= 4 * seconds + 2, "\(frames.count) snapshots in \(seconds) s")
        first = try snapshot(frames.last)
        let shown = try #require(first["position"] as? [String: Any])
        let last = try #require(positions.prefix(40).last)
        #expect(abs((shown["latitude"] as? Double ?? 0) - (last.latitude ?? 1)) < 1e-8, "\(shown)")
        #expect((first["track"] as? [Any])?.isEmpty == false)
        let apps = try #require(first["apps"] as? [[String: Any]])
        #expect(apps.map { $0["name"] as? String } == ["application …9abc"])
        for frame in frames {
            #expect(!frame.text.contains("123456789abc") && !frame.text.contains("12345678-1234"))
        }
    }

    @Test func offThePageAndTheSocketAre404() throws {
        let bridge = try TestBridge.start { $0.dashboard.isOn = false }
        defer { bridge.stop() }
        #expect(try request(bridge.ports.api, "/", authorized: false).status == 404)
        do {
            _ = try WebSocketTestClient(port: bridge.ports.api, path: "/dashboard/socket")
            Issue.record("the socket upgraded with the dashboard off")
        } catch let refused as WebSocketTestClient.Refused {
            #expect(refused.response.status == 404 && refused.response.text.contains("dashboard = off"))
        }
        // The REST API is untouched.
        #expect(try request(bridge.ports.api, "/api/v1/publicKey", authorized: false).status == 200)
    }

    @Test func aDashboardListenAddressAnswersTheDashboardOnly() throws {
        let port = try #require(freeLoopbackPort())
        let bridge = try TestBridge.start {
            $0.dashboard.token = "correct-horse-battery-staple"
            $0.dashboard.listen = [DashboardListenAddress(address: "127.0.0.1", port: port)]
        }
        defer { bridge.stop() }
        #expect(try request(port, "/", authorized: false).status == 200)
        let api = try request(port, "/api/v1/tmmInfo")
        #expect(api.status == 404 && api.text.contains("operator dashboard only"), "\(api)")
        // This machine's page needs no token there either.
        let client = try WebSocketTestClient(port: port, path: "/dashboard/socket")
        try client.send(opcode: 0x1, Self.hello)
        #expect(try snapshot(try client.frame())["type"] as? String == "snapshot")
    }

    /// The socket has the limits of every WebSocket: a hello larger than ws-max-message is 1009,
    /// and a first message that is no hello 4401, both without a snapshot.
    @Test func anOversizedOrWrongFirstMessageIsRefused() throws {
        let bridge = try TestBridge.start()
        defer { bridge.stop() }
        let big = try WebSocketTestClient(port: bridge.ports.api, path: "/dashboard/socket")
        try big.send(opcode: 0x1, [UInt8](repeating: 0x20, count: 70_000))
        #expect(try big.frame()?.closeCode == 1009)
        let wrong = try WebSocketTestClient(port: bridge.ports.api, path: "/dashboard/socket")
        try wrong.send(opcode: 0x1, Array(#"{"type":"subscribe","channel":"locationV2"}"#.utf8))
        let close = try #require(try wrong.frame())
        #expect(close.closeCode == 4401, "\(close.text)")
        #expect(bridge.logs.contains { $0.contains("dashboard page refused (4401)") })
    }

    /// Pages that never say hello cost only their sockets until the hello time-out, and never
    /// hold back a page that did.
    @Test func silentPagesAreClosedAndDoNotHoldOthersBack() throws {
        let bridge = try TestBridge.start()
        defer { bridge.stop() }
        let silent = try (0..<20).map { _ in try WebSocketTestClient(port: bridge.ports.api, path: "/dashboard/socket")
        }
        let page = try WebSocketTestClient(port: bridge.ports.api, path: "/dashboard/socket")
        try page.send(opcode: 0x1, Self.hello)
        #expect(try snapshot(try page.frame())["type"] as? String == "snapshot")
        let deadline = DashboardHello.timeout / 1_000_000 + 3000
        for client in silent {
            let close = try client.frame(milliseconds: Int32(deadline))
            #expect(close?.closeCode == 1008, "\(String(describing: close))")
        }
        // The page that said hello is still served.
        #expect(try snapshot(try page.frame(milliseconds: 3000))["type"] as? String == "snapshot")
    }
}

extension DashboardSocketTests {
    /// A hostile local user (`nobody`) opens 300 dashboard sockets at once against the real daemon
    /// under `prlimit --nofile=160` and never says hello: the daemon keeps serving the page that
    /// did, closes the silent ones at the hello time-out, and serves a new page afterwards.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit") && getuid() == 0,
            "needs root, setpriv and prlimit"))
    func silentPagesOfAnotherUserUnderADescriptorLimitHoldNobodyBack() throws {
        let daemon = try Daemon(nofile: 160)
        defer { daemon.stop() }
        let page = try WebSocketTestClient(port: daemon.ports.api, path: "/dashboard/socket")
        try page.send(opcode: 0x1, Self.hello)
        #expect(try snapshot(try page.frame())["type"] as? String == "snapshot")

        // The peer returns as soon as every page is closed; its deadline only bounds a failure
        // (a handshake may take up to its 5 s open time-out under load, then 10 s to the close).
        let flood = PythonTools.argv(
            "peers.silent_dashboard_pages",
            [
                "ws://127.0.0.1:\(daemon.ports.api)/dashboard/socket", "300",
                "\(DashboardHello.timeout / 1_000_000_000 + 15)",
            ])
        let run = try runTool(
            "/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups"] + flood)
        #expect(run.status == 0, "\(run.output)")
        let counts = run.output.split(whereSeparator: \.isWhitespace).map(String.init)
        func count(_ name: String) -> Int { counts.firstIndex(of: name).flatMap { Int(counts[$0 + 1]) } ?? -1 }
        #expect(count("opened") > 0 && count("open") == 0, "\(run.output)")
        #expect(count("closed1008") + count("other") == count("opened"), "\(run.output)")

        // The page that said hello was served throughout (a snapshot at least every other second).
        var frames = 0
        while let frame = try page.frame(milliseconds: 100), frame.opcode == 1 { frames += 1 }
        #expect(frames >= 5, "\(frames) snapshots during the flood")
        let next = try WebSocketTestClient(port: daemon.ports.api, path: "/dashboard/socket")
        try next.send(opcode: 0x1, Self.hello)
        #expect(try snapshot(try next.frame())["type"] as? String == "snapshot")
        #expect(daemon.process.isRunning, "\(daemon.log())")
    }
}
