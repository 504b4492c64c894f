import CLinux
import Glibc

/// A pseudo-terminal pair: the way tests (and `hwtests/` replays) play a receiver without
/// hardware. Write NMEA to `controller`; gpsd reads `devicePath` as if it were a serial port.
public struct Pseudoterminal: ~Copyable {
    public let controller: FileDescriptor
    public let device: FileDescriptor
    /// `/dev/pts/N`.
    public let devicePath: String

    /// Opens a raw (no echo, no line discipline) pty pair whose device node is readable and
    /// writable by everyone, so a gpsd that dropped root can open it.
    public init() throws(Errno) {
        var controllerFD: CInt = -1
        var deviceFD: CInt = -1
        _ = try valueOrErrno { openpty(&controllerFD, &deviceFD, nil, nil, nil) }
        let controller = FileDescriptor(adopting: controllerFD)
        let device = FileDescriptor(adopting: deviceFD)
        _ = fcntl(controllerFD, F_SETFD, FD_CLOEXEC)
        _ = fcntl(deviceFD, F_SETFD, FD_CLOEXEC)
        var attributes = termios()
        _ = try valueOrErrno { tcgetattr(deviceFD, &attributes) }
        cfmakeraw(&attributes)
        _ = try valueOrErrno { tcsetattr(deviceFD, TCSANOW, &attributes) }
        var name = [CChar](repeating: 0, count: 128)
        let status = clinux_ptsname_r(controllerFD, &name, name.count)
        guard status == 0 else { throw Errno(rawValue: status) }
        let path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // devpts creates nodes 0600 root; gpsd drops root before opening hot-added devices.
        _ = try valueOrErrno { chmod(path, 0o666) }
        self.controller = controller
        self.device = device
        self.devicePath = path
    }

    /// Gives up ownership of both descriptors (the caller closes them) and returns them.
    public consuming func release() -> (controller: CInt, device: CInt) {
        let controllerFD = controller.rawValue
        let deviceFD = device.rawValue
        _ = controller.release()
        _ = device.release()
        return (controllerFD, deviceFD)
    }
}
