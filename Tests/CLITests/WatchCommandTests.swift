// `tmm-bridge watch` end to end: the real binary starts its private gpsd, takes a pty receiver
// given with --device, prints one line per epoch, and shuts everything down on SIGTERM.
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

@Suite(
    "tmm-bridge watch", .tags(.integration), .serialized,
    .enabled(if: findExecutable("gpsd") != nil, "needs gpsd (apt-get install gpsd)"))
struct WatchCommandTests {
    @Test func streamsAPtyReceiverThroughAPrivateGPSDAndStopsCleanly() throws {
        let pty = try Pseudoterminal()
        let runtime = NSTemporaryDirectory() + "tmm-watch-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let process = Process()
        process.executableURL = try bridgeBinary()
        process.arguments = ["watch", "--device", pty.devicePath, "--no-discovery", "--runtime-dir", runtime]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = OutputBuffer(), errors = OutputBuffer()
        output.collect(from: out.fileHandleForReading)
        errors.collect(from: err.fileHandleForReading)

        // Handed over once gpsd answered OK on its control socket, which it does after opening
        // and flushing the tty (see GPSDSessionTests): bytes written from now on are read.
        let handedOver = waitUntil(15) { errors.text.contains("handed \(pty.devicePath) to gpsd") }
        #expect(handedOver, "\(errors.text)")
        // The receiver's own watch starts once gpsd has opened it (a device watch for a device
        // gpsd lacks is refused): what the receiver sends before is not read.
        #expect(
            waitUntil(15) { errors.text.contains("reading \(pty.devicePath) through its own gpsd watch") },
            "\(errors.text)")
        var epochs: [[UInt8]] = []
        for line in try Fixtures.lines("nmea-rtk.log") where line.first == UInt8(ascii: "$") {
            if line[3...5].elementsEqual("GGA".utf8) { epochs.append([]) }
            epochs[epochs.count - 1] += line + [13, 10]
        }
        for epoch in epochs.prefix(20) {
            try pty.controller.writeAll(epoch)
            sleep(for: .milliseconds(100))  // a 10 Hz receiver's pace
        }
        // The last epoch written (13:28:21.500) printed: everything before it has been.
        let lastPrinted = waitUntil(5) { output.text.contains("epoch 13:28:21.500") }
        process.terminate()  // SIGTERM
        #expect(waitUntil(10) { output.isComplete && errors.isComplete }, "the output pipes were not closed")
        process.waitUntilExit()
        let stdout = output.text
        let stderr = errors.text
        #expect(lastPrinted, "\(stdout)")

        #expect(process.terminationStatus == 0, "\(stderr)")
        let lines = stdout.split(separator: "\n")
        #expect(lines.count >= 15, "epochs printed: \(lines.count)\n\(stderr)")
        #expect(lines.first?.hasPrefix("epoch 13:28:19.600 41.5749659") == true, "\(lines.first ?? "")")
        #expect(stderr.contains("handed \(pty.devicePath) to gpsd"))
        #expect(stderr.contains("gpsd reads \(pty.devicePath) with driver NMEA0183"))
        #expect(stderr.contains("signal 15: stopping"))
        // The private gpsd it started is gone.
        let pid = stderr.split(separator: "\n").first { $0.contains("private gpsd started: pid ") }
            .flatMap { Int32($0.split(separator: " ")[5].dropLast()) }
        let gpsdPID = try #require(pid, "\(stderr)")
        #expect(kill(gpsdPID, 0) == -1, "private gpsd \(gpsdPID) still running after shutdown")
    }

    @Test(arguments: [
        ["watch", "--gpsd", "nohost"], ["watch", "--gpsd", "h:0"], ["watch", "--device"], ["watch", "--bogus"],
    ])
    func usageErrors(_ arguments: [String]) throws {
        let run = try runBridge(arguments)
        #expect(run.status == 64)
        #expect(run.stderr.contains("usage: tmm-bridge"))
    }
}
