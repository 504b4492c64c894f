/// What gpsd reports about a device it reads (a DEVICE object or a DEVICES entry).
public struct GPSDDevice: Sendable, Equatable {
    /// Device path, e.g. `/dev/ttyACM0` or `/dev/pts/3`.
    public var path: String
    /// gpsd's driver name, e.g. `NMEA0183`, `u-blox`, `Trimble TSIP`.
    public var driver: String
    /// Driver-specific hardware/firmware text (gpsd's `subtype` and `subtype1`).
    public var subtype: String
    public var subtype1: String
    /// When gpsd activated the device (Unix seconds); nil when gpsd reports it closed.
    public var activated: Double?
    /// Serial speed, bit/s (0 for ptys and sockets gpsd does not report).
    public var baudRate: Int

    public init(
        path: String, driver: String = "", subtype: String = "", subtype1: String = "",
        activated: Double? = nil, baudRate: Int = 0
    ) {
        self.path = path
        self.driver = driver
        self.subtype = subtype
        self.subtype1 = subtype1
        self.activated = activated
        self.baudRate = baudRate
    }

    /// True while gpsd has the device open.
    public var isActive: Bool { activated != nil }
}
