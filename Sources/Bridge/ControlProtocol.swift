// The control socket's protocol: one request line, one reply line, then the daemon closes.
// Lines are UTF-8 text ending in LF, at most `maximumLineLength` bytes.
//
//   OPEN <url>        → OK <registrationResult> <reply-url>     (registrationResult: OK,
//                       Unauthorized or NoNetwork for a registration, "-" for a port request)
//                     → ERROR <message>                          (nothing was registered)
//
// `tmm-bridge open URL` is the client (ControlProtocol+Client.swift); the socket lives at
// `<runtime-dir>/control.sock`, mode 0660, so root and the daemon's group may use it. This file is
// pure (standard library only), so Fuzz/run-bridge.sh can build it alone.

public enum ControlProtocol {
    /// Longest request or reply line (a registration URL with a long return URL fits easily).
    public static let maximumLineLength = 8 * 1024

    /// A parsed request line.
    public enum Request: Equatable, Sendable {
        case open(url: String)
    }

    /// A parsed reply line.
    public enum Reply: Equatable, Sendable {
        /// The request was answered: open `url`. `result` is the registration result ("-" when the
        /// request was not a registration).
        case ok(result: String, url: String)
        case error(String)
    }

    public static func parseRequest(_ line: String) -> Result<Request, ControlFailure> {
        if line.hasPrefix("OPEN ") {
            let url = String(line.dropFirst(5))
            guard !url.isEmpty else { return .failure(ControlFailure(message: "OPEN needs a URL")) }
            return .success(.open(url: url))
        }
        let verb = line.prefix { $0 != " " }
        return .failure(ControlFailure(message: "unknown request '\(verb.prefix(32))': expected OPEN <url>"))
    }

    public static func formatReply(_ reply: Reply) -> String {
        switch reply {
        case .ok(let result, let url): "OK \(result) \(url)\n"
        case .error(let message): "ERROR \(message.replacingNewlines)\n"
        }
    }

    public static func parseReply(_ line: String) -> Reply? {
        if line.hasPrefix("OK ") {
            let rest = line.dropFirst(3)
            guard let space = rest.firstIndex(of: " ") else { return nil }
            return .ok(result: String(rest[..<space]), url: String(rest[rest.index(after: space)...]))
        }
        if line.hasPrefix("ERROR ") { return .error(String(line.dropFirst(6))) }
        return nil
    }
}

/// A control-socket failure, said in a sentence.
public struct ControlFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

extension String {
    fileprivate var replacingNewlines: String {
        String(map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
