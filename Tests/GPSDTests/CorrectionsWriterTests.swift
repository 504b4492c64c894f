// The corrections writer against real ptys and real gpsd 3.22: frames submitted on the test's
// thread (as the io thread submits them) must reach the pty's controller side, where a receiver
// would read them, byte for byte and in order; through the tty itself, through gpsd's `&`
// command (a gpsd of the test's own, and the bridge's private gpsd started writable), and
// through the tty again when gpsd runs read-only. A receiver that stops reading, a
// device that vanishes and stop() are each played for real.
import Foundation
import GPSD
import Glibc
import Posix
import Synchronization
import TestSupport
import Testing

/// An RTCM 3 frame (TestSupport's `makeRTCMFrame`) whose message is 12 bits of message number then
/// bytes that run through every value, so that no byte (LF, CR, XON, XOFF, 0xFF) is taken for
/// anything but data on its way.
func rtcmFrame(_ index: Int, length: Int) -> [UInt8] {
    precondition(length >= 2 && length <= 1023)
    var message = [UInt8(1005 >> 4), UInt8((1005 & 0x0F) << 4)]
    for i in 2..<length { message.append(UInt8(truncatingIfNeeded: index &* 31 &+ i)) }
    return makeRTCMFrame(message)
}

/// Frames of lengths from the shortest to the longest RTCM allows.
func sampleFrames(_ count: Int, first: Int = 0) -> [[UInt8]] {
    let lengths = [2, 19, 1023, 100, 256, 511, 37, 640]
    return (first..<first + count).map { rtcmFrame($0, length: lengths[$0 % lengths.count]) }
}

/// Reads `descriptor` until `condition` holds on what was read, or `milliseconds` pass.
func readUntil(
    _ descriptor: borrowing FileDescriptor, milliseconds: Int, _ condition: ([UInt8]) -> Bool
) throws -> [UInt8] {
    var got: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    let deadline = monotonicNanoseconds() + Int64(milliseconds) * 1_000_000
    while !condition(got), monotonicNanoseconds() < deadline {
        guard try descriptor.waitReadable(milliseconds: 50) else { continue }
        let count = try buffer.withUnsafeMutableBytes { raw in try descriptor.read(into: raw) }
        got += buffer[0..<count]
    }
    return got
}

/// Reads what `descriptor` holds now (until it has nothing for `quietMilliseconds`).
func readAvailable(_ descriptor: borrowing FileDescriptor, quietMilliseconds: Int32 = 100) throws -> [UInt8] {
    var got: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while try descriptor.waitReadable(milliseconds: quietMilliseconds) {
        let count = try buffer.withUnsafeMutableBytes { raw in try descriptor.read(into: raw) }
        if count == 0 { break }
        got += buffer[0..<count]
    }
    return got
}

/// Waits up to `milliseconds` for `condition`.
@discardableResult
func waitFor(milliseconds: Int = 5000, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicNanoseconds() + Int64(milliseconds) * 1_000_000
    while monotonicNanoseconds() < deadline {
        if condition() { return true }
        sleep(nanoseconds: 5_000_000)
    }
    return condition()
}

/// How many of `frames`, in order, `bytes` is the concatenation of (each whole, some left out),
/// or nil when `bytes` is not such a concatenation.
func wholeFramesIn(_ bytes: [UInt8], from frames: [[UInt8]]) -> Int? {
    var offset = 0
    var matched = 0
    for frame in frames where offset + frame.count <= bytes.count {
        if bytes[offset..<offset + frame.count].elementsEqual(frame) {
            offset += frame.count
            matched += 1
        }
    }
    return offset == bytes.count ? matched : nil
}

/// The arguments `pid` was started with (/proc/PID/cmdline).
func commandLine(of pid: pid_t) throws -> [String] {
    let raw = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
    return raw.split(separator: 0, omittingEmptySubsequences: false).dropLast().map {
        String(decoding: $0, as: UTF8.self)
    }
}

/// A gpsd 3.22 that may write to its devices (no `-b`), with a control socket of its own.
final class WritableGPSD {
    let runtime = RuntimeDirectory()
    let child: ChildProcess
    let controlSocket: String

