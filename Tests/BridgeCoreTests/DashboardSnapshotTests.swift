// The operator dashboard's live document (issue 25): the snapshot's JSON read back by Foundation (an
// independent parser), the track and the fix history bounded in time and size, the pacer's rate,
// and no credential in the document.
import BridgeCore
import Foundation
import GNSS
import TMMProtocol
import TestSupport
import Testing

/// 2026-12-07T01:23:45.600Z.
private let now: Int64 = 1_796_606_625_600

private func object(_ bytes: [UInt8]) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
}

private func emptyStatus() -> DaemonStatus {
    DaemonStatus(
        version: "0.1.0", pid: 1, uptimeSeconds: 5, receivers: [], fix: DaemonStatus.Fix(input: "waiting"),
        gpsd: DaemonStatus.GPSD(kind: nil, address: nil, release: nil), ports: [:],
        clients: DaemonStatus.Clients(bySocket: [:], locationV1: 0, locationV2: 0, events: 0),
        registration: DaemonStatus.Registration(
            policy: "open", allowedIDs: 0, registered: 0, applications: [], locationV2Unlocked: true))
}

private let applicationID = GUID("3f2504e0-4f89-41d3-9a0c-0305e82c9abc")!

private func fullStatus() -> DaemonStatus {
    var status = DaemonStatus(
        version: "0.1.0", pid: 1, uptimeSeconds: 5,
        receivers: [
            DaemonStatus.Receiver(
                path: "/dev/ttyACM0", connected: true, foundBy: "discovery", brand: "u-blox", model: "ZED-F9P",
                serialNumber: "F9P0042", openInGPSD: true, served: true, silent: false),
            DaemonStatus.Receiver(path: "/dev/ttyUSB1", connected: false, foundBy: "configured", openInGPSD: false),
        ],
        servedReceiver: "/dev/ttyACM0",
        fix: DaemonStatus.Fix(input: "live", quality: "rtkFixed", epochRate: 10, lastEpochAgeSeconds: 0.05),
        gpsd: DaemonStatus.GPSD(kind: "private", address: nil, release: nil), ports: ["apiPort": 9636],
        clients: DaemonStatus.Clients(
            bySocket: ["apiPort": 1, "locationV2Port": 3], locationV1: 0, locationV2: 2, events: 1),
        registration: DaemonStatus.Registration(
            policy: "open", allowedIDs: 1, registered: 1,
            applications: [DaemonStatus.Application(name: applicationID.logName, registeredAt: "2026-12-01T07:58:48Z")],
            locationV2Unlocked: true))
    status.corrections = DaemonStatus.Corrections(
        state: "streaming", message: "streaming RTCM3", stateSeconds: 60, caster: "caster.example:2101",
        mountPoint: "RTCM3", user: "surveyor", attempts: 1, frames: 7241, lastFrameAgeSeconds: 0.4, stationID: 2718,
        ggaSent: 73)
    status.fleet = DaemonStatus.Fleet(
        state: "connected", message: "connected to broker", stateSeconds: 30, broker: "mqtt://box@broker.example:1883",
        pending: 0)
    return status
}

private func fixedPosition() -> Position {
    var position = Position()
    position.time = UTCTimestamp(unixSeconds: now / 1000 - 1, nanoseconds: 500_000_000)
    position.latitude = 47.123456789123
    position.longitude = 8.5
    position.mslHeight = 463.1
    position.undulation = 49.2
    position.quality = .rtkFixed
    position.diffAge = 1.2
    position.sigmaLatitude = 0.006
    position.sigmaLongitude = 0.008
    position.sigmaAltitude = 0.02
    position.satellitesInUse = 22
    position.sky.merge(Satellite(id: 12, constellation: .gps, elevation: 45, azimuth: 120, snr: 42, used: true))
    position.sky.merge(Satellite(id: 3, constellation: .galileo))
    return position
}

