import BridgeCore
import Posix

extension ControlProtocol {
    /// Sends `OPEN url` to the daemon at `socketPath` and returns its reply.
    public static func open(
        _ url: String, socketPath: String, timeoutMilliseconds: Int32 = 10_000
    )
        throws(ControlFailure) -> Reply
    {
        guard !url.contains("\n"), !url.contains("\r") else {
            throw ControlFailure(message: "the URL contains a line break")
        }
        return try exchange(
            "OPEN \(url)\n", socketPath: socketPath, limit: maximumLineLength,
            timeoutMilliseconds: timeoutMilliseconds
        ) { _ in
            "cannot reach the daemon at \(socketPath): no tmm-bridge daemon is running there "
                + "(start it: tmm-bridge run, or systemctl start tmm-bridge)"
        }
    }

    /// Asks the daemon at `socketPath` for its status (`STATUS`): the document as parsed, and as
    /// the daemon wrote it (with any field a newer daemon adds).
    public static func status(
        socketPath: String, timeoutMilliseconds: Int32 = 10_000
    )
        throws(ControlFailure) -> (status: DaemonStatus, json: String)
    {
        let reply = try exchange(
            "STATUS\n", socketPath: socketPath, limit: maximumStatusReplyLength,
            timeoutMilliseconds: timeoutMilliseconds
        ) { error in
            "no tmm-bridge daemon answers on \(socketPath): \(error) "
                + "(start it: tmm-bridge run, or systemctl start tmm-bridge; "
                + "a daemon with another runtime directory: --runtime-dir DIR)"
        }
        switch reply {
        case .status(let json):
            return (try DaemonStatus.parse(json: json).get(), json)
        case .error(let message) where message.hasPrefix("unknown request 'STATUS'"):
            throw ControlFailure(
                message: "the daemon at \(socketPath) does not answer status requests: it is older than "
                    + "this tmm-bridge (restart it with this version)")
        case .error(let message):
            throw ControlFailure(message: "the daemon at \(socketPath) refused the status request: \(message)")
        case .ok:
            throw ControlFailure(
                message: "the daemon at \(socketPath) answered the status request with a registration reply")
        }
    }

    /// Connects, checks who serves the socket, sends `request` (one line) and reads the reply
    /// line (at most `limit` bytes before its LF). `unreachable` says that no daemon answers.
    static func exchange(
        _ request: String, socketPath: String, limit: Int, timeoutMilliseconds: Int32,
        unreachable: (Errno) -> String
    ) throws(ControlFailure) -> Reply {
        let socket: StreamSocket
        do {
            socket = try StreamSocket.connect(unixPath: socketPath)
        } catch {
            throw connectFailure(error, socketPath: socketPath, unreachable: unreachable)
        }
        try requireTrustedDaemon(socket, socketPath: socketPath)
        do {
            try socket.descriptor.writeAll(request)
        } catch {
            throw ControlFailure(message: "cannot send to the daemon at \(socketPath): \(error)")
        }
        let line: [UInt8]
        do {
            line = try socket.readUntil(UInt8(ascii: "\n"), limit: limit + 1, milliseconds: timeoutMilliseconds)
        } catch {
            throw ControlFailure(message: "no answer from the daemon at \(socketPath): \(error)")
        }
        guard line.last == UInt8(ascii: "\n") else {
            throw ControlFailure(
                message: line.count > limit
                    ? "the daemon at \(socketPath) answered more than \(limit) bytes"
                    : "the daemon at \(socketPath) closed the connection before its answer was complete")
        }
        let text = String(decoding: line.dropLast(), as: UTF8.self)
        guard let reply = parseReply(text) else {
            throw ControlFailure(
                message: "the daemon at \(socketPath) answered something unexpected: '\(text.prefix(80))'")
        }
        return reply
    }

    /// Why connecting failed, said for an operator: no daemon (start one), no permission (the
    /// group to join), or the error itself.
    private static func connectFailure(
        _ error: Errno, socketPath: String, unreachable: (Errno) -> String
    ) -> ControlFailure {
        if error == .noSuchFileOrDirectory || error == .connectionRefused {
            return ControlFailure(message: unreachable(error), kind: .unreachable)
        }
        if error == .permissionDenied {
            // The unit makes the socket 0660 with the daemon's group, tmm-bridge (docs/service.md):
            // name the group to join. A daemon started by root by hand keeps root's group.
            let status = try? PathStatus.of(socketPath)
            let hint: String
            if let status, status.group != 0, let group = Credentials.groupName(status.group) {
                hint =
                    "it is open to group \(group): join it (adduser $USER \(group), then log in again) or run as root"
            } else if status?.group == 0 {
                hint = "it is root's (group root): run as root (the service's socket is open to group tmm-bridge)"
            } else {
                hint = "run as root or as a member of the daemon's group"
            }
            return ControlFailure(message: "permission denied on \(socketPath): \(hint)", kind: .permissionDenied)
        }
        return ControlFailure(message: "cannot reach the daemon at \(socketPath): \(error)")
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
        if let status = try? PathStatus.of(directory), status.isDirectory, status.owner == peer,
            !status.isWritableByOthers,
            let parent = try? PathStatus.of(parentDirectory(of: directory)), parent.isDirectory, parent.owner == 0,
            !parent.isWritableByOthers
        {
            return
        }
        throw ControlFailure(
            message: "refusing the daemon at \(socketPath): it runs as uid \(peer), which is neither this user "
                + "(uid \(CurrentProcess.userID)), root, nor the owner of a directory only root could have created; "
                + "another user may have placed that socket "
                + "(give the daemon's own socket with --control or --runtime-dir)")
    }

    /// `path` without its last component ("/" for a top-level name, "." for a bare name).
    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
