// The generated CA and server certificate, read back by an independent tool (`openssl x509`,
// `openssl verify`): what clients check (SAN, EKU, validity, the chain), the files' modes, reuse
// across starts, and each reason a server certificate is re-issued.
import Foundation
@testable import TLS
import TestSupport
import Testing

@Suite("Local certificate authority (openssl x509/verify)", .tags(.unit))
struct LocalCertificateAuthorityTests {
    private func files(_ state: String) -> (ca: String, caKey: String, server: String, serverKey: String) {
        let folder = LocalCertificateAuthority.directory(inStateDirectory: state)
        return (folder + "/ca.pem", folder + "/ca.key", folder + "/server.pem", folder + "/server.key")
    }

    private func mode(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    @Test func firstStartMakesWhatClientsCheck() throws {
        let state = try Tools.temporaryDirectory("ca")
        let materials = try LocalCertificateAuthority.load(stateDirectory: state)
        #expect(materials.change == .created)
        #expect(materials.chain.count == 2)
        let paths = files(state)
        #expect(try mode(paths.caKey) == 0o600)
        #expect(try mode(paths.serverKey) == 0o600)
        #expect(try mode(LocalCertificateAuthority.directory(inStateDirectory: state)) == 0o700)

        let text = try Tools.run("/usr/bin/openssl", ["x509", "-in", paths.server, "-noout", "-text"])
        #expect(text.status == 0, "\(text.errors)")
        let server = text.output
        #expect(server.contains("Subject: CN = tmm-api-local.fieldsystems.trimble.com"))
        #expect(
            server.contains(
                "DNS:tmm-api-local.fieldsystems.trimble.com, DNS:localhost, "
                    + "IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1"
            ))
        #expect(server.contains("TLS Web Server Authentication"))
        #expect(server.contains("CA:FALSE"))
        #expect(server.contains("Signature Algorithm: ecdsa-with-SHA256"))
        #expect(server.contains("ASN1 OID: prime256v1"))

        // Validity at most 825 days (iOS): the span between the two dates openssl prints.
        let dates = try Tools.run(
            "/usr/bin/openssl", ["x509", "-in", paths.server, "-noout", "-startdate", "-enddate"])
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "MMM d HH:mm:ss yyyy 'GMT'"
        var parsed: [String: Date] = [:]
        for line in dates.output.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            let text = parts[1].split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            parsed[String(parts[0])] = formatter.date(from: text)
        }
        let start = try #require(parsed["notBefore"]), end = try #require(parsed["notAfter"])
        let days = end.timeIntervalSince(start) / 86_400
        #expect(days <= 825 && days > 390, "validity \(days) days")

        let ca = try Tools.run("/usr/bin/openssl", ["x509", "-in", paths.ca, "-noout", "-text"]).output
        #expect(ca.contains("CA:TRUE, pathlen:0"))
        #expect(ca.contains("Certificate Sign, CRL Sign"))

        let verify = try Tools.run(
            "/usr/bin/openssl",
            [
                "verify", "-CAfile", paths.ca, "-purpose", "sslserver",
                "-verify_hostname", LocalCertificateAuthority.hostName, paths.server,
            ])
        #expect(verify.status == 0, "\(verify.output) \(verify.errors)")
        let loopback = try Tools.run(
            "/usr/bin/openssl", ["verify", "-CAfile", paths.ca, "-verify_ip", "127.0.0.1", paths.server])
        #expect(loopback.status == 0, "\(loopback.output) \(loopback.errors)")
        let otherName = try Tools.run(
            "/usr/bin/openssl", ["verify", "-CAfile", paths.ca, "-verify_hostname", "example.com", paths.server])
        #expect(otherName.status != 0)