@Suite("Dashboard snapshot", .tags(.unit))
struct DashboardSnapshotTests {
    @Test func everyFieldReadsBack() throws {
        var track = DashboardTrack()
        track.add(latitude: 47.1, longitude: 8.5, unixMilliseconds: now - 2000)
        track.add(latitude: 47.123456789, longitude: 8.500000001, unixMilliseconds: now - 1000)
        var history = FixHistory()
        history.record(.rtkFloat, unixMilliseconds: now - 5000)
        history.record(.rtkFixed, unixMilliseconds: now - 3000)
        let json = try object(
            DashboardSnapshot.encode(
                status: fullStatus(), position: fixedPosition(), track: track, fixHistory: history,
                unixMilliseconds: now))
        #expect(json["type"] as? String == "snapshot")
        #expect(json["time"] as? String == "2026-12-07T01:23:45.600Z")
        #expect(json["version"] as? String == "0.1.0")

        let position = try #require(json["position"] as? [String: Any])
        #expect(position["latitude"] as? Double == 47.123456789)
        #expect(position["longitude"] as? Double == 8.5)
        #expect(position["altitude"] as? Double == 512.3)
        #expect(position["mslHeight"] as? Double == 463.1)
        #expect(position["undulation"] as? Double == 49.2)
        #expect(position["hrms"] as? Double == 0.01)
        #expect(position["vrms"] as? Double == 0.02)
        #expect(position["quality"] as? String == "rtkFixed")
        #expect(position["solutionType"] as? String == "RTK Fixed")
        #expect(position["diffStatus"] as? Int == 4)
        #expect(position["diffAge"] as? Double == 1.2)
        #expect(position["satellites"] as? Int == 22)
        #expect(position["utcTimeStamp"] as? String == "2026-12-07T01:23:44.500Z")

        let points = try #require(json["track"] as? [[Double]])
        #expect(points == [[47.1, 8.5, Double(now - 2000)], [47.12345679, 8.5, Double(now - 1000)]])
        let fixes = try #require(json["fixHistory"] as? [[Any]])
        #expect(fixes.count == 2)
        #expect(fixes.first?.first as? Int64 == now - 5000)
        #expect(fixes.first?.last as? String == "rtkFloat")
        #expect(fixes.last?.first as? Int64 == now - 3000)
        #expect(fixes.last?.last as? String == "rtkFixed")

        let sky = try #require(json["sky"] as? [[String: Any]])
        #expect(sky.count == 2)
        #expect(sky[0]["id"] as? Int == 12)
        #expect(sky[0]["constellation"] as? String == "GPS")
        #expect(sky[0]["elevation"] as? Int == 45)
        #expect(sky[0]["azimuth"] as? Int == 120)
        #expect(sky[0]["snr"] as? Int == 42)
        #expect(sky[0]["used"] as? Bool == true)
        #expect(sky[1]["constellation"] as? String == "Galileo")
        #expect(sky[1]["elevation"] is NSNull && sky[1]["snr"] is NSNull && sky[1]["used"] as? Bool == false)

        let rate = try #require(json["rate"] as? [String: Any])
        #expect(rate["epochRate"] as? Double == 10)
        #expect(rate["lastEpochAgeSeconds"] as? Double == 0.05)

        let corrections = try #require(json["corrections"] as? [String: Any])
        #expect(corrections["state"] as? String == "streaming")
        #expect(corrections["message"] as? String == "streaming RTCM3")
        #expect(corrections["caster"] as? String == "caster.example:2101")
        #expect(corrections["mountPoint"] as? String == "RTCM3")
        #expect(corrections["lastFrameAgeSeconds"] as? Double == 0.4)
        #expect(corrections["stationID"] as? Int == 2718)
        #expect(corrections["ggaSent"] as? Int == 73)
        #expect(corrections["frames"] as? Int == 7241)

        let fleet = try #require(json["fleet"] as? [String: Any])
        #expect(fleet["state"] as? String == "connected")
        #expect(fleet["message"] as? String == "connected to broker")
        #expect(fleet["broker"] as? String == "mqtt://box@broker.example:1883")
        #expect(fleet["pending"] as? Int == 0)

        let receivers = try #require(json["receivers"] as? [[String: Any]])
        #expect(receivers.count == 2)
        #expect(receivers[0]["path"] as? String == "/dev/ttyACM0")
        #expect(receivers[0]["brand"] as? String == "u-blox")
        #expect(receivers[0]["model"] as? String == "ZED-F9P")
        #expect(receivers[0]["serialNumber"] as? String == "F9P0042")
        #expect(receivers[0]["served"] as? Bool == true)
        #expect(receivers[0]["silent"] as? Bool == false)
        #expect(receivers[0]["connected"] as? Bool == true)
        #expect(receivers[1]["served"] as? Bool == false && receivers[1]["connected"] as? Bool == false)
        #expect(receivers[1]["model"] is NSNull)

        let clients = try #require(json["clients"] as? [String: Any])
        #expect(clients["locationV1"] as? Int == 0)
        #expect(clients["locationV2"] as? Int == 2)
        #expect(clients["events"] as? Int == 1)
        #expect(clients["total"] as? Int == 4)
        #expect(clients["bySocket"] as? [String: Int] == ["apiPort": 1, "locationV2Port": 3])

        let apps = try #require(json["apps"] as? [[String: Any]])
        #expect(apps.count == 1)
        #expect(apps[0]["name"] as? String == "application …9abc")
        #expect(apps[0]["registeredAt"] as? String == "2026-12-01T07:58:48Z")
        #expect(Set(apps[0].keys) == ["name", "registeredAt"])
    }

