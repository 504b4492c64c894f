import CLinux
import Glibc
import Posix
import Synchronization
import TestSupport
import Testing

/// Raw descriptors for tests whose handlers close and reopen them (owned `FileDescriptor`s cannot
/// be captured by the escaping handlers).
private func rawPipe() throws -> (read: CInt, write: CInt) {
    var fds: [CInt] = [-1, -1]
    guard clinux_pipe2(&fds, O_NONBLOCK | O_CLOEXEC) == 0 else { throw Errno.current }
    return (fds[0], fds[1])
}

private func rawSocketPair() throws -> (CInt, CInt) {
    var fds: [CInt] = [-1, -1]
    let type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
    guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw Errno.current }
    return (fds[0], fds[1])
}

private func closeAll(_ fds: CInt...) { for fd in fds { _ = Glibc.close(fd) } }

/// A loop that has not stopped after `seconds` stops itself, so a missing wake-up fails the test
/// (with `.requested` and whatever it recorded) instead of hanging the suite.
private func guardAgainstHanging(_ loop: EventLoop, seconds: Int64 = 5) -> EventLoopTimer {
    loop.schedule(afterNanoseconds: seconds * 1_000_000_000) { [unowned loop] _ in
        Issue.record("the loop was still running after \(seconds) s")
        loop.stop()
    }
}

@Suite("EventLoop", .tags(.integration))
struct EventLoopTests {
    @Test func handlersGetTheirOwnDescriptorsEventsReadableWritableAndHangUp() throws {
        let loop = try EventLoop()
        let quiet = try rawPipe()
        let talking = try rawPipe()
        let (socket, peer) = try rawSocketPair()
        defer { closeAll(quiet.read, quiet.write, talking.read, socket, peer) }
        var seen: [String] = []
        func stopWhenAllSeen(_ loop: EventLoop) {
            if seen.contains("talking hung up") && seen.contains("socket read x") { loop.stop() }
        }
        try loop.register(quiet.read, interest: .readable) { _ in seen.append("quiet") }
        try loop.register(talking.read, interest: .readable) { [unowned loop] event in
            var byte: UInt8 = 0
            while Glibc.read(talking.read, &byte, 1) == 1 {
                seen.append("talking read \(Character(UnicodeScalar(byte)))")
            }
            if event.isHangUp {
                seen.append("talking hung up")
                try? loop.deregister(talking.read)
            }
            stopWhenAllSeen(loop)
        }
        try loop.register(socket, interest: .writable) { [unowned loop] event in
            if event.isWritable {
                seen.append("socket writable")
                try? loop.modify(socket, interest: .readable)  // once: then wait for the peer's byte
                write("x", to: peer)
            } else if event.isReadable {
                var byte: UInt8 = 0
                if Glibc.read(socket, &byte, 1) == 1 { seen.append("socket read \(Character(UnicodeScalar(byte)))") }
            }
            stopWhenAllSeen(loop)
        }
        write("a", to: talking.write)
        _ = Glibc.close(talking.write)  // after the byte: the reader sees it, then the hang-up
        let hanging = guardAgainstHanging(loop)
        #expect(try loop.run() == .requested)
        hanging.disarm()
        #expect(!seen.contains("quiet"), "a descriptor with nothing to read is not handed out: \(seen)")
        #expect(seen.filter { $0 == "socket writable" }.count == 1, "interest changed to readable: \(seen)")
        #expect(seen.contains("talking read a"), "\(seen)")
        let read = try #require(seen.firstIndex(of: "talking read a"))
        let hungUp = try #require(seen.firstIndex(of: "talking hung up"))
        #expect(read < hungUp)
        #expect(loop.registrationCount == 2, "quiet and the socket")
    }

    /// Both pipes are readable in the first turn; whichever handler runs first deregisters and
    /// closes the other and opens a new pipe (which usually takes the closed number: the kernel
    /// gives the lowest free one), registered with a third handler. The stale event for the old
    /// registration in the same batch must reach nobody.
    @Test func aDescriptorDeregisteredInTheSameBatchGetsNoEventEvenWhenItsNumberIsReused() throws {
        let loop = try EventLoop()
        var first = try rawPipe()
        var second = try rawPipe()
        write("1", to: first.write)
        write("2", to: second.write)
        var calls: [String] = []
        var reused: (read: CInt, write: CInt)?
        func takeOver(from other: inout (read: CInt, write: CInt), me: String, on loop: EventLoop) {
            calls.append(me)
            try? loop.deregister(other.read)
            closeAll(other.read, other.write)
            other = (-1, -1)
            guard let fresh = try? rawPipe() else { return }
            reused = fresh
            _ = try? loop.register(fresh.read, interest: .readable) { _ in calls.append("newcomer") }
            loop.stop()
        }
        try loop.register(first.read, interest: .readable) { [unowned loop] _ in
            takeOver(from: &second, me: "first", on: loop)
        }
        try loop.register(second.read, interest: .readable) { [unowned loop] _ in
            takeOver(from: &first, me: "second", on: loop)
        }
        #expect(try loop.run() == .requested)
        #expect(loop.turns == 1, "both pipes were readable before the first wait")
        #expect(calls.count == 1, "only the handler that ran first, and not the newcomer: \(calls)")
        if let reused { closeAll(reused.read, reused.write) }
        for fd in [first.read, first.write, second.read, second.write] where fd >= 0 { closeAll(fd) }
    }

