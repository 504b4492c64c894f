import CMosquitto
import Posix
import TestSupport
import Testing

@testable import Fleet

@Suite("libmosquitto", .tags(.unit))
struct MosquittoLibraryTests {
    /// Debian 12's libmosquitto is 2.0.11; MQTT 5 properties and MOSQ_OPT_TLS_USE_OS_CERTS need 2.0.
    @Test func theLibraryIsVersionTwo() {
        MosquittoLibrary.initialise()
        #expect(MosquittoLibrary.version.hasPrefix("2."), "\(MosquittoLibrary.version)")
    }

    @Test func refusalsAreNamed() {
        #expect(connackReason(5) == "Connection Refused: not authorised.")
        #expect(MosquittoError(code: MOSQ_ERR_NO_CONN.rawValue).description == "The client is not currently connected.")
        #expect(
            MosquittoError(code: MOSQ_ERR_ERRNO.rawValue, errno: .connectionRefused).description.contains("refused"))
    }
}