    @Test func noReceiverAndNoPositionGiveNulls() throws {
        let json = try object(
            DashboardSnapshot.encode(
                status: emptyStatus(), position: nil, track: DashboardTrack(), fixHistory: FixHistory(),
                unixMilliseconds: now))
        #expect(json["position"] is NSNull)
        #expect(json["corrections"] is NSNull)
        #expect(json["fleet"] is NSNull)
        #expect((json["track"] as? [Any])?.isEmpty == true)
        #expect((json["fixHistory"] as? [Any])?.isEmpty == true)
        #expect((json["sky"] as? [Any])?.isEmpty == true)
        #expect((json["receivers"] as? [Any])?.isEmpty == true)
        #expect((json["apps"] as? [Any])?.isEmpty == true)
        let rate = try #require(json["rate"] as? [String: Any])
        #expect(rate["epochRate"] is NSNull && rate["lastEpochAgeSeconds"] is NSNull)
        let clients = try #require(json["clients"] as? [String: Any])
        #expect(clients["total"] as? Int == 0)
    }

    /// A position the receiver has not filled yet: its unknown values are nulls, never zeros.
    @Test func unknownPositionValuesAreNull() throws {
        let json = try object(
            DashboardSnapshot.encode(
                status: emptyStatus(), position: Position(), track: DashboardTrack(), fixHistory: FixHistory(),
                unixMilliseconds: now))
        let position = try #require(json["position"] as? [String: Any])
        for name in ["latitude", "altitude", "hrms", "solutionType", "diffStatus", "diffAge", "utcTimeStamp"] {
            #expect(position[name] is NSNull, "\(name)")
        }
        #expect(position["quality"] as? String == "noFix")
    }

    /// Points older than the window before the snapshot's time are left out, even when no new
    /// position has pushed them out of the track.
    @Test func theSnapshotLeavesOutPointsOlderThanTheWindow() throws {
        var track = DashboardTrack()
        track.add(latitude: 1, longitude: 2, unixMilliseconds: now - 700_000)
        track.add(latitude: 3, longitude: 4, unixMilliseconds: now - 100_000)
        let json = try object(
            DashboardSnapshot.encode(
                status: emptyStatus(), position: nil, track: track, fixHistory: FixHistory(), unixMilliseconds: now))
        #expect(json["track"] as? [[Double]] == [[3, 4, Double(now - 100_000)]])
    }

    /// The registry's application ids are credentials: only the masked names reach the page.
    @Test func noApplicationIDLeaks() throws {
        var status = fullStatus()
        let ids = (0..<10).map { GUID("3f2504e0-4f89-41d3-9a0c-0305e82c9a\(String($0, radix: 16))0")! }
        status.registration.applications = ids.map {
            DaemonStatus.Application(name: $0.logName, registeredAt: "2026-12-01T07:58:48Z")
        }
        let bytes = DashboardSnapshot.encode(
            status: status, position: fixedPosition(), track: DashboardTrack(), fixHistory: FixHistory(),
            unixMilliseconds: now)
        let text = String(decoding: bytes, as: UTF8.self)
        let guidShape = /[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}/
        #expect(text.firstMatch(of: guidShape) == nil)
        for id in ids {
            #expect(!text.lowercased().contains(id.description.lowercased()))
            #expect(text.contains(id.logName))
        }
        #expect(!text.lowercased().contains("password"))
    }
}

