import COpenSSL

/// An OpenSSL failure, with the text of the first error on OpenSSL's queue.
public struct CryptoError: Error, Sendable, CustomStringConvertible {
    /// The OpenSSL function that failed.
    public let operation: String
    /// `ERR_error_string_n` text (empty when OpenSSL queued nothing).
    public let detail: String

    /// Captures (and clears) OpenSSL's error queue for this thread.
    static func current(_ operation: String) -> CryptoError {
        let code = ERR_get_error()
        var detail = ""
        if code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            detail = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        ERR_clear_error()
        return CryptoError(operation: operation, detail: detail)
    }

    public var description: String {
        detail.isEmpty ? "OpenSSL \(operation) failed" : "OpenSSL \(operation) failed: \(detail)"
    }
}

extension CryptoError {
    /// A failure that is ours to describe (not on OpenSSL's queue): a wrong key type, a file
    /// without a certificate.
    public init(_ operation: String, reason: String) {
        self.init(operation: operation, detail: reason)
    }

    /// Throws the queued error unless `result` is OpenSSL's success value 1 (the convention of
    /// nearly every call used here).
    static func check(_ result: CInt, _ operation: String) throws(CryptoError) {
        guard result == 1 else { throw current(operation) }
    }

    /// Unwraps a pointer OpenSSL returned, or throws the queued error for a null one.
    static func check<T>(_ pointer: T?, _ operation: String) throws(CryptoError) -> T {
        guard let pointer else { throw current(operation) }
        return pointer
    }
}
