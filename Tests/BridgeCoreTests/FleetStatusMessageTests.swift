// Fleet publishing's retained status and last will (FleetStatusMessage), and its lines in
// `tmm-bridge status`: the JSON is read back by Foundation, an independent parser.
import BridgeCore
import Foundation
import TestSupport
import Testing

@Suite("Fleet status messages", .tags(.unit))
struct FleetStatusMessageTests {
    private func object(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    private func status(rate: Double?, served: Bool = true) -> DaemonStatus {
        var status = DaemonStatus(
            version: "1.2.3", pid: 1, uptimeSeconds: 5,
            receivers: [
                DaemonStatus.Receiver(
                    path: "/dev/ttyACM0", connected: true, foundBy: "discovery", model: "ZED-F9P",
                    serialNumber: "F9P0042", openInGPSD: true)
            ],
            servedReceiver: served ? "/dev/ttyACM0" : nil,
            fix: DaemonStatus.Fix(input: "live", quality: "rtkFixed", epochRate: rate, latitude: 47.4, longitude: 8.5),
            gpsd: DaemonStatus.GPSD(kind: "private", address: nil, release: nil), ports: [:],
            clients: DaemonStatus.Clients(
                bySocket: ["locationV2Port": 2, "apiPort": 1], locationV1: 0, locationV2: 2, events: 0),
            registration: DaemonStatus.Registration(
                policy: "open", allowedIDs: 0, registered: 0, applications: [], locationV2Unlocked: true))
        status.corrections = DaemonStatus.Corrections(state: "streaming", message: "streaming", stateSeconds: 3)
        return status
    }

    @Test func onlineCarriesTheSlowFactsOnly() throws {
        let json = try object(FleetStatusMessage.online(status(rate: 9.98), clientID: "box-1"))
        #expect(json["online"] as? Bool == true)
        #expect(json["clientId"] as? String == "box-1")
        #expect(json["version"] as? String == "1.2.3")
        let receiver = try #require(json["receiver"] as? [String: Any])
        #expect(receiver["path"] as? String == "/dev/ttyACM0")
        #expect(receiver["model"] as? String == "ZED-F9P")
        #expect(receiver["serialNumber"] as? String == "F9P0042")
        let fix = try #require(json["fix"] as? [String: Any])
        #expect(fix["quality"] as? String == "rtkFixed")
        #expect(fix["solutionType"] as? String == "RTK Fixed")
        #expect(fix["rate"] as? Double == 10)
        #expect(json["corrections"] as? String == "streaming")
        let clients = try #require(json["clients"] as? [String: Any])
        #expect(clients["locationV2"] as? Int == 2)
        #expect(clients["total"] as? Int == 3)
        // No position: it changes every epoch, and a retained message is rewritten at each change.
        #expect(json["latitude"] == nil && fix["latitude"] == nil)
    }

    /// A wavering measured rate does not rewrite the retained message; below 2 Hz, tenths count.
    @Test func theRateIsRoundedSoItDoesNotWaver() {
        #expect(
            FleetStatusMessage.online(status(rate: 9.96), clientID: "b")
                == FleetStatusMessage.online(status(rate: 10.04), clientID: "b"))
        #expect(
            FleetStatusMessage.online(status(rate: 0.2), clientID: "b")
                != FleetStatusMessage.online(status(rate: 0.5), clientID: "b"))
    }

    @Test func noServedReceiverIsNull() throws {
        let json = try object(FleetStatusMessage.online(status(rate: nil, served: false), clientID: "b"))
        #expect(json["receiver"] is NSNull)
    }

    @Test func theWillSaysOfflineAndWhy() throws {
        let json = try object(
            FleetStatusMessage.offline(version: "1.2.3", clientID: "box \"1\"", reason: "connection lost"))
        #expect(json["online"] as? Bool == false)
        #expect(json["clientId"] as? String == "box \"1\"")
        #expect(json["reason"] as? String == "connection lost")
    }

    @Test func theSummaryAndStatusLineNameTheStateOnly() {
        var daemon = status(rate: 1)
        #expect(!daemon.summary.contains("mqtt"))
        daemon.fleet = DaemonStatus.Fleet(state: "connected", message: "connected", stateSeconds: 3, pending: 7)
        #expect(daemon.summary.hasSuffix("corrections streaming, mqtt connected, 3 clients"), "\(daemon.summary)")
        #expect(daemon.statusLine(width: 0).contains("mqtt connected"))
        daemon.fleet?.state = "login-refused"
        #expect(daemon.summary.contains("mqtt: login refused"))
        daemon.fleet?.state = "off"
        #expect(!daemon.summary.contains("mqtt"))
    }

    @Test func statusShowsTheBrokerAndTheSpool() {
        var daemon = status(rate: 1)
        daemon.fleet = DaemonStatus.Fleet(
            state: "unreachable", message: "Connection refused", stateSeconds: 75, broker: "mqtt://fleet@broker:1883",
            topicPrefix: "tmm-bridge/van7", clientID: "tmm-bridge-0123456789ab", rate: 1, connections: 1,
            published: 120, acknowledged: 119, inFlight: 1, spooled: 75, drained: 0, dropped: 3, pending: 72,
            spoolBytes: 110_000, spoolLimit: 65536 * 1024, oldestPendingAgeSeconds: 74.6)
        let text = daemon.report
        #expect(text.contains("mqtt  "), "\(text)")
        #expect(
            text.contains(
                "unreachable: Connection refused (mqtt://fleet@broker:1883, topics tmm-bridge/van7/…) for 1 min 15 s"),
            "\(text)")
        #expect(
            text.contains(
                "120 published, 119 acknowledged, 1 in flight; spool 72 pending (110000 of 67108864 bytes), "
                    + "oldest 75 s, 75 spooled, 0 drained, 3 dropped when full"
            ), "\(text)")
    }
}