@Suite("Dashboard track", .tags(.unit))
struct DashboardTrackTests {
    @Test func keepsOnePointPerSecond() {
        var track = DashboardTrack()
        for step in Int64(0)..<50 { track.add(latitude: 1, longitude: 2, unixMilliseconds: now + step * 20) }
        #expect(track.count == 1)
        track.add(latitude: 1, longitude: 2, unixMilliseconds: now + 1000)
        #expect(track.points.map(\.unixMilliseconds) == [now, now + 1000])
    }

    /// A 50 Hz feed for an hour of simulated time: one point a second, the last ten minutes, oldest
    /// first, never more than the capacity.
    @Test func aFiftyHertzHourKeepsTenMinutesBounded() {
        var track = DashboardTrack()
        #expect(track.capacity == 601)
        var maximum = 0
        let start = now
        var time = start
        while time < start + 3_600_000 {
            track.add(latitude: 47 + Double(time - start) * 1e-9, longitude: 8, unixMilliseconds: time)
            maximum = max(maximum, track.count)
            time += 20
        }
        #expect(maximum <= track.capacity)
        let points = track.points
        // The last epoch at start + 3 599 980: the window starts at + 2 999 980.
        #expect(points.count == 600)
        #expect(points.last?.unixMilliseconds == start + 3_599_000)
        #expect(points.first?.unixMilliseconds == start + 3_000_000)
        #expect(zip(points, points.dropFirst()).allSatisfy { $1.unixMilliseconds - $0.unixMilliseconds == 1000 })
    }

    @Test func anIrregularFeedStaysWithinItsBounds() {
        var track = DashboardTrack()
        var time = now
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5000 {
            time += Int64.random(in: 1...2500, using: &generator)
            track.add(latitude: 1, longitude: 2, unixMilliseconds: time)
            let points = track.points
            #expect(points.count <= track.capacity)
            #expect(points.first.map { $0.unixMilliseconds >= time - track.window } ?? false)
            #expect(zip(points, points.dropFirst()).allSatisfy { $1.unixMilliseconds - $0.unixMilliseconds >= 1000 })
        }
    }

    @Test func removeAllStartsAfresh() {
        var track = DashboardTrack()
        track.add(latitude: 1, longitude: 2, unixMilliseconds: now)
        track.add(latitude: 1, longitude: 2, unixMilliseconds: now + 1000)
        track.removeAll()
        #expect(track.isEmpty)
        track.add(latitude: 5, longitude: 6, unixMilliseconds: now + 1200)
        #expect(track.points == [DashboardTrack.Point(latitude: 5, longitude: 6, unixMilliseconds: now + 1200)])
    }

    @Test func aClockSteppedBackStartsAfresh() {
        var track = DashboardTrack()
        track.add(latitude: 1, longitude: 2, unixMilliseconds: now)
        track.add(latitude: 1, longitude: 2, unixMilliseconds: now + 1000)
        track.add(latitude: 3, longitude: 4, unixMilliseconds: now - 60_000)
        #expect(track.points.map(\.unixMilliseconds) == [now - 60_000])
    }

    @Test func nonFiniteCoordinatesAreIgnored() {
        var track = DashboardTrack()
        track.add(latitude: .nan, longitude: 2, unixMilliseconds: now)
        track.add(latitude: 1, longitude: .infinity, unixMilliseconds: now)
        #expect(track.isEmpty)
    }
}

