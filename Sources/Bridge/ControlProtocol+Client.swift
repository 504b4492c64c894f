import BridgeCore
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
                : error == .permissionDenied ? "permission denied (run as root or as a member of the daemon's group)" : "\(error)"
            throw ControlFailure(message: "cannot reach the daemon at \(socketPath): \(hint)")
        }
        try requireTrustedDaemon(socket, socketPath: socketPath)
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

    /// The reply is a URL this process hands to `xdg-open`, so it is read only from a daemon this
    /// user can trust: one running as this user or as root, or as the owner of the socket's
    /// directory when only root could have made that directory (its parent is root's and writable
    /// by no one else, as /run is for a service's RuntimeDirectory). A socket another user placed
    /// in a directory they squatted (under /tmp, say) is refused before anything is sent.
    static func requireTrustedDaemon(_ socket: borrowing StreamSocket, socketPath: String) throws(ControlFailure) {
        let peer: UserID
        do {
            peer = try socket.peerUserID()
        } catch {
            throw ControlFailure(message: "cannot tell who serves \(socketPath): \(error)")
        }
        if peer == CurrentProcess.userID || peer == 0 { return }
        let directory = parentDirectory(of: socketPath)
        if let status = try? PathStatus.of(directory), status.isDirectory, status.owner == peer, !status.isWritableByOthers,
           let parent = try? PathStatus.of(parentDirectory(of: directory)), parent.isDirectory, parent.owner == 0,
           !parent.isWritableByOthers
        {
            return
        }
        throw ControlFailure(message: "refusing the daemon at \(socketPath): it runs as uid \(peer), which is neither this user "
            + "(uid \(CurrentProcess.userID)), root, nor the owner of a directory only root could have created; another user may have "
            + "placed that socket (give the daemon's own socket with --control or --runtime-dir)")
    }

    /// `path` without its last component ("/" for a top-level name, "." for a bare name).
    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
