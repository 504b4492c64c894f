// The Access Code V2 key: its JWK read and used by an independent encryptor (Debian's
// python3-cryptography with the samples' padding, tmmtools/peers/rsa_encrypt.py), and every
// ciphertext that must not decrypt.
import Foundation
import TLS
import TestSupport
import Testing

@Suite("RSA key for Access Code V2 (python3-cryptography)", .tags(.unit))
struct RSAKeyTests {
    static let key = Result { try PrivateKey.generate(.rsa(bits: 2048)) }

    private func encrypt(_ plaintext: String, with key: PrivateKey, firstByteZero: Bool = false) throws -> [UInt8] {
        let jwk = try key.rsaPublicJWK()
        let encryptor = PythonTools.command(
            "peers.rsa_encrypt", [jwk.n, jwk.e, plaintext] + (firstByteZero ? ["first-byte-zero"] : []))
        let run = try Tools.run(encryptor.executable, encryptor.arguments)
        try #require(run.status == 0, "\(run.errors)")
        return Array(try #require(Data(base64Encoded: run.output.trimmingCharacters(in: .whitespacesAndNewlines))))
    }

    @Test func theJWKIsWhatClientsRead() throws {
        let key = try Self.key.get()
        #expect(key.kind == .rsa(bits: 2048))
        let jwk = try key.rsaPublicJWK()
        #expect(jwk.e == "AQAB")
        #expect(jwk.n.count == 342)  // 256 bytes in unpadded base64url
        #expect(!jwk.n.contains("=") && !jwk.n.contains("+") && !jwk.n.contains("/"))
    }

    @Test func decryptsWhatTheSamplesEncrypt() throws {
        let key = try Self.key.get()
        let text = "12345678-1234-1234-1234-123456789abc 2024-02-22T18:00:00Z"
        let ciphertext = try encrypt(text, with: key)
        #expect(ciphertext.count == 256)
        #expect(key.decryptOAEPSHA256(ciphertext) == Array(text.utf8))
        // OAEP is randomised: a second code for the same text differs and decrypts the same.
        let second = try encrypt(text, with: key)
        #expect(second != ciphertext)
        #expect(key.decryptOAEPSHA256(second) == Array(text.utf8))
    }

    @Test func refusesWhatDoesNotDecrypt() throws {
        let key = try Self.key.get()
        let other = try PrivateKey.generate(.rsa(bits: 2048))
        let text = "12345678-1234-1234-1234-123456789abc 2024-02-22T18:00:00Z"
        let forOther = try encrypt(text, with: other)
        #expect(key.decryptOAEPSHA256(forOther) == nil)
        var flipped = try encrypt(text, with: key)
        flipped[100] ^= 0x01
        #expect(key.decryptOAEPSHA256(flipped) == nil)
        let valid = try encrypt(text, with: key)
        #expect(key.decryptOAEPSHA256(Array(valid.prefix(255))) == nil)
        #expect(key.decryptOAEPSHA256(valid + [0]) == nil)
        #expect(key.decryptOAEPSHA256([]) == nil)
        #expect(key.decryptOAEPSHA256([UInt8](repeating: 0xFF, count: 256)) == nil)
        #expect(key.decryptOAEPSHA256([UInt8](repeating: 0, count: 256)) == nil)
        // A P-256 key has no RSA half at all.
        let ec = try PrivateKey.generate(.p256)
        #expect(ec.decryptOAEPSHA256(valid) == nil)
        #expect(throws: CryptoError.self) { _ = try ec.rsaPublicJWK() }
    }

    @Test func aCiphertextIsDecryptedOnlyAtTheModulusLength() throws {
        // OpenSSL reads a ciphertext as a number: one that begins with 0x00 decrypted the same
        // without that byte, so one code had two encodings (and the replay ledger, keyed on the
        // bytes, took the second for a new code).
        let key = try Self.key.get()
        #expect(key.rsaCiphertextLength == 256)
        #expect(try PrivateKey.generate(.p256).rsaCiphertextLength == nil)
        let text = "12345678-1234-1234-1234-123456789abc 2024-02-22T18:00:00Z"
        let ciphertext = try encrypt(text, with: key, firstByteZero: true)
        try #require(ciphertext.count == 256 && ciphertext[0] == 0)
        #expect(key.decryptOAEPSHA256(ciphertext) == Array(text.utf8))
        #expect(key.decryptOAEPSHA256(Array(ciphertext.dropFirst())) == nil)
    }

    @Test func survivesPEMRoundTrips() throws {
        let key = try Self.key.get()
        let pem = try key.pem()
        #expect(String(decoding: pem, as: UTF8.self).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let again = try PrivateKey(pem: pem)
        #expect(try again.rsaPublicJWK().n == key.rsaPublicJWK().n)
        #expect(throws: CryptoError.self) {
            _ = try PrivateKey(pem: Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8))
        }
        #expect(throws: CryptoError.self) { _ = try PrivateKey(pem: []) }
    }
}

@Suite("Access Code V2 key file", .tags(.unit))
struct AccessCodeKeyFileTests {
    @Test func madeOnceThenReused() throws {
        let state = try Tools.temporaryDirectory("v2key")
        let first = try AccessCodeKey.load(stateDirectory: state)
        #expect(first.created)
        let path = state + "/" + AccessCodeKey.fileName
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o600)
        let second = try AccessCodeKey.load(stateDirectory: state)
        #expect(!second.created)
        #expect(try second.key.rsaPublicJWK().n == first.key.rsaPublicJWK().n)
    }

    @Test func aForeignFileIsRefusedNotReplaced() throws {
        let state = try Tools.temporaryDirectory("v2foreign")
        let path = state + "/" + AccessCodeKey.fileName
        let ec = try PrivateKey.generate(.p256).pem()
        try Data(ec).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try AccessCodeKey.load(stateDirectory: state)
        } throws: { error in
            "\(error)".contains("not a 2048-bit RSA key")
        }
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == ec)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: TLSMaterialError.self) { _ = try AccessCodeKey.load(stateDirectory: state) }
    }
}
