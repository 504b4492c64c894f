import CRFCOMM
import Glibc
import Input
import Posix

/// The kernel's RFCOMM TTY layer: binds a remote SPP channel to `/dev/rfcommN`, as BlueZ's
/// `rfcomm bind N ADDRESS CHANNEL` does.
///
/// A bind only creates the tty; no radio traffic happens until a process opens it (then the
/// kernel connects, and a close or the receiver powering off hangs the tty up without removing
/// it). Every call opens its own control socket (`AF_BLUETOOTH`, `SOCK_RAW`, `BTPROTO_RFCOMM`)
/// and closes it before returning. Binding and releasing need CAP_NET_ADMIN; listing does not.
public enum RFCOMM {
    /// RFCOMM server channels (the Bluetooth spec's 1...30).
    public static let channels: ClosedRange<UInt8> = 1...30
    /// Device numbers the kernel accepts (`rfcomm0` ... `rfcomm255`).
    public static let devices: ClosedRange<Int16> = 0...Int16(CRFCOMM_MAX_DEV - 1)

    /// Flags `rfcomm bind` passes: none. (`1 << RFCOMM_REUSE_DLC` is for adopting an already
    /// connected socket, `rfcomm connect`; on an unconnected control socket the kernel refuses it
    /// with EBADFD.)
    public static let bindFlags: UInt32 = 0

    /// Binds `/dev/rfcomm<id>` to `channel` of `address`. Returns the device number the kernel
    /// assigned (equal to `id`).
    @discardableResult
    public static func bind(
        device id: Int16, address: BluetoothAddress, channel: UInt8 = 1
    ) throws(RFCOMMError) -> Int16 {
        guard devices.contains(id) else { throw .invalidDevice(Int(id)) }
        guard channels.contains(channel) else { throw .invalidChannel(Int(channel)) }
        let operation = RFCOMMOperation.bind(device: id, address: address, channel: channel)
        let control = try openControlSocket(for: operation)
        var request = rfcomm_dev_req()
        request.dev_id = id
        request.flags = bindFlags
        request.src = BluetoothAddress.any.kernelValue
        request.dst = address.kernelValue
        request.channel = channel
        let assigned = try retrying(operation) { crfcomm_create_dev(control.rawValue, &request) }
        return Int16(truncatingIfNeeded: assigned)
    }

    /// Releases `/dev/rfcomm<id>` (`rfcomm release N`). A process holding the tty open is hung up.
    public static func release(device id: Int16) throws(RFCOMMError) {
        guard devices.contains(id) else { throw .invalidDevice(Int(id)) }
        let operation = RFCOMMOperation.release(device: id)
        let control = try openControlSocket(for: operation)
        var request = rfcomm_dev_req()
        request.dev_id = id
        _ = try retrying(operation) { crfcomm_release_dev(control.rawValue, &request) }
    }

    /// Every bound rfcomm device, in the kernel's order (by number).
    public static func list() throws(RFCOMMError) -> [RFCOMMDeviceInfo] {
        let operation = RFCOMMOperation.list
        let control = try openControlSocket(for: operation)
        var entries = [rfcomm_dev_info](repeating: rfcomm_dev_info(), count: Int(CRFCOMM_MAX_DEV))
        let count = try retrying(operation) {
            entries.withUnsafeMutableBufferPointer {
                crfcomm_get_dev_list(control.rawValue, $0.baseAddress, CInt(CRFCOMM_MAX_DEV))
            }
        }
        return entries.prefix(Int(count)).map(RFCOMMDeviceInfo.init(kernel:))
    }

    /// One bound device (`rfcomm show N`); throws with ENODEV when it is not bound.
    public static func info(device id: Int16) throws(RFCOMMError) -> RFCOMMDeviceInfo {
        guard devices.contains(id) else { throw .invalidDevice(Int(id)) }
        let operation = RFCOMMOperation.info(device: id)
        let control = try openControlSocket(for: operation)
        var info = rfcomm_dev_info()
        info.id = id
        _ = try retrying(operation) { crfcomm_get_dev_info(control.rawValue, &info) }
        return RFCOMMDeviceInfo(kernel: info)
    }

    private static func openControlSocket(for operation: RFCOMMOperation) throws(RFCOMMError) -> FileDescriptor {
        let fd = try retrying(operation) { crfcomm_control_socket() }
        return FileDescriptor(adopting: fd)
    }

    /// These calls' `-1` + errno, read by Posix's `valueOrErrno` (EINTR retried), named for the message.
    private static func retrying(_ operation: RFCOMMOperation, _ body: () -> CInt) throws(RFCOMMError) -> CInt {
        do { return try valueOrErrno(body) } catch { throw .system(operation, error) }
    }
}

/// What an RFCOMM call was doing when it failed (for the message).
public enum RFCOMMOperation: Equatable, Sendable {
    case bind(device: Int16, address: BluetoothAddress, channel: UInt8)
    case release(device: Int16)
    case list
    case info(device: Int16)

    var summary: String {
        switch self {
        case .bind(let device, let address, let channel): "cannot bind rfcomm\(device) to \(address) channel \(channel)"
        case .release(let device): "cannot release rfcomm\(device)"
        case .list: "cannot list rfcomm devices"
        case .info(let device): "cannot read rfcomm\(device)"
        }
    }

    var device: Int16? {
        switch self {
        case .bind(let device, _, _), .release(let device), .info(let device): device
        case .list: nil
        }
    }
}

