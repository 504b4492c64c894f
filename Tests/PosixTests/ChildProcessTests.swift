// ChildProcess: what a child inherits (only 0, 1, 2; default signal handling) and how it ends.
import Glibc
import Posix
import Foundation
import TestSupport
import Testing

@Suite("ChildProcess", .tags(.integration))
struct ChildProcessTests {
    /// Runs `/bin/sh -c script` with its output in a temporary file and returns that output.
    private func run(_ script: String) throws -> (ChildProcess.Termination, String) {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/out"
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", script], logDescriptor: fd)
        Glibc.close(fd)
        let ended = child.wait()
        let bytes = try AtomicFile.read(path) ?? []
        return (ended, String(decoding: bytes, as: UTF8.self))
    }

    @Test func theChildInheritsOnlyTheStandardDescriptors() throws {
        // A descriptor without FD_CLOEXEC, as a library or another test may hold one.
        var ends: [CInt] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { Glibc.close(ends[0]); Glibc.close(ends[1]) }
        let (ended, output) = try run("ls /proc/self/fd")
        #expect(ended == .exited(0))
        // ls's own directory descriptor is the only one besides 0, 1 and 2.
        let open = output.split(separator: "\n").compactMap { Int($0) }.filter { $0 > 2 }
        #expect(open.count <= 1, "the child inherited descriptors: \(output)")
        #expect(!open.contains(Int(ends[0])) || open.count == 1)
    }

    @Test func passedDescriptorsArriveAsThreeFourAndSoOn() throws {
        // Two pipes whose read ends the child gets, in the opposite order of their numbers.
        var first: [CInt] = [-1, -1]
        var second: [CInt] = [-1, -1]
        #expect(pipe(&first) == 0 && pipe(&second) == 0)
        defer { for fd in first + second { Glibc.close(fd) } }
        _ = "A".withCString { Glibc.write(first[1], $0, 1) }
        _ = "B".withCString { Glibc.write(second[1], $0, 1) }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/out"
        let log = Glibc.open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        let child = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "head -c1 <&3; head -c1 <&4; ls /proc/self/fd | tr '\\n' ' '"],
            logDescriptor: log, passing: [second[0], first[0]])
        Glibc.close(log)
        #expect(child.wait() == .exited(0))
        let output = String(decoding: try AtomicFile.read(path) ?? [], as: UTF8.self)
        #expect(output.hasPrefix("BA"), "\(output)")
        let open = output.dropFirst(2).split(separator: " ").compactMap { Int($0) }.filter { $0 > 2 }
        #expect(open.contains(3) && open.contains(4) && open.filter { $0 > 4 }.count <= 1, "\(output)")
    }

    @Test func signalsAreAtTheirDefaults() throws {
        // The daemon blocks SIGTERM & co and ignores SIGPIPE; its children (gpsd) must not.
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        try SignalDescriptor.block([SIGUSR2])
        defer { try? SignalDescriptor.unblock([SIGUSR2]) }
        let (ended, output) = try run("grep -E '^(SigBlk|SigIgn):' /proc/self/status")
        #expect(ended == .exited(0))
        let fields = Dictionary(
            uniqueKeysWithValues: output.split(separator: "\n").map { line in
                let parts = line.split(separator: ":", maxSplits: 1)
                return (String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces))
            })
        #expect(fields["SigBlk"].map { UInt64($0, radix: 16) == 0 } == true, "blocked: \(output)")
        let ignored = fields["SigIgn"].flatMap { UInt64($0, radix: 16) } ?? 0
        #expect(ignored & (1 << (UInt64(SIGPIPE) - 1)) == 0, "SIGPIPE ignored in the child: \(output)")
    }

    @Test func theChildHasItsOwnProcessGroup() throws {
        let (ended, output) = try run("cut -d' ' -f5 /proc/$$/stat; echo $$")
        #expect(ended == .exited(0))
        let numbers = output.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
        #expect(numbers.count == 2 && numbers[0] == numbers[1], "process group and pid: \(output)")
        #expect(numbers.first != getpgrp())
    }

    @Test func exitStatusAndSignalAreReported() throws {
        #expect(try run("exit 3").0 == .exited(3))
        #expect(try run("kill -KILL $$").0 == .signalled(SIGKILL))
    }
}
