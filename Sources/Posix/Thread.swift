import CLinux
import Glibc
import Synchronization

/// A dedicated OS thread for a blocking C library (libgps, libudev): those own one thread each
/// for their whole life, never a Task or a Dispatch queue.
public final class OSThread: Sendable {
    private let handle: Mutex<pthread_t?> = Mutex(nil)
    private let identity = ThreadIdentity()
    public let name: String

    /// The kernel's id of the thread (its entry in /proc/self/task), once it runs; nil before.
    /// Names are not unique (several writers may run at once), this is.
    public var kernelID: pid_t? { identity.kernelID.withLock { $0 } }

    /// Starts `body` on a new thread named `name` (at most 15 bytes are shown by the kernel).
    ///
    /// Only the thread holds `body`, and lets it go when it returns: an owner that keeps its
    /// OSThread and whose body captures the owner (GPSDSession) is not kept alive by the pair.
    public init(name: String, _ body: @escaping @Sendable () -> Void) throws(Errno) {
        self.name = name
        let box = Unmanaged.passRetained(ThreadBody(name: name, identity: identity, body: body))
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { context in
                let body = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
                clinux_set_thread_name(String(body.name.prefix(15)))
                body.identity.kernelID.withLock { $0 = clinux_gettid() }
                body.body()
                return nil
            }, box.toOpaque())
        guard result == 0 else {
            box.release()
            throw Errno(rawValue: result)
        }
        handle.withLock { $0 = thread }
    }

    /// Waits for the thread to finish (once; later calls return at once).
    public func join() {
        guard
            let thread = handle.withLock({ h -> pthread_t? in
                defer { h = nil }; return h
            })
        else { return }
        pthread_join(thread, nil)
    }
}

private final class ThreadIdentity: Sendable {
    let kernelID = Mutex<pid_t?>(nil)
}

/// What the new thread takes over: released when its function returns.
private final class ThreadBody: Sendable {
    let name: String
    let identity: ThreadIdentity
    let body: @Sendable () -> Void
    init(name: String, identity: ThreadIdentity, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.identity = identity
        self.body = body
    }
}
