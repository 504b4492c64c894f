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

    // The parsers and the formatter work on Unicode scalars, not Characters: "\r\n" is one
    // Character in Swift, and a combining mark after a space would hide the space from a
    // Character comparison.

    public static func parseRequest(_ line: String) -> Result<Request, ControlFailure> {
        let scalars = Substring(line).unicodeScalars
        if let url = after(prefix: "OPEN ", in: scalars) {
            guard !url.isEmpty else { return .failure(ControlFailure(message: "OPEN needs a URL")) }
            return .success(.open(url: String(Substring(url))))
        }
        let verb = scalars.prefix { $0 != " " }.prefix(32)
        return .failure(ControlFailure(message: "unknown request '\(String(Substring(verb)))': expected OPEN <url>"))
    }

    /// One line ending in LF: line breaks and other control characters inside become spaces, and
    /// the result word cannot contain a space (it would end the word).
    public static func formatReply(_ reply: Reply) -> String {
        switch reply {
        case .ok(let result, let url): "OK \(oneLine(result, space: "_")) \(oneLine(url))\n"
        case .error(let message): "ERROR \(oneLine(message))\n"
        }
    }

    public static func parseReply(_ line: String) -> Reply? {
        let scalars = Substring(line).unicodeScalars
        if let rest = after(prefix: "OK ", in: scalars) {
            guard let space = rest.firstIndex(of: " ") else { return nil }
            return .ok(result: String(Substring(rest[..<space])), url: String(Substring(rest[rest.index(after: space)...])))
        }
        if let message = after(prefix: "ERROR ", in: scalars) { return .error(String(Substring(message))) }
        return nil
    }

    /// What follows `prefix` in `scalars`, or nil when `scalars` does not start with it.
    private static func after(prefix: String, in scalars: Substring.UnicodeScalarView) -> Substring.UnicodeScalarView? {
        var index = scalars.startIndex
        for expected in prefix.unicodeScalars {
            guard index < scalars.endIndex, scalars[index] == expected else { return nil }
            index = scalars.index(after: index)
        }
        return scalars[index...]
    }

    private static func oneLine(_ text: String, space: Unicode.Scalar? = nil) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                out.append(space ?? " ")
            } else if scalar == " ", let space {
                out.append(space)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }
}

/// A control-socket failure, said in a sentence.
public struct ControlFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
