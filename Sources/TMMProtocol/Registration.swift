import ByteCoding

/// Registration and port requests from client apps (§3.2 iOS URL schemes, §3.3 Windows URIs), and
/// the reply URLs the daemon opens. Pure: text in, text out.

/// `registrationResult` values (§3.1).
public enum RegistrationResult: String, Sendable, Equatable, CaseIterable {
    case ok = "OK"
    case unauthorized = "Unauthorized"
    case noNetwork = "NoNetwork"
}

/// Who may register: a fixed allowlist of Application IDs (the default) or any well-formed GUID.
public enum RegistrationPolicy: Sendable, Equatable {
    case allowlist(Set<GUID>)
    case open

    /// `OK` when `applicationID` may register, else `Unauthorized` (always for the nil UUID).
    public func evaluate(_ applicationID: GUID) -> RegistrationResult {
        switch self {
        case _ where applicationID.isNil: .unauthorized
        case .open: .ok
        case .allowlist(let ids): ids.contains(applicationID) ? .ok : .unauthorized
        }
    }
}

/// The platform form a request came in (and its reply goes out) in.
public enum RegistrationPlatform: String, Sendable, Equatable {
    /// `tmmregister://?<base64 JSON>`, reply `<returl>?<base64 JSON>`.
    case iOS
    /// `trimblemobilemanager://request/<name>?applicationId=..&callback=..`, reply `<callback>?id=..`.
    case windows
}

/// A parsed request.
public struct RegistrationRequest: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// `tmmregister` / `tmmRegister`: register an Application ID and reply the ports.
        case register(GUID)
        /// `tmmsocketserverport` / `tmmSocketServerPort`: reply the ports. The Application ID is
        /// optional; when present it must be a GUID.
        case socketServerPort(GUID?)
        /// A Windows request TMM knows but a bridge without a user interface cannot serve
        /// (`tmmOpenToReceiverSelection`, `tmmLogin`, ...; §3.3 "Other Windows requests"), named
        /// as sent. Answered at once with `status=error`: the MAUI sample waits for a callback
        /// without a time-out.
        case unsupported(name: String)
    }

    public var platform: RegistrationPlatform
    public var kind: Kind
    /// Where the reply goes: iOS `returl`/`returnurl`, Windows `callback` (decoded).
    public var returnURL: String

    public init(platform: RegistrationPlatform, kind: Kind, returnURL: String) {
        self.platform = platform
        self.kind = kind
        self.returnURL = returnURL
    }

    /// The Windows request name, also the reply's `id`.
    public var windowsRequestName: String {
        switch kind {
        case .register: "tmmRegister"
        case .socketServerPort: "tmmSocketServerPort"
        case .unsupported(let name): name
        }
    }
}