    init() throws {
        let executable = try #require(findExecutable("gpsd"))
        let port = try #require(freeLoopbackPort())
        controlSocket = runtime.path + "/gpsd.sock"
        child = try ChildProcess(
            executable: executable, arguments: ["-N", "-n", "-F", controlSocket, "-S", String(port)])
        // gpsd waits on an open control connection until it is closed: the probe is closed at once.
        let socket = controlSocket
        let answering = waitFor {
            do {
                _ = try StreamSocket.connect(unixPath: socket)
                return true
            } catch {
                return false
            }
        }
        try #require(answering, "gpsd did not open its control socket \(socket)")
    }

    /// Hands gpsd `path`. Its answer comes after it has probed the device for every driver it
    /// knows (~3 s for a pty that says nothing), its wake-up strings written to the device:
    /// within the add's own timeout.
    func add(_ path: String) throws {
        try GPSDControlSocket(path: controlSocket).add(path)
    }

    deinit { child.stop() }
}

@Suite("corrections writer", .tags(.integration), .serialized)
struct CorrectionsWriterTests {
    /// (a) No control socket: the tty itself, every frame whole and in order.
    @Test func ttyRouteWritesFramesUnchangedAndInOrder() throws {
        let pty = try Pseudoterminal()
        let messages = Messages()
        let writer = try CorrectionsWriter(gpsdControlSocket: nil, log: messages.logger)
        defer { writer.stop() }
        let frames = sampleFrames(40)
        let expected = frames.flatMap { $0 }
        for frame in frames { #expect(writer.submit(frame, to: pty.devicePath)) }
        let got = try readUntil(pty.controller, milliseconds: 10_000) { $0.count >= expected.count }
        #expect(got == expected, "\(got.count) of \(expected.count) bytes, \(messages.all)")
        #expect(waitFor { writer.statistics.framesWritten == frames.count })
        let statistics = writer.statistics
        #expect(statistics.bytesWritten == expected.count)
        #expect(statistics.framesDropped == 0 && statistics.writeFailures == 0 && statistics.lastError == nil)
        #expect(statistics.route == .tty && statistics.device == pty.devicePath)
        #expect(statistics.lastWrittenAt != nil)
        #expect(
            messages.all.contains(
                "corrections for \(pty.devicePath): written to the device directly (no gpsd control socket is known)"),
            "\(messages.all)")
    }

    /// (b) A gpsd that may write: the frames go through `&`, and reach the receiver byte-exact.
    @Test(.enabled(if: gpsdInstalled)) func gpsdRouteWritesFramesThroughTheControlSocket() throws {
        let pty = try Pseudoterminal()
        let gpsd = try WritableGPSD()
        try gpsd.add(pty.devicePath)
        // A gpsd that may write probes a new device as it opens it (its drivers' wake-up strings,
        // before it answers the `+`), and then writes nothing more to a device that says nothing:
        // only this test's frames follow, so they must end the stream, whole, and nothing of them
        // may come before.
        let probes = try readAvailable(pty.controller)
        let messages = Messages()
        let writer = try CorrectionsWriter(gpsdControlSocket: gpsd.controlSocket, log: messages.logger)
        defer { writer.stop() }
        let frames = sampleFrames(40)
        let expected = frames.flatMap { $0 }
        for frame in frames { #expect(writer.submit(frame, to: pty.devicePath)) }
        let got = try readUntil(pty.controller, milliseconds: 10_000) { $0.count >= expected.count }
        let late = got.dropLast(min(got.count, expected.count))
        #expect(Array(got.suffix(expected.count)) == expected, "\(got.count) bytes, \(messages.all)")
        #expect(!late.contains(0xD3), "gpsd's own probe strings only before the frames: \(late) after \(probes)")
        #expect(waitFor { writer.statistics.framesWritten == frames.count })
        let statistics = writer.statistics
        #expect(statistics.route == .gpsd && statistics.writeFailures == 0, "\(statistics)")
        #expect(
            messages.all.contains(
                "corrections for \(pty.devicePath): written through gpsd's control socket \(gpsd.controlSocket)"),
            "\(messages.all)")
    }

