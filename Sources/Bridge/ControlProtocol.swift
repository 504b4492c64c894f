import Glibc
import Posix

// The control socket's protocol: one request line, one reply line, then the daemon closes.
// Lines are UTF-8 text ending in LF, at most `maximumLineLength` bytes.
//
//   OPEN <url>        → OK <registrationResult> <reply-url>     (registrationResult: OK,
//                       Unauthorized or NoNetwork for a registration, "-" for a port request)
//                     → ERROR <message>                          (nothing was registered)
//
// `tmm-bridge open URL` is the client; the socket lives at `<runtime-dir>/control.sock`, mode
// 0660, so root and the daemon's group may use it.

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

    /// Sends `OPEN url` to the daemon at `socketPath` and returns its reply.
    public static func open(_ url: String, socketPath: String, timeoutMilliseconds: Int32 = 10_000)
        throws(ControlFailure) -> Reply
    {
        guard !url.contains("\n"), !url.contains("\r") else {
            throw ControlFailure(message: "the URL contains a line break")
        }
        let socket: StreamSocket
        do {
            socket = try StreamSocket.connect(unixPath: socketPath)
        } catch {
            let hint = error == .noSuchFileOrDirectory || error == .connectionRefused
                ? "no tmm-bridge daemon is running there (start it: tmm-bridge run, or systemctl start tmm-bridge)"
                : error.rawValue == EACCES ? "permission denied (run as root or as a member of the daemon's group)" : "\(error)"
            throw ControlFailure(message: "cannot reach the daemon at \(socketPath): \(hint)")
        }
        do {
            try socket.descriptor.writeAll("OPEN \(url)\n")
        } catch {
            throw ControlFailure(message: "cannot send to the daemon at \(socketPath): \(error)")
        }
        let line: [UInt8]
        do {
            line = try socket.readUntil(UInt8(ascii: "\n"), limit: maximumLineLength, milliseconds: timeoutMilliseconds)
        } catch {
            throw ControlFailure(message: "no answer from the daemon at \(socketPath): \(error)")
        }
        var text = String(decoding: line, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        guard let reply = parseReply(text) else {
            throw ControlFailure(message: "the daemon at \(socketPath) answered something unexpected: '\(text.prefix(80))'")
        }
        return reply
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