/// Why a request URL was refused: one case per broken rule. Nothing is registered on any of them.
public enum RegistrationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No `scheme://` prefix (or a scheme with characters RFC 3986 does not allow).
    case notAURL
    /// A scheme that is neither an iOS registration scheme nor `trimblemobilemanager`.
    case unknownScheme(String)
    /// A Windows URI whose host is not `request`, or a request this daemon does not answer.
    case unknownRequest(String)
    /// No query (or an empty one) where the request needs one.
    case missingQuery
    /// The iOS query is not Base64.
    case badBase64
    /// The decoded iOS payload is not UTF-8.
    case payloadNotUTF8
    /// The iOS payload is not a JSON object (reason and byte offset).
    case badJSON(String, offset: Int)
    /// A member that must be a string is not.
    case notAString(String)
    /// The Windows query has a broken `%` escape, or a value that is not UTF-8 once decoded.
    case badPercentEncoding(String)
    /// A Windows query parameter appears twice.
    case duplicateParameter(String)
    /// No `application_id` / `applicationId` (or an empty one) where it is required.
    case missingApplicationID
    /// The Application ID is not an 8-4-4-4-12 hex GUID.
    case badApplicationID(String)
    /// The Application ID is the nil UUID (`GUID.isNil`).
    case nilApplicationID
    /// No `returl`/`returnurl` (iOS) or `callback` (Windows), or an empty one.
    case missingReturnURL
    /// The return URL has no `scheme:` prefix.
    case returnURLWithoutScheme(String)
    /// The return URL holds spaces, control characters or non-ASCII bytes (it would be handed to
    /// `xdg-open` as is).
    case returnURLInvalidCharacters(String)
    /// The return URL's scheme names a file, a script, a network share or another system
    /// handler rather than an app (the reply is handed to `xdg-open`, which would act on it).
    case returnURLSchemeRefused(scheme: String, url: String)

    public var description: String {
        switch self {
        case .notAURL: "not a URL: expected scheme://..."
        case .unknownScheme(let s):
            "unknown scheme \"\(s)\": expected tmmregister, tmmsocketserverport or trimblemobilemanager"
        case .unknownRequest(let r):
            "unknown request \"\(r)\": expected request/tmmRegister or request/tmmSocketServerPort"
        case .missingQuery:
            "the URL has no query: expected ?<base64 JSON> (iOS) or ?applicationId=..&callback=.. (Windows)"
        case .badBase64: "the query is not Base64"
        case .payloadNotUTF8: "the Base64 payload is not UTF-8 text"
        case .badJSON(let reason, let offset): "the Base64 payload is not a JSON object: \(reason) at byte \(offset)"
        case .notAString(let key): "\"\(key)\" must be a string"
        case .badPercentEncoding(let name): "query parameter \"\(name)\" has a broken %-escape or is not UTF-8"
        case .duplicateParameter(let name): "query parameter \"\(name)\" appears more than once"
        case .missingApplicationID: "no application id (application_id on iOS, applicationId on Windows)"
        case .badApplicationID(let id): "application id \"\(id)\" is not a GUID (8-4-4-4-12 hex digits)"
        case .nilApplicationID: GUID.nilRefusal
        case .missingReturnURL: "no return URL (returl or returnurl on iOS, callback on Windows)"
        case .returnURLWithoutScheme(let url): "return URL \"\(url)\" has no scheme (expected e.g. myapp://response)"
        case .returnURLInvalidCharacters(let url):
            "return URL \"\(url)\" contains spaces, control or non-ASCII characters"
        case .returnURLSchemeRefused(let scheme, let url):
            "return URL \"\(url)\" is refused: \"\(scheme):\" is not an app's scheme "
                + "(expected the app's own scheme, e.g. myapp://response, or http(s) for a web app)"
        }
    }
}

public enum RegistrationURL {
    /// iOS schemes this module answers (compared case-insensitively).
    public static let iOSRegisterScheme = "tmmregister"
    public static let iOSSocketServerPortScheme = "tmmsocketserverport"
    /// The Windows scheme (compared case-insensitively; samples write `trimbleMobileManager`).
    public static let windowsScheme = "trimblemobilemanager"

    // MARK: Parsing

    /// Parses any supported request URL, dispatching on the scheme.
    public static func parse(_ url: String) throws(RegistrationError) -> RegistrationRequest {
        let (scheme, rest) = try splitScheme(url)
        switch scheme {
        case iOSRegisterScheme, iOSSocketServerPortScheme: return try parseIOS(scheme: scheme, rest: rest)
        case windowsScheme: return try parseWindows(rest: rest)
        default: throw .unknownScheme(scheme)
        }
    }

    /// Parses an iOS request (`tmmregister://...` or `tmmsocketserverport://...`).
    public static func parseIOS(_ url: String) throws(RegistrationError) -> RegistrationRequest {
        let (scheme, rest) = try splitScheme(url)
        guard scheme == iOSRegisterScheme || scheme == iOSSocketServerPortScheme else { throw .unknownScheme(scheme) }
        return try parseIOS(scheme: scheme, rest: rest)
    }

    /// Parses a Windows request (`trimblemobilemanager://request/...`).
    public static func parseWindows(_ url: String) throws(RegistrationError) -> RegistrationRequest {
        let (scheme, rest) = try splitScheme(url)
        guard scheme == windowsScheme else { throw .unknownScheme(scheme) }
        return try parseWindows(rest: rest)
    }

