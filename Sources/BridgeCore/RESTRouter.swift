import ByteCoding
import FoundationEssentials
import HTTP1
import TMMProtocol

// Which REST call a request is (TMM-API.md §4.3), decided from the request alone: path, method,
// query and body. Authentication, state and the response body are the server's business; this
// is a pure function so every route, method and malformed body has a table row in the tests.
//
// Paths match with or without one trailing slash and case-insensitively (HTTPPath); a path that
// exists with the wrong method is 405 with `Allow`; an unknown path is 404; OPTIONS on a known
// path is the CORS preflight (never authenticated: browsers send no Authorization on it).

/// A recognised REST call.
public enum RESTCall: Equatable, Sendable {
    /// `OPTIONS` on a known path.
    case preflight(allow: String)
    case getReceiver
    case putReceiver(isConnected: Bool)
    case positionStream(RESTBodies.StreamFormat)
    case tmmInfo
    case ping
    /// `GET /api/v1/publicKey`: the Access Code V2 key's public half, as a JWK.
    case publicKey
    case getAntenna
    /// The body's members, already checked: applying them to any settings succeeds.
    case putAntenna([String: JSONValue])
    case getCorrectionSource
    case putCorrectionSource([String: JSONValue])
    case userInfo

    /// Every call but the preflight and the public key needs an access code (§4.2 "Which
    /// endpoints need auth": clients fetch the key to make their first code).
    public var needsAuthentication: Bool {
        switch self {
        case .preflight, .publicKey: false
        default: true
        }
    }
}

/// The router's answer: a call, or the error response to send.
public enum RESTRouting: Equatable, Sendable {
    case call(RESTCall, isHead: Bool)
    /// No such endpoint or method: answered without authentication (it reveals nothing).
    case error(HTTPStatus, message: String, allow: String?)
    /// A known endpoint with a malformed body or query: answered only after the access code is
    /// checked, so an unauthenticated client learns nothing from a 400 (a missing or wrong code is
    /// a 401 whatever the body).
    case invalid(HTTPStatus, message: String)
}

public enum RESTRouter {
    private struct Route {
        public let path: HTTPPath
        public let methods: [HTTPMethod]
        public var allow: String {
            var names = methods.map(\.name)
            if methods.contains(.get) { names.insert("HEAD", at: names.firstIndex(of: "GET")! + 1) }
            return (names + ["OPTIONS"]).joined(separator: ", ")
        }
    }

    private static let receiver = HTTPPath("/api/v1/receiver")
    private static let positionStream = HTTPPath("/api/v1/positionStream")
    private static let tmmInfo = HTTPPath("/api/v1/tmmInfo")
    private static let ping = HTTPPath("/api/v1/test/ping")
    private static let publicKey = HTTPPath("/api/v1/publicKey")
    private static let antenna = HTTPPath("/api/v1/antenna")
    private static let correctionSource = HTTPPath("/api/v1/correctionSource")
    private static let userInfo = HTTPPath("/api/v1/userInfo")
    private static let routes = [
        Route(path: publicKey, methods: [.get]),
        Route(path: antenna, methods: [.get, .put]),
        Route(path: correctionSource, methods: [.get, .put]),
        Route(path: userInfo, methods: [.get]),
        Route(path: receiver, methods: [.get, .put]),
        Route(path: positionStream, methods: [.get]),
        Route(path: tmmInfo, methods: [.get]),
        Route(path: ping, methods: [.get]),
    ]

    /// Routes `request` (whose bytes are `bytes`).
    public static func route(_ request: HTTPRequest, in bytes: Span<UInt8>) -> RESTRouting {
        let head = request.head
        guard let route = routes.first(where: { head.pathMatches($0.path, in: bytes) }) else {
            return .error(.notFound, message: "no such endpoint: \(head.normalizedPath(in: bytes))", allow: nil)
        }
        let method = head.method
        if method == .options { return .call(.preflight(allow: route.allow), isHead: false) }
        let effective = method == .head ? HTTPMethod.get : method
        guard route.methods.contains(effective) else {
            if method == .other {
                return .error(.notImplemented, message: "method not implemented", allow: route.allow)
            }
            return .error(.methodNotAllowed, message: "\(method.name) is not allowed here; use \(route.allow)",
                          allow: route.allow)
        }
        let isHead = method == .head
        switch (route.path, effective) {
        case (receiver, .put):
            switch parseReceiverBody(request.bodyBytes(in: bytes)) {
            case .success(let isConnected): return .call(.putReceiver(isConnected: isConnected), isHead: false)
            case .failure(let failure): return .invalid(.badRequest, message: failure.message)
            }
        case (receiver, _):
            return .call(.getReceiver, isHead: isHead)
        case (positionStream, _):
            guard let value = head.queryValue("format", in: bytes) else {
                return .invalid(.badRequest, message: "positionStream needs ?format=locationV1 or ?format=locationV2")
            }
            guard let format = RESTBodies.StreamFormat(queryValue: value) else {
                return .invalid(.badRequest, message: "format must be locationV1 or locationV2, not '\(value)'")
            }
            return .call(.positionStream(format), isHead: isHead)
        case (tmmInfo, _):
            return .call(.tmmInfo, isHead: isHead)
        case (publicKey, _):
            return .call(.publicKey, isHead: isHead)
        case (antenna, .put):
            let body = request.bodyBytes(in: bytes)
            switch JSONValue.object(body, expected: AntennaSettings.expected).flatMap({ members in
                AntennaSettings().updated(with: members).map { _ in members }
            }) {
            case .success(let members): return .call(.putAntenna(members), isHead: false)
            case .failure(let failure): return .invalid(.badRequest, message: failure.message)
            }
        case (antenna, _):
            return .call(.getAntenna, isHead: isHead)
        case (correctionSource, .put):
            let body = request.bodyBytes(in: bytes)
            switch JSONValue.object(body, expected: CorrectionSettings.expected).flatMap({ members in
                CorrectionSettings().updated(with: members).map { _ in members }
            }) {
            case .success(let members): return .call(.putCorrectionSource(members), isHead: false)
            case .failure(let failure): return .invalid(.badRequest, message: failure.message)
            }
        case (correctionSource, _):
            return .call(.getCorrectionSource, isHead: isHead)
        case (userInfo, _):
            return .call(.userInfo, isHead: isHead)
        default:
            return .call(.ping, isHead: isHead)
        }
    }

