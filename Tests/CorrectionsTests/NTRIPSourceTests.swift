// Corrections URLs: a table of good ones with what they hold, a malformed-input table with one row
// per broken rule, the description (never the password; parses back), and no error that quotes
// the password.
import Corrections
import TestSupport
import Testing

/// A URL that must parse, and the source it names.
struct GoodURL: Sendable, CustomTestStringConvertible {
    let url: String
    let source: NTRIPSource
    var testDescription: String { url }
}

/// A URL that must be refused, the rule it breaks, and a word its message must hold.
struct BadURL: Sendable, CustomTestStringConvertible {
    let rule: String
    let url: String
    let messageHolds: String
    var testDescription: String { rule }
}

@Suite("NTRIP source URLs", .tags(.unit))
struct NTRIPSourceTests {
    static let good: [GoodURL] = [
        GoodURL(
            url: "ntrip://caster.example.com/MOUNT",
            source: NTRIPSource(host: "caster.example.com", mountPoint: "MOUNT")),
        GoodURL(
            url: "ntrip://user:pass@caster.example.com:2102/RTCM3",
            source: NTRIPSource(
                host: "caster.example.com", port: 2102, mountPoint: "RTCM3", user: "user", password: "pass")),
        GoodURL(
            url: "ntrip://user@10.0.0.1/M", source: NTRIPSource(host: "10.0.0.1", mountPoint: "M", user: "user")),
        GoodURL(
            url: "ntrip://user:@h/M", source: NTRIPSource(host: "h", mountPoint: "M", user: "user", password: "")),
        GoodURL(
            url: "ntrips://u:p@rtk2go.com/NEAR",
            source: NTRIPSource(
                host: "rtk2go.com", port: 443, mountPoint: "NEAR", user: "u", password: "p", usesTLS: true)),
        GoodURL(
            url: "NTRIPS://h:2102/M", source: NTRIPSource(host: "h", port: 2102, mountPoint: "M", usesTLS: true)),
        GoodURL(url: "ntrip://[::1]/M", source: NTRIPSource(host: "::1", mountPoint: "M")),
        GoodURL(url: "ntrip://[2001:db8::7]:2101/M", source: NTRIPSource(host: "2001:db8::7", mountPoint: "M")),
        GoodURL(
            url: "ntrip://[::ffff:192.0.2.1]:9/M",
            source: NTRIPSource(host: "::ffff:192.0.2.1", port: 9, mountPoint: "M")),
        // Percent escapes in user, password and mount point.
        GoodURL(
            url: "ntrip://me%40example.com:p%3Aw%2Fd@h/A%20B",
            source: NTRIPSource(host: "h", mountPoint: "A B", user: "me@example.com", password: "p:w/d")),
        // A raw @ in the password: the user information ends at the last @.
        GoodURL(
            url: "ntrip://user:p@ss@h/M",
            source: NTRIPSource(host: "h", mountPoint: "M", user: "user", password: "p@ss")),
        GoodURL(url: "ntrip://h:65535/M", source: NTRIPSource(host: "h", port: 65535, mountPoint: "M")),
        GoodURL(url: "ntrip://h:1/M", source: NTRIPSource(host: "h", port: 1, mountPoint: "M")),
        GoodURL(
            url: "ntrip://my_caster.local/M-1.x_y~z",
            source: NTRIPSource(host: "my_caster.local", mountPoint: "M-1.x_y~z")),
        GoodURL(url: "ntrip://h/%C3%A9t%C3%A9", source: NTRIPSource(host: "h", mountPoint: "été")),
    ]

    @Test(arguments: good)
    func parses(_ row: GoodURL) throws {
        let source = try NTRIPSource.parse(row.url).get()
        #expect(source == row.source)
    }