@Suite("Fix history", .tags(.unit))
struct FixHistoryTests {
    @Test func recordsChangesOnly() {
        var history = FixHistory()
        history.record(.autonomous, unixMilliseconds: now)
        history.record(.autonomous, unixMilliseconds: now + 100)
        history.record(.rtkFloat, unixMilliseconds: now + 200)
        history.record(.rtkFixed, unixMilliseconds: now + 300)
        history.record(.rtkFixed, unixMilliseconds: now + 400)
        #expect(
            history.changes == [
                FixHistory.Change(unixMilliseconds: now, quality: .autonomous),
                FixHistory.Change(unixMilliseconds: now + 200, quality: .rtkFloat),
                FixHistory.Change(unixMilliseconds: now + 300, quality: .rtkFixed),
            ])
        #expect(history.current == .rtkFixed)
    }

    /// Ten minutes, the state at the window's start kept as the first entry at that start.
    @Test func keepsTheWindowAndTheStateAtItsStart() {
        var history = FixHistory()
        history.record(.autonomous, unixMilliseconds: now)
        history.record(.rtkFloat, unixMilliseconds: now + 60_000)
        history.record(.rtkFixed, unixMilliseconds: now + 120_000)
        history.trim(now: now + 700_000)
        // The window starts at now + 100 000: float then, fixed from now + 120 000.
        #expect(
            history.changes == [
                FixHistory.Change(unixMilliseconds: now + 100_000, quality: .rtkFloat),
                FixHistory.Change(unixMilliseconds: now + 120_000, quality: .rtkFixed),
            ])
        history.record(.rtkFixed, unixMilliseconds: now + 3_600_000)
        #expect(history.changes == [FixHistory.Change(unixMilliseconds: now + 3_000_000, quality: .rtkFixed)])
    }

    /// Flapping at 50 Hz for an hour: at most 256 entries, the newest ones, all within the window.
    @Test func flappingIsBounded() {
        var history = FixHistory()
        var time = now
        var quality = FixQuality.rtkFixed
        var maximum = 0
        while time < now + 3_600_000 {
            history.record(quality, unixMilliseconds: time)
            maximum = max(maximum, history.count)
            quality = quality == .rtkFixed ? .rtkFloat : .rtkFixed
            time += 20
        }
        #expect(maximum == 256)
        let changes = history.changes
        #expect(changes.count == 256)
        #expect(changes.last?.unixMilliseconds == time - 20)
        #expect(changes.first?.unixMilliseconds == time - 20 - 255 * 20)
        #expect(zip(changes, changes.dropFirst()).allSatisfy { $0.quality != $1.quality })
    }

    @Test func removeAllAndAClockSteppedBackStartAfresh() {
        var history = FixHistory()
        history.record(.rtkFixed, unixMilliseconds: now)
        history.record(.dgps, unixMilliseconds: now - 5000)
        #expect(history.changes == [FixHistory.Change(unixMilliseconds: now - 5000, quality: .dgps)])
        history.removeAll()
        #expect(history.isEmpty && history.current == nil)
    }
}

@Suite("Dashboard pacer", .tags(.unit))
struct DashboardPacerTests {
    /// `pacer.due(now:)` outside `#expect`, which cannot call a mutating method.
    private func due(_ pacer: inout DashboardPacer, at now: Int64) -> Bool { pacer.due(now: now) }

    @Test func nothingChangedNothingDue() {
        var pacer = DashboardPacer()
        #expect(!due(&pacer, at: 0))
        #expect(pacer.nextDue(now: 0) == nil)
    }

    @Test func theFirstChangeIsDueAtOnce() {
        var pacer = DashboardPacer()
        pacer.markChanged()
        #expect(pacer.nextDue(now: 5) == 5)
        #expect(due(&pacer, at: 5))
        #expect(!due(&pacer, at: 6))
    }

    /// A 50 Hz receiver marking every epoch, asked every millisecond for ten seconds: 40 snapshots,
    /// 250 ms apart.
    @Test func atMostFourAHertz() {
        var pacer = DashboardPacer()
        #expect(pacer.minimumInterval == 250)
        var sent: [Int64] = []
        for time in Int64(0)..<10_000 {
            if time % 20 == 0 { pacer.markChanged() }
            if pacer.due(now: time) { sent.append(time) }
        }
        #expect(sent.count == 40)
        #expect(zip(sent, sent.dropFirst()).allSatisfy { $1 - $0 >= 250 })
    }

    @Test func aChangeWithinTheIntervalWaitsForItsEnd() {
        var pacer = DashboardPacer()
        pacer.markChanged()
        #expect(due(&pacer, at: 1000))
        pacer.markChanged()
        #expect(pacer.nextDue(now: 1100) == 1250)
        #expect(!due(&pacer, at: 1249))
        #expect(due(&pacer, at: 1250))
        #expect(!due(&pacer, at: 2000))
    }
}
