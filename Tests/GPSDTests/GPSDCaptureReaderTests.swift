// gpsd JSON captures read without a gpsd (GPSDCaptureReader, `tmm-bridge decode`): gpsd 3.22's
// own lines unpacked by libgps into reports, and every malformed line counted and dropped, never
// a crash, never a report made of it.
import GNSS
import GPSD
import Input
import TestSupport
import Testing

@Suite("gpsd JSON capture reader", .tags(.unit))
struct GPSDCaptureReaderTests {
    /// gpsd 3.22's own output (its regression suite's .chk files) and a DEVICES list.
    static let tpv = #"""
        {"class":"TPV","status":2,"mode":3,"time":"2017-07-19T08:50:00.800Z","ept":0.005,"lat":-34.906226300,\#
        "lon":138.608119700,"altHAE":25.4240,"altMSL":28.8950,"alt":28.8950,"epv":1.602,"track":31.4718,\#
        "magtrack":39.3946,"magvar":7.9,"speed":0.030,"eps":0.23,"geoidSep":-1.662,"eph":1.132}
        """#
    static let sky = #"""
        {"class":"SKY","time":"2019-04-24T02:17:14.000Z","xdop":1.61,"ydop":1.09,"vdop":5.34,"tdop":4.34,\#
        "hdop":1.95,"gdop":7.15,"pdop":5.68,"nSat":3,"uSat":2,"satellites":[\#
        {"PRN":25,"el":66.7,"az":224.7,"ss":28.6,"used":true,"gnssid":0,"svid":25},\#
        {"PRN":70,"el":60.6,"az":312.0,"ss":27.5,"used":true,"gnssid":6,"svid":6},\#
        {"PRN":305,"el":-2.0,"az":107.7,"ss":0.0,"used":false,"gnssid":2,"svid":5}]}
        """#
    static let gst =
        #"{"class":"GST","time":"2035-02-02T18:11:41.000Z","rms":46.000,"lat":4.700,"lon":1.900,"alt":5.300}"#
    static let devices = #"""
        {"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyACM0","driver":"u-blox",\#
        "subtype":"SW EXT CORE 1.00 (61b2dd)","activated":"2019-04-22T21:19:20.000Z","native":1,"bps":9600,\#
        "parity":"N","stopbits":1,"cycle":1.00,"mincycle":0.02}]}
        """#

    static func read(_ text: String, chunk: Int = 7) -> ([GPSDCaptureReader.Item], GPSDCaptureReader.Statistics) {
        let reader = GPSDCaptureReader()!
        var items: [GPSDCaptureReader.Item] = []
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            reader.feed(bytes.span.extracting(offset..<end)) { items.append($0) }
            offset = end
        }
        reader.finish { items.append($0) }
        return (items, reader.statistics)
    }

    @Test("gpsd's TPV, SKY, GST and DEVICES lines, split anywhere, CRLF or LF")
    func realLines() throws {
        let (items, statistics) = Self.read(
            [Self.devices, Self.sky, Self.tpv, Self.gst].joined(separator: "\r\n") + "\n")
        #expect(statistics.reports == 3 && statistics.refused == 0)
        guard items.count == 4, case .device(let device) = items[0], case .report(.sky(let sky)) = items[1],
            case .report(.fix(let fix)) = items[2], case .report(.noise(let noise)) = items[3]
        else {
            Issue.record("unexpected items \(items)")
            return
        }
        #expect(device.driver == "u-blox" && device.path == "/dev/ttyACM0" && device.isActive)
        #expect(fix.latitude == -34.906226300 && fix.longitude == 138.608119700)
        #expect(fix.altitudeHAE == 25.4240 && fix.altitudeMSL == 28.8950 && fix.geoidSeparation == -1.662)
        #expect(fix.mode == 3 && fix.status == 2 && fix.quality == .dgps)
        #expect(fix.eph == 1.132 && fix.epv == 1.602 && fix.climb == nil && fix.dgpsStation == nil)
        #expect(fix.time == UTCTimestamp(unixSeconds: 1_500_454_200, nanoseconds: 800_000_000))
        #expect(sky.hdop == 1.95 && sky.pdop == 5.68 && sky.satellitesUsed == 2 && sky.satellites.count == 3)
        #expect(
            sky.satellites[1]
                == Satellite(id: 70, constellation: .glonass, elevation: 61, azimuth: 312, snr: 28, used: true))
        #expect(
            sky.satellites[2]
                == Satellite(id: 5, constellation: .galileo, elevation: -2, azimuth: 108, snr: 0, used: false))
        #expect(
            noise.latitudeError == 4.7 && noise.longitudeError == 1.9 && noise.altitudeError == 5.3 && noise.rms == 46)
    }

    @Test(
        "Malformed lines are counted and dropped",
        arguments: [
            ("truncated object", #"{"class":"TPV","mode":3,"lat":-34.9"#),
            ("not JSON", "hello gpsd"),
            ("binary bytes", "\u{01}\u{02}\u{7F}\u{FF}{"),
            ("trailing garbage", #"{"class":"TPV","mode":3,"lat":1.0}x"#),
            ("two objects", #"{"class":"TPV","mode":3}{"class":"TPV","mode":3}"#),
            ("bad escape", #"{"class":"TPV","device":"\q","mode":3}"#),
            ("bad number", #"{"class":"TPV","mode":3,"lat":01.5}"#),
            ("control byte in a string", "{\"class\":\"TPV\",\"device\":\"a\u{01}b\",\"mode\":3}"),
            ("array at the top", #"[{"class":"TPV"}]"#),
            ("unterminated string", #"{"class":"TPV","time":"2019-04-"#),
            ("satellites not an array", #"{"class":"SKY","satellites":{"PRN":1}}"#),
            ("nested too deep", String(repeating: #"{"a":"#, count: 200)),
        ])
    func malformed(name: String, line: String) {
        let (items, statistics) = Self.read(line + "\n" + Self.tpv + "\n")
        #expect(statistics.refused == 1, "\(name)")
        #expect(items.count == 1, "\(name): only the good TPV after it")
    }

    @Test("Objects that are not reports: counted, nothing delivered; NMEA lines counted")
    func otherObjects() {
        let text =
            #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"# + "\n"
            + #"{"class":"WATCH","enable":true,"json":true}"# + "\n"
            + "$GPGGA,211920.00,4552.6517,S,17030.0078,E,1,00,,27.44,M,5.124,M,,*68\n\n\n"
        let (items, statistics) = Self.read(text)
        #expect(items.isEmpty)
        #expect(statistics.otherObjects == 2 && statistics.sentences == 1 && statistics.lines == 3)
    }

    /// gpsd 3.22 leaves a pseudo-NMEA GSV unfinished (a satellite without SNR) and prints the next
    /// report on the same line (oncore-binary-pos-hold.log.chk, line 15): the report counts, the
    /// sentence cannot. A finished sentence holding such text, or a device list glued on, does not.
    @Test("A report glued to an unfinished sentence by gpsd is read; a finished sentence's text is not a report")
    func gluedReport() throws {
        let glued =
            #"$GPGSV,3,1,11,07,53,074,43,13,43,276,37,30,76,152,37"#
            + #"{"class":"TPV","status":7,"mode":3,"time":"2000-08-25T05:12:52.001Z","#
            + #""lat":57.712831389,"lon":12.022598889,"altHAE":85.1100,"altMSL":48.0681}"#
        let (items, _) = Self.read(glued + "\n")
        guard items.count == 1, case .report(.fix(let fix)) = items[0] else {
            Issue.record("unexpected items \(items)")
            return
        }
        #expect(fix.latitude == 57.712831389 && fix.altitudeMSL == 48.0681)
        #expect(fix.time == UTCTimestamp(unixSeconds: 967_180_372, nanoseconds: 1_000_000))
        let finished = #"$PXYZ,{"class":"TPV","mode":3,"time":"2000-08-25T05:12:52.001Z","lat":1.0,"lon":2.0}*5A"#
        let devices =
            #"$GPGSV,3,1,11,07{"class":"DEVICES","devices":"#
            + #"[{"class":"DEVICE","path":"/dev/evil","activated":"2000-08-25T05:12:52.001Z"}]}"#
        let (others, statistics) = Self.read(finished + "\n" + devices + "\n")
        #expect(others.isEmpty, "\(others)")
        #expect(statistics.sentences == 1)
    }

    @Test("A line over the limit is dropped whole; the next line is read")
    func overlong() {
        let long =
            #"{"class":"TPV","pad":""# + String(repeating: "x", count: GPSDCaptureReader.maximumLineLength) + #""}"#
        let (items, statistics) = Self.read(long + "\n" + Self.tpv, chunk: 4096)
        #expect(statistics.overlong == 1)
        #expect(items.count == 1)
    }

    @Test(
        """
        A value of the wrong type: libgps's parse fails, and the whole report is dropped \
        (never the fields before the fault)
        """
    )
    func wrongType() {
        let (items, statistics) = Self.read(
            Self.tpv + "\n" + #"{"class":"TPV","time":"2017-07-19T08:50:01.000Z","mode":"three","lat":1.0,"lon":2.0}"#)
        #expect(items.count == 1 && statistics.refused == 1)
    }

    @Test("Lines that made libgps 3.22's gps_unpack spin forever are refused at once (Fuzz/run-gpsd-json.sh)")
    func unpackLoop() {
        let (items, statistics) = Self.read(
            #"{"class":"TPV","mode":"x","class":"TPV"}"# + "\n"
                + ##"{"class":"SKY","satellites":[{"PRN":1,"## + #"{"class":"TPV","mode":3}"# + "\n" + Self.tpv)
        #expect(items.count == 1 && statistics.refused == 2)
    }

    @Test("A fix without mode or time, NaN-free: values gpsd did not send are nil")
    func sparseFix() {
        let (items, _) = Self.read(#"{"class":"TPV","device":"/dev/pts/1","mode":1}"#)
        guard case .report(.fix(let fix)) = items.first else {
            Issue.record("no fix")
            return
        }
        #expect(
            fix.mode == 1 && fix.time == nil && fix.latitude == nil && fix.altitudeHAE == nil && fix.quality == .noFix)
    }
}
