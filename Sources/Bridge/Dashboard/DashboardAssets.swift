// The dashboard's three files as the daemon serves them: built into the binary by SwiftPM
// (`resources: .embedInCode` in Package.swift), so a bare binary has them.

/// One file of the page: its bytes and the Content-Type it is served with.
struct DashboardAsset: Sendable {
    let contentType: String
    let bytes: [UInt8]
}

enum DashboardAssets {
    /// By request path; `/` is the page.
    static let byPath: [String: DashboardAsset] = [
        "/": DashboardAsset(contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html),
        "/dashboard.css": DashboardAsset(contentType: "text/css; charset=utf-8", bytes: PackageResources.dashboard_css),
        "/dashboard.js": DashboardAsset(
            contentType: "text/javascript; charset=utf-8", bytes: PackageResources.dashboard_js),
    ]
}
