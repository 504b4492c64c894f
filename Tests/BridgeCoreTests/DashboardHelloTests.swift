// The dashboard page's hello (DashboardHello): a malformed-input table, and seeded mutations of a
// valid hello, checked against an independent reading of what must be accepted.
import Foundation
import TMMProtocol
import TestSupport
import Testing
import WebSocket

@testable import BridgeCore

@Suite("Dashboard hello", .tags(.unit))
struct DashboardHelloTests {
    static let token = "correct-horse-battery-staple"

    static func verdict(
        _ text: String, fromLoopback: Bool = false, kind: WebSocketMessage.Kind = .text
    )
        -> DashboardHello.Verdict
    {
        DashboardHello.verdict(
            WebSocketMessage(kind: kind, payload: Array(text.utf8)), fromLoopback: fromLoopback,
            tokenDigest: fakeDigest(Array(token.utf8).span), sha256: fakeDigest)
    }

    @Test(arguments: [
        ("", "expected {\"type\":\"hello\",\"token\":...} first"),
        ("{}", "expected {\"type\":\"hello\",\"token\":...} first"),
        ("null", "expected {\"type\":\"hello\",\"token\":...} first"),
        ("[\"hello\"]", "expected {\"type\":\"hello\",\"token\":...} first"),
        (
            #"{"type":"Hello","token":"correct-horse-battery-staple"}"#,
            "expected {\"type\":\"hello\",\"token\":...} first"
        ),
        (#"{"type":"hello","type":"hello","token":null}"#, "expected {\"type\":\"hello\",\"token\":...} first"),
        (
            #"{"type":"hello","token":"correct-horse-battery-staple""#,
            "expected {\"type\":\"hello\",\"token\":...} first"
        ),
        (#"{"type":"hello","token":["correct-horse-battery-staple"]}"#, "the token must be a string"),
        (#"{"type":"hello","token":1}"#, "the token must be a string"),
        (#"{"type":"hello"}"#, "token required"),
        (#"{"type":"hello","token":null}"#, "token required"),
        (#"{"type":"hello","token":""}"#, "token refused"),
        (#"{"type":"hello","token":"correct-horse-battery-stapl"}"#, "token refused"),
        (#"{"type":"hello","token":"correct-horse-battery-staple "}"#, "token refused"),
        (#"{"type":"hello","token":"CORRECT-horse-battery-staple"}"#, "token refused"),
    ])
    func malformedOrWrongHellosAreRefused(_ text: String, _ reason: String) {
        #expect(Self.verdict(text) == .refused(reason), "\(text)")
        #expect(reason.utf8.count <= 123, "a Close frame's reason fits")
    }

    @Test func theTokenOrThisMachineIsAccepted() {
        #expect(Self.verdict(#"{"type":"hello","token":"correct-horse-battery-staple"}"#) == .accepted)
        #expect(Self.verdict(#"{"token":"correct-horse-battery-staple","type":"hello","extra":[1]}"#) == .accepted)
        #expect(Self.verdict(#"{"type":"hello","token":"correct-horse-battery-stap\u006ce"}"#) == .accepted)
        #expect(Self.verdict(#"{"type":"hello","token":null}"#, fromLoopback: true) == .accepted)
        #expect(Self.verdict(#"{"type":"hello","token":"anything"}"#, fromLoopback: true) == .accepted)
        // Binary, or over 1 KiB, is no hello even from this machine.
        #expect(Self.verdict(#"{"type":"hello","token":null}"#, fromLoopback: true, kind: .binary) != .accepted)
        let padded = #"{"type":"hello","token":null}"# + String(repeating: " ", count: DashboardHello.maximumSize)
        #expect(Self.verdict(padded, fromLoopback: true) != .accepted)
        // Without a configured token, another machine is refused whatever it sends.
        let none = DashboardHello.verdict(
            WebSocketMessage(kind: .text, payload: Array(#"{"type":"hello","token":"x"}"#.utf8)), fromLoopback: false,
            tokenDigest: nil, sha256: fakeDigest)
        #expect(none == .refused("this dashboard is for this machine only (no dashboard-token)"))
    }

    /// Seeded mutations of a valid hello (bytes flipped, inserted, deleted): never a crash, and
    /// accepted only when an independent reading finds a JSON object with type "hello" and the token.
    @Test func mutatedHellosAreAcceptedOnlyWithTheToken() {
        let valid = Array(#"{"type":"hello","token":"correct-horse-battery-staple"}"#.utf8)
        var random = SplitMix64(state: 0x6461_7368_626f_6172)
        for _ in 0..<5000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let at = Int.random(in: 0..<max(1, bytes.count), using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0 where !bytes.isEmpty: bytes[at] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.insert(UInt8.random(in: 0...255, using: &random), at: at)
                default: if !bytes.isEmpty { bytes.remove(at: at) }
                }
            }
            let verdict = DashboardHello.verdict(
                WebSocketMessage(kind: .text, payload: bytes), fromLoopback: false,
                tokenDigest: fakeDigest(Array(Self.token.utf8).span), sha256: fakeDigest)
            let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
            let expected = object?["type"] as? String == "hello" && object?["token"] as? String == Self.token
            if expected != (verdict == .accepted) {
                // JSONSerialization keeps the last of a repeated key where the hello refuses it.
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(
                    text.components(separatedBy: "\"type\"").count > 2
                        || text.components(separatedBy: "\"token\"").count > 2,
                    "\(text): \(verdict)")
            }
        }
    }
}
