// Which gpsd the input side reads is decided before anything starts, so that the daemon can hand
// its corrections writer the control socket when it makes its server (before `start()`): the
// writer then tries gpsd's `&` first. A replay (`--demo`, `--replay`) always gets a private
// gpsd, whose socket must be known then, and be the one the started gpsd serves.
import BridgeCore
import Foundation
import GPSD
import InputLoop
import Posix
import TestSupport
import Testing

@Suite(
    "the input side's gpsd, chosen before it starts", .tags(.integration), .serialized,
    .enabled(if: gpsdInstalled, "needs gpsd (apt-get install gpsd)"))
struct ReceiverInputGPSDChoiceTests {
    @Test(arguments: [true, false])
    func aReplaysPrivateGPSDControlSocketIsKnownBeforeItStarts(readOnly: Bool) throws {
        let runtime = RuntimeDirectory()
        var options = ReceiverInput.Options(runtimeDirectory: runtime.path)
        options.discovery = false
        options.replay = .file(Fixtures.path("nmea-rtk.log"))
        options.privateGPSDReadOnly = readOnly
        let messages = Messages()
        let input = try ReceiverInput(options: options, log: messages.logger)
        #expect(input.controlSocket == nil)
        try input.chooseGPSD()
        let socket = runtime.path + "/gpsd.sock"
        #expect(input.controlSocket == socket)
        #expect(!FileManager.default.fileExists(atPath: socket), "chosen, not started")
        try input.start()
        defer { input.stop() }
        #expect(input.controlSocket == socket)
        #expect(input.gpsdInUse?.kind == "private")
        #expect(input.privateGPSDFiles.contains(socket))
        // The gpsd serving it, as recorded: `-b` only when read-only.
        let record = try String(contentsOfFile: runtime.path + "/gpsd.pid", encoding: .utf8)
        let pid = try #require(record.split(separator: " ").first.flatMap { pid_t($0) })
        #expect(try commandLine(of: pid).contains("-b") == readOnly, "\(messages.all)")
    }
}
