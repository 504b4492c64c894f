/// What the gpsd session learned from gpsd, other than the NMEA lines themselves: facts about
/// the connection and the devices, never conclusions about the input (whether input is lost is
/// decided by whoever consumes these; see docs/ARCHITECTURE.md, "Threads").
public enum GPSDEvent: Sendable, Equatable {
    /// Connected to gpsd and watching (`release` is gpsd's version, e.g. "3.22").
    case connected(release: String)
    /// gpsd's device list (its answer to the watch, and to `?DEVICES`).
    case devices([GPSDDevice])
    /// gpsd activated or closed a device.
    case device(GPSDDevice)
    /// No gpsd answered or was fit to read (the text says why). Reported for the first attempt
    /// and whenever the reason changes, until a connection succeeds; not once per retry.
    case unreachable(String)
    /// gpsd closed the connection or it failed mid-read; the session reconnects.
    case connectionLost
    /// No NMEA line for `seconds` while connected: reported once per quiet spell, counted from
    /// the connection, the last line or the last device gpsd activated, whichever came last.
    case quiet(seconds: Double)
}
