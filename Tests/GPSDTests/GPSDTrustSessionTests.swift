// Issue 9, defect 3, at the session: every connection's server end is checked before a line is
// read. A fake gpsd (Python, started with the credentials of `nobody` or as root) greets with
// release 6.6.6-fake and streams NMEA; the session must read the root one and refuse the other.
import Input
import InputLoop
import Foundation
import GNSS
import GPSD
import Glibc
import Posix
import TestSupport
import Testing

private let fakeScript = #"""
import socket, sys, time, threading
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
def serve(c):
    try:
        c.sendall(b'{"class":"VERSION","release":"6.6.6-fake","rev":"x","proto_major":3,"proto_minor":14}\r\n')
        while True:
            c.sendall(b"$GPGGA,120000.00,4807.038,N,01131.002,E,1,08,0.9,545.4,M,47.3,M,,*52\r\n"
                      b"$GPRMC,120000.00,A,4807.038,N,01131.002,E,0.0,0.0,010126,,,A*6B\r\n")
            time.sleep(0.1)  # a 10 Hz receiver's pace
    except OSError:
        pass
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""#

@Suite("gpsd session trust", .tags(.integration), .serialized,
       .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs root and python3"))
struct GPSDTrustSessionTests {
    @Test(arguments: [true, false])
    func theSessionReadsOnlyAGPSDOwnedByRootGPSDOrUs(asNobody: Bool) throws {
        let port = try #require(freeLoopbackPort())
        var supervision = ChildProcess.Supervision()
        if asNobody {
            let nobody = try #require(getpwnam("nobody") as UnsafeMutablePointer<passwd>?).pointee
            supervision.user = (uid: nobody.pw_uid, gid: nobody.pw_gid)
        }
        let fake = try ChildProcess(executable: "/usr/bin/python3", arguments: ["-c", fakeScript, String(port)],
                                    supervision: supervision)
        defer { fake.stop(graceMilliseconds: 0) }
        // Up once it accepts (a plain connect: this one is not under test).
        #expect(waitUntil(pollInterval: .milliseconds(10)) { (try? StreamSocket.connect(loopbackPort: port)) != nil },
                "the fake gpsd never listened")
        let log = try EventLog()
        let messages = Messages()
        let session = GPSDSession(GPSDSession.Configuration(port: port), log: messages.logger)
        try session.start(feeding: log.consumer)
        defer { session.stop() }
        if asNobody {
            #expect(log.wait(milliseconds: 5000) { events in
                events.contains { if case .gpsd(.unreachable(let text)) = $0 { text.contains("refusing to read this gpsd") } else { false } }
            }, "\(log.events) \(messages.all)")
            #expect(messages.all.contains { $0.contains("refusing to read this gpsd") && $0.contains("(nobody)") }, "\(messages.all)")
            // Refused before a single line: no greeting and no position ever came through.
            log.drain()
            #expect(!log.events.contains { if case .gpsd(.connected) = $0 { true } else { false } }, "\(log.events)")
            #expect(log.positions.isEmpty)
        } else {
            #expect(log.wait(milliseconds: 5000) { events in
                events.contains { if case .gpsd(.connected(let release)) = $0 { release == "6.6.6-fake" } else { false } }
            }, "a root-owned gpsd is read: \(log.events) \(messages.all)")
        }
    }
}