    /// The lower-cased scheme and what follows `://`.
    static func splitScheme(_ url: String) throws(RegistrationError) -> (String, Substring) {
        guard let colon = url.utf8.firstIndex(of: UInt8(ascii: ":")) else { throw .notAURL }
        let scheme = url[..<colon]
        guard ASCII.isScheme(scheme.utf8) else { throw .notAURL }
        let afterColon = url[colon...].dropFirst()
        guard afterColon.hasPrefix("//") else { throw .notAURL }
        return (ASCII.lowercased(scheme), afterColon.dropFirst(2))
    }

    /// Splits `authority/path?query#fragment` into the part before `?` and the query (nil without `?`).
    /// The fragment is dropped.
    static func splitQuery(_ rest: Substring) -> (Substring, Substring?) {
        var body = rest
        if let hash = body.utf8.firstIndex(of: UInt8(ascii: "#")) { body = body[..<hash] }
        guard let mark = body.utf8.firstIndex(of: UInt8(ascii: "?")) else { return (body, nil) }
        return (body[..<mark], body[mark...].dropFirst())
    }

    static func parseIOS(scheme: String, rest: Substring) throws(RegistrationError) -> RegistrationRequest {
        let (_, maybeQuery) = splitQuery(rest)
        guard var query = maybeQuery, !query.isEmpty else { throw .missingQuery }
        // Some callers percent-encode the Base64 ('=' as %3D, '+' as %2B): '%' is not Base64, so
        // decoding once first is unambiguous.
        if query.utf8.contains(UInt8(ascii: "%")) {
            guard let decoded = PercentEncoding.decode(query) else { throw .badBase64 }
            query = Substring(decoded)
        }
        guard let payload = Base64.decode(query, options: .lenient) else { throw .badBase64 }
        guard let text = String(validating: payload, as: UTF8.self) else { throw .payloadNotUTF8 }
        let object: RegistrationJSONObject
        do {
            object = try RegistrationJSONObject.parse(text)
        } catch {
            throw .badJSON(error.reason, offset: error.offset)
        }
        func string(_ key: String) throws(RegistrationError) -> String? {
            if object.otherKeys.contains(key) { throw .notAString(key) }
            return object.strings[key]
        }
        let id = try string("application_id")
        let returl = try string("returl")
        let returnurl = try string("returnurl")
        let returnURL = try validateReturnURL(returl ?? returnurl)
        if scheme == iOSRegisterScheme {
            return RegistrationRequest(platform: .iOS, kind: .register(try requireGUID(id)), returnURL: returnURL)
        }
        return RegistrationRequest(platform: .iOS, kind: .socketServerPort(try optionalGUID(id)), returnURL: returnURL)
    }

