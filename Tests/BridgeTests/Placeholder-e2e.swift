// Placeholder so the package resolves on the e2e-tests branch: Package.swift at main's HEAD
// declares the BridgeTests target, but its sources are not committed yet. Delete this file once
// main has Tests/BridgeTests.