    /// The longest command gpsd 3.22 reads whole: a frame longer than one `&` carries goes in
    /// several commands, each within gpsd's read, and arrives whole.
    @Test(.enabled(if: gpsdInstalled)) func gpsdRouteSplitsWhatOneCommandCannotCarry() throws {
        let pty = try Pseudoterminal()
        let gpsd = try WritableGPSD()
        try gpsd.add(pty.devicePath)
        _ = try readAvailable(pty.controller)
        let writer = try CorrectionsWriter(gpsdControlSocket: gpsd.controlSocket, log: Messages().logger)
        defer { writer.stop() }
        let limit = GPSDControlSocket.maximumWriteLength(to: pty.devicePath)
        #expect(limit == (8191 - 3 - pty.devicePath.utf8.count) / 2)
        let long = (0..<(limit * 2 + 7)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(writer.submit(long, to: pty.devicePath))
        let got = try readUntil(pty.controller, milliseconds: 10_000) { $0.count >= long.count }
        #expect(got == long, "\(got.count) of \(long.count) bytes")
        #expect(waitFor { writer.statistics.framesWritten == 1 })
        #expect(writer.statistics.route == .gpsd)
    }

    /// (c) The bridge's own gpsd runs read-only (`-b`) and answers ERROR to `&`: the frames go to
    /// the tty, still byte-exact, the first one included.
    @Test(.enabled(if: gpsdInstalled)) func readOnlyGPSDFallsBackToTheTTY() throws {
        let runtime = RuntimeDirectory()
        let configuration = try PrivateGPSD.Configuration.inRuntimeDirectory(runtime.path)
        let messages = Messages()
        let gpsd = PrivateGPSD(configuration, log: messages.logger)
        try gpsd.start()
        defer { gpsd.stop() }
        #expect(configuration.readOnly, "the default")
        #expect(try commandLine(of: try #require(gpsd.pid)).contains("-b"))
        let pty = try Pseudoterminal()
        try GPSDControlSocket(path: configuration.controlSocket).add(pty.devicePath)
        let writer = try CorrectionsWriter(gpsdControlSocket: configuration.controlSocket, log: messages.logger)
        defer { writer.stop() }
        let frames = sampleFrames(30)
        let expected = frames.flatMap { $0 }
        for frame in frames { #expect(writer.submit(frame, to: pty.devicePath)) }
        let got = try readUntil(pty.controller, milliseconds: 10_000) { $0.count >= expected.count }
        #expect(got == expected, "\(got.count) of \(expected.count) bytes, \(messages.all)")
        #expect(waitFor { writer.statistics.framesWritten == frames.count })
        let statistics = writer.statistics
        #expect(statistics.route == .tty && statistics.writeFailures == 0, "\(statistics)")
        #expect(
            messages.all.contains { $0.contains("written to the device directly (gpsd answered ERROR to a write") },
            "\(messages.all)")
        #expect(
            !messages.all.contains { $0.contains("written through gpsd") },
            "the gpsd route is logged once gpsd has taken a frame: \(messages.all)")
    }

