import CLinux
import Glibc
import Posix
import TestSupport
import Testing

@Suite("epoll Selector with real descriptors", .tags(.unit))
struct SelectorTests {
    @Test func readableEventCarriesRegistrationIDAndDescriptor() throws {
        let selector = try Selector()
        let pipe = try Pipe()
        let id = try selector.register(pipe.readEnd.rawValue, interest: .readable)
        var events: [SelectorEvent] = []
        #expect(try selector.wait(timeoutMilliseconds: 0, into: &events) == 0)
        write("x", to: pipe.writeEnd.rawValue)
        #expect(try selector.wait(timeoutMilliseconds: 1000, into: &events) == 1)
        let event = try #require(events.first)
        #expect(event.registrationID == id)
        #expect(event.descriptor == pipe.readEnd.rawValue)
        #expect(event.isReadable && !event.isWritable && !event.isError)
        #expect(selector.isCurrent(event))
        try selector.deregister(pipe.readEnd.rawValue)
    }

    @Test func eventfdWakeUp() throws {
        let selector = try Selector()
        let fd = eventfd(0, CInt(EFD_NONBLOCK | EFD_CLOEXEC))
        try #require(fd >= 0)
        let event = FileDescriptor(adopting: fd)
        let id = try selector.register(event.rawValue, interest: .readable)
        var one: UInt64 = 1
        #expect(Glibc.write(event.rawValue, &one, 8) == 8)
        var events: [SelectorEvent] = []
        try selector.wait(timeoutMilliseconds: 1000, into: &events)
        #expect(events.map(\.registrationID) == [id])
        try selector.deregister(event.rawValue)
    }

    @Test func deregisteredDescriptorReportsNothing() throws {
        let selector = try Selector()
        let pipe = try Pipe()
        try selector.register(pipe.readEnd.rawValue, interest: .readable)
        try selector.deregister(pipe.readEnd.rawValue)
        #expect(selector.registrationCount == 0)
        write("x", to: pipe.writeEnd.rawValue)
        var events: [SelectorEvent] = []
        #expect(try selector.wait(timeoutMilliseconds: 20, into: &events) == 0)
        #expect(events.isEmpty)
    }

    @Test func modifyToWritable() throws {
        let selector = try Selector()
        let pipe = try Pipe()
        let id = try selector.register(pipe.writeEnd.rawValue, interest: [])
        var events: [SelectorEvent] = []
        #expect(try selector.wait(timeoutMilliseconds: 0, into: &events) == 0)
        try selector.modify(pipe.writeEnd.rawValue, interest: .writable)
        #expect(try selector.wait(timeoutMilliseconds: 1000, into: &events) == 1)
        #expect(events.first?.isWritable == true)
        #expect(events.first?.registrationID == id, "modify keeps the registration id")
        try selector.deregister(pipe.writeEnd.rawValue)
    }

    @Test func hangUpIsReportedWithoutAsking() throws {
        let selector = try Selector()
        let pipe = try Pipe()
        try selector.register(pipe.readEnd.rawValue, interest: [])
        pipe.writeEnd.close()
        var events: [SelectorEvent] = []
        #expect(try selector.wait(timeoutMilliseconds: 1000, into: &events) == 1)
        #expect(events.first?.isHangUp == true)
        try selector.deregister(pipe.readEnd.rawValue)
        _ = pipe.readEnd
    }

    @Test func staleEventForReusedDescriptorIsRecognised() throws {
        let selector = try Selector()
        let first = try Pipe()
        let number = first.readEnd.rawValue
        let oldID = try selector.register(number, interest: .readable)
        write("x", to: first.writeEnd.rawValue)
        var events: [SelectorEvent] = []
        try selector.wait(timeoutMilliseconds: 1000, into: &events)
        let stale = try #require(events.first)
        #expect(stale.registrationID == oldID)

        // While handling the batch, the loop closes the descriptor and a new one takes its
        // number (forced here with dup2 so no other thread can take the number first).
        try selector.deregister(number)
        let second = try Pipe()
        #expect(dup2(second.readEnd.rawValue, number) == number)
        let newID = try selector.register(number, interest: .readable)
        #expect(newID != oldID)
        #expect(!selector.isCurrent(stale), "the old event must be dropped, not delivered to the new owner")

        write("y", to: second.writeEnd.rawValue)
        try selector.wait(timeoutMilliseconds: 1000, into: &events)
        let fresh = try #require(events.first)
        #expect(fresh.descriptor == number && fresh.registrationID == newID && selector.isCurrent(fresh))
        try selector.deregister(number)
        _ = first.readEnd  // closes `number` (now the dup) when the test ends
    }

    @Test func waitTimesOut() throws {
        let selector = try Selector()
        var events: [SelectorEvent] = []
        let start = monotonicNanoseconds()
        #expect(try selector.wait(timeoutMilliseconds: 30, into: &events) == 0)
        #expect(monotonicNanoseconds() - start >= 25_000_000)
    }

    @Test func manyReadyDescriptorsInOneWait() throws {
        let selector = try Selector(maxEventsPerWait: 4)
        var pipes: [CInt] = []
        for _ in 0..<6 {
            var fds: [CInt] = [-1, -1]
            try #require(clinux_pipe2(&fds, O_NONBLOCK | O_CLOEXEC) == 0)
            pipes += fds
            try selector.register(fds[0], interest: .readable)
            write("x", to: fds[1])
        }
        var events: [SelectorEvent] = []
        #expect(try selector.wait(timeoutMilliseconds: 1000, into: &events) == 4, "capped at maxEventsPerWait")
        for fd in pipes.enumerated().filter({ $0.offset % 2 == 0 }).map(\.element) { try selector.deregister(fd) }
        for fd in pipes { Glibc.close(fd) }
    }
}