    static func parseWindows(rest: Substring) throws(RegistrationError) -> RegistrationRequest {
        let (target, maybeQuery) = splitQuery(rest)
        // target = "request/<name>" (a trailing slash tolerated).
        var path = target
        if path.hasSuffix("/") { path = path.dropLast() }
        let parts = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, ASCII.lowercased(parts[0]) == "request" else { throw .unknownRequest(String(target)) }
        let name = ASCII.lowercased(parts[1])
        let isRegister: Bool
        switch name {
        case "tmmregister": isRegister = true
        case "tmmsocketserverport": isRegister = false
        default:
            // Only a name a Windows app could send gets a callback; anything else is refused.
            guard parts[1].utf8.count <= 64, parts[1].utf8.allSatisfy(ASCII.isAlphanumeric) else {
                throw .unknownRequest(String(parts[1]))
            }
            isRegister = false
        }
        guard let query = maybeQuery, !query.isEmpty else { throw .missingQuery }
        var applicationID: String?
        var callback: String?
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let keyValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = ASCII.lowercased(keyValue[0])
            let raw = keyValue.count == 2 ? keyValue[1] : Substring("")
            switch key {
            case "applicationid":
                guard applicationID == nil else { throw .duplicateParameter("applicationId") }
                guard let value = PercentEncoding.decode(raw) else { throw .badPercentEncoding("applicationId") }
                applicationID = value
            case "callback":
                guard callback == nil else { throw .duplicateParameter("callback") }
                guard let value = PercentEncoding.decode(raw) else { throw .badPercentEncoding("callback") }
                callback = value
            default:
                continue  // unknown parameters are ignored
            }
        }
        let returnURL = try validateReturnURL(callback)
        if name != "tmmregister" && name != "tmmsocketserverport" {
            return RegistrationRequest(
                platform: .windows, kind: .unsupported(name: String(parts[1])), returnURL: returnURL)
        }
        if isRegister {
            return RegistrationRequest(
                platform: .windows, kind: .register(try requireGUID(applicationID)), returnURL: returnURL)
        }
        return RegistrationRequest(
            platform: .windows, kind: .socketServerPort(try optionalGUID(applicationID)),
            returnURL: returnURL)
    }

    static func requireGUID(_ text: String?) throws(RegistrationError) -> GUID {
        guard let text, !text.isEmpty else { throw .missingApplicationID }
        guard let guid = GUID(text) else { throw .badApplicationID(text) }
        guard !guid.isNil else { throw .nilApplicationID }
        return guid
    }

    static func optionalGUID(_ text: String?) throws(RegistrationError) -> GUID? {
        guard let text, !text.isEmpty else { return nil }
        guard let guid = GUID(text) else { throw .badApplicationID(text) }
        guard !guid.isNil else { throw .nilApplicationID }
        return guid
    }

    static func validateReturnURL(_ url: String?) throws(RegistrationError) -> String {
        guard let url, !url.isEmpty else { throw .missingReturnURL }
        for c in url.utf8 where c <= 0x20 || c >= 0x7F { throw .returnURLInvalidCharacters(url) }
        guard let colon = url.utf8.firstIndex(of: UInt8(ascii: ":")), ASCII.isScheme(url[..<colon].utf8) else {
            throw .returnURLWithoutScheme(url)
        }
        let scheme = ASCII.lowercased(url[..<colon])
        guard !refusedReturnSchemes.contains(scheme) else { throw .returnURLSchemeRefused(scheme: scheme, url: url) }
        return url
    }

    /// Schemes a return URL may not have. The reply goes to `xdg-open`, so a return URL is only
    /// ever an app's own custom scheme (or `http`/`https`, where a web app registers): never a
    /// local file or share (`xdg-open` would open or run it), a script or inline document a
    /// browser would evaluate, another system handler, or one of this bridge's own request
    /// schemes (a reply would loop back as a new request). Compared lower-cased.
    static let refusedReturnSchemes: Set<String> = [
        // Local files and network shares.
        "file", "smb", "cifs", "nfs", "afp", "ftp", "ftps", "sftp", "webdav", "davs", "dav",
        // Script and inline content.
        "javascript", "vbscript", "data", "blob", "about", "view-source", "jar", "filesystem",
        // Other system handlers that act on the URL rather than return it to an app.
        "ssh", "telnet", "ldap", "ldaps", "mailto", "tel", "sms", "ms-settings", "search-ms", "ms-msdt",
        // The requests this bridge answers.
        iOSRegisterScheme, iOSSocketServerPortScheme, windowsScheme,
    ]

    // MARK: Replies

    /// The iOS Register reply: `<returl>?<Base64 JSON>` with `registrationResult` and the six
    /// ports as JSON strings in the §8.1 order, whatever the result: the 2025 Swift sample
    /// force-unwraps `apiPort` before it looks at the result, so a reply without it crashes the
    /// app; newer clients ignore the ports unless the result is `OK`.
    public static func iOSRegisterReply(returnURL: String, result: RegistrationResult, ports: PortAssignment) -> String
    {
        var writer = JSONWriter(reservingCapacity: 256)
        writer.beginObject()
        writer.field("registrationResult", string: result.rawValue)
        writePortStrings(ports, to: &writer)
        writer.endObject()
        return returnURL + "?" + String(decoding: Base64.encodeToBytes(writer.span), as: UTF8.self)
    }

    /// The iOS `tmmsocketserverport` reply: `<returl>?<Base64 JSON>` with the six ports as strings.
    public static func iOSSocketServerPortReply(returnURL: String, ports: PortAssignment) -> String {
        var writer = JSONWriter(reservingCapacity: 256)
        writer.beginObject()
        writePortStrings(ports, to: &writer)
        writer.endObject()
        return returnURL + "?" + String(decoding: Base64.encodeToBytes(writer.span), as: UTF8.self)
    }

    static func writePortStrings(_ ports: PortAssignment, to writer: inout JSONWriter) {
        for server in TMMServer.iOSOrder {
            writer.key(server.registrationKey)
            writer.beginString()
            writer.appendStringDigits(UInt64(ports[server]), minimumDigits: 1)
            writer.endString()
        }
    }

    /// The message sent with a refused Windows registration.
    public static func windowsMessage(for result: RegistrationResult) -> String {
        switch result {
        case .ok: ""
        case .unauthorized: "Application ID not recognised"
        case .noNetwork: "No network to verify the Application ID"
        }
    }

    /// The Windows Register reply (§8.2): `<callback>?id=tmmRegister&status=success|error&message=..
    /// &registrationResult=..` and, when the result is `OK`, the six ports. Values percent-encoded.
    public static func windowsRegisterReply(
        callback: String, result: RegistrationResult, ports: PortAssignment
    ) -> String {
        var query = "id=tmmRegister&status=" + (result == .ok ? "success" : "error")
        query += "&message=" + PercentEncoding.encode(windowsMessage(for: result))
        query += "&registrationResult=" + PercentEncoding.encode(result.rawValue)
        if result == .ok { query += windowsPorts(ports) }
        return joinQuery(callback, query)
    }

    /// The Windows `tmmSocketServerPort` reply: `<callback>?id=tmmSocketServerPort&status=success&message=`
    /// and the six ports.
    public static func windowsSocketServerPortReply(callback: String, ports: PortAssignment) -> String {
        joinQuery(callback, "id=tmmSocketServerPort&status=success&message=" + windowsPorts(ports))
    }

    /// A Windows error reply for a request that could not be served: `status=error` and `message`.
    public static func windowsErrorReply(callback: String, requestName: String, message: String) -> String {
        joinQuery(
            callback,
            "id=" + PercentEncoding.encode(requestName) + "&status=error&message=" + PercentEncoding.encode(message))
    }

    static func windowsPorts(_ ports: PortAssignment) -> String {
        var text = ""
        for server in TMMServer.windowsOrder {
            text += "&" + server.registrationKey + "=" + String(ports[server])
        }
        return text
    }

    /// `callback?query`, or `callback&query` when the callback already has a query.
    static func joinQuery(_ callback: String, _ query: String) -> String {
        callback + (callback.utf8.contains(UInt8(ascii: "?")) ? "&" : "?") + query
    }

    /// The reply for `request` under `policy` (`result` of the policy for Register requests).
    public static func reply(
        to request: RegistrationRequest, policy: RegistrationPolicy, ports: PortAssignment
    ) -> String {
        switch (request.platform, request.kind) {
        case (.iOS, .register(let id)):
            iOSRegisterReply(returnURL: request.returnURL, result: policy.evaluate(id), ports: ports)
        case (.iOS, .socketServerPort):
            iOSSocketServerPortReply(returnURL: request.returnURL, ports: ports)
        case (.windows, .register(let id)):
            windowsRegisterReply(callback: request.returnURL, result: policy.evaluate(id), ports: ports)
        case (.windows, .socketServerPort):
            windowsSocketServerPortReply(callback: request.returnURL, ports: ports)
        case (.windows, .unsupported(let name)):
            windowsErrorReply(callback: request.returnURL, requestName: name, message: unsupportedMessage(name))
        case (.iOS, .unsupported(let name)):
            // Not produced by the iOS parser (its schemes name their request); answered alike.
            request.returnURL + "?" + Base64.encode("{\"error\":\"\(unsupportedMessage(name))\"}")
        }
    }

    /// Why a request without a user interface behind it is refused, for the app to show.
    public static func unsupportedMessage(_ name: String) -> String {
        "\(name) is not supported by tmm-bridge (a Linux bridge without TMM's screens); "
            + "only tmmRegister and tmmSocketServerPort are"
    }
}
