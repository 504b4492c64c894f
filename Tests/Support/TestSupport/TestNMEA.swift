// NMEA written by tests: sentences with correct checksums, and receiver cycles made of them, for
// suites that drive the input pipeline line by line without a capture file.

public enum TestNMEA {
    /// `$body*hh` with its checksum, without a line end (as gpsd hands lines over).
    public static func sentence(_ body: String) -> [UInt8] {
        var sum: UInt8 = 0
        for byte in body.utf8 { sum ^= byte }
        let hex = Array("0123456789ABCDEF".utf8)
        return Array("$\(body)*".utf8) + [hex[Int(sum >> 4)], hex[Int(sum & 15)]]
    }

    /// One 10 Hz RTK cycle of epoch `n` (tenths of a second into the day): GGA, GST, RMC, with
    /// RMC closing it. `latitude` (NMEA ddmm.mmmmmmm, north) tells receivers apart.
    public static func cycle(_ n: Int, latitude: String = "4807.0380000") -> [[UInt8]] {
        let tenths = n % 864_000
        let h = tenths / 36_000, m = tenths / 600 % 60, s = tenths / 10 % 60, t = tenths % 10
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let time = "\(two(h))\(two(m))\(two(s)).\(t)0"
        return [
            sentence("GNGGA,\(time),\(latitude),N,01131.0020000,E,4,14,0.62,545.400,M,47.321,M,1.0,0123"),
            sentence("GNGST,\(time),0.012,0.011,0.009,45.0,0.011,0.009,0.018"),
            sentence("GNRMC,\(time),A,\(latitude),N,01131.0020000,E,0.012,,201125,,,R,V"),
        ]
    }

    /// Milliseconds of the day of epoch `n` of `cycle`.
    public static func milliseconds(ofCycle n: Int) -> Int64 { Int64(n % 864_000) * 100 }
}
