import Posix

/// Where uevents come from (libudev's two netlink groups).
public enum MonitorSource: String, Sendable, Hashable, CustomStringConvertible {
    /// Events udevd re-broadcasts after running its rules: complete `ID_*` properties, device
    /// nodes and symlinks already in place. Receives nothing while udevd is not running.
    case udev
    /// Raw kernel uevents: arrive even without udevd (containers, minimal images); properties
    /// then come from sysfs only. With udevd running, the node may not have its final
    /// permissions yet when the event arrives.
    case kernel

    public var description: String { rawValue }
}

/// Why a list of present devices was posted.
public enum EnumerationReason: Sendable, Hashable {
    /// The scan at start-up.
    case startup
    /// A re-scan after the netlink socket overflowed (ENOBUFS): events were lost, so this list is
    /// the truth and anything not in it is gone.
    case resynchronization
}

/// What the udev thread tells the io thread (through `Inbox<DiscoveryEvent>`).
public enum DiscoveryEvent: Sendable, Hashable {
    /// The monitor is listening (events after this are not missed).
    case monitorStarted(MonitorSource)
    /// Every matching device present at the moment of the scan, in one value so a full inbox
    /// cannot drop part of it.
    case enumerated([DeviceProperties], EnumerationReason)
    /// A uevent: `properties.action` says what happened.
    case uevent(DeviceProperties)
    /// Something failed; the text says what and what to do. Discovery continues unless a
    /// `.stopped` follows.
    case problem(DiscoveryError)
    /// The udev thread has ended (after `stop()`, or after a fatal problem reported just before).
    case stopped
}

/// A libudev or system call failure, as a clear log line. libudev returns negative errno values
/// (libudev(3)); those are turned into `Errno` in one place (`Udev.swift`).
public struct DiscoveryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that failed, e.g. `udev_monitor_new_from_netlink("kernel")`.
    public var operation: String
    public var errno: Errno?
    /// What it means and what to do.
    public var hint: String?

    public init(operation: String, errno: Errno? = nil, hint: String? = nil) {
        self.operation = operation
        self.errno = errno
        self.hint = hint
    }

    public var description: String {
        var text = "discovery: " + operation + " failed"
        if let errno { text += ": " + errno.description + " (errno \(errno.rawValue))" }
        if let hint { text += "; " + hint }
        return text
    }
}