    static let malformed: [BadURL] = [
        BadURL(rule: "empty", url: "", messageHolds: "ntrip://"),
        BadURL(rule: "no scheme", url: "caster.example.com/M", messageHolds: "ntrip://"),
        BadURL(rule: "other scheme", url: "http://h/M", messageHolds: "ntrip://"),
        BadURL(rule: "no host", url: "ntrip:///M", messageHolds: "host"),
        BadURL(rule: "no host after user", url: "ntrip://u:secret@/M", messageHolds: "host"),
        BadURL(rule: "no host, only a port", url: "ntrip://:2101/M", messageHolds: "host"),
        BadURL(rule: "empty port", url: "ntrip://h:/M", messageHolds: "port"),
        BadURL(rule: "port zero", url: "ntrip://h:0/M", messageHolds: "port"),
        BadURL(rule: "port too big", url: "ntrip://h:65536/M", messageHolds: "port"),
        BadURL(rule: "port not a number", url: "ntrip://h:21o1/M", messageHolds: "port"),
        BadURL(rule: "port with sign", url: "ntrip://h:+2101/M", messageHolds: "port"),
        BadURL(rule: "port too long", url: "ntrip://h:000002101/M", messageHolds: "port"),
        BadURL(rule: "no mount point", url: "ntrip://h", messageHolds: "mount point"),
        BadURL(rule: "empty mount point", url: "ntrip://h:2101/", messageHolds: "mount point"),
        BadURL(rule: "two path segments", url: "ntrip://h/A/B", messageHolds: "one name"),
        BadURL(rule: "trailing slash", url: "ntrip://h/A/", messageHolds: "one name"),
        BadURL(rule: "query", url: "ntrip://h/M?x=1", messageHolds: "query"),
        BadURL(rule: "fragment", url: "ntrip://h/M#x", messageHolds: "query"),
        BadURL(rule: "query in the authority", url: "ntrip://h?x/M", messageHolds: "query"),
        BadURL(rule: "space in the mount point", url: "ntrip://h/A B", messageHolds: "space"),
        BadURL(rule: "leading space", url: " ntrip://h/M", messageHolds: "space"),
        BadURL(rule: "trailing newline", url: "ntrip://h/M\n", messageHolds: "control"),
        BadURL(rule: "tab in the host", url: "ntrip://h\tx/M", messageHolds: "control"),
        BadURL(rule: "NUL", url: "ntrip://h/M\u{0}", messageHolds: "control"),
        BadURL(rule: "raw non-ASCII", url: "ntrip://h/été", messageHolds: "non-ASCII"),
        BadURL(rule: "bad escape", url: "ntrip://h/M%zz", messageHolds: "%-escape"),
        BadURL(rule: "truncated escape", url: "ntrip://h/M%4", messageHolds: "%-escape"),
        BadURL(rule: "escape that is not UTF-8", url: "ntrip://h/M%FF", messageHolds: "UTF-8"),
        BadURL(rule: "escaped control in the mount point", url: "ntrip://h/M%0D%0A", messageHolds: "control"),
        BadURL(rule: "bad escape in the user", url: "ntrip://u%G0:pw@h/M", messageHolds: "user name"),
        BadURL(rule: "bad escape in the password", url: "ntrip://u:pw%G0secret@h/M", messageHolds: "password"),
        BadURL(rule: "control in the password", url: "ntrip://u:pw%0Asecret@h/M", messageHolds: "password"),
        BadURL(rule: "empty user", url: "ntrip://:secret@h/M", messageHolds: "user name"),
        BadURL(rule: "colon in the user", url: "ntrip://a%3Ab:secret@h/M", messageHolds: "colon"),
        BadURL(rule: "underscore is fine but a bang is not", url: "ntrip://h!x/M", messageHolds: "host name"),
        BadURL(rule: "percent in the host", url: "ntrip://h%41/M", messageHolds: "host name"),
        BadURL(rule: "IPv6 without ]", url: "ntrip://[::1/M", messageHolds: "]"),
        BadURL(rule: "IPv6 junk", url: "ntrip://[zz::1]/M", messageHolds: "IPv6"),
        BadURL(rule: "IPv6 without colon", url: "ntrip://[1234]/M", messageHolds: "IPv6"),
        BadURL(rule: "IPv6 then junk", url: "ntrip://[::1]x/M", messageHolds: ":PORT"),
        BadURL(rule: "IPv6 with empty port", url: "ntrip://[::1]:/M", messageHolds: "port"),
        BadURL(rule: "unbracketed IPv6", url: "ntrip://::1/M", messageHolds: "host"),
    ]

