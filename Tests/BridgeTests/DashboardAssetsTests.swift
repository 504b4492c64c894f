// The dashboard's files as built into the binary: byte for byte the ones in the source tree.
import BridgeCore
import Foundation
import TestSupport
import Testing

@testable import Bridge

@Suite("Dashboard assets", .tags(.unit))
struct DashboardAssetsTests {
    @Test(arguments: [
        ("/", "index.html", "text/html; charset=utf-8"),
        ("/dashboard.css", "dashboard.css", "text/css; charset=utf-8"),
        ("/dashboard.js", "dashboard.js", "text/javascript; charset=utf-8"),
    ])
    func theBinaryHoldsTheSourceFiles(_ path: String, _ file: String, _ contentType: String) throws {
        let asset = try #require(DashboardAssets.byPath[path])
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/Bridge/Dashboard/Assets/" + file)
        #expect(asset.bytes == Array(try Data(contentsOf: source)))
        #expect(asset.contentType == contentType)
    }
}
