import ByteCoding
import HTTP1
import TMMProtocol

// The REST API (TMM-API.md §4.3), one row per path: the path, whether its calls need an access
// code, and for each method how its query or body is read and what it answers. Adding an endpoint
// is its row here (and whatever its answer writes); `RESTRouter.route` and `HTTPExchange` do the
// rest the same way for every row: 404 for no row, 405 with `Allow` for a method the row lacks,
// OPTIONS as the CORS preflight, HEAD as GET without the body, a reader's failure as a 400 after
// the access code is checked.

extension RESTRouter {
    static let routes: [RESTRoute] = dashboardRoutes + apiRoutes

    /// The operator dashboard's page (docs/dashboard.md): read-only, no access code (it shows
    /// nothing secret; a dashboard exposed beyond loopback asks for its own token on its socket).
    static let dashboardRoutes: [RESTRoute] = ["/", "/dashboard.css", "/dashboard.js"].map { path in
        RESTRoute(
            path, needsAuthentication: false,
            .get { host in
                host.dashboardFile(path).map(RESTAnswer.page) ?? .error(.notFound, message: "the dashboard is off")
            })
    }

    static let apiRoutes: [RESTRoute] = [
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
        // TMM's "Set configuration for LocationV2 broadcast", whose body Trimble has not published
        // (docs/protocol-choices.md): the V2 rate, for the running daemon, never above
        // max-location-rate. GET answers the configuration in force.
        RESTRoute(
            "/api/v1/positionStream/locationV2",
            .get { host in
                let broadcast = host.locationV2Broadcast
                return .json { writeLocationV2Broadcast(broadcast, to: &$0) }
            },
            .put(reading: locationV2Rate) { rate, host in
                var broadcast = host.locationV2Broadcast
                broadcast.requestedInterval = rate.interval
                return .json(then: [.setLocationV2Interval(rate.interval)]) {
                    writeLocationV2Broadcast(broadcast, to: &$0)
                }
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

    /// What a LocationV2 broadcast body asks: the interval between epochs (nanoseconds), nil to go
    /// back to `max-location-rate` alone.
    struct LocationV2Rate: Equatable, Sendable {
        var interval: Int64?
    }

    static let locationV2Expected =
        #"expected {"rate": hertz} or {"interval": milliseconds}, from 1 to 1000, or null for max-location-rate"#
    /// Member names (any case) that give the rate in hertz, and in milliseconds between epochs.
    static let locationV2HertzNames: Set<String> = ["rate", "frequency", "updaterate", "broadcastrate"]
    static let locationV2MillisecondNames: Set<String> = ["interval", "intervalms", "updateinterval"]

    /// A LocationV2 broadcast body (`parseLocationV2Rate`).
    static func locationV2Rate(_ request: HTTPRequest, in bytes: Span<UInt8>) -> Result<LocationV2Rate, BodyFailure> {
        JSONValue.object(request.bodyBytes(in: bytes), expected: locationV2Expected).flatMap(parseLocationV2Rate)
    }

    /// Exactly one rate member (`locationV2HertzNames` or `locationV2MillisecondNames`, any case):
    /// a number, or a string of digits (clients that send every setting as text), from 1 to 1000;
    /// or null to go back to `max-location-rate`. Other members are ignored, as in the other PUT
    /// bodies (TMM's own body may carry more).
    static func parseLocationV2Rate(_ members: [String: JSONValue]) -> Result<LocationV2Rate, BodyFailure> {
        var found: (name: String, value: JSONValue, isHertz: Bool)?
        for (name, value) in members {
            let folded = ASCII.lowercased(name)
            let isHertz = locationV2HertzNames.contains(folded)
            guard isHertz || locationV2MillisecondNames.contains(folded) else { continue }
            if let found {
                let both = [found.name, name].sorted().joined(separator: " and ")
                return .failure(BodyFailure(message: "the rate is given twice (\(both)): give one"))
            }
            found = (name, value, isHertz)
        }
        guard let found else { return .failure(BodyFailure(message: "no rate in the body: \(locationV2Expected)")) }
        let unit = found.isHertz ? "hertz" : "milliseconds"
        let invalid = BodyFailure(message: "\(found.name) must be a number of \(unit) from 1 to 1000, or null")
        let number: Double
        switch found.value {
        case .null:
            return .success(LocationV2Rate(interval: nil))
        case .number(let value):
            number = value
        case .string(let text):
            let digits = ASCII.trimmingBlanks(text)
            guard !digits.isEmpty, digits.utf8.allSatisfy({ ASCII.isDigit($0) || $0 == ASCII.dot }),
                let value = Double(digits)
            else { return .failure(invalid) }
            number = value
        default:
            return .failure(invalid)
        }
        guard number.isFinite, number >= 1, number <= 1000 else { return .failure(invalid) }
        let interval = found.isHertz ? 1e9 / number : number * 1e6
        return .success(LocationV2Rate(interval: Int64(interval.rounded())))
    }

    // MARK: - Answers

    /// `{"rate":10.0,"interval":100.0,"maximumRate":100.0,"requestedRate":10.0}`: the rate in force
    /// (hertz) and its interval (milliseconds), the cap `max-location-rate` sets, and what a client
    /// asked for (null when none did).
    static func writeLocationV2Broadcast(_ broadcast: LocationV2Broadcast, to writer: inout JSONWriter) {
        func hertz(_ interval: Int64) -> Double { 1e9 / Double(interval) }
        writer.beginObject()
        writer.field("rate", number: hertz(broadcast.minimumInterval), decimals: 3)
        writer.key("interval")
        writer.fixedPoint(scaled: broadcast.minimumInterval / 1000, decimals: 3)
        writer.field("maximumRate", number: hertz(broadcast.configuredMinimumInterval), decimals: 3)
        writer.field("requestedRate", number: broadcast.requestedInterval.map(hertz), decimals: 3)
        writer.endObject()
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