    /// A pipe that stays readable (never read) and is deregistered by its handler must not wake the
    /// loop again: level-triggered epoll would report it every turn if it were still watched.
    @Test func aDeregisteredDescriptorThatStaysReadableDoesNotSpinTheLoop() throws {
        let loop = try EventLoop()
        let pipe = try rawPipe()
        defer { closeAll(pipe.read, pipe.write) }
        write("never read", to: pipe.write)
        var calls = 0
        try loop.register(pipe.read, interest: .readable) { [unowned loop] _ in
            calls += 1
            try? loop.deregister(pipe.read)
            loop.schedule(afterNanoseconds: 50_000_000) { _ in loop.stop() }
        }
        let hanging = guardAgainstHanging(loop)
        try loop.run()
        hanging.disarm()
        #expect(calls == 1)
        #expect(loop.turns <= 3, "one turn for the pipe, one for the timer (took \(loop.turns))")
        #expect(!loop.isRegistered(pipe.read) && loop.registrationCount == 0)
    }

    /// Interest [] keeps the registration but stops the wake-ups (a connection pausing its input).
    @Test func emptyInterestStopsTheWakeUpsOfAReadableDescriptor() throws {
        let loop = try EventLoop()
        let pipe = try rawPipe()
        defer { closeAll(pipe.read, pipe.write) }
        write("pending", to: pipe.write)
        var calls = 0
        try loop.register(pipe.read, interest: .readable) { [unowned loop] _ in
            calls += 1
            if calls == 1 {
                try? loop.modify(pipe.read, interest: [])
                loop.schedule(afterNanoseconds: 30_000_000) { _ in try? loop.modify(pipe.read, interest: .readable) }
            } else {
                loop.stop()
            }
        }
        let hanging = guardAgainstHanging(loop)
        try loop.run()
        hanging.disarm()
        #expect(calls == 2, "paused once, handed out again after the interest came back")
        #expect(loop.turns <= 4, "no turn while the interest was empty (took \(loop.turns))")
    }

    /// Three one-shot timers armed out of order, all due by the time the turn's timers run: they
    /// run earliest first, in that one turn.
    @Test func dueTimersRunInDeadlineOrderWithinATurn() throws {
        let loop = try EventLoop()
        let pipe = try rawPipe()
        defer { closeAll(pipe.read, pipe.write) }
        var fired: [(name: String, turn: Int)] = []
        try loop.register(pipe.read, interest: .readable) { [unowned loop] _ in
            try? loop.deregister(pipe.read)
            let start = monotonicNanoseconds()
            loop.schedule(afterNanoseconds: 3_000_000) { _ in fired.append(("third", loop.turns)) }
            loop.schedule(afterNanoseconds: 1_000_000) { _ in fired.append(("first", loop.turns)) }
            loop.schedule(afterNanoseconds: 2_000_000) { _ in
                fired.append(("second", loop.turns)); loop.stop()
            }
            // This handler is busy past all three deadlines (work, not a sleep: the condition is
            // the clock), so all three are due when the turn reaches its timers.
            while monotonicNanoseconds() - start < 5_000_000 {}
        }
        write("go", to: pipe.write)
        let hanging = guardAgainstHanging(loop)
        try loop.run()
        hanging.disarm()
        #expect(fired.map(\.name) == ["first", "second", "third"])
        #expect(Set(fired.map(\.turn)) == [1], "all in the turn that made them due: \(fired)")
    }

