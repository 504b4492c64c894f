// RFC 6455 §7.4 status codes, plus the three IANA registered later (1012-1014).

/// The status code carried in the first two bytes of a Close frame (RFC 6455 §7.4).
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The 16-bit wire value.
    public let rawValue: UInt16

    /// Wraps any 16-bit value; use `isValidOnWire` before trusting one read from a peer.
    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// 1000: the purpose of the connection was fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: an endpoint is going away (server shutdown, idle client dropped).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: the peer broke the protocol.
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: a data type the endpoint cannot accept.
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1005: reserved, never sent: "no status code was present" (what a Close without a body means).
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// 1006: reserved, never sent: the connection closed without a Close frame.
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// 1007: message data not consistent with its type (invalid UTF-8 in a text message).
    public static let invalidPayloadData = WebSocketCloseCode(rawValue: 1007)
    /// 1008: the message or behaviour violates the endpoint's policy (e.g. a client too slow to read).
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a frame or message too big to process.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1010: (client only) the server did not negotiate a required extension.
    public static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    /// 1011: the server met an unexpected condition.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)
    /// 1012: the service is restarting (IANA registry).
    public static let serviceRestart = WebSocketCloseCode(rawValue: 1012)
    /// 1013: try again later (IANA registry).
    public static let tryAgainLater = WebSocketCloseCode(rawValue: 1013)
    /// 1014: bad gateway (IANA registry).
    public static let badGateway = WebSocketCloseCode(rawValue: 1014)
    /// 1015: reserved, never sent: the TLS handshake failed.
    public static let tlsHandshakeFailure = WebSocketCloseCode(rawValue: 1015)

    /// Whether the code may appear in a Close frame on the wire, sent or received.
    ///
    /// 1000-1003 and 1007-1014 (RFC 6455 §7.4.1 and the IANA registry), and 3000-4999 (libraries,
    /// frameworks and applications, §7.4.2). Everything else is invalid: below 1000 "not used",
    /// 1004 reserved, 1005/1006/1015 "MUST NOT be set as a status code in a Close control frame",
    /// 1016-2999 reserved for future revisions, 5000 and up undefined.
    public var isValidOnWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String { String(rawValue) }
}
