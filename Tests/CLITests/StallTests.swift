// A stalled gpsd, end to end: the real binary reads a pty receiver (10 Hz) through its private
// gpsd; gpsd is stopped (SIGSTOP) while the receiver keeps writing, then continued, and delivers
// the backlog at once. The V2 client must not get it as a flood (docs/server.md, "The V2 rate
// cap and stale epochs").
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

@Suite(
    "End to end: a stalled gpsd", .tags(.integration), .serialized,
    .enabled(
        if: EndToEnd.isAvailable, "needs gpsd, curl and /usr/bin/python3 with websockets (scripts/install-deps.sh)"))
struct StallTests {
    @Test func aBacklogAfterSIGSTOPIsNotFlushedToV2Clients() throws {
        let directory = try EndToEnd.makeDirectory("stall")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let receiver = try PtyReceiver()
        var setup = BridgeDaemon.Setup(name: "stall", directory: directory, ports: try PortSet.pick())
        setup.registration = "open"
        setup.devicePath = receiver.devicePath
        // 20 Hz: twice the receiver's rate, so its stream is untouched, and a backlog flushed
        // within 100 ms would show as more than 4 frames (the burst of 2 and two intervals).
        setup.extraArguments = ["--max-location-rate", "20"]
        let daemon = try BridgeDaemon(setup)
        let gpsd = try #require(daemon.gpsdPID)
        let url =
            "tmmregister://?"
            + Data(#"{"application_id":"5f0c1a2b-3c4d-4e5f-8a9b-0000000057a1","returl":"app://r"}"#.utf8)
            .base64EncodedString()
        let registered = try runTool(
            try bridgeBinary().path, ["open", url, "--print", "--runtime-dir", setup.runtimeDirectory])
        #expect(registered.status == 0, "\(registered.output)")

        // The client (tmmtools/peers/ws_client.py stall) stops gpsd itself, so the stall starts
        // after frames are flowing (a condition, not a guess), and timestamps every frame that
        // comes after SIGCONT.
        let port = daemon.ports["locationV2Port"] ?? 0
        let client = PythonTools.command(
            "peers.ws_client", ["stall", "ws://127.0.0.1:\(port)/locationV2", String(gpsd)])
        let run = try runTool(client.executable, client.arguments, seconds: 30)
        kill(gpsd, SIGCONT)  // whatever happened to the script
        #expect(run.status == 0, "\(run.output)\n\(daemon.log)")
        let line = try #require(run.output.split(separator: "\n").last { $0.hasPrefix("{") }, "\(run.output)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let frames = try #require(result["frames"] as? Int)
        let burst = try #require(result["burst"] as? Int)
        let stamps = try #require(result["stamps"] as? [String])
        print("after SIGCONT: \(frames) frames in 1.5 s, \(burst) in the first 100 ms")
        #expect(frames > 0, "positions flow again after the stall:\n\(daemon.log)")
        // At a 20 Hz cap the pacer lets out its burst (2) and one frame per 50 ms: at most 4
        // frames in 100 ms (docs/server.md); a flushed backlog would be all 20.
        #expect(burst <= 4, "the backlog was flushed: \(burst) frames within 100 ms at a 20 Hz cap: \(stamps)")
        daemon.stopAndExpectCleanExit()
    }
}
