// The udev rules are generated from the receiver table: the committed udev/60-tmm-bridge.rules
// must be exactly what the table gives (`make udev-rules` rewrites it), and the generated rules
// keep the table's first-match order. What udevadm makes of them: Tests/CLITests/UdevadmTests.swift.
import Foundation
import TestSupport
import Testing

@testable import Discovery

@Suite("udev rules from the receiver table", .tags(.unit))
struct UdevRulesTests {
    static let committedPath = Fixtures.repositoryRoot + "/udev/" + UdevRules.fileName

    @Test("the committed udev/60-tmm-bridge.rules is what the table gives (else: make udev-rules)")
    func committedFileMatchesTable() throws {
        let data = try #require(
            FileManager.default.contents(atPath: Self.committedPath),
            "\(Self.committedPath) is missing: run make udev-rules")
        let committed = String(decoding: data, as: UTF8.self)
        let generated = UdevRules.text()
        guard committed != generated else { return }
        let old = committed.split(separator: "\n", omittingEmptySubsequences: false)
        let new = generated.split(separator: "\n", omittingEmptySubsequences: false)
        let line = (0..<min(old.count, new.count)).first { old[$0] != new[$0] } ?? min(old.count, new.count)
        Issue.record(
            """
            udev/\(UdevRules.fileName) drifted from Sources/Discovery/KnownReceivers.swift: run make udev-rules \
            and commit the result. First difference at line \(line + 1):
            committed: \(line < old.count ? String(old[line]) : "<end of file>")
            generated: \(line < new.count ? String(new[line]) : "<end of file>")
            """)
    }

    /// Every rule line of a row sets its row and verdict and jumps away, so the first row that
    /// matches decides, as in `ReceiverClassifier`; the rows appear in the table's order.
    @Test("each row's rules set its id and verdict and end in a GOTO, in table order")
    func firstMatchOrder() {
        let lines = UdevRules.text().split(separator: "\n").map(String.init)
        var lastIndex = -1
        for row in KnownReceivers.table {
            let rowLines = lines.enumerated().filter { $0.element.contains("ENV{TMM_BRIDGE_ROW}=\"\(row.id)\"") }
            #expect(rowLines.count == row.udevMatches.count, "row \(row.id): one rule line per udev match")
            let target = row.verdict == .receiver ? UdevRules.receiverLabel : UdevRules.endLabel
            for (index, line) in rowLines {
                #expect(index > lastIndex, "row \(row.id) is out of table order")
                lastIndex = index
                #expect(line.hasSuffix("GOTO=\"\(target)\""), "row \(row.id): \(line)")
                #expect(line.contains("ENV{TMM_BRIDGE_VERDICT}=\"\(row.verdict)\""))
            }
        }
        // The receiver block comes after every row, and the end label is last.
        let receiverLabel = lines.firstIndex(of: "LABEL=\"\(UdevRules.receiverLabel)\"")
        #expect(receiverLabel.map { $0 > lastIndex } == true)
        #expect(lines.last == "LABEL=\"\(UdevRules.endLabel)\"")
    }

    @Test("only receivers are tagged, linked and pull the service in")
    func receiverBlock() {
        let text = UdevRules.text()
        let receiverBlock = text.components(separatedBy: "LABEL=\"\(UdevRules.receiverLabel)\"").last ?? ""
        #expect(receiverBlock.contains("TAG+=\"tmm-bridge\""))
        #expect(receiverBlock.contains("GROUP=\"dialout\""))
        #expect(receiverBlock.contains("TAG+=\"systemd\", ENV{SYSTEMD_WANTS}+=\"tmm-bridge.service\""))
        // Nothing before the receiver label tags, links or wants anything.
        let rows = text.components(separatedBy: "LABEL=\"\(UdevRules.receiverLabel)\"").first ?? ""
        for forbidden in ["TAG+=", "SYMLINK", "SYSTEMD_WANTS", "GROUP="] {
            #expect(!rows.contains(forbidden), "\(forbidden) outside the receiver block")
        }
    }

    @Test("link vendor names: the row's brand, else the USB vendor string")
    func vendorNames() throws {
        #expect(UdevRules.vendorName(try #require(KnownReceivers.row("gpsd-ublox-8"))) == "u-blox")
        #expect(UdevRules.vendorName(try #require(KnownReceivers.row("vendor-swift-navigation"))) == "swift-navigation")
        #expect(UdevRules.vendorName(try #require(KnownReceivers.row("interface-named-gnss"))) == "$env{ID_VENDOR}")
    }

    /// A quote or newline in a table value would end a udev string early or split a rule.
    @Test("no table value can break a rule's quoting")
    func tableValuesAreQuotable() {
        for row in KnownReceivers.table {
            let values =
                [
                    row.id, row.brand, row.subsystem, row.kernelNamePrefix, row.vendorID, row.productID,
                    row.interfaceNumber, row.interfaceName, row.driver,
                ].compactMap { $0 } + row.nameWords
            for value in values {
                #expect(
                    !value.contains("\"") && !value.contains("\n") && !value.contains("\\"), "row \(row.id): \(value)")
            }
            #expect(!row.summary.contains("\n"), "row \(row.id): the summary becomes a one-line comment")
        }
    }
}
