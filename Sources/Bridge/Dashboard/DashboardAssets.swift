// The dashboard's three files as the daemon serves them: built into the binary by SwiftPM
// (`resources: .embedInCode` in Package.swift), so a bare binary has them.

import BridgeCore

enum DashboardAssets {
    /// By request path; `/` is the page.
    static let byPath: [String: StaticFile] = [
        "/": StaticFile(contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html),
        "/dashboard.css": StaticFile(contentType: "text/css; charset=utf-8", bytes: PackageResources.dashboard_css),
        "/dashboard.js": StaticFile(
            contentType: "text/javascript; charset=utf-8", bytes: PackageResources.dashboard_js),
    ]
}
