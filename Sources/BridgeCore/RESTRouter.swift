import ByteCoding
import FoundationEssentials
import HTTP1
import TMMProtocol

// Which REST call a request is (TMM-API.md §4.3), decided from the request alone: path, method,
// query and body. Authentication, state and the response body are the server's business; this
// is a pure function so every route, method and malformed body has a table row in the tests.
// The routes themselves are rows of one table, `RESTRouter.routes` (RESTRoutes.swift).
//
// Paths match with or without one trailing slash and case-insensitively (HTTPPath); a path that
// exists with the wrong method is 405 with `Allow`; an unknown path is 404; OPTIONS on a known
// path is the CORS preflight (never authenticated: browsers send no Authorization on it).

/// A recognised REST call: the endpoint (a route's method) that matched, and what its reader took
/// from the query or body.
public struct RESTCall: Equatable, Sendable, CustomStringConvertible {
    /// `GET /api/v1/receiver`, `OPTIONS` for the preflight: which endpoint (calls compare by it and
    /// by their input).
    let name: String
    let endpoint: RESTEndpoint
    let input: RESTInput
    /// Whether its route needs an access code (§4.2 "Which endpoints need auth"); the preflight
    /// never does.
    public let needsAuthentication: Bool

    /// `OPTIONS` on a known path: 204 with `allow`, the route's methods.
    public static func preflight(allow: String) -> RESTCall {
        RESTCall(name: "OPTIONS", endpoint: preflightEndpoint, input: RESTInput(allow), needsAuthentication: false)
    }

    private static let preflightEndpoint = RESTEndpoint.reading(.options, { _, _ in .success("") }) {
        (allow: String, _) in .preflight(allow: allow)
    }

    /// What the call answers, from what `host` says now.
    func answer(host: any ClientConnectionHost) -> RESTAnswer {
        endpoint.answer(input, host)
    }

    /// The call of `route`'s `endpoint` with `input`, as the router makes it.
    init(_ route: RESTRoute, _ endpoint: RESTEndpoint, input: RESTInput) {
        self.init(
            name: "\(endpoint.method.name) \(route.written)", endpoint: endpoint, input: input,
            needsAuthentication: route.needsAuthentication)
    }

    private init(name: String, endpoint: RESTEndpoint, input: RESTInput, needsAuthentication: Bool) {
        self.name = name
        self.endpoint = endpoint
        self.input = input
        self.needsAuthentication = needsAuthentication
    }

    public static func == (a: RESTCall, b: RESTCall) -> Bool {
        a.name == b.name && a.input == b.input
    }

    public var description: String {
        input.value is RESTInput.Nothing ? name : "\(name) \(input.value)"
    }
}

/// What a REST call answers; `HTTPExchange` writes it.
public enum RESTAnswer: Equatable, Sendable {
    /// 200 with this JSON body (left out for HEAD), after these actions (`.saveSettings`).
    case ok(json: [UInt8], then: [ClientConnectionAction])
    /// The CORS preflight: 204 with `Allow`.
    case preflight(allow: String)
    /// Run the gpsd commands that connect or disconnect the receiver (`.receiverCommand`): the
    /// reply waits for them (and, to connect, for the receiver), bounded by
    /// receiver-connect-timeout, and is then the receiver's info.
    case afterReceiverCommand(connect: Bool)
    /// An error response with this message.
    case error(HTTPStatus, message: String)
    /// 200 with a file of the dashboard's page, under its strict Content-Security-Policy.
    case page(StaticFile)

