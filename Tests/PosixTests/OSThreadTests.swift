import CLinux
import Glibc
import Posix
import Synchronization
import TestSupport
import Testing

@Suite("OSThread", .tags(.unit))
struct OSThreadTests {
    /// An owner that keeps its thread and whose body captures it (GPSDSession does) must be freed
    /// once the thread has returned: the thread, not the OSThread, holds the body.
    @Test func aFinishedThreadLetsGoOfItsBody() throws {
        weak var released: ThreadOwner?
        do {
            let owner = ThreadOwner()
            released = owner
            try owner.start()
            owner.thread.withLock { $0 }?.join()
        }
        #expect(released == nil, "the thread's body still holds its owner")
    }

    @Test func theKernelIDIsThatOfTheThread() throws {
        let seen = Mutex<pid_t>(0)
        let thread = try OSThread(name: "tid") { seen.withLock { $0 = clinux_gettid() } }
        thread.join()
        #expect(thread.kernelID == seen.withLock { $0 } && thread.kernelID != getpid())
    }
}

private final class ThreadOwner: Sendable {
    let thread = Mutex<OSThread?>(nil)
    let runs = Atomic<Int>(0)

    func start() throws {
        let thread = try OSThread(name: "owner") { [self] in runs.add(1, ordering: .relaxed) }
        self.thread.withLock { $0 = thread }
    }
}
