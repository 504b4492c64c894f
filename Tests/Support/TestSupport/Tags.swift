// The two kinds of suites. Every suite carries exactly one of these tags (SuiteTagTests checks
// it), and `make test-fast` runs the unit ones.
import Testing

extension Tag {
    /// Pure logic: no child processes, no gpsd, no network sockets (a socketpair or a pipe is
    /// fine), no waiting; the suite runs in milliseconds.
    @Tag public static var unit: Self
    /// Real gpsd, real sockets and ports, child processes, ptys, python3 or curl clients, the
    /// real binary, the real kernel (netlink, sysfs, /proc of other processes), hardware.
    @Tag public static var integration: Self
}
