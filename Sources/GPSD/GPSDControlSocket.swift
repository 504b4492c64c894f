import Posix

/// gpsd's hotplug control socket (`gpsd -F PATH`): `+/dev/x` adds a device, `-/dev/x` removes
/// one; gpsd answers `OK` or `ERROR`. This is a third copy of the format gpsd keeps in
/// gpsd.c and gpsdctl.c, so it is pinned by a test against a real gpsd.
public struct GPSDControlSocket: Sendable {
    public let path: String
    /// gpsd answers at once; a device open can take ~0.2 s (it flushes the tty).
    public static let replyTimeoutMilliseconds: Int32 = 3000

    public init(path: String) { self.path = path }

    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// The socket could not be reached (gpsd not running, wrong path, permissions).
        case unreachable(path: String, Errno)
        /// gpsd answered ERROR: it could not open the device, already has it (`+`), or does not
        /// have it (`-`).
        case refused(command: String)
        /// No answer in time, or an answer that is not OK/ERROR.
        case noAnswer(command: String, got: String)
        /// The path cannot be sent (control characters would break gpsd's line protocol).
        case invalidPath(String)

        public var description: String {
            switch self {
            case .unreachable(let path, let errno):
                "cannot reach gpsd's control socket \(path): \(errno) (is gpsd running with -F \(path)?)"
            case .refused(let command):
                command.hasPrefix("+")
                    ? "gpsd answered ERROR to '\(command)': it already reads the device, or could not open it (gpsd "
                        + "does not run as root: the device must be readable by its user, e.g. through group dialout)"
                    : "gpsd answered ERROR to '\(command)': it does not have the device"
            case .noAnswer(let command, let got):
                "gpsd did not answer '\(command)' with OK or ERROR (got '\(got)')"
            case .invalidPath(let path): "device path \(path) contains control characters"
            }
        }
    }

    /// Asks gpsd to open and watch `devicePath`.
    public func add(_ devicePath: String) throws(Failure) { try command("+", devicePath) }

    /// Asks gpsd to close `devicePath`.
    public func remove(_ devicePath: String) throws(Failure) { try command("-", devicePath) }

    private func command(_ verb: String, _ devicePath: String) throws(Failure) {
        guard !devicePath.isEmpty, !devicePath.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw .invalidPath(devicePath)
        }
        let line = verb + devicePath
        let socket: StreamSocket
        do {
            socket = try StreamSocket.connect(unixPath: path)
        } catch {
            throw .unreachable(path: path, error)
        }
        let reply: [UInt8]
        do {
            try socket.descriptor.writeAll(line + "\n")
            reply = try socket.readUntil(UInt8(ascii: "\n"), limit: 64, milliseconds: Self.replyTimeoutMilliseconds)
        } catch {
            throw .noAnswer(command: line, got: "\(error)")
        }
        let text = String(decoding: reply, as: UTF8.self).trimmingSuffix()
        switch text {
        case "OK": return
        case "ERROR": throw .refused(command: line)
        default: throw .noAnswer(command: line, got: text)
        }
    }
}

extension String {
    func trimmingSuffix() -> String {
        var s = Substring(self)
        while let last = s.last, last == "\n" || last == "\r" || last == " " { s.removeLast() }
        return String(s)
    }
}