    /// Whether a request with this head will need an access code (a known endpoint and one of its
    /// methods, not the preflight): the server checks it before sending `100 Continue`.
    public static func needsAuthentication(_ head: HTTPRequestHead, in bytes: Span<UInt8>) -> Bool {
        guard let route = routes.first(where: { head.pathMatches($0.path, in: bytes) }),
              route.path != publicKey else { return false }
        let effective = head.method == .head ? HTTPMethod.get : head.method
        return route.methods.contains(effective)
    }

    public struct BodyFailure: Error, Equatable {
        public var message: String
    }

    /// `{"isConnected": true|false}`: keys compared case-insensitively (old clients sent
    /// PascalCase, §4.1), other members ignored.
    public static func parseReceiverBody(_ body: [UInt8]) -> Result<Bool, BodyFailure> {
        let expected = "expected a JSON object {\"isConnected\": true or false}"
        let members: [String: JSONValue]
        switch JSONValue.object(body, expected: expected) {
        case .success(let decoded): members = decoded
        case .failure(let failure): return .failure(failure)
        }
        var found: Bool?
        for (key, value) in members where ASCII.lowercased(key) == "isconnected" {
            guard case .bool(let flag) = value else {
                return .failure(BodyFailure(message: "isConnected must be true or false"))
            }
            if let found, found != flag {
                return .failure(BodyFailure(message: "isConnected is given twice with different values"))
            }
            found = flag
        }
        guard let found else { return .failure(BodyFailure(message: "no isConnected member: \(expected)")) }
        return .success(found)
    }

}

/// A JSON value, as far as the REST bodies need to tell values apart.
public indirect enum JSONValue: Decodable, Equatable, Sendable {
    case bool(Bool)
    case number(Double)
    case string(String)
    case null
    case object([String: JSONValue])
    case other

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let object = try? container.decode([String: JSONValue].self) {
            self = .object(object)
        } else {
            self = .other
        }
    }

    /// Decodes a request body that must be a JSON object.
    static func object(_ body: [UInt8], expected: String) -> Result<[String: JSONValue], RESTRouter.BodyFailure> {
        guard !body.isEmpty else { return .failure(.init(message: "empty body: \(expected)")) }
        guard let members = try? JSONDecoder().decode([String: JSONValue].self, from: Data(body)) else {
            return .failure(.init(message: "the body is not a JSON object: \(expected)"))
        }
        if let key = firstRepeatedKey(body) {
            return .failure(.init(message: "\(key) is given twice"))
        }
        return .success(members)
    }

    /// The first member name a JSON object (already decoded, so well-formed) gives twice, compared
    /// after unescaping (`"a"` and `"\u0061"` are the same name), or nil. JSONDecoder keeps one
    /// of the two silently; refusing is what keeps a proxy or a logging parser that keeps the
    /// other one from seeing a different request than the daemon applies.
    static func firstRepeatedKey(_ object: [UInt8]) -> String? {
        var names = Set<String>()
        var depth = 0
        var index = 0
        while index < object.count {
            switch object[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
            case UInt8(ascii: "\""):
                let start = index
                index += 1
                while index < object.count, object[index] != UInt8(ascii: "\"") {
                    index += object[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                let end = min(index, object.count - 1)
                var next = index + 1
                while next < object.count, ASCII.isBlank(object[next]) || object[next] == ASCII.lf || object[next] == ASCII.cr {
                    next += 1
                }
                // A string in the outer object followed by a colon is a member name.
                if depth == 1, next < object.count, object[next] == UInt8(ascii: ":"),
                   let name = try? JSONDecoder().decode(String.self, from: Data(object[start...end])),
                   !names.insert(name).inserted {
                    return name
                }
            default:
                break
            }
            index += 1
        }
        return nil
    }
}

extension HTTPMethod {
    /// The method's name as sent.
    public var name: String {
        switch self {
        case .get: "GET"
        case .head: "HEAD"
        case .post: "POST"
        case .put: "PUT"
        case .delete: "DELETE"
        case .options: "OPTIONS"
        case .patch: "PATCH"
        case .trace: "TRACE"
        case .connect: "CONNECT"
        case .other: "this method"
        }
    }
}
