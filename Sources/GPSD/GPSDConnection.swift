import CGPS
import Posix

/// A libgps error: its own negative codes, never an errno (libgps reports them through errno,
/// so they are read once, here).
public struct GPSDError: Error, Equatable, Sendable, CustomStringConvertible {
    public let code: Int32
    public let description: String

    init(code: Int32) {
        self.code = code
        description = String(cString: cgps_error_text(code))
    }

    init(_ text: String) {
        code = 0
        description = text
    }
}

/// One libgps connection to gpsd. Confined to the gpsd thread (libgps is not thread-safe),
/// so it is neither Sendable nor copyable; `deinit` closes it.
struct GPSDConnection: ~Copyable {
    private let session: OpaquePointer

    /// Longest line kept from gpsd. NMEA is at most ~100 bytes; JSON objects we only need for
    /// their parsed fields (libgps unpacks them before truncating the copy).
    static let lineCapacity = 8192

    init(host: String, port: UInt16) throws(GPSDError) {
        var error: Int32 = 0
        guard let session = cgps_open(host, String(port), &error) else { throw GPSDError(code: error) }
        self.session = session
    }

    deinit { cgps_close(session) }

    var descriptor: Int32 { cgps_fd(session) }

    /// Asks gpsd for JSON reports and, as `scope` says, NMEA sentences.
    func watch(_ scope: GPSDWatch) throws(GPSDError) {
        let result: Int32
        switch scope {
        case .everything: result = cgps_watch(session, 1, nil)
        case .devices: result = cgps_watch(session, 0, nil)
        case .device(let path): result = cgps_watch(session, 1, path)
        }
        guard result == 0 else { throw GPSDError("gpsd refused ?WATCH") }
    }

    /// Sends a request to gpsd (e.g. `?DEVICES;`); its answer comes as a line like any other.
    func send(_ command: String) throws(GPSDError) {
        guard cgps_send(session, command) == 0 else { throw GPSDError("cannot send \(command) to gpsd") }
    }

    /// Waits up to `microseconds` for a line: true when one is ready.
    func wait(microseconds: Int32) throws(GPSDError) -> Bool {
        switch cgps_wait(session, microseconds) {
        case 1: return true
        case 0: return false
        default: throw GPSDError("waiting on gpsd failed: \(Errno.current)")
        }
    }

    /// What one line from gpsd was.
    enum Line {
        case nmea(length: Int)
        case device(GPSDDevice)
        case devices([GPSDDevice])
        case version(String)
        case error
        case other
    }

    /// Reads one line into `buffer` (NMEA lines are left there for the parser, no copy).
    func read(into buffer: inout [UInt8]) throws(GPSDError) -> Line {
        var length: Int32 = 0
        let kind = buffer.withUnsafeMutableBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { cgps_read(session, $0.baseAddress, Int32($0.count), &length) }
        }
        guard kind >= 0 else { throw GPSDError("gpsd closed the connection") }
        if kind & Int32(CGPS_LINE_NMEA) != 0 { return .nmea(length: Int(length)) }
        if kind & Int32(CGPS_LINE_DEVICES) != 0 {
            var devices: [GPSDDevice] = []
            var raw = cgps_device()
            for index in 0..<cgps_device_count(session) {
                cgps_device_at(session, index, &raw)
                devices.append(GPSDDevice(raw))
            }
            return .devices(devices)
        }
        if kind & Int32(CGPS_LINE_DEVICE) != 0 {
            var raw = cgps_device()
            cgps_last_device(session, &raw)
            return .device(GPSDDevice(raw))
        }
        if kind & Int32(CGPS_LINE_VERSION) != 0 { return .version(String(cString: cgps_release(session))) }
        if kind & Int32(CGPS_LINE_ERROR) != 0 { return .error }
        return .other
    }
}

extension GPSDDevice {
    init(_ raw: cgps_device) {
        var raw = raw
        func text<T>(_ field: inout T) -> String {
            withUnsafeBytes(of: &field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        self.init(path: text(&raw.path), driver: text(&raw.driver), subtype: text(&raw.subtype),
                  subtype1: text(&raw.subtype1), activated: raw.activated > 0 ? raw.activated : nil,
                  baudRate: Int(raw.baudrate))
    }
}