    @Test(arguments: malformed)
    func refuses(_ row: BadURL) {
        switch NTRIPSource.parse(row.url) {
        case .success(let source):
            Issue.record("parsed as \(source)")
        case .failure(let error):
            #expect(error.message.contains(row.messageHolds), "\(error.message)")
            #expect(error.description == error.message)
            #expect(!error.message.contains("secret"), "the error quotes the password: \(error.message)")
        }
    }

    @Test func noErrorEverQuotesThePassword() {
        // The password is spliced into every malformed URL's user information.
        let password = "Pa55-w0rd_XYZ"
        for row in Self.malformed where row.url.contains("://") {
            let url = row.url.replacing("://", with: "://user:\(password)@", maxReplacements: 1)
            if case .failure(let error) = NTRIPSource.parse(url) {
                #expect(!error.message.contains(password), "\(row.rule): \(error.message)")
                #expect(!error.message.contains(url), "\(row.rule): quotes the URL")
            }
        }
    }

    // MARK: Description

    @Test(arguments: [
        ("ntrip://user:secret@caster.example.com/MOUNT", "ntrip://user@caster.example.com:2101/MOUNT"),
        ("ntrip://caster.example.com:2102/M", "ntrip://caster.example.com:2102/M"),
        ("ntrips://u:secret@h/M", "ntrips://u@h:443/M"),
        ("ntrip://[::1]/M", "ntrip://[::1]:2101/M"),
        ("ntrip://me%40x.org:secret@h/A%20B", "ntrip://me%40x.org@h:2101/A%20B"),
    ])
    func descriptionLeavesThePasswordOut(_ url: String, _ expected: String) throws {
        let source = try NTRIPSource.parse(url).get()
        #expect(source.description == expected)
        #expect(!source.description.contains("secret"))
        // It parses back to the same source, without the password.
        var withoutPassword = source
        withoutPassword.password = nil
        #expect(try NTRIPSource.parse(source.description).get() == withoutPassword)
    }

    @Test func defaultsAndMemberwiseInit() {
        #expect(NTRIPSource.defaultPort == 2101)
        let source = NTRIPSource(host: "h", mountPoint: "M")
        #expect(source.port == 2101 && !source.usesTLS && source.user == nil && source.password == nil)
        #expect(source.hostForURL == "h")
        #expect(NTRIPSource(host: "fe80::1", mountPoint: "M").hostForURL == "[fe80::1]")
    }

    @Test func percentEncodingKeepsOnlyUnreserved() {
        #expect(NTRIPSource.percentEncoded("AZaz09-._~") == "AZaz09-._~")
        #expect(NTRIPSource.percentEncoded("a b/c:d@e%") == "a%20b%2Fc%3Ad%40e%25")
        #expect(NTRIPSource.percentEncoded("é") == "%C3%A9")
    }

    @Test func pathEncodingKeepsWhatASegmentMayHold() {
        #expect(NTRIPSource.pathEncoded("RTCM3+GLO,A;b=c:d@e!$&'()*-._~") == "RTCM3+GLO,A;b=c:d@e!$&'()*-._~")
        #expect(
            NTRIPSource.pathEncoded("a b/c?d#e%f\"g<>[]{}|^`\\")
                == "a%20b%2Fc%3Fd%23e%25f%22g%3C%3E%5B%5D%7B%7D%7C%5E%60%5C")
        #expect(NTRIPSource.pathEncoded("ü") == "%C3%BC")
        // Whatever a mount point holds, its segment parses back to it.
        for mount in ["RTCM3+GLO", "a b", "x/y", "?#%", "ü,;=", "[v6]"] {
            let source = NTRIPSource(host: "h", mountPoint: mount)
            #expect((try? NTRIPSource.parse(source.description).get()) == source, "\(mount)")
        }
    }
}
