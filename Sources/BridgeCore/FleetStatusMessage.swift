import GNSS
import TMMProtocol

// `PREFIX/status`, the retained message a fleet's dashboard reads first (docs/fleet.md): whether
// the box is online, what it serves and how. It holds only facts that change rarely (the served
// receiver, the fix quality, the rate rounded to 0.1 Hz, the corrections state, client counts):
// a retained message is rewritten at every change, and the positions themselves are
// `PREFIX/location`'s. The last will is the same document with `online: false` and what is known
// at connection time, so a box that dies shows offline at once.

public enum FleetStatusMessage {
    /// The status of a running daemon (`online: true`), from what `status` reports.
    public static func online(_ status: DaemonStatus, clientID: String) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 512)
        writer.beginObject()
        writer.field("online", bool: true)
        writeIdentity(version: status.version, clientID: clientID, to: &writer)
        writer.key("receiver")
        if let path = status.servedReceiver {
            let receiver = status.receivers.first { $0.path == path }
            writer.beginObject()
            writer.field("path", string: path)
            writer.field("model", string: receiver?.model)
            writer.field("serialNumber", string: receiver?.serialNumber)
            writer.endObject()
        } else {
            writer.null()
        }
        writer.key("fix")
        writer.beginObject()
        writer.field("quality", string: status.fix.quality)
        writer.field("solutionType", string: status.fix.fixQuality?.solutionType)
        // The measured rate wavers; each change would rewrite the retained message.
        writer.field("rate", number: status.fix.epochRate.map(DaemonStatus.steadyRate), decimals: 1)
        writer.endObject()
        writer.field("corrections", string: status.corrections.map(\.state))
        writer.key("clients")
        writer.beginObject()
        writer.field("locationV1", integer: status.clients.locationV1)
        writer.field("locationV2", integer: status.clients.locationV2)
        writer.field("events", integer: status.clients.events)
        writer.field("total", integer: status.clients.total)
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }

    /// The last will and the status of a clean stop: `online: false`, why.
    public static func offline(version: String, clientID: String, reason: String) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 160)
        writer.beginObject()
        writer.field("online", bool: false)
        writeIdentity(version: version, clientID: clientID, to: &writer)
        writer.field("reason", string: reason)
        writer.endObject()
        return writer.bytes
    }

    private static func writeIdentity(version: String, clientID: String, to writer: inout JSONWriter) {
        writer.field("clientId", string: clientID)
        writer.field("version", string: version)
    }
}
