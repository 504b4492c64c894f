// The REST-settable settings: antenna height and correction source. Bodies from old
// (PascalCase) and new (camelCase) clients, every malformed value, partial updates, the file
// round trip, and the responses.
@testable import BridgeCore
import HTTP1
import TestSupport
import Testing
import TMMProtocol

@Suite("Device settings (antenna, correction source, userInfo)", .tags(.unit))
struct DeviceSettingsTests {
    private func antenna(
        _ body: String, from start: AntennaSettings = AntennaSettings()
    ) -> Result<AntennaSettings, RESTRouter.BodyFailure> {
        start.updated(withBody: Array(body.utf8))
    }

    private func corrections(
        _ body: String, from start: CorrectionSettings = CorrectionSettings()
    ) -> Result<CorrectionSettings, RESTRouter.BodyFailure> {
        start.updated(withBody: Array(body.utf8))
    }

    private func text(_ write: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        write(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test func antennaBodiesOldAndNew() throws {
        #expect(
            antenna(#"{"MeasuredHeight": 1.8, "IsAntennaHeightApplied": true}"#)
                == .success(AntennaSettings(measuredHeight: 1.8, isAntennaHeightApplied: true)))
        #expect(
            antenna(#"{"measuredHeight": 2, "isAntennaHeightApplied": false, "other": [1]}"#)
                == .success(AntennaSettings(measuredHeight: 2, isAntennaHeightApplied: false)))
        // Partial: what is not given stays.
        let start = AntennaSettings(measuredHeight: 1.5, isAntennaHeightApplied: true)
        #expect(
            antenna(#"{"measuredheight": 0.25}"#, from: start)
                == .success(AntennaSettings(measuredHeight: 0.25, isAntennaHeightApplied: true)))
        #expect(try antenna(#"{"isAntennaHeightApplied": false}"#, from: start).get().appliedHeight == 0)
        #expect(start.appliedHeight == 1.5)
    }

    @Test(arguments: [
        ("", "empty body"),
        ("[1]", "not a JSON object"),
        ("{", "not a JSON object"),
        ("{}", "no antenna setting"),
        (#"{"other": 1}"#, "no antenna setting"),
        (#"{"MeasuredHeight": "1.8"}"#, "measuredHeight must be a number of metres from -100 to 100"),
        (#"{"MeasuredHeight": 1800}"#, "measuredHeight must be"),
        (#"{"MeasuredHeight": null}"#, "measuredHeight must be"),
        (#"{"IsAntennaHeightApplied": 1}"#, "isAntennaHeightApplied must be true or false"),
        (#"{"measuredHeight": 1, "MeasuredHeight": 2}"#, "is given twice"),
        // Exactly the same name twice: JSONDecoder alone keeps one silently.
        (#"{"measuredHeight": 1, "measuredHeight": 2}"#, "measuredHeight is given twice"),
        (#"{"measuredHeight": 1, "other": {"x": 1}, "measuredHeight" : 1}"#, "measuredHeight is given twice"),
        (#"{"measuredHeight": 1, "measured\u0048eight": 2}"#, "measuredHeight is given twice"),
    ])
    func malformedAntennaBodies(_ body: String, _ expected: String) {
        guard case .failure(let failure) = antenna(body) else { Issue.record("accepted \(body)"); return }
        #expect(failure.message.contains(expected), "\(failure.message)")
    }

    @Test func correctionBodies() {
        let ntrip = corrections(
            #"{"CorrectionSource":"NTRIP","ServerAddress":"caster.example","ServerPort":2101,"#
                + #""NtripMountPoint":"RTCM3","NtripUserName":"u","NtripPassword":"p"}"#
        )
        #expect(
            ntrip
                == .success(
                    CorrectionSettings(
                        source: .ntrip, serverAddress: "caster.example", serverPort: 2101,
                        ntripMountPoint: "RTCM3", ntripUserName: "u", ntripPassword: "p")))
        guard case .success(let stored) = ntrip else { return }
        #expect(
            corrections(#"{"serverPort": null, "ntripPassword": ""}"#, from: stored)
                == .success(
                    CorrectionSettings(
                        source: .ntrip, serverAddress: "caster.example", ntripMountPoint: "RTCM3", ntripUserName: "u")))
        #expect(
            text { DeviceSettings.writeCorrections(stored, includingPassword: false, to: &$0) }
                == #"""
                {"correctionSource":"ntrip","serverAddress":"caster.example","serverPort":2101,\#
                "ntripMountPoint":"RTCM3","ntripUserName":"u","hasNtripPassword":true}
                """#
        )
    }

    @Test(arguments: [
        (#"{"CorrectionSource":"satellite"}"#, "correctionSource must be"),
        (#"{"CorrectionSource":1}"#, "correctionSource must be"),
        (#"{"ServerPort":0}"#, "serverPort must be a port number"),
        (#"{"ServerPort":70000}"#, "serverPort must be"),
        (#"{"ServerPort":21.5}"#, "serverPort must be"),
        (#"{"ServerPort":"2101"}"#, "serverPort must be"),
        (#"{"ServerAddress":5}"#, "serverAddress must be a string"),
        (#"{"NtripUserName":"a\nb"}"#, "ntripUserName must be a string"),
        // Line breaks to other readers, and characters that make the text read differently.
        (#"{"NtripUserName":"a\u0085b"}"#, "ntripUserName must be a string"),
        (#"{"ServerAddress":"caster\u2028.example"}"#, "serverAddress must be a string"),
        (#"{"NtripMountPoint":"RTCM\u202E3"}"#, "without control or bidirectional formatting characters"),
        (#"{"NtripPassword":"p\u2066w"}"#, "ntripPassword must be a string"),
        (#"{"NtripUserName":"u", "NtripUserName":"v"}"#, "NtripUserName is given twice"),
        ("{\"NtripMountPoint\":\"" + String(repeating: "m", count: 257) + "\"}", "at most 256 bytes"),
        ("{}", "no correction setting"),
    ])
    func malformedCorrectionBodies(_ body: String, _ expected: String) {
        guard case .failure(let failure) = corrections(body) else { Issue.record("accepted \(body)"); return }
        #expect(failure.message.contains(expected), "\(failure.message)")
    }

    /// Names repeated only inside nested values, or in strings, are not member names of the body.
    @Test func repeatedNamesOnlyCountInTheOuterObject() {
        #expect(
            JSONValue.firstRepeatedKey(Array(#"{"a": {"b": 1, "c": [{"b": 2}]}, "d": "a", "e": ["a", "a"]}"#.utf8))
                == nil)
        #expect(JSONValue.firstRepeatedKey(Array(#"{"a\"": 1, "a": 2}"#.utf8)) == nil)
        #expect(JSONValue.firstRepeatedKey(Array(#"{"a\\": 1, "a\\" :2}"#.utf8)) == "a\\")
        #expect(corrections(#"{"ntripUserName": "é 北京"}"#) == .success(CorrectionSettings(ntripUserName: "é 北京")))
    }

    @Test func theFileRoundTripsAndKeepsThePassword() throws {
        let settings = DeviceSettings(
            antenna: AntennaSettings(measuredHeight: -0.125, isAntennaHeightApplied: true),
            corrections: CorrectionSettings(
                source: .direct, serverAddress: "10.0.0.2", serverPort: 5017,
                ntripPassword: "secret \"quoted\""))
        let bytes = settings.fileBytes()
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""ntripPassword":"secret \"quoted\"""#))
        #expect(DeviceSettings.parseFile(bytes) == .success(settings))
        #expect(DeviceSettings.parseFile(Array("{}".utf8)) == .success(DeviceSettings()))
        #expect(throws: RESTRouter.BodyFailure.self) { try DeviceSettings.parseFile(Array("nope".utf8)).get() }
        #expect(throws: RESTRouter.BodyFailure.self) {
            try DeviceSettings.parseFile(Array(#"{"antenna":{"measuredHeight":"x"}}"#.utf8)).get()
        }
    }

    @Test func responses() {
        #expect(
            text {
                DeviceSettings.writeAntenna(AntennaSettings(measuredHeight: 1.8, isAntennaHeightApplied: true), to: &$0)
            }
                == #"{"measuredHeight":1.8,"isAntennaHeightApplied":true}"#)
        #expect(
            text { DeviceSettings.writeUserInfo(to: &$0) }
                == #"{"isSignedIn":false,"isSigninRequired":false,"userName":null,"email":null,"trimbleId":null}"#)
    }
}
