import ByteCoding
import Posix

/// gpsd's hotplug control socket (`gpsd -F PATH`): `+/dev/x` adds a device, `-/dev/x` removes
/// one, `&/dev/x=HEX` writes bytes to one; gpsd answers `OK` or `ERROR`. This is a third copy of
/// the format gpsd keeps in gpsd.c and gpsdctl.c, so it is pinned by tests against a real gpsd.
///
/// What gpsd 3.22 does with a control connection (gpsd.c, the main loop and `handle_control`):
/// - it reads the connection with blocking `read(fd, buf, BUFSIZ - 1)` calls in a loop until the
///   client closes it, and takes **each read as one command**: a command must arrive in one read
///   (at most `maximumCommandLength` bytes), and a second command in the same read is ignored
///   (no reply). So a connection carries several commands only one at a time, each sent after the
///   previous one's reply; and while a connection is open gpsd's whole main loop waits on it
///   (no device is read, no client served), so it is held only while commands follow each other.
/// - the device name is copied up to the first space or unprintable byte (`snarfline`).
/// - `&` decodes the hex after the first `=` and writes it with one `write()` to the device gpsd
///   has open (non-blocking): `ERROR` when gpsd runs read-only (`-b`), does not have the device
///   open, the hex is malformed or the write fails; a short write is answered `OK`.
public struct GPSDControlSocket: Sendable {
    public let path: String
    /// gpsd answers `-` and `&` at once.
    public static let replyTimeoutMilliseconds: Int32 = 3000
    /// How long `add` waits. gpsd 3.22 answers a `+` once it has opened the device and probed it:
    /// 1.0 s for a pty that says nothing when it runs read-only (`-b`), 3.0 s when it may write
    /// (it tries every driver's probe on it); a receiver that talks is named sooner. Whether a
    /// system gpsd runs with `-b` is not known here, and the private one may not
    /// (`gpsd-read-only = no`), so every add allows for the slow case with room for a loaded
    /// machine. It runs off the io thread (the gpsd-control worker, or the session's own thread
    /// when it re-adds a device), and gpsd itself serves nothing else meanwhile.
    public static let addReplyTimeoutMilliseconds: Int32 = 10_000
    /// The longest command gpsd 3.22 reads whole, newline included: its buffer is BUFSIZ (8192 in
    /// glibc) and one byte is kept for the terminating NUL. A longer one is cut, and its tail is
    /// read as a second command.
    public static let maximumCommandLength = 8191

    public init(path: String) { self.path = path }

    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// The socket could not be reached (gpsd not running, wrong path, permissions).
        case unreachable(path: String, Errno)
        /// gpsd answered ERROR: it could not open the device, already has it (`+`), does not have
        /// it (`-`), or could not write to it (`&`). `command` is the command as the log shows it.
        case refused(command: String)
        /// No answer in time, or an answer that is not OK/ERROR.
        case noAnswer(command: String, got: String)
        /// The path cannot be sent: gpsd would cut it at a space or an unprintable byte (or, for
        /// `&`, at an `=`), and act on another device.
        case invalidPath(String)

        public var description: String {
            switch self {
            case .unreachable(let path, let errno):
                "cannot reach gpsd's control socket \(path): \(errno) (is gpsd running with -F \(path)?)"
            case .refused(let command):
                switch command.first {
                case "+":
                    "gpsd answered ERROR to '\(command)': it already reads the device, or could not open it (gpsd "
                        + "does not run as root: the device must be readable by its user, e.g. through group dialout)"
                case "&":
                    "gpsd answered ERROR to '\(command)': it runs read-only (-b), does not have the device open, "
                        + "or the write failed"
                default:
                    "gpsd answered ERROR to '\(command)': it does not have the device"
                }
            case .noAnswer(let command, let got):
                "gpsd did not answer '\(command)' with OK or ERROR (got '\(got)')"
            case .invalidPath(let path):
                "device path \(path) cannot be sent to gpsd: it has a space, a control character or a byte "
                    + "outside ASCII"
            }
        }
    }

    /// Asks gpsd to open and watch `devicePath`, waiting `milliseconds` at most for its answer.
    public func add(_ devicePath: String, milliseconds: Int32 = addReplyTimeoutMilliseconds) throws(Failure) {
        try Self.check(devicePath)
        try connect().command("+" + devicePath, milliseconds: milliseconds)
    }

    /// Asks gpsd to close `devicePath`.
    public func remove(_ devicePath: String) throws(Failure) {
        try Self.check(devicePath)
        try connect().command("-" + devicePath)
    }

    /// Opens a connection for several commands, one after another. Close it as soon as the last
    /// one is answered: gpsd waits on nothing else while it is open.
    public func connect() throws(Failure) -> Connection {
        do {
            return Connection(socket: try StreamSocket.connect(unixPath: path))
        } catch {
            throw .unreachable(path: path, error)
        }
    }

    /// Most bytes one `&` command can carry to `devicePath`: `&`, the path, `=`, two hex digits a
    /// byte and the newline within `maximumCommandLength`.
    public static func maximumWriteLength(to devicePath: String) -> Int {
        max(0, (maximumCommandLength - devicePath.utf8.count - 3) / 2)
    }

    /// Throws `.invalidPath` unless gpsd reads `devicePath` whole: printable ASCII without spaces
    /// (`snarfline` stops at the first other byte).
    static func check(_ devicePath: String) throws(Failure) {
        guard !devicePath.isEmpty, devicePath.utf8.allSatisfy({ ASCII.isPrintable($0) && $0 != ASCII.space }) else {
            throw .invalidPath(devicePath)
        }
    }

    /// One connection to the control socket; closed when it goes out of scope.
    public struct Connection: ~Copyable {
        let socket: StreamSocket

        /// Has gpsd write `bytes` to `devicePath`, unchanged (`&PATH=HEX`). At most
        /// `maximumWriteLength(to:)` bytes.
        public func write(_ bytes: ArraySlice<UInt8>, to devicePath: String) throws(Failure) {
            try GPSDControlSocket.check(devicePath)
            guard !devicePath.utf8.contains(ASCII.equals) else { throw .invalidPath(devicePath) }
            precondition(
                !bytes.isEmpty && bytes.count <= GPSDControlSocket.maximumWriteLength(to: devicePath),
                "an & command carries 1 to maximumWriteLength bytes")
            var line = Array("&\(devicePath)=".utf8)
            line.reserveCapacity(line.count + bytes.count * 2 + 1)
            for byte in bytes { Hex.append(byte, to: &line) }
            line.append(UInt8(ascii: "\n"))
            // The log names the command without its payload.
            try send(line, naming: "&\(devicePath)=<\(bytes.count) bytes>")
        }

        func command(_ line: String, milliseconds: Int32 = replyTimeoutMilliseconds) throws(Failure) {
            try send(Array((line + "\n").utf8), naming: line, milliseconds: milliseconds)
        }

        private func send(
            _ line: [UInt8], naming name: String, milliseconds: Int32 = replyTimeoutMilliseconds
        ) throws(Failure) {
            let reply: [UInt8]
            do {
                try socket.descriptor.writeAll(line)
                reply = try socket.readUntil(UInt8(ascii: "\n"), limit: 64, milliseconds: milliseconds)
            } catch {
                throw .noAnswer(command: name, got: "\(error)")
            }
            let text = String(decoding: reply, as: UTF8.self).trimmingSuffix()
            switch text {
            case "OK": return
            case "ERROR": throw .refused(command: name)
            default: throw .noAnswer(command: name, got: text)
            }
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
