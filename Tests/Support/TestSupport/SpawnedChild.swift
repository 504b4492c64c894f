// Children of the tests: started with posix_spawn (standard input /dev/null, output and errors
// collected together or appended to a file, every other descriptor closed in the child, default
// signal dispositions and mask), reaped by whichever call sees the end first. The one spawner of
// the test targets: the broker fixtures, CLITests' daemons and tools.
//
// Not Foundation's `Process` (its SIGCHLD monitor sometimes misses a SIGKILLed child on Linux,
// and `waitUntilExit()` then never returns) and not `Posix.ChildProcess` (its children inherit
// every descriptor without FD_CLOEXEC, such as the pipes of the other tests that run in parallel
// in this process: a daemon that inherits another test's stdout pipe makes that test wait for
// the daemon's end before it sees EOF).
import Foundation
import Glibc
import Synchronization

/// Why a child could not be started.
public struct SpawnError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
/// Bytes a child writes, collected on a background thread as they arrive.
public final class ChildOutput: Sendable {
    public init() {}

    private let bytes = Mutex<[UInt8]>([])
    private let ended = Mutex(false)

    public var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }
    /// The child closed its end and everything is in `text`.
    public var isComplete: Bool { ended.withLock { $0 } }

    /// Adds bytes (a reader of the caller's own).
    public func append(_ data: Data) { bytes.withLock { $0 += data } }

    /// Reads `handle` until EOF on a thread of its own.
    public func collect(from handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                append(data)
            }
            ended.withLock { $0 = true }
        }
    }

    /// Reads `fd` to its end on a thread of its own, then closes it.
    public func collect(from fd: CInt) {
        Thread.detachNewThread { [self] in
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                bytes.withLock { $0 += chunk[0..<count] }
            }
            close(fd)
            ended.withLock { $0 = true }
        }
    }
}

/// A child started with posix_spawn: standard input /dev/null, standard output and error to
/// `outputFile` (appended) or together into `output`, every other descriptor closed in it, the
/// default signal dispositions; reaped by whichever call sees its end first.
public final class SpawnedChild: Sendable {
    public enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)
    }

    public let pid: pid_t
    public let output = ChildOutput()
    /// Whether `output` collects its output (no `outputFile`).
    private let collects: Bool
    private let ending = Mutex<Ending?>(nil)

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, CInt) -> CInt
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<CInt>?, CInt) -> CInt
    // glibc 2.34+ has both; Swift's Glibc module does not export them (GNU extensions).
    private static let addCloseFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }
    private static let pipe2 = dlsym(nil, "pipe2").map { unsafeBitCast($0, to: Pipe2.self) }

    public init(_ executable: String, _ arguments: [String], outputFile: String? = nil) throws {
        guard let addCloseFrom = Self.addCloseFrom, let pipe2 = Self.pipe2 else {
            throw SpawnError("this C library lacks posix_spawn_file_actions_addclosefrom_np or pipe2")
        }
        var ends: [CInt] = [-1, -1]
        if outputFile == nil {
            guard pipe2(&ends, O_CLOEXEC) == 0 else {
                throw SpawnError("pipe2: \(String(cString: strerror(errno)))")
            }
        }
        defer { if ends[1] >= 0 { close(ends[1]) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let outputFile {
            posix_spawn_file_actions_addopen(&actions, 1, outputFile, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
            posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
        }
        _ = addCloseFrom(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigfillset(&signals)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, &argv, environ)
        guard status == 0 else {
            if ends[0] >= 0 { close(ends[0]) }
            throw SpawnError("cannot start \(executable): \(String(cString: strerror(status)))")
        }
        self.pid = pid
        collects = ends[0] >= 0
        if collects { output.collect(from: ends[0]) }
    }

    deinit { killAndReap() }

    /// How it ended, once it has (reaped by the first call that sees it).
    public var termination: Ending? { ending.withLock { ending in ending ?? reap(&ending, options: WNOHANG) } }

    public var hasEnded: Bool { termination != nil }

    private func reap(_ ending: inout Ending?, options: CInt) -> Ending? {
        var status: CInt = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, options) } while result == -1 && errno == EINTR
        guard result == pid else { return nil }
        let signal = status & 0x7F
        ending = signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
        return ending
    }

    /// Sends `signal` unless it has been reaped (its pid may be another process's by then).
    public func signal(_ signal: CInt) {
        ending.withLock { ending in
            if ending == nil && reap(&ending, options: WNOHANG) == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// Waits up to `timeout` for its end (and its output's); nil when it still runs.
    public func wait(timeout: Duration) -> Ending? {
        _ = waitUntil(timeout: timeout, pollInterval: .milliseconds(5)) { hasEnded }
        guard let termination else { return nil }
        _ = waitUntil(timeout: .seconds(2), pollInterval: .milliseconds(5)) { !collects || output.isComplete }
        return termination
    }

    /// SIGKILL and reap.
    public func killAndReap() {
        ending.withLock { ending in
            guard ending == nil else { return }
            _ = Glibc.kill(pid, SIGKILL)
            _ = reap(&ending, options: 0)
        }
    }
}