/// An RFCOMM failure; `description` names what failed and how to fix it.
public enum RFCOMMError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A channel outside 1...30 (checked before any system call).
    case invalidChannel(Int)
    /// A device number outside 0...255 (checked before any system call).
    case invalidDevice(Int)
    /// The kernel refused.
    case system(RFCOMMOperation, Errno)

    /// The errno of a `.system` failure.
    public var errno: Errno? {
        if case .system(_, let errno) = self { return errno }
        return nil
    }

    /// False for failures that retrying cannot fix without someone changing the system (no
    /// Bluetooth in the kernel, missing privileges, bad arguments); a rebinder waits its longest
    /// delay between attempts for these.
    public var isRetryable: Bool {
        guard let errno = errno?.rawValue else { return false }
        return ![EAFNOSUPPORT, EPROTONOSUPPORT, EOPNOTSUPP, EPERM, EACCES, EINVAL].contains(errno)
    }

    public var description: String {
        switch self {
        case .invalidChannel(let channel):
            return "RFCOMM channel \(channel) is out of range: channels are 1 to 30 (SPP receivers usually use 1)"
        case .invalidDevice(let device):
            return "rfcomm device number \(device) is out of range: use 0 to 255 (rfcomm0 ... rfcomm255)"
        case .system(let operation, let errno):
            return "\(operation.summary): \(Self.reason(errno, operation))"
        }
    }

    private static func reason(_ errno: Errno, _ operation: RFCOMMOperation) -> String {
        let name = operation.device.map { "rfcomm\($0)" } ?? "the device"
        switch errno.rawValue {
        case EAFNOSUPPORT:
            return "this kernel has no Bluetooth RFCOMM support (CONFIG_BT_RFCOMM); use a kernel built with "
                + "CONFIG_BT, CONFIG_BT_RFCOMM and CONFIG_BT_RFCOMM_TTY (Bluetooth sockets also exist only in "
                + "the host's network namespace, not in a container's own)"
        case EPROTONOSUPPORT:
            return "this kernel has Bluetooth but no RFCOMM protocol (CONFIG_BT_RFCOMM); load it with 'modprobe rfcomm'"
        case EOPNOTSUPP:
            return "this kernel's RFCOMM has no tty support (CONFIG_BT_RFCOMM_TTY); use a kernel built with it"
        case EPERM, EACCES:
            return "needs CAP_NET_ADMIN (run as root, or give the service AmbientCapabilities=CAP_NET_ADMIN)"
        case EADDRINUSE:
            return "\(name) is already bound; release it with 'tmm-bridge bluetooth unbind --device "
                + "\(operation.device ?? 0)' or choose another --device"
        case EBUSY:
            if case .bind(_, let address, let channel) = operation {
                return "another RFCOMM connection already uses channel \(channel) of \(address); close it "
                    + "(see 'tmm-bridge bluetooth list') and try again"
            }
            return "\(name) is busy; try again"
        case ENODEV:
            return "\(name) is not bound (see 'tmm-bridge bluetooth list')"
        case EALREADY:
            return "\(name) is already being released"
        default:
            return "\(errno) (errno \(errno.rawValue))"
        }
    }
}

/// The connection state of a bound device's link (the kernel's BT_* socket states). A bound,
/// never-opened device is `.clean`; an open, connected one `.connected`.
public enum RFCOMMState: Equatable, Sendable, CustomStringConvertible {
    case connected, clean, bound, listening, connecting, config, disconnecting, closed
    case unknown(UInt16)

    public init(rawValue: UInt16) {
        switch rawValue {
        case 1: self = .connected
        case 2: self = .clean  // BT_OPEN: a fresh DLC
        case 3: self = .bound
        case 4: self = .listening
        case 5, 6: self = .connecting  // BT_CONNECT, BT_CONNECT2
        case 7: self = .config
        case 8: self = .disconnecting
        case 9: self = .closed
        default: self = .unknown(rawValue)
        }
    }

    /// The words BlueZ's `rfcomm` prints.
    public var description: String {
        switch self {
        case .connected: "connected"
        case .clean: "clean"
        case .bound: "bound"
        case .listening: "listening"
        case .connecting: "connecting"
        case .config: "config"
        case .disconnecting: "disconnecting"
        case .closed: "closed"
        case .unknown(let value): "state \(value)"
        }
    }
}

/// One bound rfcomm device as the kernel reports it (`RFCOMMGETDEVLIST` / `RFCOMMGETDEVINFO`).
public struct RFCOMMDeviceInfo: Equatable, Sendable {
    /// N of `/dev/rfcommN`.
    public var device: Int16
    /// `rfcomm_dev.flags` (bit 0 reuse-dlc, 1 release-on-hup, 3 tty-attached).
    public var flags: UInt32
    public var state: RFCOMMState
    /// The local adapter; `BluetoothAddress.any` for a plain bind.
    public var source: BluetoothAddress
    /// The receiver.
    public var destination: BluetoothAddress
    public var channel: UInt8

    public init(
        device: Int16, flags: UInt32, state: RFCOMMState, source: BluetoothAddress,
        destination: BluetoothAddress, channel: UInt8
    ) {
        self.device = device
        self.flags = flags
        self.state = state
        self.source = source
        self.destination = destination
        self.channel = channel
    }

    init(kernel info: rfcomm_dev_info) {
        self.init(
            device: info.id, flags: info.flags, state: RFCOMMState(rawValue: info.state),
            source: BluetoothAddress(kernel: info.src), destination: BluetoothAddress(kernel: info.dst),
            channel: info.channel)
    }

    /// `/dev/rfcommN`.
    public var devicePath: String { "/dev/rfcomm\(device)" }
    /// True while a process has the tty open.
    public var ttyAttached: Bool { flags & UInt32(CRFCOMM_FLAG_TTY_ATTACHED) != 0 }
}
