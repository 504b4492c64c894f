// Names for the calls of the REST table's rows (`RESTRouter.routes`), as the router's tests write
// them: `.getReceiver`, `.positionStream(.locationV2)`, `.putAntenna(members)`.
import HTTP1
import TMMProtocol

@testable import BridgeCore

extension RESTCall {
    static var getReceiver: RESTCall { named(.get, "/api/v1/receiver") }
    static func putReceiver(isConnected: Bool) -> RESTCall { named(.put, "/api/v1/receiver", isConnected) }
    static func positionStream(_ format: RESTBodies.StreamFormat) -> RESTCall {
        named(.get, "/api/v1/positionStream", format)
    }
    static var getLocationV2Broadcast: RESTCall { named(.get, "/api/v1/positionStream/locationV2") }
    static func putLocationV2Broadcast(interval: Int64?) -> RESTCall {
        named(.put, "/api/v1/positionStream/locationV2", RESTRouter.LocationV2Rate(interval: interval))
    }
    static var tmmInfo: RESTCall { named(.get, "/api/v1/tmmInfo") }
    static var ping: RESTCall { named(.get, "/api/v1/test/ping") }
    static var publicKey: RESTCall { named(.get, "/api/v1/publicKey") }
    static var getAntenna: RESTCall { named(.get, "/api/v1/antenna") }
    static func putAntenna(_ members: [String: JSONValue]) -> RESTCall { named(.put, "/api/v1/antenna", members) }
    static var getCorrectionSource: RESTCall { named(.get, "/api/v1/correctionSource") }
    static func putCorrectionSource(_ members: [String: JSONValue]) -> RESTCall {
        named(.put, "/api/v1/correctionSource", members)
    }
    static var userInfo: RESTCall { named(.get, "/api/v1/userInfo") }
}

extension RESTCall {
    /// The call of the row written `path`, method `method`, with `input` (what its reader returns).
    static func named(_ method: HTTPMethod, _ path: String, _ input: some Equatable & Sendable) -> RESTCall {
        guard let route = RESTRouter.routes.first(where: { $0.written == path }),
            let endpoint = route.endpoint(for: method)
        else { preconditionFailure("no \(method.name) \(path) in RESTRouter.routes") }
        return RESTCall(route, endpoint, input: RESTInput(input))
    }

    /// The call of an endpoint that reads nothing from the request.
    static func named(_ method: HTTPMethod, _ path: String) -> RESTCall {
        named(method, path, RESTInput.Nothing())
    }
}
