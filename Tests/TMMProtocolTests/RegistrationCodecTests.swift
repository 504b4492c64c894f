import ByteCoding
import Foundation
import TestSupport
import Testing
import TMMProtocol

/// Foundation's Base64, as the independent reference.
private func b64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
private func unpadded(_ text: String) -> String { String(text.reversed().drop { $0 == "=" }.reversed()) }

private let appID = "12345678-1234-1234-1234-123456789abc"
private let guid = GUID(appID)!

/// §8.1 request and reply.
private let iOSRequest81 = """
    tmmregister://?eyJhcHBsaWNhdGlvbl9pZCI6IjEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OWFiYyIsInJldHVybCI6\
    Im15YXBwOi8vcmVzcG9uc2UvcmVnaXN0ZXIifQ==
    """
private let iOSReply81 = """
    myapp://response/register?eyJyZWdpc3RyYXRpb25SZXN1bHQiOiJPSyIsImxvY2F0aW9uUG9ydCI6Ijk2MzUiLCJsb2NhdGlvblNl\
    Y3VyZVBvcnQiOiI5NjM2IiwiYXBpUG9ydCI6Ijk2MzciLCJhcGlTZWN1cmVQb3J0IjoiOTYzOCIsImxvY2F0aW9uVjJQb3J0IjoiOTYzOSIs\
    ImxvY2F0aW9uVjJTZWN1cmVQb3J0IjoiOTY0MCJ9
    """
/// §8.2 request and replies.
private let windowsRequest82 = """
    trimblemobilemanager://request/tmmRegister?applicationId=12345678-1234-1234-1234-123456789abc\
    &callback=myapp%3A%2F%2Fresponse%2FtmmRegister
    """
private let windowsReply82 = """
    myapp://response/tmmRegister?id=tmmRegister&status=success&message=&registrationResult=OK\
    &apiPort=9637&apiSecurePort=9638&locationPort=9635&locationSecurePort=9636\
    &locationV2Port=9639&locationV2SecurePort=9640
    """
private let windowsFailure82 = """
    myapp://response/tmmRegister?id=tmmRegister&status=error&message=Application%20ID%20not%20recognised\
    &registrationResult=Unauthorized
    """

@Suite("Percent-encoding", .tags(.unit))
struct RegistrationEncodingTests {
    @Test func percentEncoding() {
        #expect(PercentEncoding.encode("Application ID not recognised") == "Application%20ID%20not%20recognised")
        #expect(PercentEncoding.encode("a-b_c.d~e") == "a-b_c.d~e")
        #expect(PercentEncoding.encode("myapp://x?y=1&z") == "myapp%3A%2F%2Fx%3Fy%3D1%26z")
        #expect(PercentEncoding.encode("é") == "%C3%A9")
        #expect(PercentEncoding.decode("myapp%3A%2F%2Fresponse%2fx") == "myapp://response/x")
        #expect(PercentEncoding.decode("a+b") == "a+b")
        #expect(PercentEncoding.decode("%") == nil)
        #expect(PercentEncoding.decode("%4") == nil)
        #expect(PercentEncoding.decode("%zz") == nil)
        #expect(PercentEncoding.decode("%FF") == nil)  // not UTF-8
        for text in ["", "hello world", "ü&=?%/", "myapp://response/tmmRegister"] {
            #expect(PercentEncoding.decode(PercentEncoding.encode(text)) == text)
        }
    }

    @Test(arguments: [
        ("12345678-1234-1234-1234-123456789abc", "12345678-1234-1234-1234-123456789abc"),
        ("12345678-1234-1234-1234-123456789ABC", "12345678-1234-1234-1234-123456789abc"),
        ("ABCDEFAB-CDEF-ABCD-EFAB-CDEFABCDEFAB", "abcdefab-cdef-abcd-efab-cdefabcdefab"),
    ])
    func guidParses(text: String, canonical: String) {
        #expect(GUID(text)?.canonical == canonical)
    }

    @Test(arguments: [
        "", "12345678123412341234123456789abc", "{12345678-1234-1234-1234-123456789abc}",
        "12345678-1234-1234-1234-123456789ab", "12345678-1234-1234-1234-123456789abcd",
        "12345678-1234-1234-1234_123456789abc", "1234567g-1234-1234-1234-123456789abc",
        " 2345678-1234-1234-1234-123456789abc", "12345678-1234-1234-12341123456789abc-",
    ])
    func guidRejects(text: String) {
        #expect(GUID(text) == nil)
    }