    /// 200 with the JSON `write` writes, after `actions`.
    static func json(then actions: [ClientConnectionAction] = [], _ write: (inout JSONWriter) -> Void) -> RESTAnswer {
        var body = JSONWriter(reservingCapacity: 512)
        write(&body)
        return .ok(json: body.bytes, then: actions)
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

/// One REST path, a row of `RESTRouter.routes`: whether its calls need an access code, and its
/// methods.
struct RESTRoute: Sendable {
    let path: HTTPPath
    /// The path as the row writes it (`/api/v1/positionStream`; `path` is lower-cased).
    let written: String
    let needsAuthentication: Bool
    /// Its methods, in the order `Allow` lists them.
    let endpoints: [RESTEndpoint]

    init(_ path: String, needsAuthentication: Bool = true, _ endpoints: RESTEndpoint...) {
        self.path = HTTPPath(path)
        written = path
        self.needsAuthentication = needsAuthentication
        self.endpoints = endpoints
    }

    /// The `Allow` value: the methods, HEAD after GET, then OPTIONS.
    var allow: String {
        var names = endpoints.map(\.method.name)
        if let get = names.firstIndex(of: "GET") { names.insert("HEAD", at: get + 1) }
        return (names + ["OPTIONS"]).joined(separator: ", ")
    }

    func endpoint(for method: HTTPMethod) -> RESTEndpoint? {
        endpoints.first { $0.method == method }
    }
}

/// One method of a route: how its request's query or body is read (a failure is a 400, after the
/// access code), and what it answers.
struct RESTEndpoint: Sendable {
    let method: HTTPMethod
    let read: @Sendable (HTTPRequest, Span<UInt8>) -> Result<RESTInput, RESTRouter.BodyFailure>
    let answer: @Sendable (RESTInput, any ClientConnectionHost) -> RESTAnswer

    /// GET of something that reads nothing from the request.
    static func get(_ answer: @escaping @Sendable (any ClientConnectionHost) -> RESTAnswer) -> RESTEndpoint {
        RESTEndpoint(
            method: .get, read: { _, _ in .success(RESTInput(RESTInput.Nothing())) },
            answer: { _, host in answer(host) })
    }

    /// GET whose query `read` reads into what `answer` is given.
    static func get<Input: Equatable & Sendable>(
        reading read: @escaping @Sendable (HTTPRequest, Span<UInt8>) -> Result<Input, RESTRouter.BodyFailure>,
        _ answer: @escaping @Sendable (Input, any ClientConnectionHost) -> RESTAnswer
    ) -> RESTEndpoint {
        reading(.get, read, answer)
    }

    /// PUT whose body `read` reads into what `answer` is given.
    static func put<Input: Equatable & Sendable>(
        reading read: @escaping @Sendable (HTTPRequest, Span<UInt8>) -> Result<Input, RESTRouter.BodyFailure>,
        _ answer: @escaping @Sendable (Input, any ClientConnectionHost) -> RESTAnswer
    ) -> RESTEndpoint {
        reading(.put, read, answer)
    }

    static func reading<Input: Equatable & Sendable>(
        _ method: HTTPMethod,
        _ read: @escaping @Sendable (HTTPRequest, Span<UInt8>) -> Result<Input, RESTRouter.BodyFailure>,
        _ answer: @escaping @Sendable (Input, any ClientConnectionHost) -> RESTAnswer
    ) -> RESTEndpoint {
        RESTEndpoint(
            method: method,
            read: { request, bytes in read(request, bytes).map(RESTInput.init) },
            answer: { input, host in
                // The input came from this endpoint's own `read`.
                guard let typed = input.value as? Input else {
                    preconditionFailure("\(method.name): not this endpoint's input: \(input.value)")
                }
                return answer(typed, host)
            })
    }
}

/// What an endpoint's reader took from a request, boxed so that calls of different endpoints
/// compare (the router's tests).
struct RESTInput: Equatable, Sendable {
    /// The input of an endpoint that reads nothing.
    struct Nothing: Equatable, Sendable {}

    let value: any Equatable & Sendable

    init(_ value: some Equatable & Sendable) {
        self.value = value
    }

    static func == (a: RESTInput, b: RESTInput) -> Bool {
        a.value.isEqual(to: b.value)
    }
}

extension Equatable {
    fileprivate func isEqual(to other: any Equatable) -> Bool {
        (other as? Self) == self
    }
}

public enum RESTRouter {
    /// Routes `request` (whose bytes are `bytes`).
    public static func route(_ request: HTTPRequest, in bytes: Span<UInt8>) -> RESTRouting {
        let head = request.head
        guard let route = routes.first(where: { head.pathMatches($0.path, in: bytes) }) else {
            return .error(.notFound, message: "no such endpoint: \(head.normalizedPath(in: bytes))", allow: nil)
        }
        let method = head.method
        if method == .options { return .call(.preflight(allow: route.allow), isHead: false) }
        let effective = method == .head ? HTTPMethod.get : method
        guard let endpoint = route.endpoint(for: effective) else {
            if method == .other {
                return .error(.notImplemented, message: "method not implemented", allow: route.allow)
            }
            return .error(
                .methodNotAllowed, message: "\(method.name) is not allowed here; use \(route.allow)",
                allow: route.allow)
        }
        switch endpoint.read(request, bytes) {
        case .success(let input):
            return .call(RESTCall(route, endpoint, input: input), isHead: method == .head)
        case .failure(let failure):
            return .invalid(.badRequest, message: failure.message)
        }
    }

    /// Whether a request with this head will need an access code (a known endpoint and one of its
    /// methods, not the preflight): the server checks it before sending `100 Continue`.
    public static func needsAuthentication(_ head: HTTPRequestHead, in bytes: Span<UInt8>) -> Bool {
        guard let route = routes.first(where: { head.pathMatches($0.path, in: bytes) }), route.needsAuthentication
        else { return false }
        let effective = head.method == .head ? HTTPMethod.get : head.method
        return route.endpoint(for: effective) != nil
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
                while next < object.count,
                    ASCII.isBlank(object[next]) || object[next] == ASCII.lf || object[next] == ASCII.cr
                {
                    next += 1
                }
                // A string in the outer object followed by a colon is a member name.
                if depth == 1, next < object.count, object[next] == UInt8(ascii: ":"),
                    let name = try? JSONDecoder().decode(String.self, from: Data(object[start...end])),
                    !names.insert(name).inserted
                {
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
