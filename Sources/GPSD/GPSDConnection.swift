import CGPS
import GNSS
import Input
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

    /// Longest line kept from gpsd: NMEA is at most ~100 bytes, gpsd's longest report (a SKY of
    /// 140 signals) under 10 KB; CGPS drops longer lines whole.
    static let lineCapacity = 16_384

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
        /// A TPV, SKY or GST object (as libgps unpacked it).
        case report(GPSDReport)
        /// A TPV, SKY or GST line that is not well-formed JSON, or that libgps could not parse
        /// whole (it would have kept what it parsed before the fault): dropped.
        case malformedReport
        /// A line longer than `lineCapacity`: dropped whole.
        case overlong
        /// No whole line yet (a read ended mid-line), or an empty one.
        case none
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
        if kind & Int32(CGPS_LINE_NONE) != 0 { return .none }
        if kind & Int32(CGPS_LINE_OVERLONG) != 0 { return .overlong }
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
        if kind & Int32(CGPS_LINE_MALFORMED) != 0 { return .malformedReport }
        if let report = GPSDReport(kind: kind, from: session) { return .report(report) }
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
        self.init(
            path: text(&raw.path), driver: text(&raw.driver), subtype: text(&raw.subtype),
            subtype1: text(&raw.subtype1), activated: raw.activated > 0 ? raw.activated : nil,
            baudRate: Int(raw.baudrate))
    }
}

extension GPSDReport {
    /// The report libgps just unpacked into `session`, when the line's `CGPS_LINE_*` bits say it
    /// was one (a TPV, SKY or GST object). The one place the C structs become Swift values: NaN
    /// (libgps's "not sent") becomes nil.
    init?(kind: Int32, from session: OpaquePointer) {
        func value(_ x: Double) -> Double? { x.isFinite ? x : nil }
        func time(_ seconds: Int64, _ nanoseconds: Int32) -> UTCTimestamp? {
            seconds == 0 && nanoseconds == 0 ? nil : UTCTimestamp(unixSeconds: seconds, nanoseconds: Int64(nanoseconds))
        }
        if kind & Int32(CGPS_LINE_TPV) != 0 {
            var raw = cgps_fix()
            cgps_last_fix(session, &raw)
            self = .fix(
                GPSDFix(
                    time: time(raw.time_sec, raw.time_nsec), mode: Int(raw.mode), status: Int(raw.status),
                    latitude: value(raw.latitude), longitude: value(raw.longitude), altitudeHAE: value(raw.alt_hae),
                    altitudeMSL: value(raw.alt_msl), geoidSeparation: value(raw.geoid_sep), speed: value(raw.speed),
                    track: value(raw.track), climb: value(raw.climb), eph: value(raw.eph), epv: value(raw.epv),
                    dgpsAge: value(raw.dgps_age), dgpsStation: raw.dgps_station >= 0 ? Int(raw.dgps_station) : nil))
        } else if kind & Int32(CGPS_LINE_SKY) != 0 {
            var raw = cgps_sky()
            cgps_last_sky(session, &raw)
            var sky = GPSDSky(
                time: time(raw.time_sec, raw.time_nsec), pdop: value(raw.pdop), hdop: value(raw.hdop),
                vdop: value(raw.vdop), satellitesUsed: raw.satellites_used >= 0 ? Int(raw.satellites_used) : nil)
            var satellite = cgps_satellite()
            // libgps keeps the listed satellites first; an entry without a PRN ends the list.
            for index in 0..<raw.count {
                cgps_satellite_at(session, index, &satellite)
                guard satellite.prn > 0 else { break }
                let constellation = Constellation(
                    gpsdGNSSID: satellite.gnssid >= 0 ? Int(satellite.gnssid) : nil,
                    prn: Int(satellite.prn))
                sky.satellites.merge(
                    packed: Satellite.pack(
                        id: Satellite.gpsdNumber(prn: Int(satellite.prn), svid: Int(satellite.svid), in: constellation),
                        constellation: constellation,
                        elevation: value(satellite.elevation).map { Int16(clamping: Int($0.rounded())) },
                        azimuth: value(satellite.azimuth).map { Int16(clamping: Int($0.rounded())) },
                        snr: value(satellite.snr).flatMap { $0 >= 0 ? UInt8(clamping: Int($0.rounded())) : nil },
                        used: satellite.used != 0))
            }
            self = .sky(sky)
        } else if kind & Int32(CGPS_LINE_GST) != 0 {
            var raw = cgps_noise()
            cgps_last_noise(session, &raw)
            self = .noise(
                GPSDNoise(
                    time: time(raw.time_sec, raw.time_nsec), rms: value(raw.rms),
                    latitudeError: value(raw.lat_err), longitudeError: value(raw.lon_err),
                    altitudeError: value(raw.alt_err)))
        } else {
            return nil
        }
    }
}
