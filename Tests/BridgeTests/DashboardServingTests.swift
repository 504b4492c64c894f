// The dashboard's page on the REST port, fetched by curl (an independent client): the files
// byte for byte, their types, and the headers that keep the page to itself (docs/dashboard.md).
import BridgeCore
import HTTP1
import Foundation
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge

@Suite(
    "Dashboard page over HTTP", .tags(.integration),
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl"), "needs curl"))
struct DashboardServingTests {
    @Test func curlGetsEachFileWithItsTypeAndAStrictPolicy() throws {
        let bridge = try TestBridge.start()
        defer { bridge.stop() }
        for (path, file) in DashboardAssets.byPath.sorted(by: { $0.key < $1.key }) {
            let body = NSTemporaryDirectory() + "dashboard-\(getpid())-\(UUID().uuidString.prefix(6))"
            defer { try? FileManager.default.removeItem(atPath: body) }
            let run = try runTool(
                "/usr/bin/curl",
                ["-s", "--max-time", "5", "-D", "-", "-o", body, "http://127.0.0.1:\(bridge.ports.api)\(path)"])
            #expect(run.status == 0, "\(run.output)")
            let head = run.output.lowercased()
            #expect(head.hasPrefix("http/1.1 200 ok"), "\(path): \(head)")
            #expect(head.contains("content-type: \(file.contentType)\r\n"), "\(path): \(head)")
            #expect(
                head.contains(
                    "content-security-policy: default-src 'none'; script-src 'self'; style-src 'self'; "
                        + "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
                        + "frame-ancestors 'none'\r\n"), "\(path): \(head)")
            #expect(head.contains("x-content-type-options: nosniff\r\n"), "\(path): \(head)")
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: body))) == file.bytes, "\(path)")
        }
        // Nothing else is served without an access code.
        let other = try runTool(
            "/usr/bin/curl",
            [
                "-s", "--max-time", "5", "-o", "/dev/null", "-w", "%{http_code}",
                "http://127.0.0.1:\(bridge.ports.api)/dashboard/../etc/passwd",
            ])
        #expect(other.output != "200", "\(other.output)")
    }
}

extension DashboardServingTests {
    /// The TLS twin serves the same page (curl trusting the local CA), and `allowed-origins`
    /// refuses a page of another origin the socket's handshake (403) as any request.
    @Test func theTLSPortServesThePageAndAllowedOriginsApplyToTheSocket() throws {
        let listed = try HTTPOrigin("https://ops.example")
        let bridge = try TestBridge.start { $0.allowedOrigins = .only([listed]) }
        defer { bridge.stop() }
        let run = try runTool(
            "/usr/bin/curl",
            [
                "-s", "--max-time", "5", "--cacert", bridge.stateDirectory + "/tls/ca.pem", "-o", "/dev/null",
                "-w", "%{http_code} %{content_type}", "https://localhost:\(bridge.ports.apiSecure)/",
                "--resolve", "localhost:\(bridge.ports.apiSecure):127.0.0.1",
            ])
        #expect(run.output == "200 text/html; charset=utf-8", "\(run.output)")
        do {
            _ = try WebSocketTestClient(
                port: bridge.ports.api, path: "/dashboard/socket", headers: ["Origin: https://evil.example"])
            Issue.record("a page of an unlisted origin opened the dashboard's socket")
        } catch let refused as WebSocketTestClient.Refused {
            #expect(refused.response.status == 403)
        }
        _ = try WebSocketTestClient(port: bridge.ports.api, path: "/dashboard/socket", headers: ["Origin: \(listed)"])
    }
}
