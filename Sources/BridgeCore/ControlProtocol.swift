// The control socket's protocol: one request line, one reply line, then the daemon closes.
// Lines are UTF-8 text ending in LF, at most `maximumLineLength` bytes.
//
//   OPEN <url>        → OK <registrationResult> <reply-url>     (registrationResult: OK,
//                       Unauthorized or NoNetwork for a registration, "-" for a port request)
//                     → ERROR <message>                          (nothing was registered)
//   STATUS            → OK-JSON <document>                       (DaemonStatus, JSON on one line)
//                     → ERROR <message>
//
// A status reply is still one line (JSON escapes every control character inside its strings),
// but it may be longer than a request: up to `maximumStatusReplyLength`. The daemon bounds the
// lists it puts in the document (DaemonStatus.listLimit) so it stays far below that.
//
// `tmm-bridge open URL` and `tmm-bridge status` are the clients (ControlProtocol+Client.swift);
// the socket lives at `<runtime-dir>/control.sock`, mode 0660, so root and the daemon's group may
// use it. This file is pure (standard library only), so Fuzz/run-bridge.sh can build it alone.

public enum ControlProtocol {
    /// Longest request or reply line (a registration URL with a long return URL fits easily).
    public static let maximumLineLength = 8 * 1024
    /// Longest `OK-JSON` reply line a client reads (the status document with its lists full is
    /// about 20 KB).
    public static let maximumStatusReplyLength = 256 * 1024

    /// A parsed request line.
    public enum Request: Equatable, Sendable {
        case open(url: String)
        /// `tmm-bridge status`: the daemon's DaemonStatus.
        case status
    }

    /// A parsed reply line.
    public enum Reply: Equatable, Sendable {
        /// The request was answered: open `url`. `result` is the registration result ("-" when the
        /// request was not a registration).
        case ok(result: String, url: String)
        /// The answer to `STATUS`: a DaemonStatus as JSON (one line).
        case status(json: String)
        case error(String)
    }

    /// What a control client's input so far amounts to.
    public enum LineReading: Equatable, Sendable {
        /// No whole line yet: read at most `readLimit(buffered:)` more bytes.
        case needMore
        case request(Request)
        /// Not a request: answer this and close.
        case refused(Reply)
    }

    /// How many bytes the next read may add to `buffered` of them: room for the longest line and
    /// its CR LF and no more, so a longer line is refused whether or not its newline has arrived.
    public static func readLimit(buffered: Int) -> Int { max(1, maximumLineLength + 2 - buffered) }

    /// The request line at the start of `input`: up to LF, a CR before it dropped, UTF-8 text.
    public static func readRequestLine(_ input: [UInt8]) -> LineReading {
        let tooLong = LineReading.refused(.error("request line longer than \(maximumLineLength) bytes"))
        guard let newline = input.firstIndex(of: UInt8(ascii: "\n")) else {
            // The longest line plus a CR, and still no LF.
            return input.count > maximumLineLength + 1 ? tooLong : .needMore
        }
        var line = Array(input[..<newline])
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        guard line.count <= maximumLineLength else { return tooLong }
        guard let text = String(validating: line, as: UTF8.self) else {
            return .refused(.error("the request is not UTF-8 text"))
        }
        switch parseRequest(text) {
        case .success(let request): return .request(request)
        case .failure(let failure): return .refused(.error(failure.message))
        }
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
        let verb = scalars.prefix { $0 != " " }
        if verb.elementsEqual("STATUS".unicodeScalars) {
            guard verb.endIndex == scalars.endIndex else {
                return .failure(ControlFailure(message: "STATUS takes no argument"))
            }
            return .success(.status)
        }
        return .failure(
            ControlFailure(
                message: "unknown request '\(String(Substring(verb.prefix(32))))': expected OPEN <url> or STATUS"))
    }

    /// One line ending in LF: line breaks and other control characters inside become spaces, and
    /// the result word cannot contain a space (it would end the word).
    public static func formatReply(_ reply: Reply) -> String {
        switch reply {
        case .ok(let result, let url): "OK \(oneLine(result, space: "_")) \(oneLine(url))\n"
        case .status(let json): "OK-JSON \(oneLine(json))\n"
        case .error(let message): "ERROR \(oneLine(message))\n"
        }
    }

    public static func parseReply(_ line: String) -> Reply? {
        let scalars = Substring(line).unicodeScalars
        if let json = after(prefix: "OK-JSON ", in: scalars) { return .status(json: String(Substring(json))) }
        if let rest = after(prefix: "OK ", in: scalars) {
            guard let space = rest.firstIndex(of: " ") else { return nil }
            return .ok(
                result: String(Substring(rest[..<space])), url: String(Substring(rest[rest.index(after: space)...])))
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
    /// What kind of failure, for the exit status a client gives it.
    public enum Kind: Sendable, Equatable {
        /// Nothing answers on the socket (no daemon, or a stale socket file).
        case unreachable
        /// The socket is there but this user may not open it.
        case permissionDenied
        /// Anything else: a refused request, an untrusted daemon, a broken reply.
        case other
    }

    public var message: String
    public var kind: Kind
    public init(message: String, kind: Kind = .other) {
        self.message = message
        self.kind = kind
    }
    public var description: String { message }
}
