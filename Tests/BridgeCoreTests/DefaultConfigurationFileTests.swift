// packaging/tmm-bridge.conf, the commented default configuration the package installs as
// /etc/tmm-bridge/tmm-bridge.conf, is written by hand (each option with a comment a person can
// read) but checked here against the option table, so that it cannot drift: every option of
// `BridgeConfiguration.options` is in it, no other name is, each default shown is the default,
// and each example is a value the option accepts. scripts/package-test.sh then runs the
// installed daemon on the installed file.
import Foundation
import TestSupport
import Testing

@testable import BridgeCore

@Suite("The packaged default configuration file", .tags(.unit))
struct DefaultConfigurationFileTests {
    static let path = Fixtures.repositoryRoot + "/packaging/tmm-bridge.conf"

    /// A commented-out setting: `#name = value`, with `# example` after it when the value is an
    /// example rather than the default.
    struct Setting {
        var name: String
        var value: String
        var isExample: Bool
        var line: Int
    }

    /// The file's commented-out settings, uncommented and read by the daemon's own parser.
    static func settings() throws -> [Setting] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var settings: [Setting] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            // A setting is `#` directly followed by a name and ` = `; prose comments have a space
            // after the `#`.
            guard line.hasPrefix("#"), let first = line.dropFirst().first, first.isLetter, line.contains(" = ") else {
                continue
            }
            let uncommented = String(line.dropFirst())
            let entries = try ConfigurationFile.parse(uncommented, path: "packaging/tmm-bridge.conf")
            let entry = try #require(entries.first, "line \(index + 1) is not a setting: '\(line)'")
            let comment = uncommented.range(of: " #").map {
                uncommented[$0.upperBound...].trimmingCharacters(in: .whitespaces)
            }
            if let comment {
                #expect(comment == "example", "line \(index + 1): the only comment after a setting is '# example'")
            }
            settings.append(
                Setting(name: entry.name, value: entry.value, isExample: comment == "example", line: index + 1))
        }
        return settings
    }

    @Test("the file as shipped is read without error and changes nothing")
    func theFileAsShippedParses() throws {
        let text = try String(contentsOfFile: Self.path, encoding: .utf8)
        let entries = try ConfigurationFile.parse(text, path: Self.path)
        #expect(entries.isEmpty, "every setting is commented out: \(entries.map(\.name))")
    }

    @Test("every option of the table is listed, and no other name")
    func everyOptionIsListed() throws {
        let settings = try Self.settings()
        let listed = settings.map(\.name)
        for option in BridgeConfiguration.options {
            let count = listed.filter { $0 == option.name }.count
            #expect(
                count >= 1,
                "packaging/tmm-bridge.conf lacks '#\(option.name) = ...': add it with its default and a comment")
            #expect(count <= 1 || option.repeatable, "'\(option.name)' is listed \(count) times but is not repeatable")
        }
        for setting in settings where BridgeConfiguration.option(named: setting.name) == nil {
            Issue.record(
                """
                packaging/tmm-bridge.conf:\(setting.line): '\(setting.name)' is not an option \
                (BridgeConfiguration.options)
                """
            )
        }
    }

    /// The lines without `# example`, uncommented together, give exactly the defaults. Two
    /// spellings differ from `BridgeConfiguration()` only in form: the default listen list is
    /// nil (meaning `defaultListenAddresses`, where a missing ::1 is tolerated), and `*` written
    /// out is remembered so that it cannot be combined with origins.
    @Test("each value shown as the default is the default")
    func defaultsAreTheDefaults() throws {
        var configuration = BridgeConfiguration()
        // (Unknown names are everyOptionIsListed's to report.)
        for setting in try Self.settings()
        where !setting.isExample && BridgeConfiguration.option(named: setting.name) != nil {
            #expect(throws: Never.self, "line \(setting.line)") { try configuration.apply(setting.name, setting.value) }
        }
        var expected = BridgeConfiguration()
        expected.listenAddresses = BridgeConfiguration.defaultListenAddresses
        expected.allowsAnyOriginExplicitly = true
        #expect(
            configuration == expected,
            "a line of packaging/tmm-bridge.conf without '# example' is not the option's default")
        #expect(throws: Never.self) { try configuration.validate() }
    }

    /// An example is a value the option accepts, and it really changes something (a line that
    /// shows the default should not be marked as an example).
    @Test("each example is accepted and is not the default")
    func examplesAreAccepted() throws {
        for setting in try Self.settings() where setting.isExample {
            var configuration = BridgeConfiguration()
            #expect(throws: Never.self, "line \(setting.line)") { try configuration.apply(setting.name, setting.value) }
            #expect(
                configuration != BridgeConfiguration(),
                "line \(setting.line): '\(setting.name) = \(setting.value)' is the default; drop '# example'")
        }
    }
}