    /// A periodic timer fires repeatedly, a one-shot fires once at its place among those ticks,
    /// and a disarmed periodic timer stays quiet.
    @Test func periodicAndOneShotTimersFireInOrderAndDisarmStopsThem() throws {
        let loop = try EventLoop()
        let start = monotonicNanoseconds()
        var log: [(name: String, at: Int64)] = []
        var ticks: UInt64 = 0
        let periodic = loop.schedule(afterNanoseconds: 10_000_000, periodNanoseconds: 10_000_000) { expirations in
            ticks += expirations
            log.append(("tick", monotonicNanoseconds() - start))
        }
        loop.schedule(afterNanoseconds: 35_000_000) { [unowned loop] _ in
            log.append(("once", monotonicNanoseconds() - start))
            periodic.disarm()
            loop.schedule(afterNanoseconds: 40_000_000) { _ in loop.stop() }  // room for a stray tick
        }
        let hanging = guardAgainstHanging(loop)
        try loop.run()
        hanging.disarm()
        let once = try #require(log.firstIndex { $0.name == "once" })
        #expect(log.filter { $0.name == "once" }.count == 1)
        #expect(log[..<once].allSatisfy { $0.name == "tick" } && once >= 1, "ticks before the one-shot: \(log)")
        #expect(log[(once + 1)...].isEmpty, "nothing after disarm: \(log)")
        #expect(ticks >= 3, "the expiries at 10, 20 and 30 ms come before the one at 35 ms: \(ticks)")
        #expect(log[once].at >= 35_000_000, "a timer never fires early")
        #expect(zip(log, log.dropFirst()).allSatisfy { $0.at <= $1.at })
        #expect(!periodic.isArmed)
    }

    @Test func aHandlerLateByWholePeriodsGetsTheirCount() throws {
        let loop = try EventLoop()
        var counts: [UInt64] = []
        loop.schedule(afterNanoseconds: 2_000_000, periodNanoseconds: 2_000_000) { [unowned loop] expirations in
            counts.append(expirations)
            // The first call is busy for 9 ms (work whose end is a clock reading, not a sleep):
            // its next expiry was at most 2 ms after it started, so at least 4 pass meanwhile.
            let start = monotonicNanoseconds()
            if counts.count == 1 { while monotonicNanoseconds() - start < 9_000_000 {} }
            if counts.count == 2 { loop.stop() }
        }
        let hanging = guardAgainstHanging(loop)
        try loop.run()
        hanging.disarm()
        #expect(counts.count == 2)
        #expect((counts.last ?? 0) >= 4, "one call for the periods that passed while busy: \(counts)")
    }

    @Test func stopHandleEndsRunFromAnotherThread() throws {
        let loop = try EventLoop()
        let pipe = try rawPipe()
        defer { closeAll(pipe.read, pipe.write) }
        let running = try Inbox<Bool>(capacity: 1)
        try loop.register(pipe.read, interest: .readable) { [unowned loop] _ in
            _ = try? loop.deregister(pipe.read)
            running.post(true)
        }
        let handle = loop.stopHandle
        let writer = pipe.write
        let stopper = try OSThread(name: "stopper") {
            write("x", to: writer)
            // Stop only once the loop is seen running, so this is a stop of a waiting loop.
            guard running.wait(milliseconds: 5000) == [true] else { return }
            handle.stop()
        }
        let hanging = guardAgainstHanging(loop)
        let reason = try loop.run()
        hanging.disarm()
        stopper.join()
        #expect(reason == .stopHandle)
    }

    @Test func stopHandleUsedBeforeRunEndsTheFirstTurn() throws {
        let loop = try EventLoop()
        loop.stopHandle.stop()
        let hanging = guardAgainstHanging(loop)
        #expect(try loop.run() == .stopHandle)
        hanging.disarm()
        #expect(loop.turns == 1)
    }

    /// As the udev thread does: the handle is made first and handed to a thread that makes and
    /// runs its own loop with it; the handle stops that loop from here.
    @Test func aHandleMadeBeforeItsLoopStopsTheLoopOfAnotherThread() throws {
        let handle = try EventLoop.StopHandle()
        let running = try Inbox<Bool>(capacity: 1)
        let result = try Inbox<EventLoopStop?>(capacity: 1)
        let thread = try OSThread(name: "loop-own-handle") {
            var reason: EventLoopStop?
            do {
                let loop = try EventLoop(stopHandle: handle)
                running.post(loop.stopHandle === handle)
                let hanging = guardAgainstHanging(loop)
                reason = try loop.run()
                hanging.disarm()
            } catch {
                reason = nil
            }
            result.post(reason)
        }
        #expect(running.wait(milliseconds: 5000) == [true], "the loop took the handle it was given")
        handle.stop()
        let reason = result.wait(milliseconds: 10_000)
        thread.join()
        #expect(reason == [.stopHandle])
    }

    /// A stop that comes before the loop exists (the thread is still setting up) is not lost.
    @Test func aHandleStoppedBeforeItsLoopIsMadeEndsTheFirstTurn() throws {
        let handle = try EventLoop.StopHandle()
        handle.stop()
        let loop = try EventLoop(stopHandle: handle)
        let hanging = guardAgainstHanging(loop)
        #expect(try loop.run() == .stopHandle)
        hanging.disarm()
        #expect(loop.turns == 1)
    }

