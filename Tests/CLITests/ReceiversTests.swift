// Several receivers at once: the real daemon reads two pty receivers at different latitudes
// through its private gpsd, one device-filtered watch each; a plain TMM client (LocationV1, Python
// websockets) gets only the served receiver's positions, and the other's after a failover.
import BridgeCore
import Foundation
import Glibc
import TestSupport
import Testing

@Suite(
    "Several receivers (one served, never a mix, failover) and Bluetooth receivers, in the real daemon",
    .tags(.integration),
    .enabled(if: EndToEnd.isAvailable, "needs gpsd, curl and python3-websockets"))
struct ReceiversTests {
    /// The latitudes the client printed so far, in order.
    private func latitudes(_ run: ScriptRun) -> [Double] {
        run.output.split(separator: "\n").compactMap { line in
            line.hasPrefix("latitude ") ? Double(line.dropFirst("latitude ".count)) : nil
        }
    }

    @Test func clientsGetOnlyTheServedReceiverAndTheOtherAfterItIsUnplugged() throws {
        let directory = try EndToEnd.makeDirectory("receivers")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // North is given second, so gpsd opens it second: served only because it is preferred.
        let south = try PtyReceiver(latitude: "4000.0000000")  // 40°
        var north: PtyReceiver? = try PtyReceiver(latitude: "5000.0000000")  // 50°
        let northPath = north!.devicePath
        let daemon = try BridgeDaemon(
            BridgeDaemon.Setup(
                name: "receivers", directory: directory, ports: try PortSet.pick(), devicePath: south.devicePath,
                extraArguments: ["--device", northPath, "--prefer", northPath]))
        defer { daemon.killHard() }

        #expect(waitUntil(15) { daemon.log.contains("serving \(northPath)") }, "\(daemon.log)")
        let client = try ScriptRun("latitudes.py", context: daemon.context())
        defer { _ = client.wait(seconds: 0) }
        #expect(waitUntil(15) { latitudes(client).count >= 4 }, "\(client.transcript)\n\(daemon.log)")
        #expect(Set(latitudes(client)) == [50], "only the preferred receiver's positions: \(latitudes(client))")
        // `tmm-bridge status` names the served one among both.
        let report = try runTool(
            try bridgeBinary().path, ["status", "--json", "--runtime-dir", daemon.setup.runtimeDirectory])
        let status = try DaemonStatus.parse(json: report.output.trimmingCharacters(in: .newlines)).get()
        #expect(status.servedReceiver == northPath, "\(report.output)")
        #expect(Set(status.receivers.map(\.path)) == [northPath, south.devicePath], "\(report.output)")

        // Unplugged: gpsd keeps the pty open and hears nothing; after the 3 s quiet the other
        // receiver is served.
        let before = latitudes(client).count
        north = nil
        #expect(waitUntil(15) { latitudes(client).contains(40) }, "\(client.transcript)\n\(daemon.log)")
        #expect(waitUntil(5) { latitudes(client).count >= before + 6 }, "\(client.transcript)")
        let seen = latitudes(client)
        let switched = try #require(seen.firstIndex(of: 40))
        #expect(
            Set(seen[..<switched]) == [50] && Set(seen[switched...]) == [40],
            "one receiver, then the other, never a mix: \(seen)")
        let log = daemon.log
        #expect(log.contains("input lost: no data from the receiver for 3.0 s"), "\(log)")
        #expect(log.contains("serving \(south.devicePath)"), "\(log)")
        #expect(log.contains("input restored"), "\(log)")
        daemon.stopAndExpectCleanExit()
    }

    /// A configured Bluetooth receiver on a machine without Bluetooth (this one, CI): the daemon
    /// tries the bind at start, says why it failed once, keeps serving, and stops cleanly. (The
    /// keeper's whole behaviour is RFCOMMKeeperTests' with a fake kernel; hwtests/bluetooth.md
    /// has the real one.)
    @Test func aBluetoothReceiverThatCannotBeBoundIsReportedAndTheDaemonRuns() throws {
        let directory = try EndToEnd.makeDirectory("bluetooth")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let daemon = try BridgeDaemon(
            BridgeDaemon.Setup(
                name: "bluetooth", directory: directory, ports: try PortSet.pick(),
                extraArguments: ["--bluetooth", "00:07:80:AB:CD:EF channel 2 rfcomm 7"]))
        defer { daemon.killHard() }
        let line = "tmm-bridge: bluetooth: cannot bind rfcomm7 -> 00:07:80:AB:CD:EF channel 2: "
        #expect(waitUntil(10) { daemon.log.contains(line) }, "\(daemon.log)")
        #expect(daemon.log.components(separatedBy: line).count == 2, "logged once: \(daemon.log)")
        #expect(!daemon.hasExited)
        daemon.stopAndExpectCleanExit()
    }
}
