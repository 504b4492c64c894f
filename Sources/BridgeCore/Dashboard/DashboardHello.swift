import TMMProtocol
import WebSocket

// The dashboard page's first message on its socket, `{"type":"hello","token":"..."}` (token null
// or absent when the page has none), and what it must carry (docs/dashboard.md, "Access"):
//
// - A connection from this machine (loopback) needs no token: the dashboard is read-only, and
//   whoever is on the box can run `tmm-bridge status` anyway.
// - A connection from another machine needs `dashboard-token`, compared in constant time; with
//   no token configured, the dashboard is refused to other machines whatever they send.
//
// Until the hello is accepted the connection is subscribed to nothing; a page that says nothing
// for `timeout` is closed. A refusal closes with `refusedCode` (4401, an application code in
// RFC 6455's private range), which the page answers by asking for the token.

/// Checks a dashboard page's hello.
public enum DashboardHello {
    /// What the connection gets.
    public enum Verdict: Equatable, Sendable {
        case accepted
        /// Closed with `refusedCode` and this reason (at most 123 bytes, a Close frame's room).
        case refused(String)
    }

    /// The close code of a refused hello.
    public static let refusedCode = WebSocketCloseCode(rawValue: 4401)
    /// How long a page may take to say hello (nanoseconds).
    public static let timeout: Int64 = 10_000_000_000
    /// The largest hello read (a token is short; anything longer is refused unread).
    public static let maximumSize = 1024

    /// The verdict on `message` for a connection from loopback (`fromLoopback`) or not, when the
    /// configured token's SHA-256 is `tokenDigest` (nil: no `dashboard-token`).
    public static func verdict(
        _ message: WebSocketMessage, fromLoopback: Bool, tokenDigest: InlineArray<32, UInt8>?,
        sha256: AccessCodeV1.SHA256
    ) -> Verdict {
        guard message.kind == .text, message.payload.count <= maximumSize,
            case .success(let members) = JSONValue.object(message.payload, expected: "a hello"),
            members["type"] == .string("hello")
        else {
            return .refused("expected {\"type\":\"hello\",\"token\":...} first")
        }
        let token: String?
        switch members["token"] {
        case .string(let value): token = value
        case nil, .null: token = nil
        default: return .refused("the token must be a string")
        }
        if fromLoopback { return .accepted }
        guard let tokenDigest else { return .refused("this dashboard is for this machine only (no dashboard-token)") }
        guard let token else { return .refused("token required") }
        // Digests of equal length, compared without an early exit: the time taken says nothing
        // about the token, not even its length.
        let presented = sha256(Array(token.utf8).span)
        return AccessCodeV1.constantTimeEqual(bytes(presented), bytes(tokenDigest))
            ? .accepted : .refused("token refused")
    }

    private static func bytes(_ digest: InlineArray<32, UInt8>) -> [UInt8] {
        (0..<32).map { digest[$0] }
    }
}
