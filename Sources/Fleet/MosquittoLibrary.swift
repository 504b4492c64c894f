import CMosquitto
import Posix
import Synchronization

// libmosquitto's process-wide state and its error conventions, in one place: every call of the
// library that can fail returns a MOSQ_ERR_* code (and MOSQ_ERR_ERRNO means "look at errno"),
// and a CONNACK's refusal is a number of its own. Both become `MosquittoError`.

/// libmosquitto, initialised once for the process (mosquitto_lib_init is not thread-safe and
/// must precede every other call; it is never undone: the process ends first).
enum MosquittoLibrary {
    private static let initialised = Mutex(false)

    static func initialise() {
        initialised.withLock { done in
            guard !done else { return }
            _ = mosquitto_lib_init()
            done = true
        }
    }

    /// "2.0.11": what `status` reports beside the broker.
    static var version: String {
        var major: CInt = 0
        var minor: CInt = 0
        var revision: CInt = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }
}

/// A failed libmosquitto call, or a broker's refusal of the connection.
public struct MosquittoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The MOSQ_ERR_* code (MOSQ_ERR_ERRNO with `errno` set).
    public let code: CInt
    public let errno: Errno?

    init(code: CInt, errno: Errno? = nil) {
        self.code = code
        self.errno = errno
    }

    /// Throws unless `code` is MOSQ_ERR_SUCCESS; reads errno for MOSQ_ERR_ERRNO at once.
    static func check(_ code: CInt) throws(MosquittoError) {
        guard code != MOSQ_ERR_SUCCESS.rawValue else { return }
        throw MosquittoError(code: code, errno: code == MOSQ_ERR_ERRNO.rawValue ? Errno.current : nil)
    }

    public var description: String {
        if code == MOSQ_ERR_ERRNO.rawValue, let errno { return "\(errno)" }
        return String(cString: mosquitto_strerror(code))
    }
}

/// Why a broker refused a connection (CONNACK's return code, MQTT 3.1.1 §3.2.2.3), in words.
func connackReason(_ code: CInt) -> String {
    String(cString: mosquitto_connack_string(code))
}
