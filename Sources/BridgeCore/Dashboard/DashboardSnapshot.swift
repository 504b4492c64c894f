import GNSS
import TMMProtocol

// The operator dashboard's live document (issue 25): one JSON object, `"type":"snapshot"`, that the
// page receives over its WebSocket at most four times a second (DashboardPacer) and draws whole.
// Pure: made from the daemon's status, the latest served position, the track and the fix history,
// at a wall-clock time passed in.
//
// It carries what an operator may see on the box's own screen and nothing that is a credential:
// applications by DaemonStatus's masked names only (never an id or an access code), the caster and
// the broker as DaemonStatus gives them (never a password).

/// Writes the dashboard's snapshots.
public enum DashboardSnapshot {
    /// Decimals: degrees to about 0.1 mm, the track's to about 1 mm, heights and accuracies to 1 mm.
    public static let degreeDecimals = 9
    public static let trackDecimals = 8
    public static let heightDecimals = 3
    public static let accuracyDecimals = 3

    /// The snapshot at `unixMilliseconds` (wall clock) as bytes: `status` (receivers, clients,
    /// corrections, fleet, registered applications, the version), the latest position of the served
    /// receiver (nil: none yet, or no receiver served), its track and fix history (points older than
    /// the track's window before `unixMilliseconds` left out).
    public static func encode(
        status: DaemonStatus, position: Position?, track: DashboardTrack, fixHistory: FixHistory,
        unixMilliseconds: Int64
    ) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 8192 + 48 * track.count)
        write(
            status: status, position: position, track: track, fixHistory: fixHistory,
            unixMilliseconds: unixMilliseconds, to: &writer)
        return writer.bytes
    }

    /// Appends the snapshot to `writer` (see `encode`).
    public static func write(
        status: DaemonStatus, position: Position?, track: DashboardTrack, fixHistory: FixHistory,
        unixMilliseconds: Int64, to writer: inout JSONWriter
    ) {
        writer.beginObject()
        writer.field("type", string: "snapshot")
        writer.key("time")
        writer.isoTimestampValue(unixMilliseconds: unixMilliseconds)
        writer.field("version", string: status.version)
        writer.key("position")
        if let position { writePosition(position, to: &writer) } else { writer.null() }
        writer.key("track")
        writeTrack(track, since: unixMilliseconds - track.window, to: &writer)
        writer.key("fixHistory")
        writer.beginArray()
        for change in fixHistory.changes {
            writer.beginArray()
            writer.integer(Int(change.unixMilliseconds))
            writer.string(qualityName(change.quality))
            writer.endArray()
        }
        writer.endArray()
        writer.key("sky")
        writeSky(position?.sky ?? SkyView(), to: &writer)
        writer.key("rate")
        writer.beginObject()
        writer.field("epochRate", number: status.fix.epochRate, decimals: 2)
        writer.field("lastEpochAgeSeconds", number: status.fix.lastEpochAgeSeconds, decimals: 3)
        writer.endObject()
        writer.key("corrections")
        if let corrections = status.corrections { writeCorrections(corrections, to: &writer) } else { writer.null() }
        writer.key("fleet")
        if let fleet = status.fleet { writeFleet(fleet, to: &writer) } else { writer.null() }
        writer.key("receivers")
        writeReceivers(status.receivers, served: status.servedReceiver, to: &writer)
        writer.key("clients")
        writeClients(status.clients, to: &writer)
        writer.key("apps")
        writer.beginArray()
        // The masked names only (`application …9abc`): an application id is a credential.
        for application in status.registration.applications {
            writer.beginObject()
            writer.field("name", string: application.name)
            writer.field("registeredAt", string: application.registeredAt)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
    }

    /// FixQuality's case name (`rtkFixed`), as `DaemonStatus.Fix.quality` names it.
    public static func qualityName(_ quality: FixQuality) -> String { "\(quality)" }

    /// The constellation's name on the page.
    public static func constellationName(_ constellation: Constellation) -> String {
        switch constellation {
        case .gps: "GPS"
        case .sbas: "SBAS"
        case .glonass: "GLONASS"
        case .omnistar: "OmniSTAR"
        case .galileo: "Galileo"
        case .beidou: "BeiDou"
        case .qzss: "QZSS"
        case .irnss: "NavIC"
        }
    }

    private static func writePosition(_ position: Position, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("latitude", number: position.latitude, decimals: degreeDecimals)
        writer.field("longitude", number: position.longitude, decimals: degreeDecimals)
        // Ellipsoidal height, as LocationV2's `altitude`.
        writer.field("altitude", number: position.altitude, decimals: heightDecimals)
        writer.field("mslHeight", number: position.mslHeight, decimals: heightDecimals)
        writer.field("undulation", number: position.undulation, decimals: heightDecimals)
        // GST's sigmas (else the receiver's own estimate), as LocationV2 gives them.
        writer.field("hrms", number: position.hrms, decimals: accuracyDecimals)
        writer.field("vrms", number: position.vrms, decimals: accuracyDecimals)
        writer.field("quality", string: qualityName(position.quality))
        writer.field("solutionType", string: position.quality.solutionType)
        writer.field("diffStatus", integer: position.quality.diffStatus)
        writer.field("diffAge", number: position.diffAge, decimals: LocationDecimals.diffAge)
        writer.field("satellites", integer: position.satellitesInUse)
        writer.key("utcTimeStamp")
        writer.isoTimestampValue(position.time)
        writer.endObject()
    }

    private static func writeTrack(_ track: DashboardTrack, since oldest: Int64, to writer: inout JSONWriter) {
        writer.beginArray()
        for index in 0..<track.count {
            let point = track[index]
            guard point.unixMilliseconds >= oldest else { continue }
            writer.beginArray()
            writer.number(point.latitude, decimals: trackDecimals)
            writer.number(point.longitude, decimals: trackDecimals)
            writer.integer(Int(point.unixMilliseconds))
            writer.endArray()
        }
        writer.endArray()
    }

    private static func writeSky(_ sky: SkyView, to writer: inout JSONWriter) {
        writer.beginArray()
        // Through the packed words: `sky[index]` may copy the whole inline sky per satellite.
        let words = sky.packedSatellites
        for index in words.indices {
            let satellite = Satellite(packed: words[index])
            writer.beginObject()
            writer.field("id", integer: Int(satellite.id))
            writer.field("constellation", string: constellationName(satellite.constellation))
            writer.field("elevation", integer: satellite.elevation.map(Int.init))
            writer.field("azimuth", integer: satellite.azimuth.map(Int.init))
            writer.field("snr", integer: satellite.snr.map(Int.init))
            writer.field("used", bool: satellite.used)
            writer.endObject()
        }
        writer.endArray()
    }

    private static func writeCorrections(_ corrections: DaemonStatus.Corrections, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("state", string: corrections.state)
        writer.field("message", string: corrections.message)
        writer.field("caster", string: corrections.caster)
        writer.field("mountPoint", string: corrections.mountPoint)
        writer.field("lastFrameAgeSeconds", number: corrections.lastFrameAgeSeconds, decimals: 3)
        writer.field("stationID", integer: corrections.stationID)
        writer.field("ggaSent", integer: corrections.ggaSent)
        writer.field("frames", integer: corrections.frames)
        writer.endObject()
    }

    private static func writeFleet(_ fleet: DaemonStatus.Fleet, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("state", string: fleet.state)
        writer.field("message", string: fleet.message)
        writer.field("broker", string: fleet.broker)
        writer.field("pending", integer: fleet.pending)
        writer.endObject()
    }

    private static func writeReceivers(
        _ receivers: [DaemonStatus.Receiver], served: String?, to writer: inout JSONWriter
    ) {
        writer.beginArray()
        for receiver in receivers {
            writer.beginObject()
            writer.field("path", string: receiver.path)
            writer.field("brand", string: receiver.brand)
            writer.field("model", string: receiver.model)
            writer.field("serialNumber", string: receiver.serialNumber)
            writer.field("served", bool: receiver.served ?? (receiver.path == served))
            writer.field("silent", bool: receiver.silent ?? false)
            writer.field("connected", bool: receiver.connected)
            writer.endObject()
        }
        writer.endArray()
    }

    private static func writeClients(_ clients: DaemonStatus.Clients, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("locationV1", integer: clients.locationV1)
        writer.field("locationV2", integer: clients.locationV2)
        writer.field("events", integer: clients.events)
        writer.field("dashboard", integer: clients.dashboard)
        writer.field("total", integer: clients.total)
        writer.key("bySocket")
        writer.beginObject()
        // Sorted: equal statuses give equal bytes.
        for (name, count) in clients.bySocket.sorted(by: { $0.key < $1.key }) {
            writer.field(name, integer: count)
        }
        writer.endObject()
        writer.endObject()
    }
}
