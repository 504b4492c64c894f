// `make run` on a terminal: the real daemon with a pseudo-terminal as its standard output and
// error (as a shell in a terminal starts it). It prints the endpoints and commands to paste, then
// one status line redrawn in place; a log line never lands on the status line (the line is
// erased first and drawn again below it); Ctrl-C (here SIGTERM) leaves the terminal clean.
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

/// What the program wrote to the terminal, read from the pty's controller as it comes.
private final class TerminalScreen {
    let pty: Pseudoterminal
    private(set) var bytes: [UInt8] = []

    init() throws {
        pty = try Pseudoterminal()
        try pty.controller.setNonBlocking(true)
    }

    /// Reads whatever is waiting; returns everything so far as text.
    var text: String {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(pty.controller.rawValue, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

@Suite(
    "The live status line of make run", .tags(.integration),
    .enabled(if: EndToEnd.isAvailable, "needs gpsd and python3-websockets"))
struct StatusLineTests {
    static let erase = "\r\u{1B}[K"

    @Test("banner first, then one line redrawn in place, log lines above it, a clean terminal at the end")
    func onATerminal() throws {
        let directory = try EndToEnd.makeDirectory("statusline")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let screen = try TerminalScreen()
        let ports = try PortSet.pick()
        let runtime = directory + "/runtime"
        let arguments =
            [
                "run", "--demo", "--no-discovery", "--registration", "open", "--listen", "127.0.0.1",
                "--state-dir", directory + "/state", "--runtime-dir", runtime,
            ] + ports.arguments
        // The shell points both streams at the terminal and execs the daemon (its pid is the daemon's).
        let daemon = try Spawned(
            "/bin/sh",
            ["-c", "exec \"$0\" \"$@\" >\(screen.pty.devicePath) 2>&1", try bridgeBinary().path]
                + arguments)
        defer { daemon.killNow() }

        // The status line comes once positions flow: a fix, the rate, the clients.
        #expect(
            waitUntil(20) { screen.text.contains(" Hz  0 clients\u{1B}[K") || !daemon.isRunning },
            "no status line:\n\(screen.text.debugDescription)\n\(daemon.output.text)")
        let early = screen.text
        let v2 = try #require(ports.base["locationV2Port"])
        // The banner came first, with this run's ports and the client commands.
        let banner = try #require(
            early.range(of: "tmm-bridge serves TMM clients (Ctrl-C stops it):\n"), "\(early.debugDescription)")
        let firstLine = try #require(early.range(of: "\r"), "\(early.debugDescription)")
        #expect(banner.lowerBound < firstLine.lowerBound)
        #expect(early.contains("ws://localhost:\(v2)/locationV2"))
        let api = try #require(ports.base["apiPort"])
        #expect(early.contains("Dashboard     http://localhost:\(api)/ "), "\(early.debugDescription)")
        #expect(early.contains("status --runtime-dir \(runtime)\n"), "\(early.debugDescription)")
        #expect(early.contains("open \"tmmregister://?"))

        // A log line while the status line shows (a registration logs one): the line is erased
        // first, the log line written, and the status line drawn again after it.
        let id = "12345678-1234-1234-1234-123456789abc"
        let url =
            "tmmregister://?" + Data(#"{"application_id":"\#(id)","returl":"app://r"}"#.utf8).base64EncodedString()
        let opened = try runTool(try bridgeBinary().path, ["open", url, "--print", "--runtime-dir", runtime])
        #expect(opened.status == 0, "\(opened.output)")
        #expect(
            waitUntil(10) { screen.text.contains("registered application …9abc") }, "\(screen.text.debugDescription)")
        #expect(
            waitUntil(10) {
                let text = screen.text
                guard let logged = text.range(of: "registered application …9abc") else { return false }
                return text[logged.upperBound...].contains(" clients\u{1B}[K")
            }, "the status line was not drawn again after the log line:\n\(screen.text.debugDescription)")

        kill(daemon.pid, SIGTERM)
        #expect(daemon.wait(seconds: 15) == .exited(0))
        let text = screen.text
        // Every log line starts on a clean line: right after a line feed, or after the status line
        // was erased; none is glued to a status line's text.
        for line in text.components(separatedBy: "\n") {
            guard let log = line.range(of: "tmm-bridge: ") else { continue }
            let before = line[..<log.lowerBound]
            #expect(
                before.isEmpty || before.hasSuffix(Self.erase),
                "a log line written over the status line: \(line.debugDescription)")
        }
        // The status line is gone before the last lines ("stopped: ..." last of all).
        #expect(
            text.hasSuffix("\n") && text.contains(Self.erase + "tmm-bridge: signal 15: stopping\n"),
            "\(text.suffix(300).debugDescription)")
        // Never wider than the terminal (a fresh pty says 0 columns: 80 is assumed, one kept free).
        for drawn in text.components(separatedBy: "\r").filter({ $0.hasSuffix("\u{1B}[K") }) {
            #expect(drawn.count - 3 <= 79, "\(drawn.debugDescription)")
        }
    }
}
