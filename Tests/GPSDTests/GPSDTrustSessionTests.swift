// Issue 9, defect 3, at the session: every connection's server end is checked before a line is
// read. A fake gpsd (tmmtools/peers/fake_gpsd.py, started with the credentials of `nobody` or as
// root) greets with release 6.6.6-fake and streams NMEA; the session must read the root one and refuse the other.
import Input
import InputLoop
import Foundation
import GNSS
import GPSD
import Glibc
import Posix
import TestSupport
import Testing

@Suite(
    "gpsd session trust", .tags(.integration), .serialized,
    .enabled(
        if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs root and python3")
)
struct GPSDTrustSessionTests {
    @Test(arguments: [true, false])
    func theSessionReadsOnlyAGPSDOwnedByRootGPSDOrUs(asNobody: Bool) throws {
        let port = try #require(freeLoopbackPort())
        var supervision = ChildProcess.Supervision()
        if asNobody {
            let nobody = try #require(getpwnam("nobody") as UnsafeMutablePointer<passwd>?).pointee
            supervision.user = (uid: nobody.pw_uid, gid: nobody.pw_gid)
        }
        let command = PythonTools.command("peers.fake_gpsd", [String(port), "0", "60"])
        let fake = try ChildProcess(
            executable: command.executable, arguments: command.arguments, supervision: supervision)
        defer { fake.stop(graceMilliseconds: 0) }
        // Up once it accepts (a plain connect: this one is not under test).
        #expect(
            waitUntil(pollInterval: .milliseconds(10)) { (try? StreamSocket.connect(loopbackPort: port)) != nil },
            "the fake gpsd never listened")
        let log = try EventLog()
        let messages = Messages()
        let session = GPSDSession(GPSDSession.Configuration(port: port), log: messages.logger)
        try session.start(feeding: log.consumer)
        defer { session.stop() }
        if asNobody {
            #expect(
                log.wait(milliseconds: 5000) { events in
                    events.contains {
                        if case .gpsd(.unreachable(let text)) = $0 {
                            text.contains("refusing to read this gpsd")
                        } else {
                            false
                        }
                    }
                }, "\(log.events) \(messages.all)")
            #expect(
                messages.all.contains { $0.contains("refusing to read this gpsd") && $0.contains("(nobody)") },
                "\(messages.all)")
            // Refused before a single line: no greeting and no position ever came through.
            log.drain()
            #expect(!log.events.contains { if case .gpsd(.connected) = $0 { true } else { false } }, "\(log.events)")
            #expect(log.positions.isEmpty)
        } else {
            #expect(
                log.wait(milliseconds: 5000) { events in
                    events.contains {
                        if case .gpsd(.connected(let release)) = $0 { release == "6.6.6-fake" } else { false }
                    }
                }, "a root-owned gpsd is read: \(log.events) \(messages.all)")
        }
    }
}
