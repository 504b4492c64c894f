import CLinux
import Glibc

/// What the bridge asks of a terminal: whether a descriptor is one, and how wide it is.
public enum Terminal {
    /// Standard output's descriptor.
    public static let standardOutput: CInt = STDOUT_FILENO

    /// Whether `descriptor` is a terminal (isatty(3)): only a terminal gets control sequences.
    public static func isTerminal(_ descriptor: CInt) -> Bool { isatty(descriptor) == 1 }

    /// The terminal's width in columns (TIOCGWINSZ, asked each time: the window may have been
    /// resized), or nil when it does not say.
    public static func columns(of descriptor: CInt) -> Int? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
