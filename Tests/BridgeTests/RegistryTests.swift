// The registry file: what is written, what is refused when read, and atomic replacement.
import Foundation
import Glibc
import Posix
import TMMProtocol
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeCore

@Suite("ApplicationRegistry", .tags(.unit))
struct RegistryTests {
    private func directory() throws -> String {
        let path = NSTemporaryDirectory() + "tmm-registry-\(getpid())-\(UUID().uuidString.prefix(8))"
        try makeDirectories(path, mode: 0o700)
        return path
    }

    private let a = GUID("12345678-1234-1234-1234-123456789abc")!
    private let b = GUID("AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE")!

    @Test func aMissingFileIsAnEmptyRegistry() throws {
        let registry = try ApplicationRegistry.load(path: try directory() + "/registry.json")
        #expect(registry.entries.isEmpty)
    }

    @Test func registrationsArePersistedAtOnceWithMode0600() throws {
        let path = try directory() + "/registry.json"
        var registry = try ApplicationRegistry.load(path: path)
        #expect(try registry.register(a, unixSeconds: 1_708_624_800))
        #expect(try !registry.register(a, unixSeconds: 1_708_624_900), "registering twice is a no-op")
        #expect(try registry.register(b, unixSeconds: 1_708_625_000))
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(access(AtomicFile.temporaryPath(for: path), F_OK) != 0, "no temporary file is left behind")

        let reloaded = try ApplicationRegistry.load(path: path)
        #expect(reloaded.applicationIDs == [a, b])
        #expect(reloaded.entries[0].registeredAt == "2024-02-22T18:00:00Z")
        #expect(reloaded.entries[1].applicationId == "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        #expect(json["format"] as? String == "tmm-bridge registry")
        #expect(json["version"] as? Int == 1)
    }

    @Test func aLeftoverTemporaryFileFromACrashDoesNotMatter() throws {
        let path = try directory() + "/registry.json"
        var registry = try ApplicationRegistry.load(path: path)
        try registry.register(a, unixSeconds: 0)
        // A crash between creating the temporary file and the rename leaves this behind.
        _ = FileManager.default.createFile(atPath: AtomicFile.temporaryPath(for: path), contents: Data("{garbage".utf8))
        #expect(try ApplicationRegistry.load(path: path).applicationIDs == [a])
        try registry.register(b, unixSeconds: 0)
        #expect(try ApplicationRegistry.load(path: path).applicationIDs == [a, b])
    }

    @Test func aFailedWriteChangesNothing() throws {
        let dir = try directory()
        let path = dir + "/registry.json"
        var registry = try ApplicationRegistry.load(path: path)
        try registry.register(a, unixSeconds: 0)
        // A directory where the temporary file would go makes the write fail (even for root).
        try makeDirectories(AtomicFile.temporaryPath(for: path), mode: 0o700)
        #expect(throws: ApplicationRegistry.Failure.self) { try registry.register(b, unixSeconds: 0) }
        #expect(registry.applicationIDs == [a], "the failed registration is not kept in memory")
        #expect(try ApplicationRegistry.load(path: path).applicationIDs == [a], "nor on disk")
    }

    @Test(arguments: [
        ("", "not the expected JSON"),
        ("{", "not the expected JSON"),
        ("[]", "not the expected JSON"),
        ("{\"format\":\"something else\",\"version\":1,\"applications\":[]}", "format is 'something else'"),
        (
            "{\"format\":\"tmm-bridge registry\",\"version\":2,\"applications\":[]}",
            "version 2; this build reads version 1"
        ),
        ("{\"format\":\"tmm-bridge registry\",\"version\":1}", "not the expected JSON"),
        (
            "{\"format\":\"tmm-bridge registry\",\"version\":1,"
                + "\"applications\":[{\"applicationId\":\"x\",\"registeredAt\":\"\"}]}",
            "'x' is not a GUID"
        ),
        (
            "{\"format\":\"tmm-bridge registry\",\"version\":1,\"applications\":["
                + "{\"applicationId\":\"12345678-1234-1234-1234-123456789abc\",\"registeredAt\":\"\"},"
                + "{\"applicationId\":\"12345678-1234-1234-1234-123456789ABC\",\"registeredAt\":\"\"}]}",
            "listed twice"
        ),
    ])
    func aBrokenFileIsRefusedWithTheReasonAndTheFix(_ contents: String, _ reason: String) throws {
        let path = try directory() + "/registry.json"
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
        do {
            _ = try ApplicationRegistry.load(path: path)
            Issue.record("accepted: \(contents)")
        } catch {
            #expect(error.description.contains(reason), "\(error)")
            #expect(error.description.contains("move it away"), "\(error)")
        }
    }
}

@Suite("ControlProtocol", .tags(.unit))
struct ControlProtocolTests {
    @Test func requestsAndReplies() {
        #expect(ControlProtocol.parseRequest("OPEN tmmregister://?abc") == .success(.open(url: "tmmregister://?abc")))
        #expect(throws: Never.self) { try ControlProtocol.parseRequest("OPEN x").get() }
        guard case .failure(let failure) = ControlProtocol.parseRequest("CLOSE x") else {
            Issue.record("accepted"); return
        }
        #expect(failure.message.contains("unknown request 'CLOSE'"))
        guard case .failure = ControlProtocol.parseRequest("OPEN ") else { Issue.record("accepted empty URL"); return }
        #expect(ControlProtocol.formatReply(.ok(result: "OK", url: "a://b?c")) == "OK OK a://b?c\n")
        #expect(ControlProtocol.formatReply(.error("bad\nthing")) == "ERROR bad thing\n")
        #expect(
            ControlProtocol.parseReply("OK Unauthorized a://b?c d") == .ok(result: "Unauthorized", url: "a://b?c d"))
        #expect(ControlProtocol.parseReply("ERROR it broke") == .error("it broke"))
        #expect(ControlProtocol.parseReply("HELLO") == nil)
        #expect(ControlProtocol.parseReply("OK x") == nil)
        // Line breaks never split a reply, whatever the text; "\r\n" is one Character in Swift.
        #expect(ControlProtocol.formatReply(.error("a\r\nb\rc")) == "ERROR a  b c\n")
        #expect(
            ControlProtocol.formatReply(.ok(result: "Un authorized\n", url: "a://b\r\nOK"))
                == "OK Un_authorized_ a://b  OK\n")
        // A combining mark after the space does not hide it.
        #expect(ControlProtocol.parseReply("OK OK \u{301}x") == .ok(result: "OK", url: "\u{301}x"))
        #expect(ControlProtocol.parseRequest("OPEN \u{301}x") == .success(.open(url: "\u{301}x")))
    }

    @Test func noDaemonIsAClearError() {
        #expect(throws: ControlFailure.self) {
            try ControlProtocol.open("tmmregister://?x", socketPath: "/nonexistent/control.sock")
        }
        do {
            _ = try ControlProtocol.open("tmmregister://?x", socketPath: "/nonexistent/control.sock")
        } catch {
            #expect(error.message.contains("no tmm-bridge daemon is running there"))
        }
    }
}