        #expect(materials.chain[0].commonName == LocalCertificateAuthority.hostName)
        #expect(materials.chain[0].covers(host: "localhost"))
        #expect(materials.chain[0].covers(ipAddress: "::1"))
        #expect(!materials.chain[0].covers(host: "example.com"))
        #expect(
            try LocalCertificateAuthority.authorityPEM(stateDirectory: state)
                == Array(try Data(contentsOf: URL(fileURLWithPath: paths.ca))))
    }

    @Test func laterStartsReuseTheFiles() throws {
        let state = try Tools.temporaryDirectory("reuse")
        _ = try LocalCertificateAuthority.load(stateDirectory: state)
        let paths = files(state)
        let before = try [paths.ca, paths.caKey, paths.server, paths.serverKey].map {
            try Data(contentsOf: URL(fileURLWithPath: $0))
        }
        let again = try LocalCertificateAuthority.load(stateDirectory: state)
        #expect(again.change == .reused)
        let after = try [paths.ca, paths.caKey, paths.server, paths.serverKey].map {
            try Data(contentsOf: URL(fileURLWithPath: $0))
        }
        #expect(before == after)
    }

    @Test func aMissingServerCertificateIsReissuedByTheSameAuthority() throws {
        let state = try Tools.temporaryDirectory("missing")
        _ = try LocalCertificateAuthority.load(stateDirectory: state)
        let paths = files(state)
        let ca = try Data(contentsOf: URL(fileURLWithPath: paths.ca))
        try FileManager.default.removeItem(atPath: paths.server)
        let again = try LocalCertificateAuthority.load(stateDirectory: state)
        #expect(again.change == .renewed(reason: "no server certificate was stored"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: paths.ca)) == ca)
        let verify = try Tools.run("/usr/bin/openssl", ["verify", "-CAfile", paths.ca, paths.server])
        #expect(verify.status == 0, "\(verify.output) \(verify.errors)")
    }

    @Test func anExpiringOrForeignServerCertificateIsReissued() throws {
        let state = try Tools.temporaryDirectory("expiring")
        let first = try LocalCertificateAuthority.load(stateDirectory: state)
        let paths = files(state)
        // A certificate that expires in 10 days, from the right CA: inside the renewal margin.
        let caKey = try PrivateKey(pem: Array(try Data(contentsOf: URL(fileURLWithPath: paths.caKey))))
        let short = try Certificate.issue(
            .init(
                commonName: LocalCertificateAuthority.hostName, validityDays: 10,
                isAuthority: false,
                subjectAlternativeNames: LocalCertificateAuthority.subjectAlternativeNames),
            for: first.key, by: (first.authority, caKey))
        try Data(try short.pem()).write(to: URL(fileURLWithPath: paths.server))
        let renewed = try LocalCertificateAuthority.load(stateDirectory: state)
        guard case .renewed(let reason) = renewed.change else { Issue.record("not renewed: \(renewed.change)"); return }
        #expect(reason.contains("expires in"), "\(reason)")
        #expect(renewed.chain[0].daysUntilExpiry > 390)

        // Signed by another authority (a CA made again by someone): re-issued by ours.
        let otherKey = try PrivateKey.generate(.p256)
        let other = try Certificate.issue(
            .init(commonName: "another CA", validityDays: 30, isAuthority: true), for: otherKey, by: nil)
        let foreign = try Certificate.issue(
            .init(
                commonName: LocalCertificateAuthority.hostName, validityDays: 300,
                isAuthority: false,
                subjectAlternativeNames: LocalCertificateAuthority.subjectAlternativeNames),
            for: renewed.key, by: (other, otherKey))
        try Data(try foreign.pem()).write(to: URL(fileURLWithPath: paths.server))
        let again = try LocalCertificateAuthority.load(stateDirectory: state)
        #expect(again.change == .renewed(reason: "the server certificate was not issued by this CA"))
        #expect(again.chain[0].isIssued(by: again.authority))
    }

    /// What a running daemon serves when its certificate nears expiry: a fresh one from the same
    /// CA (so nothing needs trusting again), with the same names.
    @Test func aRunningDaemonReissuesFromTheSameAuthority() throws {
        let state = try Tools.temporaryDirectory("reissue")
        let loaded = try LocalCertificateAuthority.load(stateDirectory: state)
        let issued = try LocalCertificateAuthority.issueServerCertificate(by: (loaded.authority, loaded.authorityKey))
        #expect(issued.certificate.isIssued(by: loaded.authority))
        #expect(issued.certificate.isCertified(issued.key) && !issued.certificate.isCertified(loaded.key))
        #expect(
            LocalCertificateAuthority.renewalReason(issued.certificate, key: issued.key, authority: loaded.authority)
                == nil)
        let file = state + "/reissued.pem"
        try Data(try issued.certificate.pem()).write(to: URL(fileURLWithPath: file))
        let verify = try Tools.run(
            "/usr/bin/openssl",
            [
                "verify", "-CAfile", files(state).ca, "-verify_hostname",
                LocalCertificateAuthority.hostName, file,
            ])
        #expect(verify.status == 0, "\(verify.output) \(verify.errors)")
        #expect(throws: Never.self) {
            _ = try TLSServerContext(chain: [issued.certificate, loaded.authority], key: issued.key)
        }
    }

    @Test func aDamagedAuthorityIsAnErrorNamingTheFile() throws {
        let state = try Tools.temporaryDirectory("damaged")
        _ = try LocalCertificateAuthority.load(stateDirectory: state)
        let paths = files(state)
        try Data("not a key\n".utf8).write(to: URL(fileURLWithPath: paths.caKey))
        #expect {
            _ = try LocalCertificateAuthority.load(stateDirectory: state)
        } throws: { error in
            "\(error)".hasPrefix(paths.caKey + ":")
        }
        try FileManager.default.removeItem(atPath: paths.caKey)
        #expect {
            _ = try LocalCertificateAuthority.load(stateDirectory: state)
        } throws: { error in
            "\(error)".contains("its key is missing")
        }
    }

    @Test func noAuthorityYetPrintsNothing() throws {
        let state = try Tools.temporaryDirectory("none")
        #expect(try LocalCertificateAuthority.authorityPEM(stateDirectory: state) == nil)
    }

    @Test func certificateChainsReadEveryBlockAndRefuseGarbage() throws {
        let state = try Tools.temporaryDirectory("chain")
        let materials = try LocalCertificateAuthority.load(stateDirectory: state)
        let pem = try materials.chain[0].pem() + materials.chain[1].pem()
        let chain = try Certificate.chain(pem: pem)
        #expect(chain.count == 2)
        #expect(chain[1].commonName?.hasPrefix("tmm-bridge local CA") == true)
        #expect(throws: CryptoError.self) { _ = try Certificate.chain(pem: Array("garbage".utf8)) }
        #expect(throws: CryptoError.self) { _ = try Certificate.chain(pem: []) }
        var truncated = try materials.chain[0].pem()
        truncated.removeLast(40)
        #expect(throws: CryptoError.self) { _ = try Certificate.chain(pem: truncated) }
    }
}

