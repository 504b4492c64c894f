import HTTP1
import TMMProtocol

// The REST API (TMM-API.md §4.3), one row per path: the path, whether its calls need an access
// code, and for each method how its query or body is read and what it answers. Adding an endpoint
// is its row here (and whatever its answer writes); `RESTRouter.route` and `HTTPExchange` do the
// rest the same way for every row: 404 for no row, 405 with `Allow` for a method the row lacks,
// OPTIONS as the CORS preflight, HEAD as GET without the body, a reader's failure as a 400 after
// the access code is checked.

extension RESTRouter {
    static let routes: [RESTRoute] = [
        // §4.2: clients fetch the key before they can make their first code.
        RESTRoute(
            "/api/v1/publicKey", needsAuthentication: false,
            .get { host in
                let key = host.accessCodeV2PublicKey
                return .json { RESTBodies.writePublicKey(n: key.n, e: key.e, to: &$0) }
            }),
        RESTRoute(
            "/api/v1/antenna",
            .get { host in .json { DeviceSettings.writeAntenna(host.deviceSettings.antenna, to: &$0) } },
            .put(reading: antennaMembers) { members, host in
                var settings = host.deviceSettings
                switch settings.antenna.updated(with: members) {
                case .success(let antenna):
                    settings.antenna = antenna
                    return .json(then: [.saveSettings(settings)]) {
                        DeviceSettings.writeAntenna(antenna, to: &$0)
                    }
                case .failure(let failure):
                    // Not reached: the reader checked the members against any settings.
                    return .error(.badRequest, message: failure.message)
                }
            }),
        RESTRoute(
            "/api/v1/correctionSource",
            .get { host in
                let (corrections, state) = (host.deviceSettings.corrections, host.correctionsState)
                return .json {
                    DeviceSettings.writeCorrections(corrections, includingPassword: false, state: state, to: &$0)
                }
            },
            .put(reading: correctionMembers) { members, host in
                var settings = host.deviceSettings
                switch settings.corrections.updated(with: members) {
                case .success(var corrections):
                    if let reason = corrections.ntripIncompleteReason { return .error(.badRequest, message: reason) }
                    corrections.wasSetByApp = true
                    settings.corrections = corrections
                    // The state before the change takes effect: the client restarts after this
                    // answer is queued (`correctionsState` says what it was doing until now).
                    return .json(then: [.saveSettings(settings)]) {
                        DeviceSettings.writeCorrections(corrections, includingPassword: false, state: nil, to: &$0)
                    }
                case .failure(let failure):
                    return .error(.badRequest, message: failure.message)  // not reached, as above
                }
            }),
        RESTRoute(
            "/api/v1/userInfo",
            .get { _ in .json { DeviceSettings.writeUserInfo(to: &$0) } }),
        RESTRoute(
            "/api/v1/receiver",
            .get { host in .json { RESTBodies.writeReceiverInfo(host.receiverInfo, to: &$0) } },
            // The gpsd commands run off the io thread: the reply waits for them (and, to
            // connect, for the receiver), bounded by receiver-connect-timeout.
            .put(reading: receiverConnection) { isConnected, _ in .afterReceiverCommand(connect: isConnected) }),
        RESTRoute(
            "/api/v1/positionStream",
            .get(reading: streamFormat) { format, host in
                .json { RESTBodies.writePositionStream(port: format.port(in: host.ports), to: &$0) }
            }),
        RESTRoute(
            "/api/v1/tmmInfo",
            .get { host in
                .json {
                    RESTBodies.writeTMMInfo(
                        version: host.version, ports: host.ports, receiver: host.receiverInfo,
                        to: &$0)
                }
            }),
        RESTRoute(
            "/api/v1/test/ping",
            .get { _ in .json { RESTBodies.writePong(to: &$0) } }),
    ]

    // MARK: - Readers: a request's query or body, checked

    /// `?format=locationV1|locationV2`.
    static func streamFormat(
        _ request: HTTPRequest, in bytes: Span<UInt8>
    ) -> Result<RESTBodies.StreamFormat, BodyFailure> {
        guard let value = request.head.queryValue("format", in: bytes) else {
            return .failure(BodyFailure(message: "positionStream needs ?format=locationV1 or ?format=locationV2"))
        }
        guard let format = RESTBodies.StreamFormat(queryValue: value) else {
            return .failure(BodyFailure(message: "format must be locationV1 or locationV2, not '\(value)'"))
        }
        return .success(format)
    }

    /// `{"isConnected": true|false}` (`parseReceiverBody`).
    static func receiverConnection(_ request: HTTPRequest, in bytes: Span<UInt8>) -> Result<Bool, BodyFailure> {
        parseReceiverBody(request.bodyBytes(in: bytes))
    }

    /// The members of an antenna body, checked: applying them to any settings succeeds.
    static func antennaMembers(
        _ request: HTTPRequest, in bytes: Span<UInt8>
    ) -> Result<[String: JSONValue], BodyFailure> {
        JSONValue.object(request.bodyBytes(in: bytes), expected: AntennaSettings.expected).flatMap { members in
            AntennaSettings().updated(with: members).map { _ in members }
        }
    }

    /// The members of a correction-source body, checked: applying them to any settings succeeds.
    static func correctionMembers(
        _ request: HTTPRequest, in bytes: Span<UInt8>
    ) -> Result<[String: JSONValue], BodyFailure> {
        JSONValue.object(request.bodyBytes(in: bytes), expected: CorrectionSettings.expected).flatMap { members in
            CorrectionSettings().updated(with: members).map { _ in members }
        }
    }
}
