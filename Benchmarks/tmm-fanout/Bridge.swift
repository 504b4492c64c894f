import ByteCoding
import Glibc
import GPSD
import Posix
import WebSocket

// The server under test: `tmm-bridge run` on loopback with its own ports and directories, fed by
// the benchmark's gpsd and pty, started fresh for every measurement (so VmHWM is that
// measurement's peak) and stopped with SIGTERM afterwards.

/// The six ports `tmm-bridge run` listens on.
struct BridgePorts {
    var location: UInt16
    var locationSecure: UInt16
    var api: UInt16
    var apiSecure: UInt16
    var locationV2: UInt16
    var locationV2Secure: UInt16

    /// Six distinct free loopback ports.
    static func free() throws(HarnessError) -> BridgePorts {
        var ports: [UInt16] = []
        while ports.count < 6 {
            guard let port = freeLoopbackPort() else { throw HarnessError("no free loopback port for the bridge") }
            if !ports.contains(port) { ports.append(port) }
        }
        return BridgePorts(
            location: ports[0], locationSecure: ports[1], api: ports[2], apiSecure: ports[3],
            locationV2: ports[4], locationV2Secure: ports[5])
    }
}

/// Why a bridge could not be measured (reported, not a harness failure).
struct BridgeFailure: Error, CustomStringConvertible {
    let description: String
}

final class BridgeProcess {
    let executable: String
    let ports: BridgePorts
    let directory: String
    let logPath: String
    private let child: ChildProcess

    /// Starts `executable run ...` against the benchmark's gpsd and waits for its `ready` line.
    init(executable: String, device: String, gpsd: PrivateGPSD.Configuration, directory: String) throws(BridgeFailure) {
        self.executable = executable
        self.directory = directory
        mkdir(directory, 0o755)
        mkdir(directory + "/runtime", 0o755)
        mkdir(directory + "/state", 0o755)
        logPath = directory + "/bridge.log"
        do {
            ports = try BridgePorts.free()
        } catch {
            throw BridgeFailure(description: error.description)
        }
        let arguments = [
            "run", "--device", device, "--gpsd", "127.0.0.1:\(gpsd.port)", "--gpsd-control", gpsd.controlSocket,
            "--no-discovery", "--registration", "open", "--runtime-dir", directory + "/runtime",
            "--state-dir", directory + "/state", "--listen", "127.0.0.1",
            "--location-port", String(ports.location), "--location-secure-port", String(ports.locationSecure),
            "--api-port", String(ports.api), "--api-secure-port", String(ports.apiSecure),
            "--location-v2-port", String(ports.locationV2), "--location-v2-secure-port", String(ports.locationV2Secure),
        ]
        let log = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { if log >= 0 { close(log) } }
        do {
            child = try ChildProcess(executable: executable, arguments: arguments, logDescriptor: log >= 0 ? log : nil)
        } catch {
            throw BridgeFailure(description: "cannot start \(executable): \(error)")
        }
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while !logHasReadyLine() {
            if let ended = child.poll() {
                throw BridgeFailure(description: "\(executable) run \(ended) before it was ready\(logTail())")
            }
            guard monotonicNanoseconds() < deadline else {
                child.stop()
                throw BridgeFailure(description: "\(executable) run printed no 'ready' within 20 s\(logTail())")
            }
            sleep(nanoseconds: 20_000_000)
        }
    }

    var pid: pid_t { child.pid }

    /// Registers an application (`tmm-bridge open 'tmmregister://?...' --print`), which unlocks
    /// WebSocket V2.
    func unlockLocationV2() throws(BridgeFailure) {
        let request = #"{"application_id":"12345678-1234-1234-1234-123456789abc","returl":"bench://r"}"#
        let url = "tmmregister://?" + Base64.encode(Array(request.utf8).span)
        let replyLog = directory + "/open.log"
        let log = open(replyLog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { if log >= 0 { close(log) } }
        let opener: ChildProcess
        do {
            opener = try ChildProcess(
                executable: executable,
                arguments: ["open", url, "--print", "--runtime-dir", directory + "/runtime"],
                logDescriptor: log >= 0 ? log : nil)
        } catch {
            throw BridgeFailure(description: "cannot start \(executable) open: \(error)")
        }
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while true {
            if let ended = opener.poll() {
                guard ended == .exited(0) else {
                    let output = readSmallFile(replyLog).map { String(decoding: $0, as: UTF8.self) } ?? ""
                    throw BridgeFailure(description: "\(executable) open \(ended): \(output)")
                }
                return
            }
            guard monotonicNanoseconds() < deadline else {
                opener.stop()
                throw BridgeFailure(description: "\(executable) open did not finish within 10 s")
            }
            sleep(nanoseconds: 10_000_000)
        }
    }

    /// Whether the bridge is still running (nil), or how it ended.
    func poll() -> ChildProcess.Termination? { child.poll() }

    /// SIGTERM, then SIGKILL after 5 s.
    @discardableResult
    func stop() -> ChildProcess.Termination { child.stop(signal: SIGTERM, graceMilliseconds: 5000) }

    /// A log line with the word `ready` (not "already": the letter before it must not be one).
    private func logHasReadyLine() -> Bool {
        guard let log = readSmallFile(logPath) else { return false }
        let word = Array("ready".utf8)
        var i = 0
        while let range = log[i...].firstRange(of: word) {
            let before = range.lowerBound > 0 ? log[range.lowerBound - 1] : UInt8(ascii: " ")
            let isLetter = (before | 0x20) >= UInt8(ascii: "a") && (before | 0x20) <= UInt8(ascii: "z")
            if !isLetter { return true }
            i = range.upperBound
        }
        return false
    }

    /// The last lines of the bridge's log, for an error message.
    func logTail(lines: Int = 8) -> String {
        guard let log = readSmallFile(logPath), !log.isEmpty else { return " (its log is empty)" }
        let tail = String(decoding: log, as: UTF8.self).split(separator: "\n").suffix(lines)
        return "; log \(logPath):\n    " + tail.joined(separator: "\n    ")
    }
}

@available(*, unavailable, message: "the bridge is driven from the harness's main thread")
extension BridgeProcess: Sendable {}
