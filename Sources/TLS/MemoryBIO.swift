import COpenSSL

/// Byte arrays in and out of OpenSSL's PEM readers and writers, through memory BIOs (no files
/// are opened by OpenSSL: the caller reads and writes them through Posix, with its checks).
enum MemoryBIO {
    /// Calls `body` with a read-only BIO over `bytes`.
    static func reading<R>(_ bytes: [UInt8], _ body: (OpaquePointer) throws(CryptoError) -> R) throws(CryptoError) -> R
    {
        let result: Result<R, CryptoError> = bytes.withUnsafeBytes { raw in
            // BIO_new_mem_buf does not copy: the BIO lives only inside this closure.
            guard let bio = BIO_new_mem_buf(raw.baseAddress, CInt(raw.count)) else {
                return .failure(CryptoError.current("BIO_new_mem_buf"))
            }
            defer { BIO_free(bio) }
            return Result { () throws(CryptoError) -> R in try body(bio) }
        }
        return try result.get()
    }

    /// What `body` writes into a fresh memory BIO.
    static func writing(_ operation: String, _ body: (OpaquePointer) -> CInt) throws(CryptoError) -> [UInt8] {
        let bio = try CryptoError.check(BIO_new(BIO_s_mem()), "BIO_new")
        defer { BIO_free(bio) }
        try CryptoError.check(body(bio), operation)
        return drain(bio)
    }

    /// Everything buffered in a memory BIO, removed from it.
    static func drain(_ bio: OpaquePointer) -> [UInt8] {
        let count = Int(tmm_bio_pending(bio))
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, CInt(count)) }
        bytes.removeLast(count - max(0, Int(read)))
        return bytes
    }
}
