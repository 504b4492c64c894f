// Which REST call each request is: a row per route, method and malformed body.
import HTTP1
import TMMProtocol
import TestSupport
import Testing

@testable import BridgeCore

@Suite("RESTRouter", .tags(.unit))
struct RESTRouterTests {
    private func route(_ method: String, _ target: String, body: String = "") -> RESTRouting {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: x\r\n"
        if !body.isEmpty { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + body
        let bytes = Array(text.utf8)
        var reader = HTTPRequestReader()
        guard case .request(let request) = try? reader.next(in: bytes.span, from: 0) else {
            Issue.record("not a complete request: \(text)")
            return .error(.badRequest, message: "", allow: nil)
        }
        return RESTRouter.route(request, in: bytes.span)
    }

    @Test(arguments: [
        ("GET", "/api/v1/receiver", RESTCall.getReceiver),
        ("GET", "/api/v1/receiver/", .getReceiver),
        ("GET", "/API/V1/Receiver", .getReceiver),
        ("GET", "/api/v1/tmmInfo", .tmmInfo),
        ("GET", "/api/v1/tmminfo/", .tmmInfo),
        ("GET", "/api/v1/test/ping", .ping),
        ("GET", "/api/v1/positionStream?format=locationV2", .positionStream(.locationV2)),
        ("GET", "/api/v1/positionStream/?format=locationV1", .positionStream(.locationV1)),
        ("GET", "/api/v1/positionstream?format=LOCATIONV2", .positionStream(.locationV2)),
        ("GET", "/api/v1/positionStream?x=1&format=location%56%31", .positionStream(.locationV1)),
        ("GET", "http://localhost:9637/api/v1/receiver", .getReceiver),
        ("GET", "/api/v1/publicKey", .publicKey),
        ("GET", "/api/v1/publicKey/", .publicKey),
        ("GET", "/api/v1/publickey", .publicKey),
        ("GET", "/api/v1/antenna", .getAntenna),
        ("GET", "/api/v1/correctionSource/", .getCorrectionSource),
        ("GET", "/api/v1/userInfo", .userInfo),
        ("GET", "/api/v1/positionStream/locationV2", .getLocationV2Broadcast),
        ("GET", "/api/v1/positionstream/LOCATIONV2/", .getLocationV2Broadcast),
    ])
    func knownRoutes(_ method: String, _ target: String, _ call: RESTCall) {
        #expect(route(method, target) == .call(call, isHead: false), "\(method) \(target)")
    }

    @Test func settingsBodiesAreCheckedByTheRouter() {
        #expect(
            route("PUT", "/api/v1/antenna", body: #"{"MeasuredHeight":1.8,"IsAntennaHeightApplied":true}"#)
                == .call(
                    .putAntenna(["MeasuredHeight": .number(1.8), "IsAntennaHeightApplied": .bool(true)]), isHead: false)
        )
        #expect(
            route("PUT", "/api/v1/antenna", body: #"{"MeasuredHeight":"high"}"#)
                == .invalid(.badRequest, message: "measuredHeight must be a number of metres from -100 to 100"))
        #expect(
            route("PUT", "/api/v1/correctionSource", body: #"{"correctionSource":"auto"}"#)
                == .call(.putCorrectionSource(["correctionSource": .string("auto")]), isHead: false))
        #expect(
            route("PUT", "/api/v1/correctionSource", body: "")
                == .invalid(
                    .badRequest,
                    message: #"""
                        empty body: expected {"correctionSource": "auto", "ntrip" or "direct", "serverAddress", \#
                        "serverPort", "ntripMountPoint", "ntripUserName", "ntripPassword"}
                        """#
                ))
        #expect(RESTCall.getAntenna.needsAuthentication && RESTCall.userInfo.needsAuthentication)
    }

    /// The LocationV2 broadcast body: one rate member of the documented names, any case, in hertz
    /// or milliseconds, a number or digits, 1 to 1000; null for max-location-rate; others ignored.
    @Test(arguments: [
        (#"{"rate":10}"#, 100_000_000 as Int64?),
        (#"{"Rate":1}"#, 1_000_000_000),
        (#"{"FREQUENCY":1000}"#, 1_000_000),
        (#"{"updateRate":2.5}"#, 400_000_000),
        (#"{"broadcastRate":"20"}"#, 50_000_000),
        (#"{"interval":100}"#, 100_000_000),
        (#"{"IntervalMs":1000,"format":"locationV2"}"#, 1_000_000_000),
        (#"{"updateInterval":" 50 "}"#, 50_000_000),
        (#"{"rate":3}"#, 333_333_333),
        (#"{"rate":null}"#, nil),
    ])
    func locationV2BroadcastBodies(_ body: String, _ interval: Int64?) {
        #expect(
            route("PUT", "/api/v1/positionStream/locationV2", body: body)
                == .call(.putLocationV2Broadcast(interval: interval), isHead: false), "\(body)")
    }

    @Test(arguments: [
        ("", "empty body"),
        ("[10]", "not a JSON object"),
        (#"{"enabled":true}"#, "no rate in the body"),
        (#"{"rate":0}"#, "rate must be a number of hertz from 1 to 1000, or null"),
        (#"{"rate":1001}"#, "from 1 to 1000"),
        (#"{"rate":-5}"#, "from 1 to 1000"),
        (#"{"interval":0.5}"#, "interval must be a number of milliseconds from 1 to 1000, or null"),
        (#"{"rate":"fast"}"#, "from 1 to 1000"),
        (#"{"rate":"1e2"}"#, "from 1 to 1000"),
        (#"{"rate":true}"#, "from 1 to 1000"),
        (#"{"rate":{"hz":5}}"#, "from 1 to 1000"),
        (#"{"rate":5,"interval":200}"#, "the rate is given twice (interval and rate): give one"),
        (#"{"rate":5,"Rate":5}"#, "the rate is given twice (Rate and rate)"),
        (#"{"rate":5,"rate":6}"#, "rate is given twice"),
    ])
    func badLocationV2BroadcastBodiesAre400(_ body: String, _ expected: String) {
        guard case .invalid(let status, let message) = route("PUT", "/api/v1/positionStream/locationV2", body: body)
        else { Issue.record("accepted: \(body)"); return }
        #expect(status == .badRequest)
        #expect(message.contains(expected), "\(message)")
    }

    @Test func headIsGetWithoutTheBody() {
        #expect(route("HEAD", "/api/v1/tmmInfo") == .call(.tmmInfo, isHead: true))
    }

    @Test func optionsIsThePreflightWithTheRoutesMethods() {
        #expect(
            route("OPTIONS", "/api/v1/receiver") == .call(.preflight(allow: "GET, HEAD, PUT, OPTIONS"), isHead: false))
        #expect(route("OPTIONS", "/api/v1/tmmInfo") == .call(.preflight(allow: "GET, HEAD, OPTIONS"), isHead: false))
        #expect(
            route("OPTIONS", "/api/v1/positionStream/locationV2")
                == .call(.preflight(allow: "GET, HEAD, PUT, OPTIONS"), isHead: false))
        #expect(RESTCall.getLocationV2Broadcast.needsAuthentication)
        #expect(!RESTCall.preflight(allow: "").needsAuthentication)
        #expect(RESTCall.ping.needsAuthentication && RESTCall.getReceiver.needsAuthentication)
        // The samples fetch the public key before they can make a code (§4.2).
        #expect(!RESTCall.publicKey.needsAuthentication)
        #expect(
            route("PUT", "/api/v1/publicKey")
                == .error(
                    .methodNotAllowed, message: "PUT is not allowed here; use GET, HEAD, OPTIONS",
                    allow: "GET, HEAD, OPTIONS"))
    }

    @Test(arguments: [
        ("{\"isConnected\":true}", true), ("{\"isConnected\":false}", false), ("{\"IsConnected\":true}", true),
        ("{\"ISCONNECTED\":false,\"other\":[1,{\"a\":null}]}", false), (" \n{ \"isConnected\" : true } ", true),
    ])
    func putReceiverBodies(_ body: String, _ flag: Bool) {
        #expect(route("PUT", "/api/v1/receiver", body: body) == .call(.putReceiver(isConnected: flag), isHead: false))
    }

    @Test(arguments: [
        ("", "empty body"),
        ("isConnected=true", "not a JSON object"),
        ("[true]", "not a JSON object"),
        ("{\"isConnected\":1}", "must be true or false"),
        ("{\"isConnected\":\"true\"}", "must be true or false"),
        ("{\"isConnected\":null}", "must be true or false"),
        ("{\"connected\":true}", "no isConnected member"),
        ("{\"isConnected\":true,\"IsConnected\":false}", "twice with different values"),
        ("{\"isConnected\":true,\"isConnected\":false}", "isConnected is given twice"),
        ("{\"isConnected\":tru}", "not a JSON object"),
    ])
    func malformedPutBodiesAre400(_ body: String, _ expected: String) {
        // `.invalid`: answered only after the access code is checked (401 first).
        guard case .invalid(let status, let message) = route("PUT", "/api/v1/receiver", body: body.isEmpty ? "" : body)
        else { Issue.record("accepted: \(body)"); return }
        #expect(status == .badRequest)
        #expect(message.contains(expected), "\(message)")
    }

    @Test(arguments: [
        ("GET", "/dashboard", HTTPStatus.notFound, nil as String?),
        ("GET", "/api/v1/publicKeys", .notFound, nil),
        ("GET", "/api/v1/receiver//", .notFound, nil),
        ("GET", "/api/v1/receiver/x", .notFound, nil),
        ("POST", "/api/v1/receiver", .methodNotAllowed, "GET, HEAD, PUT, OPTIONS"),
        ("DELETE", "/api/v1/tmmInfo", .methodNotAllowed, "GET, HEAD, OPTIONS"),
        ("PUT", "/api/v1/test/ping", .methodNotAllowed, "GET, HEAD, OPTIONS"),
        ("PUT", "/api/v1/positionStream", .methodNotAllowed, "GET, HEAD, OPTIONS"),
        ("POST", "/api/v1/positionStream/locationV2", .methodNotAllowed, "GET, HEAD, PUT, OPTIONS"),
        ("GET", "/api/v1/positionStream/locationV1", .notFound, nil),
        ("BREW", "/api/v1/receiver", .notImplemented, "GET, HEAD, PUT, OPTIONS"),
    ])
    func errors(_ method: String, _ target: String, _ status: HTTPStatus, _ allow: String?) {
        guard case .error(let got, _, let gotAllow) = route(method, target) else {
            Issue.record("\(method) \(target) was routed")
            return
        }
        #expect(got == status, "\(method) \(target)")
        #expect(gotAllow == allow)
    }

    /// Bad queries on a known endpoint are refused only after authentication (`.invalid`).
    @Test(arguments: [
        "/api/v1/positionStream", "/api/v1/positionStream?format=locationV3", "/api/v1/positionStream?format=",
    ])
    func badQueriesAreInvalidCalls(_ target: String) {
        guard case .invalid(let status, _) = route("GET", target) else {
            Issue.record("GET \(target): \(route("GET", target))")
            return
        }
        #expect(status == .badRequest)
    }
}