    @Test func guidEquality() {
        #expect(GUID("12345678-1234-1234-1234-123456789ABC") == guid)
        #expect(Set([GUID("12345678-1234-1234-1234-123456789ABC")!, guid]).count == 1)
    }
}

@Suite("Registration URLs", .tags(.unit))
struct RegistrationURLTests {
    // MARK: Accepted requests

    struct Accepted: CustomTestStringConvertible, Sendable {
        var name: String
        var url: String
        var expected: RegistrationRequest
        var testDescription: String { name }
    }

    static let accepted: [Accepted] = [
        Accepted(
            name: "§8.1 iOS", url: iOSRequest81,
            expected: .init(platform: .iOS, kind: .register(guid), returnURL: "myapp://response/register")),
        Accepted(
            name: "iOS without padding", url: unpadded(iOSRequest81),
            expected: .init(platform: .iOS, kind: .register(guid), returnURL: "myapp://response/register")),
        Accepted(
            name: "iOS authority and path",
            url: "tmmregister://trimble.tmm.iOS/register?"
                + b64(
                    #"{"application_id":"12345678-1234-1234-1234-123456789ABC","#
                        + #""returl":"tmmapiossample://response/register"}"#
                ),
            expected: .init(platform: .iOS, kind: .register(guid), returnURL: "tmmapiossample://response/register")),
        Accepted(
            name: "iOS unquoted keys (Trimble doc form)",
            url: "tmmregister://?"
                + b64(
                    #"{application_id:"12345678-1234-1234-1234-123456789abc",returl:"myapp://response/register"}"#),
            expected: .init(platform: .iOS, kind: .register(guid), returnURL: "myapp://response/register")),
        Accepted(
            name: "iOS returnurl spelling, spaces, escapes",
            url: "TMMRegister://?"
                + b64(
                    " { \"returnurl\" : \"myapp:\\/\\/response\\u002Fregister\" , "
                        + "\"application_id\" : \"12345678-1234-1234-1234-123456789abc\" } "
                ),
            expected: .init(platform: .iOS, kind: .register(guid), returnURL: "myapp://response/register")),
        Accepted(
            name: "iOS extra members of other types",
            url: "tmmregister://?"
                + b64(
                    #"{"application_id":"12345678-1234-1234-1234-123456789abc","returl":"myapp://r","#
                        + #""v":2,"x":[1,{"a":null}],"t":true}"#
                ),
            expected: .init(platform: .iOS, kind: .register(guid), returnURL: "myapp://r")),
        Accepted(
            name: "iOS percent-encoded Base64",
            url: "tmmregister://?"
                + b64(
                    #"{"application_id":"12345678-1234-1234-1234-123456789abc","returl":"myapp://r"}"#
                ).replacingOccurrences(of: "=", with: "%3D"),
            expected: .init(platform: .iOS, kind: .register(guid), returnURL: "myapp://r")),
        Accepted(
            name: "iOS socket server port", url: "tmmsocketserverport://?" + b64(#"{"returl":"myapp://ports"}"#),
            expected: .init(platform: .iOS, kind: .socketServerPort(nil), returnURL: "myapp://ports")),
        Accepted(
            name: "iOS socket server port with id",
            url: "tmmsocketserverport://?"
                + b64(
                    #"{"application_id":"12345678-1234-1234-1234-123456789abc","returl":"myapp://ports"}"#),
            expected: .init(platform: .iOS, kind: .socketServerPort(guid), returnURL: "myapp://ports")),
        Accepted(
            name: "§8.2 Windows", url: windowsRequest82,
            expected: .init(platform: .windows, kind: .register(guid), returnURL: "myapp://response/tmmRegister")),
        Accepted(
            name: "Windows MAUI sample (raw callback, order swapped, camel scheme)",
            url: "trimbleMobileManager://request/tmmRegister?callback=tmmapisample://response"
                + "&applicationId=12345678-1234-1234-1234-123456789ABC",
            expected: .init(platform: .windows, kind: .register(guid), returnURL: "tmmapisample://response")),
        Accepted(
            name: "Windows unknown parameters ignored, trailing slash",
            url: "TRIMBLEMOBILEMANAGER://Request/TMMREGISTER/?x=1&applicationId=12345678-1234-1234-1234-123456789abc"
                + "&&callback=my-custom-scheme%3A%2F%2Fdone",
            expected: .init(platform: .windows, kind: .register(guid), returnURL: "my-custom-scheme://done")),
        Accepted(
            name: "Windows socket server port",
            url: "trimblemobilemanager://request/tmmSocketServerPort?callback=myapp%3A%2F%2Fports",
            expected: .init(platform: .windows, kind: .socketServerPort(nil), returnURL: "myapp://ports")),
        Accepted(
            name: "web app's https return URL",
            url: "tmmregister://?"
                + b64(
                    #"{"application_id":"12345678-1234-1234-1234-123456789abc","returl":"https://app.example/tmm"}"#),
            expected: .init(platform: .iOS, kind: .register(guid), returnURL: "https://app.example/tmm")),
        Accepted(
            name: "a custom scheme that starts like a refused one",
            url: "trimblemobilemanager://request/tmmSocketServerPort?callback=filemanager-app://ports",
            expected: .init(platform: .windows, kind: .socketServerPort(nil), returnURL: "filemanager-app://ports")),
    ]

    @Test(arguments: accepted)
    func accepts(_ row: Accepted) throws {
        #expect(try RegistrationURL.parse(row.url) == row.expected)
        switch row.expected.platform {
        case .iOS: #expect(try RegistrationURL.parseIOS(row.url) == row.expected)
        case .windows: #expect(try RegistrationURL.parseWindows(row.url) == row.expected)
        }
    }

    // MARK: Refused requests, one per broken rule

    struct Refused: CustomTestStringConvertible, Sendable {
        var name: String
        var url: String
        var error: RegistrationError
        var testDescription: String { name }
    }

    static let refused: [Refused] = [
        Refused(name: "not a URL", url: "hello", error: .notAURL),
        Refused(name: "empty", url: "", error: .notAURL),
        Refused(name: "no //", url: "tmmregister:?abc", error: .notAURL),
        Refused(name: "bad scheme characters", url: "tmm register://?x", error: .notAURL),
        Refused(name: "unknown scheme", url: "https://example.com/?x", error: .unknownScheme("https")),
        Refused(
            name: "iOS scheme the daemon does not answer", url: "tmmlogin://?e30=", error: .unknownScheme("tmmlogin")),
        Refused(
            name: "Windows request name that is not a name",
            url: "trimblemobilemanager://request/tmm%20Login?callback=a://b",
            error: .unknownRequest("tmm%20Login")),
        Refused(
            name: "Windows request name with a path", url: "trimblemobilemanager://request/a/b?callback=a://b",
            error: .unknownRequest("a/b")),
        Refused(
            name: "unsupported Windows request without callback",
            url: "trimblemobilemanager://request/tmmLogin?applicationId=x",
            error: .missingReturnURL),
        Refused(
            name: "Windows host not request", url: "trimblemobilemanager://response/tmmRegister?callback=a://b",
            error: .unknownRequest("response/tmmRegister")),
        Refused(name: "iOS missing query", url: "tmmregister://", error: .missingQuery),
        Refused(name: "iOS empty query", url: "tmmregister://?", error: .missingQuery),
        Refused(name: "Windows missing query", url: "trimblemobilemanager://request/tmmRegister", error: .missingQuery),
        Refused(name: "bad Base64", url: "tmmregister://?not*base64", error: .badBase64),
        Refused(
            name: "bad Base64 length", url: "tmmregister://?eyJ", error: .badJSON("unterminated string", offset: 2)),
        Refused(name: "bad percent-escape in iOS query", url: "tmmregister://?e30%3", error: .badBase64),
        Refused(
            name: "payload not UTF-8", url: "tmmregister://?" + Data([0x7B, 0xFF, 0x7D]).base64EncodedString(),
            error: .payloadNotUTF8),
        Refused(
            name: "payload not JSON", url: "tmmregister://?" + b64("application_id=x"),
            error: .badJSON("expected a JSON object", offset: 0)),
        Refused(
            name: "payload JSON array", url: "tmmregister://?" + b64("[]"),
            error: .badJSON("expected a JSON object", offset: 0)),
        Refused(
            name: "trailing bytes", url: "tmmregister://?" + b64("{}x"),
            error: .badJSON("unexpected bytes after the object", offset: 2)),
        Refused(
            name: "duplicate JSON key", url: "tmmregister://?" + b64(#"{"returl":"a://b","returl":"c://d"}"#),
            error: .badJSON("duplicate key \"returl\"", offset: 26)),
        Refused(
            name: "application_id not a string",
            url: "tmmregister://?" + b64(#"{"application_id":12,"returl":"a://b"}"#),
            error: .notAString("application_id")),
        Refused(
            name: "iOS missing application id", url: "tmmregister://?" + b64(#"{"returl":"myapp://r"}"#),
            error: .missingApplicationID),
        Refused(
            name: "iOS empty application id",
            url: "tmmregister://?" + b64(#"{"application_id":"","returl":"myapp://r"}"#),
            error: .missingApplicationID),
        Refused(
            name: "iOS bad GUID", url: "tmmregister://?" + b64(#"{"application_id":"my-app","returl":"myapp://r"}"#),
            error: .badApplicationID("my-app")),
        Refused(
            name: "iOS missing returl",
            url: "tmmregister://?" + b64(#"{"application_id":"12345678-1234-1234-1234-123456789abc"}"#),
            error: .missingReturnURL),
        Refused(
            name: "iOS return URL without scheme",
            url: "tmmregister://?"
                + b64(#"{"application_id":"12345678-1234-1234-1234-123456789abc","returl":"response/register"}"#),
            error: .returnURLWithoutScheme("response/register")),
        Refused(
            name: "iOS return URL with a space",
            url: "tmmregister://?"
                + b64(#"{"application_id":"12345678-1234-1234-1234-123456789abc","returl":"my app://r"}"#),
            error: .returnURLInvalidCharacters("my app://r")),
        Refused(
            name: "iOS file: return URL",
            url: "tmmregister://?"
                + b64(#"{"application_id":"12345678-1234-1234-1234-123456789abc","returl":"file:///etc/passwd"}"#),
            error: .returnURLSchemeRefused(scheme: "file", url: "file:///etc/passwd")),
        Refused(
            name: "iOS FILE: return URL in capitals",
            url: "tmmregister://?"
                + b64(#"{"application_id":"12345678-1234-1234-1234-123456789abc","returl":"FILE:///tmp/x.desktop"}"#),
            error: .returnURLSchemeRefused(scheme: "file", url: "FILE:///tmp/x.desktop")),
        Refused(
            name: "iOS javascript: return URL",
            url: "tmmregister://?"
                + b64(#"{"application_id":"12345678-1234-1234-1234-123456789abc","returl":"javascript:alert(1)"}"#),
            error: .returnURLSchemeRefused(scheme: "javascript", url: "javascript:alert(1)")),
        Refused(
            name: "iOS data: return URL",
            url: "tmmregister://?"
                + b64(#"{"application_id":"12345678-1234-1234-1234-123456789abc","returl":"data:text/html,x"}"#),
            error: .returnURLSchemeRefused(scheme: "data", url: "data:text/html,x")),
        Refused(
            name: "iOS returnurl spelling, vbscript:",
            url: "tmmregister://?"
                + b64(#"{"application_id":"12345678-1234-1234-1234-123456789abc","returnurl":"vbscript:msgbox"}"#),
            error: .returnURLSchemeRefused(scheme: "vbscript", url: "vbscript:msgbox")),
        Refused(
            name: "port request with an smb: return URL",
            url: "tmmsocketserverport://?" + b64(#"{"returl":"smb://host/share"}"#),
            error: .returnURLSchemeRefused(scheme: "smb", url: "smb://host/share")),
        Refused(
            name: "Windows file: callback",
            url: "trimblemobilemanager://request/tmmRegister?applicationId=12345678-1234-1234-1234-123456789abc"
                + "&callback=file%3A%2F%2F%2Fetc%2Fpasswd",
            error: .returnURLSchemeRefused(scheme: "file", url: "file:///etc/passwd")),
        Refused(
            name: "Windows javascript: callback",
            url: "trimblemobilemanager://request/tmmSocketServerPort?callback=javascript:alert(1)",
            error: .returnURLSchemeRefused(scheme: "javascript", url: "javascript:alert(1)")),
        Refused(
            name: "return URL loops back to the bridge",
            url: "trimblemobilemanager://request/tmmSocketServerPort?callback=tmmregister://x",
            error: .returnURLSchemeRefused(scheme: "tmmregister", url: "tmmregister://x")),
        Refused(
            name: "Windows bad percent-escape",
            url: "trimblemobilemanager://request/tmmRegister?applicationId=x&callback=a%3",
            error: .badPercentEncoding("callback")),
        Refused(
            name: "Windows duplicate parameter",
            url: "trimblemobilemanager://request/tmmRegister?callback=a://b&callback=c://d"
                + "&applicationId=12345678-1234-1234-1234-123456789abc",
            error: .duplicateParameter("callback")),
        Refused(
            name: "Windows missing application id",
            url: "trimblemobilemanager://request/tmmRegister?callback=myapp://r",
            error: .missingApplicationID),
        Refused(
            name: "Windows bad GUID",
            url: "trimblemobilemanager://request/tmmRegister?applicationId=%7Bx%7D&callback=myapp://r",
            error: .badApplicationID("{x}")),
        Refused(
            name: "Windows missing callback",
            url: "trimblemobilemanager://request/tmmRegister?applicationId=12345678-1234-1234-1234-123456789abc",
            error: .missingReturnURL),
        Refused(
            name: "Windows empty callback",
            url: "trimblemobilemanager://request/tmmRegister?applicationId=12345678-1234-1234-1234-123456789abc"
                + "&callback=",
            error: .missingReturnURL),
        Refused(
            name: "Windows callback without scheme",
            url: "trimblemobilemanager://request/tmmRegister?applicationId=12345678-1234-1234-1234-123456789abc"
                + "&callback=%2Fresponse",
            error: .returnURLWithoutScheme("/response")),
        Refused(
            name: "iOS nil UUID",
            url: "tmmregister://?"
                + b64(#"{"application_id":"00000000-0000-0000-0000-000000000000","returl":"myapp://r"}"#),
            error: .nilApplicationID),
        Refused(
            name: "Windows nil UUID",
            url: "trimblemobilemanager://request/tmmRegister?applicationId=00000000-0000-0000-0000-000000000000"
                + "&callback=myapp://r",
            error: .nilApplicationID),
        Refused(
            name: "Windows socket server port with the nil UUID",
            url: "trimblemobilemanager://request/tmmSocketServerPort?applicationId=00000000-0000-0000-0000-000000000000"
                + "&callback=a://b",
            error: .nilApplicationID),
        Refused(
            name: "Windows socket server port bad id",
            url: "trimblemobilemanager://request/tmmSocketServerPort?applicationId=nope&callback=a://b",
            error: .badApplicationID("nope")),
    ]

    @Test(arguments: refused)
    func refuses(_ row: Refused) {
        #expect(throws: row.error) { try RegistrationURL.parse(row.url) }
        #expect(!row.error.description.isEmpty)
    }

    @Test func codecsRefuseEachOthersSchemes() {
        #expect(throws: RegistrationError.unknownScheme("trimblemobilemanager")) {
            try RegistrationURL.parseIOS(windowsRequest82)
        }
        #expect(throws: RegistrationError.unknownScheme("tmmregister")) {
            try RegistrationURL.parseWindows(iOSRequest81)
        }
    }

    // MARK: Replies

    @Test func iOSReplyIsTheDocumentExample() throws {
        let request = try RegistrationURL.parse(iOSRequest81)
        #expect(RegistrationURL.reply(to: request, policy: .open, ports: .defaults) == iOSReply81)
        #expect(RegistrationURL.reply(to: request, policy: .allowlist([guid]), ports: .defaults) == iOSReply81)
        #expect(
            RegistrationURL.iOSRegisterReply(returnURL: "myapp://response/register", result: .ok, ports: .defaults)
                == iOSReply81)
    }

    @Test func iOSRepliesDecode() throws {
        let unauthorized = RegistrationURL.iOSRegisterReply(
            returnURL: "myapp://r", result: .unauthorized, ports: .defaults)
        // The ports come with every result: the 2025 Swift sample force-unwraps apiPort.
        #expect(
            unauthorized == "myapp://r?"
                + b64(
                    #"{"registrationResult":"Unauthorized","locationPort":"9635","locationSecurePort":"9636","#
                        + #""apiPort":"9637","apiSecurePort":"9638","#
                        + #""locationV2Port":"9639","locationV2SecurePort":"9640"}"#
                ))
        let request = try RegistrationURL.parse(iOSRequest81)
        #expect(
            RegistrationURL.reply(to: request, policy: .allowlist([]), ports: .defaults) == "myapp://response/register?"
                + b64(
                    #"{"registrationResult":"Unauthorized","locationPort":"9635","locationSecurePort":"9636","#
                        + #""apiPort":"9637","apiSecurePort":"9638","#
                        + #""locationV2Port":"9639","locationV2SecurePort":"9640"}"#
                ))
        var ports = PortAssignment.defaults
        ports.api = 9650
        #expect(
            RegistrationURL.iOSSocketServerPortReply(returnURL: "myapp://p", ports: ports) == "myapp://p?"
                + b64(
                    #"{"locationPort":"9635","locationSecurePort":"9636","apiPort":"9650","apiSecurePort":"9638","#
                        + #""locationV2Port":"9639","locationV2SecurePort":"9640"}"#
                ))
    }

    /// The MAUI sample's `tmmOpenToReceiverSelection` (and TMM's other screens) get an error
    /// callback at once: the sample waits for one without a time-out.
    @Test func unsupportedWindowsRequestsGetAnErrorCallback() throws {
        let request = try RegistrationURL.parse(
            "trimbleMobileManager://request/tmmOpenToReceiverSelection?callback=tmmapisample://response")
        #expect(request.kind == .unsupported(name: "tmmOpenToReceiverSelection"))
        #expect(request.windowsRequestName == "tmmOpenToReceiverSelection")
        #expect(
            RegistrationURL.reply(to: request, policy: .open, ports: .defaults)
                == "tmmapisample://response?id=tmmOpenToReceiverSelection&status=error&message="
                + "tmmOpenToReceiverSelection%20is%20not%20supported%20by%20tmm-bridge%20"
                + "%28a%20Linux%20bridge%20without%20TMM%27s%20screens%29%3B%20"
                + "only%20tmmRegister%20and%20tmmSocketServerPort%20are"
        )
        let login = try RegistrationURL.parse(
            "trimblemobilemanager://request/tmmLogin?applicationId=12345678-1234-1234-1234-123456789abc"
                + "&callback=a%3A%2F%2Fb%3Fx%3D1"
        )
        #expect(
            RegistrationURL.reply(to: login, policy: .open, ports: .defaults).hasPrefix(
                "a://b?x=1&id=tmmLogin&status=error&message=tmmLogin%20is%20not"))
    }

    @Test func windowsReplyIsTheDocumentExample() throws {
        let request = try RegistrationURL.parse(windowsRequest82)
        #expect(RegistrationURL.reply(to: request, policy: .open, ports: .defaults) == windowsReply82)
        #expect(RegistrationURL.reply(to: request, policy: .allowlist([]), ports: .defaults) == windowsFailure82)
        #expect(
            RegistrationURL.reply(
                to: request, policy: .allowlist([GUID("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")!]),
                ports: .defaults) == windowsFailure82)
    }

    @Test func windowsOtherReplies() {
        #expect(
            RegistrationURL.windowsSocketServerPortReply(callback: "myapp://p", ports: .defaults)
                == """
                myapp://p?id=tmmSocketServerPort&status=success&message=&apiPort=9637&apiSecurePort=9638\
                &locationPort=9635&locationSecurePort=9636&locationV2Port=9639&locationV2SecurePort=9640
                """
        )
        #expect(
            RegistrationURL.windowsRegisterReply(callback: "myapp://r?x=1", result: .noNetwork, ports: .defaults)
                == """
                myapp://r?x=1&id=tmmRegister&status=error&message=No%20network%20to%20verify%20the%20Application%20ID\
                &registrationResult=NoNetwork
                """
        )
        #expect(
            RegistrationURL.windowsErrorReply(callback: "myapp://r", requestName: "tmmRegister", message: "bad id")
                == "myapp://r?id=tmmRegister&status=error&message=bad%20id")
    }

    @Test func policy() {
        let other = GUID("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")!
        #expect(RegistrationPolicy.open.evaluate(guid) == .ok)
        #expect(RegistrationPolicy.allowlist([guid]).evaluate(guid) == .ok)
        #expect(RegistrationPolicy.allowlist([GUID("12345678-1234-1234-1234-123456789ABC")!]).evaluate(guid) == .ok)
        #expect(RegistrationPolicy.allowlist([other]).evaluate(guid) == .unauthorized)
        #expect(RegistrationPolicy.allowlist([]).evaluate(guid) == .unauthorized)
        // The nil UUID is no application's, whatever the policy (or an old registry) says.
        let nilUUID = GUID("00000000-0000-0000-0000-000000000000")!
        #expect(nilUUID.isNil && !guid.isNil)
        #expect(RegistrationPolicy.open.evaluate(nilUUID) == .unauthorized)
        #expect(RegistrationPolicy.allowlist([nilUUID]).evaluate(nilUUID) == .unauthorized)
    }
}
