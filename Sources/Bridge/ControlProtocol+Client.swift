import Glibc
import Posix

extension ControlProtocol {
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