    /// (c') The bridge's own gpsd started writable (`gpsd-read-only = no`, `readOnly` false): no
    /// `-b`, so it probes the pty it is handed (the add's timeout allows for that) and takes the
    /// frames through `&`, byte-exact: the route to a USB or serial receiver it locks.
    @Test(.enabled(if: gpsdInstalled)) func aWritablePrivateGPSDTakesTheFramesThroughItsControlSocket() throws {
        let runtime = RuntimeDirectory()
        var configuration = try PrivateGPSD.Configuration.inRuntimeDirectory(runtime.path)
        configuration.readOnly = false
        let messages = Messages()
        let gpsd = PrivateGPSD(configuration, log: messages.logger)
        try gpsd.start()
        defer { gpsd.stop() }
        let arguments = try commandLine(of: try #require(gpsd.pid))
        #expect(!arguments.contains("-b") && arguments.contains("-N"), "\(arguments)")
        #expect(messages.all.contains { $0.contains("writable (no -b") }, "\(messages.all)")
        let pty = try Pseudoterminal()
        // The default timeout: gpsd answers after ~3 s of probing the silent pty.
        try GPSDControlSocket(path: configuration.controlSocket).add(pty.devicePath)
        let probes = try readAvailable(pty.controller)
        #expect(!probes.isEmpty, "a gpsd that may write probes the device it opens")
        let writer = try CorrectionsWriter(gpsdControlSocket: configuration.controlSocket, log: messages.logger)
        defer { writer.stop() }
        let frames = sampleFrames(40)
        let expected = frames.flatMap { $0 }
        for frame in frames { #expect(writer.submit(frame, to: pty.devicePath)) }
        let got = try readUntil(pty.controller, milliseconds: 10_000) { $0.count >= expected.count }
        #expect(got == expected, "\(got.count) of \(expected.count) bytes, \(messages.all)")
        #expect(waitFor { writer.statistics.framesWritten == frames.count })
        let statistics = writer.statistics
        #expect(statistics.route == .gpsd && statistics.writeFailures == 0, "\(statistics)")
        #expect(statistics.bytesWritten == expected.count && statistics.lastError == nil, "\(statistics)")
        let socket = configuration.controlSocket
        #expect(
            messages.all.contains("corrections for \(pty.devicePath): written through gpsd's control socket \(socket)"),
            "\(messages.all)")
        #expect(gpsd.restarts == 0)
    }

    /// (d) A receiver that reads nothing: the tty fills, then the queue; further frames are
    /// refused whole and counted, submit never waits, and what reaches the receiver once it reads
    /// again is whole frames, in order.
    @Test func aFullQueueDropsWholeFramesAndSubmitNeverWaits() throws {
        let pty = try Pseudoterminal()
        let writer = try CorrectionsWriter(gpsdControlSocket: nil, queueLimitBytes: 16 * 1024, log: Messages().logger)
        defer { writer.stop() }
        // 1000 frames, ~300 KB: far more than the pty (~18 KB here) and the queue hold.
        let frames = (0..<1000).map { rtcmFrame($0, length: [150, 300, 450][$0 % 3]) }
        var accepted: [[UInt8]] = []
        let start = monotonicNanoseconds()
        for frame in frames where writer.submit(frame, to: pty.devicePath) { accepted.append(frame) }
        let elapsed = monotonicNanoseconds() - start
        // Each submit takes a lock and signals an eventfd: microseconds. 50 ms for all of them
        // would mean one waited for the writer.
        #expect(elapsed < 50_000_000, "1000 submits took \(elapsed / 1_000_000) ms")
        let dropped = frames.count - accepted.count
        #expect(dropped > 0)
        #expect(writer.statistics.framesDropped == dropped)
        // The receiver reads again: everything accepted is written or counted as failed.
        var got: [UInt8] = []
        let deadline = monotonicNanoseconds() + 30_000_000_000
        while writer.queuedBytes > 0, monotonicNanoseconds() < deadline {
            got += try readAvailable(pty.controller, quietMilliseconds: 20)
        }
        got += try readAvailable(pty.controller)
        #expect(writer.queuedBytes == 0)
        let statistics = writer.statistics
        let whole = wholeFramesIn(got, from: accepted)
        #expect(whole != nil, "what arrived is not a run of whole submitted frames (\(got.count) bytes)")
        #expect(whole == statistics.framesWritten)
        #expect(statistics.framesWritten + statistics.writeFailures == accepted.count, "\(statistics)")
        #expect(statistics.bytesWritten == got.count)
    }

    /// (e) The device vanishes: while a frame waits for a receiver that reads nothing, and for
    /// every frame after. Each is a counted failure with its reason, the kind logged once, no crash,
    /// and nothing is left queued.
    @Test func aVanishedDeviceCountsFailuresAndLogsEachKindOnce() throws {
        let pty = try Pseudoterminal()
        let path = pty.devicePath
        let messages = Messages()
        let writer = try CorrectionsWriter(gpsdControlSocket: nil, log: messages.logger)
        defer { writer.stop() }
        let first = rtcmFrame(0, length: 100)
        #expect(writer.submit(first, to: path))
        #expect(try readUntil(pty.controller, milliseconds: 5000) { $0.count >= first.count } == first)
        #expect(waitFor { writer.statistics.framesWritten == 1 })
        // Fill the pty so that the writer waits on it, then close the controller side: the device
        // node goes (the device side stays open here, so that no other test's pty takes its number).
        let frames = sampleFrames(120, first: 1)
        for frame in frames { writer.submit(frame, to: path) }
        #expect(waitFor { writer.statistics.lastError != nil || writer.statistics.writeFailures > 0 })
        let descriptors = pty.release()
        FileDescriptor(adopting: descriptors.controller).close()
        // Closed at the end of the test, with the pty's number.
        let device = FileDescriptor(adopting: descriptors.device)
        #expect(waitFor(milliseconds: 10_000) { writer.queuedBytes == 0 }, "\(writer.statistics)")
        let statistics = writer.statistics
        #expect(statistics.writeFailures > 1, "\(statistics)")
        #expect(statistics.framesWritten + statistics.writeFailures == frames.count + 1)
        #expect(statistics.lastError == "cannot open \(path): No such file or directory", "\(statistics)")
        #expect(
            messages.all.filter { $0 == "corrections: cannot open \(path): No such file or directory" }.count == 1,
            "\(messages.all)")
        // A later frame, after the spell: refused the same way, the writer still answering.
        #expect(writer.submit(first, to: path))
        #expect(waitFor { writer.statistics.writeFailures == statistics.writeFailures + 1 })
        device.close()
    }