@Suite("Configured certificate (tls-certificate, tls-key)", .tags(.unit))
struct ConfiguredCertificateTests {
    @Test func aGoodPairLoadsAndAForeignOneWarns() throws {
        let dir = try Tools.temporaryDirectory("configured")
        let caKey = try PrivateKey.generate(.p256)
        let ca = try Certificate.issue(
            .init(commonName: "test CA", validityDays: 30, isAuthority: true), for: caKey, by: nil)
        let key = try PrivateKey.generate(.rsa(bits: 2048))
        let good = try Certificate.issue(
            .init(
                commonName: LocalCertificateAuthority.hostName, validityDays: 200, isAuthority: false,
                subjectAlternativeNames: ["DNS:\(LocalCertificateAuthority.hostName)"]),
            for: key, by: (ca, caKey))
        try Data(try good.pem() + ca.pem()).write(to: URL(fileURLWithPath: dir + "/chain.pem"))
        try Data(try key.pem()).write(to: URL(fileURLWithPath: dir + "/key.pem"))
        let loaded = try ConfiguredCertificate.load(certificate: dir + "/chain.pem", key: dir + "/key.pem")
        #expect(loaded.chain.count == 2)
        #expect(loaded.warnings.isEmpty)
        // An RSA certificate serves too (the TLS 1.2 list has the ECDHE-RSA suites).
        #expect(throws: Never.self) { _ = try TLSServerContext(chain: loaded.chain, key: loaded.key) }

        let other = try Certificate.issue(
            .init(
                commonName: "example.com", validityDays: 10, isAuthority: false,
                subjectAlternativeNames: ["DNS:example.com"]), for: key, by: (ca, caKey))
        try Data(try other.pem()).write(to: URL(fileURLWithPath: dir + "/other.pem"))
        let warned = try ConfiguredCertificate.load(certificate: dir + "/other.pem", key: dir + "/key.pem")
        #expect(warned.warnings.count == 2)
        #expect(warned.warnings[0].contains("does not name tmm-api-local.fieldsystems.trimble.com"))
        #expect(warned.warnings[1].contains("expires in"))
    }

    @Test func mismatchesAndMissingFilesAreErrorsNamingTheFile() throws {
        let dir = try Tools.temporaryDirectory("mismatch")
        let key = try PrivateKey.generate(.p256)
        let certificate = try Certificate.issue(
            .init(
                commonName: LocalCertificateAuthority.hostName, validityDays: 100,
                isAuthority: false), for: key, by: nil)
        try Data(try certificate.pem()).write(to: URL(fileURLWithPath: dir + "/c.pem"))
        try Data(try PrivateKey.generate(.p256).pem()).write(to: URL(fileURLWithPath: dir + "/wrong.key"))
        #expect { _ = try ConfiguredCertificate.load(certificate: dir + "/c.pem", key: dir + "/wrong.key") } throws: {
            "\($0)".contains("wrong.key: not the private key of the first certificate")
        }
        #expect {
            _ = try ConfiguredCertificate.load(certificate: dir + "/none.pem", key: dir + "/wrong.key")
        } throws: { "\($0)".contains("none.pem: no such file (tls-certificate)") }
        try Data("junk".utf8).write(to: URL(fileURLWithPath: dir + "/junk.pem"))
        #expect {
            _ = try ConfiguredCertificate.load(certificate: dir + "/junk.pem", key: dir + "/wrong.key")
        } throws: { "\($0)".hasPrefix(dir + "/junk.pem: ") }
    }
}
