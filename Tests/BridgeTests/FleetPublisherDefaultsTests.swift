// Fleet publishing's defaults, decided when the daemon starts: the topic prefix from the host
// name and the client id from the machine id (stable across restarts, unique in a fleet).
import Foundation
import TestSupport
import Testing

@testable import Bridge

@Suite("Fleet publisher defaults", .tags(.unit))
struct FleetPublisherDefaultsTests {
    @Test(arguments: [
        ("van7", "tmm-bridge/van7"),
        ("survey-base.example.com", "tmm-bridge/survey-base.example.com"),
        ("", "tmm-bridge/box"),
        ("a+b", "tmm-bridge/box"),
        ("a#b", "tmm-bridge/box"),
        ("a/b", "tmm-bridge/box"),
        ("a b", "tmm-bridge/box"),
    ])
    func topicPrefixFromTheHostName(_ host: String, _ prefix: String) {
        #expect(FleetPublisher.defaultTopicPrefix(hostName: host) == prefix)
    }

    @Test(
        arguments: [
            ("3d1219c7c4c54e6c9f1a2b3c4d5e6f70", "van7", "tmm-bridge-3d1219c7c4c5"),
            (nil, "van7", "tmm-bridge-van7"),
            ("not hex at all, not a machine id", "van7", "tmm-bridge-van7"),
            ("3d12", "van7", "tmm-bridge-van7"),
            (nil, "", "tmm-bridge-box"),
        ] as [(String?, String, String)])
    func clientIDFromTheMachineID(_ machineID: String?, _ host: String, _ clientID: String) {
        #expect(FleetPublisher.defaultClientID(machineID: machineID, hostName: host) == clientID)
    }

    /// This machine's id, as systemd writes it: 32 hex digits, read without the newline (a
    /// container may have none: then nil, and the host name is used).
    @Test func theMachineIDIsRead() throws {
        let file =
            (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8))?.trimmingCharacters(
                in: .whitespacesAndNewlines) ?? ""
        guard !file.isEmpty else {
            #expect(FleetPublisher.machineID() == nil)
            return
        }
        let id = try #require(FleetPublisher.machineID())
        #expect(id == file)
        #expect(FleetPublisher.defaultClientID(machineID: id, hostName: "x").hasPrefix("tmm-bridge-" + id.prefix(12)))
    }
}