    /// (f) stop() ends a writer waiting on a receiver that reads nothing, joins its thread,
    /// refuses later frames, and may be called again.
    @Test func stopEndsAWaitingWriterAndIsIdempotent() throws {
        let pty = try Pseudoterminal()
        let writer = try CorrectionsWriter(gpsdControlSocket: nil, log: Messages().logger)
        // The thread records its kernel id once it runs; other suites' writers run beside this
        // one, so it is this thread that is watched, not a count of threads by name.
        #expect(waitFor { writer.threadKernelID != nil })
        let task = try #require(writer.threadKernelID)
        #expect(threadIsAlive(task))
        #expect(threadName(task) == "corrections")
        for frame in sampleFrames(120) { writer.submit(frame, to: pty.devicePath) }
        // Waiting on the full pty for a second, with part of a frame or a whole one.
        #expect(waitFor { writer.statistics.lastError != nil || writer.statistics.writeFailures > 0 })
        writer.stop()
        #expect(!threadIsAlive(task), "the thread is joined by stop()")
        #expect(writer.threadKernelID == nil)
        let statistics = writer.statistics
        #expect(!writer.submit(rtcmFrame(0, length: 10), to: pty.devicePath))
        #expect(writer.statistics == statistics, "a refused frame after stop is not a queue-full drop")
        #expect(writer.queuedBytes == 0)
        writer.stop()
        #expect(!threadIsAlive(task))
    }

    /// gpsd reads a device name up to the first space or unprintable byte: such a path would name
    /// another device, so it is refused before anything is sent.
    @Test func pathsGPSDWouldCutAreNeverSent() {
        let socket = GPSDControlSocket(path: "/nonexistent/gpsd.sock")
        #expect(throws: GPSDControlSocket.Failure.invalidPath("/dev/tty USB0")) { try socket.add("/dev/tty USB0") }
        #expect(throws: GPSDControlSocket.Failure.invalidPath("/dev/ttyé")) { try socket.add("/dev/ttyé") }
        #expect(throws: GPSDControlSocket.Failure.invalidPath("")) { try socket.remove("") }
    }

    /// Whether thread `task` of this process still runs (a joined thread leaves /proc/self/task;
    /// an id is reused only once the kernel's pid counter wraps, far beyond one test).
    private func threadIsAlive(_ task: pid_t) -> Bool {
        FileManager.default.fileExists(atPath: "/proc/self/task/\(task)")
    }

    private func threadName(_ task: pid_t) -> String? {
        (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .newlines)
    }
}
