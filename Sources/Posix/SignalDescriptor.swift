import CLinux
import Glibc

/// A signalfd: signals blocked in the calling thread and read as values in the io loop
/// (style rule 11: nothing happens in a signal handler).
///
/// Block the signals in `main` before any thread starts (threads inherit the mask); a thread
/// that leaves a signal unblocked may take it instead of the signalfd.
public struct SignalDescriptor: ~Copyable {
    public let descriptor: FileDescriptor
    /// The signals this descriptor reports.
    public let signals: [CInt]

    /// Blocks `signals` in the calling thread and opens a non-blocking signalfd for them.
    public init(signals: [CInt]) throws(Errno) {
        try Self.block(signals)
        var set = Self.signalSet(signals)
        let fd = try valueOrErrno { signalfd(-1, &set, CInt(SFD_NONBLOCK | SFD_CLOEXEC)) }
        descriptor = FileDescriptor(adopting: fd)
        self.signals = signals
    }

    /// Blocks `signals` in the calling thread (pthread_sigmask SIG_BLOCK).
    public static func block(_ signals: [CInt]) throws(Errno) {
        var set = signalSet(signals)
        let result = pthread_sigmask(SIG_BLOCK, &set, nil)
        guard result == 0 else { throw Errno(rawValue: result) }
    }

    /// Unblocks `signals` in the calling thread.
    public static func unblock(_ signals: [CInt]) throws(Errno) {
        var set = signalSet(signals)
        let result = pthread_sigmask(SIG_UNBLOCK, &set, nil)
        guard result == 0 else { throw Errno(rawValue: result) }
    }

    /// Reads the next pending signal number; nil when none is pending (would block).
    public func read() throws(Errno) -> CInt? {
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        let result = withUnsafeMutableBytes(of: &info) { raw in
            Result { () throws(Errno) -> Int in
                try valueOrErrno { Glibc.read(descriptor.rawValue, raw.baseAddress, size) }
            }
        }
        switch result {
        case .success(let count):
            precondition(count == size, "signalfd returned a partial siginfo")
            return CInt(bitPattern: info.ssi_signo)
        case .failure(let error) where error == .wouldBlock: return nil
        case .failure(let error): throw error
        }
    }

    private static func signalSet(_ signals: [CInt]) -> sigset_t {
        var set = sigset_t()
        clinux_sigset_empty(&set)
        for signal in signals { clinux_sigset_add(&set, signal) }
        return set
    }
}
