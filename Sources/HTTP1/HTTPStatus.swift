/// The response status codes tmm-bridge sends, each with its RFC 9110 §15 reason phrase.
///
/// A closed set on purpose: the writer only emits codes listed here, so every status on the wire
/// has a reason phrase and a test that pins it.
public enum HTTPStatus: Int, Sendable, Hashable, CaseIterable {
    case `continue` = 100
    case switchingProtocols = 101
    case ok = 200
    case created = 201
    case noContent = 204
    case badRequest = 400
    case unauthorized = 401
    case forbidden = 403
    case notFound = 404
    case methodNotAllowed = 405
    case requestTimeout = 408
    case conflict = 409
    case lengthRequired = 411
    case contentTooLarge = 413
    case uriTooLong = 414
    case unsupportedMediaType = 415
    case expectationFailed = 417
    case upgradeRequired = 426
    case requestHeaderFieldsTooLarge = 431
    case internalServerError = 500
    case notImplemented = 501
    case serviceUnavailable = 503
    case httpVersionNotSupported = 505

    /// The numeric code, e.g. 404.
    public var code: Int { rawValue }

    /// The reason phrase RFC 9110 §15 (and RFC 6585 for 431) gives the code.
    public var reasonPhrase: String {
        switch self {
        case .continue: "Continue"
        case .switchingProtocols: "Switching Protocols"
        case .ok: "OK"
        case .created: "Created"
        case .noContent: "No Content"
        case .badRequest: "Bad Request"
        case .unauthorized: "Unauthorized"
        case .forbidden: "Forbidden"
        case .notFound: "Not Found"
        case .methodNotAllowed: "Method Not Allowed"
        case .requestTimeout: "Request Timeout"
        case .conflict: "Conflict"
        case .lengthRequired: "Length Required"
        case .contentTooLarge: "Content Too Large"
        case .uriTooLong: "URI Too Long"
        case .unsupportedMediaType: "Unsupported Media Type"
        case .expectationFailed: "Expectation Failed"
        case .upgradeRequired: "Upgrade Required"
        case .requestHeaderFieldsTooLarge: "Request Header Fields Too Large"
        case .internalServerError: "Internal Server Error"
        case .notImplemented: "Not Implemented"
        case .serviceUnavailable: "Service Unavailable"
        case .httpVersionNotSupported: "HTTP Version Not Supported"
        }
    }

    /// 1xx, 204 and 304 responses never carry content, so they get no `Content-Length`
    /// (RFC 9110 §8.6: "A server MUST NOT send a Content-Length header field in any response with
    /// a status code of 1xx (Informational) or 204 (No Content)").
    public var allowsContent: Bool {
        rawValue >= 200 && self != .noContent
    }
}
