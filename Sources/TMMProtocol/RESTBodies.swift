import ByteCoding

/// `ReceiverInfo` (§4.3): what `GET/PUT /api/v1/receiver` returns. Field names are case-sensitive.
public struct ReceiverInfo: Sendable, Equatable {
    public var isReceiverConfigured: Bool
    public var isConnected: Bool
    public var bluetoothName: String?
    public var bluetoothAddress: String?
    public var receiverBrand: String?
    public var receiverModel: String?
    public var receiverSerialNumber: String?
    public var isSigninRequired: Bool
    public var isSignedIn: Bool

    public init(
        isReceiverConfigured: Bool = false, isConnected: Bool = false, bluetoothName: String? = nil,
        bluetoothAddress: String? = nil, receiverBrand: String? = nil, receiverModel: String? = nil,
        receiverSerialNumber: String? = nil, isSigninRequired: Bool = false, isSignedIn: Bool = false
    ) {
        self.isReceiverConfigured = isReceiverConfigured
        self.isConnected = isConnected
        self.bluetoothName = bluetoothName
        self.bluetoothAddress = bluetoothAddress
        self.receiverBrand = receiverBrand
        self.receiverModel = receiverModel
        self.receiverSerialNumber = receiverSerialNumber
        self.isSigninRequired = isSigninRequired
        self.isSignedIn = isSignedIn
    }

    /// No receiver configured: everything false or null.
    public static let none = ReceiverInfo()
}

/// The JSON bodies of the REST API (§4.3, §4.4), written with `JSONWriter` (compact, camelCase).
/// Each `write…` appends one complete value; the caller `reset()`s the writer between bodies.
public enum RESTBodies {
    /// Our version of `/api/v1/tmmInfo`'s schema (TMM's own is not documented).
    public static let tmmInfoSchemaVersion = 1

    /// `ReceiverInfo`, fields in the §8.4 order, unknown strings `null`.
    public static func writeReceiverInfo(_ info: ReceiverInfo, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("isReceiverConfigured", bool: info.isReceiverConfigured)
        writer.field("isConnected", bool: info.isConnected)
        writer.field("bluetoothName", string: info.bluetoothName)
        writer.field("bluetoothAddress", string: info.bluetoothAddress)
        writer.field("receiverBrand", string: info.receiverBrand)
        writer.field("receiverModel", string: info.receiverModel)
        writer.field("receiverSerialNumber", string: info.receiverSerialNumber)
        writer.field("isSigninRequired", bool: info.isSigninRequired)
        writer.field("isSignedIn", bool: info.isSignedIn)
        writer.endObject()
    }

    /// `publicKey`: the Access Code V2 key as an RSA JWK (RFC 7517), `{"kty":"RSA","n":…,"e":…}`,
    /// with `n` and `e` already unpadded base64url. Clients require `kty` RSA and read `n` and
    /// `e`; `use` and `alg` say what the key is for (encryption, RSA-OAEP-256) to those that look.
    public static func writePublicKey(n: String, e: String, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("kty", string: "RSA")
        writer.field("use", string: "enc")
        writer.field("alg", string: "RSA-OAEP-256")
        writer.field("n", string: n)
        writer.field("e", string: e)
        writer.endObject()
    }

    /// `positionStream`: `{"port":N}` with N a JSON number (.NET clients call `GetValue<int>()`).
    public static func writePositionStream(port: UInt16, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("port", integer: Int(port))
        writer.endObject()
    }

    /// The `positionStream` formats and the port each one reports (the plain ws port).
    public enum StreamFormat: String, Sendable, CaseIterable {
        case locationV1, locationV2

        /// Parses the `format` query value, case-insensitively; nil for anything else.
        public init?(queryValue: some StringProtocol) {
            switch ASCII.lowercased(queryValue) {
            case "locationv1": self = .locationV1
            case "locationv2": self = .locationV2
            default: return nil
            }
        }

        public func port(in ports: PortAssignment) -> UInt16 {
            switch self {
            case .locationV1: ports.location
            case .locationV2: ports.locationV2
            }
        }
    }

    /// `tmmInfo` (our schema, documented in docs/protocol-choices.md):
    /// `{"name":"tmm-bridge","version":"…","schemaVersion":1,"locationPort":9635,…,"locationV2SecurePort":9640,
    /// "receiver":{ReceiverInfo}}`; ports are JSON numbers, in the iOS Register order.
    public static func writeTMMInfo(
        version: String, ports: PortAssignment, receiver: ReceiverInfo,
        to writer: inout JSONWriter
    ) {
        writer.beginObject()
        writer.field("name", string: "tmm-bridge")
        writer.field("version", string: version)
        writer.field("schemaVersion", integer: tmmInfoSchemaVersion)
        for server in TMMServer.iOSOrder {
            writer.field(server.registrationKey, integer: Int(ports[server]))
        }
        writer.key("receiver")
        writeReceiverInfo(receiver, to: &writer)
        writer.endObject()
    }

    /// `test/ping`: `{"result":"pong"}`.
    public static func writePong(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("result", string: "pong")
        writer.endObject()
    }

    /// Error body `{"error":"…","Reason":"…"}` (§4.4): `error` for the web sample, `Reason` for old
    /// .NET clients; both carry the same text unless `reason` is given.
    public static func writeError(_ message: String, reason: String? = nil, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("error", string: message)
        writer.field("Reason", string: reason ?? message)
        writer.endObject()
    }

    /// A body as bytes, for callers that do not keep a writer.
    public static func bytes(capacity: Int = 512, _ body: (inout JSONWriter) -> Void) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: capacity)
        body(&writer)
        return writer.bytes
    }
}
