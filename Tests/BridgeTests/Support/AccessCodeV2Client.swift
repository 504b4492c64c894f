// Access Code V2 for the server tests: codes made as the 2026 samples make them (Debian's
// python3-cryptography through tmmtools/client/tmmclient.py, the one Python home of the code
// format, run as tmmtools/peers/access_codes.py), many in one run, and requests that carry them:
// over http from this process, over https through curl, and from another local user (python
// under setpriv).
import Foundation
import Glibc
import Posix
import TMMProtocol
import TestSupport
import Testing

/// The codes and requests of one running bridge (its public key is read once).
struct AccessCodeV2Client {
    /// python3 with `cryptography`, and curl.
    static let isAvailable: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")
        else { return false }
        return (try? runTool("/usr/bin/python3", ["-c", "import cryptography"]).status) == 0
    }()

    let ports: PortAssignment
    /// `GET /api/v1/publicKey`'s body: the JWK.
    let jwk: String

    init(_ bridge: TestBridge) throws {
        ports = bridge.ports
        let response = try request(bridge.ports.api, "/api/v1/publicKey", authorized: false)
        try #require(response.status == 200, "\(response)")
        jwk = response.text
    }

    /// One code per id, dated `offset` seconds from now.
    func codes(for ids: [String], offset: Int64 = 0, firstByteZero: Bool = false) throws -> [String] {
        let seconds = wallClockMilliseconds() / 1000 + offset
        // One code per id; "1": only ciphertexts whose first byte is 0x00 (one in 256 is).
        let minter = PythonTools.command(
            "peers.access_codes", ["mint", jwk, "\(seconds)", firstByteZero ? "1" : "0"] + ids)
        let run = try runTool(minter.executable, minter.arguments)
        let codes = run.output.split(separator: "\n").map(String.init)
        try #require(run.status == 0 && codes.count == ids.count, "\(run.output)")
        return codes
    }

    func code(for id: String = testAppID, firstByteZero: Bool = false) throws -> String {
        try codes(for: [id], firstByteZero: firstByteZero)[0]
    }

    /// `GET /api/v1/receiver` with `code` over plain http, on a new connection.
    func overHTTP(_ code: String) throws -> HTTPResponse {
        try request(ports.api, "/api/v1/receiver", headers: ["Authorization: AccessCodeV2 " + code], authorized: false)
    }

    /// `GET /api/v1/receiver` with `code` over https (curl; the chain is not what is tested).
    func overHTTPS(_ code: String) throws -> (status: Int, body: String) {
        let run = try runTool(
            "/usr/bin/curl",
            [
                "-sk", "--max-time", "10", "-w", "\n%{http_code}",
                "-H", "Authorization: AccessCodeV2 " + code,
                "https://127.0.0.1:\(ports.apiSecure)/api/v1/receiver",
            ])
        let lines = run.output.split(separator: "\n", omittingEmptySubsequences: false)
        try #require(run.status == 0, "curl: \(run.output)")
        return (Int(lines.last.map(String.init) ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    /// Sends a fresh code for each of `ids`, each on a new connection, as the local user `user`
    /// (setpriv; the test runs as root), and returns the statuses in order.
    func statusesAsUser(_ user: String, ids: [String]) throws -> [Int] {
        let sender = PythonTools.argv("peers.access_codes", ["send", "\(ports.api)", jwk] + ids)
        let run = try runTool(
            "/usr/bin/setpriv", ["--reuid", user, "--regid", "nogroup", "--clear-groups", "--"] + sender)
        try #require(run.status == 0, "\(run.output)")
        return run.output.split(separator: "\n").compactMap { Int($0) }
    }
}

/// Distinct well-formed application ids, `count` of them, numbered from `first`.
func applicationIDs(_ count: Int, first: Int = 1) -> [String] {
    (first..<(first + count)).map { String(format: "%08x-0000-4000-8000-%012x", $0, $0) }
}
