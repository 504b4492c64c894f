// URL authorities (`[USER[:PASSWORD]@]HOST[:PORT]`), the parser the ntrip:// and mqtt:// URLs share:
// a table of good ones with what they hold, one row per rule for bad ones (no message quotes the
// password), and the scheme splitter.
import ByteCoding
import TestSupport
import Testing

@Suite("URLAuthority", .tags(.unit))
struct URLAuthorityTests {
    static func parse(_ text: String, userMayHoldColon: Bool = true) throws(URLAuthorityError) -> URLAuthority {
        let bytes = Array(text.utf8)
        return try URLAuthority.parse(bytes[...], userMayHoldColon: userMayHoldColon)
    }

    @Test(arguments: [
        ("h", URLAuthority(host: "h")),
        ("broker.example.com:1883", URLAuthority(host: "broker.example.com", port: 1883)),
        ("u@h", URLAuthority(user: "u", host: "h")),
        ("u:@h", URLAuthority(user: "u", password: "", host: "h")),
        ("u:p@10.0.0.1:65535", URLAuthority(user: "u", password: "p", host: "10.0.0.1", port: 65535)),
        ("u:p@ss@h", URLAuthority(user: "u", password: "p@ss", host: "h")),
        ("me%40x.org:p%3Aw%2Fd%40@h:1", URLAuthority(user: "me@x.org", password: "p:w/d@", host: "h", port: 1)),
        ("a%3Ab@h", URLAuthority(user: "a:b", host: "h")),
        ("%C3%A9t%C3%A9@h", URLAuthority(user: "été", host: "h")),
        ("[::1]", URLAuthority(host: "::1")),
        ("[2001:db8::7]:8883", URLAuthority(host: "2001:db8::7", port: 8883)),
        ("u@[::ffff:192.0.2.1]:9", URLAuthority(user: "u", host: "::ffff:192.0.2.1", port: 9)),
        ("my_host.local", URLAuthority(host: "my_host.local")),
    ])
    func parses(_ text: String, _ expected: URLAuthority) throws {
        #expect(try Self.parse(text) == expected)
    }

    @Test func aSliceIsReadWhereItIs() throws {
        let url = Array("mqtt://u:p@h:1/".utf8)
        #expect(try URLAuthority.parse(url[7..<14]) == URLAuthority(user: "u", password: "p", host: "h", port: 1))
    }

    @Test(arguments: [
        ("", URLAuthorityError.noHost),
        ("u:secret@", .noHost),
        (":1883", .noHost),
        ("h:", .badPort),
        ("h:0", .badPort),
        ("h:65536", .badPort),
        ("h:+1", .badPort),
        ("h:000001883", .badPort),
        ("h:18a3", .badPort),
        ("h?x", .queryOrFragment),
        ("u:secret@h#x", .queryOrFragment),
        ("h x", .badCharacter(offset: 1)),
        ("u:se\tcret@h", .badCharacter(offset: 4)),
        ("h\u{0}", .badCharacter(offset: 1)),
        ("hé", .badCharacter(offset: 1)),
        ("u%G0:secret@h", .malformedUser),
        ("u%FF:secret@h", .malformedUser),
        (":secret@h", .emptyUser),
        ("u%0A:secret@h", .controlInUser),
        ("u:secret%G0@h", .malformedPassword),
        ("u:secret%0A@h", .controlInPassword),
        ("u:secret%7F@h", .controlInPassword),
        ("[::1", .unclosedIPv6),
        ("[zz::1]", .notIPv6),
        ("[1234]", .notIPv6),
        ("[::1]x", .textAfterIPv6),
        ("[::1]:", .badPort),
        ("h!x", .badHostCharacter),
        ("h%41", .badHostCharacter),
        ("::1", .noHost),
    ])
    func refuses(_ text: String, _ expected: URLAuthorityError) {
        #expect(throws: expected) { try Self.parse(text) }
        #expect(!expected.description.contains("secret"))
    }

    @Test func aColonInTheUserIsRefusedOnlyWhenAsked() throws {
        #expect(try Self.parse("a%3Ab:secret@h").user == "a:b")
        #expect(throws: URLAuthorityError.colonInUser) { try Self.parse("a%3Ab:secret@h", userMayHoldColon: false) }
        #expect(URLAuthorityError.colonInUser.description.contains("colon"))
    }

    @Test func everyMessageNamesThePartAndQuotesNothing() {
        let errors: [URLAuthorityError] = [
            .badCharacter(offset: 3), .queryOrFragment, .malformedUser, .emptyUser, .colonInUser, .controlInUser,
            .malformedPassword, .controlInPassword, .unclosedIPv6, .notIPv6, .textAfterIPv6, .badHostCharacter,
            .noHost, .badPort,
        ]
        #expect(Set(errors.map(\.description)).count == errors.count, "each rule has its own message")
        for error in errors {
            #expect(!error.description.contains("'"), "\(error)")
        }
    }

    @Test func hostForURLBracketsIPv6() {
        #expect(URLAuthority.hostForURL("h.example") == "h.example")
        #expect(URLAuthority.hostForURL("10.0.0.1") == "10.0.0.1")
        #expect(URLAuthority.hostForURL("fe80::1") == "[fe80::1]")
    }

    @Test func splitFindsSchemeAuthorityAndRest() throws {
        let parts = try #require(URLAuthority.split(Array("MQTTS://u:p@h:1/x/y".utf8)))
        #expect(parts.scheme == "mqtts")
        #expect(String(decoding: parts.authority, as: UTF8.self) == "u:p@h:1")
        #expect(String(decoding: parts.rest, as: UTF8.self) == "/x/y")
        let bare = try #require(URLAuthority.split(Array("ntrip://h".utf8)))
        #expect(bare.scheme == "ntrip" && bare.rest.isEmpty && bare.authority.elementsEqual("h".utf8))
        #expect(URLAuthority.split(Array("h/M".utf8)) == nil)
        #expect(URLAuthority.split(Array("://h".utf8)) == nil)
        #expect(URLAuthority.split(Array("1x://h".utf8)) == nil)
        #expect(URLAuthority.split([]) == nil)
    }
}