    /// As `main` does: the signal is blocked in the loop's thread before it is delivered, then it
    /// arrives through the loop's signalfd. A dedicated thread keeps the runner's masks as they are.
    @Test func aBlockedSignalIsDeliveredToTheHandler() throws {
        let ready = try Inbox<UInt>(capacity: 1)
        let result = try Inbox<[CInt]>(capacity: 1)
        let thread = try OSThread(name: "loop-signal") {
            var received: [CInt] = []
            do {
                try SignalDescriptor.block([SIGUSR2])
                let loop = try EventLoop()
                try loop.handleSignals([SIGUSR2]) { [unowned loop] number in
                    received.append(number)
                    loop.stop()
                }
                let hanging = guardAgainstHanging(loop)
                ready.post(UInt(pthread_self()))
                try loop.run()
                hanging.disarm()
            } catch {
                received.append(-1)
            }
            result.post(received)
        }
        let target = try #require(ready.wait(milliseconds: 5000).first)
        #expect(pthread_kill(pthread_t(target), SIGUSR2) == 0)
        let received = result.wait(milliseconds: 10_000)
        thread.join()
        #expect(received == [[SIGUSR2]])
    }

    /// epoll refuses a regular file (EPERM): the loop hands it out every turn instead, so a file
    /// is read to its end through the same loop as a pipe.
    @Test func aRegularFileIsAlwaysReady() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/input"
        let file = try FileDescriptor.open(path, O_RDWR | O_CREAT, mode: 0o600)
        try file.writeAll("0123456789")
        _ = lseek(file.rawValue, 0, SEEK_SET)
        let loop = try EventLoop()
        var text: [UInt8] = []
        let fd = file.rawValue
        let readiness = try loop.register(fd, interest: .readable) { [unowned loop] event in
            #expect(event.isReadable)
            var chunk = [UInt8](repeating: 0, count: 4)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count > 0 { text += chunk[..<count] } else { loop.stop() }
        }
        #expect(readiness == .always)
        let hanging = guardAgainstHanging(loop)
        try loop.run()
        hanging.disarm()
        try loop.deregister(fd)
        #expect(String(decoding: text, as: UTF8.self) == "0123456789")
        #expect(loop.turns == 4, "three reads of 4, 4 and 2 bytes and one at the end")
    }

    /// Out of descriptors without a spare: the listener is paused (no wake-ups although it stays
    /// readable), and resumed by the loop's retry once a descriptor can be opened again.
    @Test func aListenerPausedForWantOfDescriptorsIsResumedByTheRetry() throws {
        let loop = try EventLoop()
        let pipe = try rawPipe()  // stands for a listener with a connection queued
        defer { closeAll(pipe.read, pipe.write) }
        write("pending", to: pipe.write)
        var outcomes: [EventLoop.AcceptFailure] = []
        try loop.register(pipe.read, interest: .readable) { [unowned loop] _ in
            if outcomes.isEmpty {
                outcomes.append(loop.acceptFailed(.tooManyOpenFiles, listener: pipe.read))
                #expect(loop.pausedListenerCount == 1)
            } else {
                outcomes.append(loop.acceptFailed(.connectionAborted, listener: pipe.read))
                loop.stop()
            }
        }
        let hanging = guardAgainstHanging(loop)
        try loop.run()
        hanging.disarm()
        #expect(outcomes == [.paused, .otherError])
        #expect(loop.pausedListenerCount == 0)
        #expect(loop.turns <= 4, "paused: no turn until the retry (took \(loop.turns))")
    }

    /// With the spare held, a full table costs one pending connection, taken and closed at once,
    /// and the spare is held again afterwards.
    @Test func theSpareRefusesOnePendingConnection() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/listener.sock"
        let listener = try UnixListener.bind(path: path, mode: 0o600)
        let client = try StreamSocket.connect(unixPath: path)
        let loop = try EventLoop()
        loop.keepSpareDescriptor()
        defer { loop.releaseSpareDescriptor() }
        #expect(loop.holdsSpareDescriptor)
        #expect(loop.acceptFailed(.tooManyOpenFiles, listener: listener.descriptor.rawValue) == .refusedOne)
        // Asked of the loop, not counted in /proc: other suites open and close descriptors in
        // this process at the same time.
        #expect(loop.holdsSpareDescriptor, "the spare is held again")
        #expect(try client.descriptor.waitReadable(milliseconds: 5000), "the client sees its connection end")
        var byte: UInt8 = 0
        #expect(Glibc.read(client.descriptor.rawValue, &byte, 1) == 0)
    }
}
