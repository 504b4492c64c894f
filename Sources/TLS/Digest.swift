import COpenSSL

/// One-shot message digests through OpenSSL's EVP interface (no hand-written crypto).
public enum Digest {
    /// SHA-1 (FIPS 180-4) of `bytes`: the WebSocket `Sec-WebSocket-Accept` hash (RFC 6455 §1.3).
    public static func sha1(_ bytes: Span<UInt8>) -> InlineArray<20, UInt8> {
        var out = InlineArray<20, UInt8>(repeating: 0)
        digest(bytes, EVP_sha1(), into: &out)
        return out
    }

    /// SHA-256 (FIPS 180-4) of `bytes`: the TMM Access Code V1 hash.
    public static func sha256(_ bytes: Span<UInt8>) -> InlineArray<32, UInt8> {
        var out = InlineArray<32, UInt8>(repeating: 0)
        digest(bytes, EVP_sha256(), into: &out)
        return out
    }

    /// SHA-1 of an array (convenience over the `Span` form).
    public static func sha1(_ bytes: [UInt8]) -> InlineArray<20, UInt8> { sha1(bytes.span) }

    /// SHA-256 of an array (convenience over the `Span` form).
    public static func sha256(_ bytes: [UInt8]) -> InlineArray<32, UInt8> { sha256(bytes.span) }

    private static func digest<let N: Int>(
        _ bytes: Span<UInt8>, _ md: OpaquePointer?, into out: inout InlineArray<N, UInt8>
    ) {
        var length: UInt32 = 0
        var span = out.mutableSpan
        let ok = bytes.withUnsafeBufferPointer { input in
            span.withUnsafeMutableBufferPointer { output in
                // EVP_Digest reads nothing when the count is 0, but wants a non-null pointer.
                var empty: UInt8 = 0
                return withUnsafePointer(to: &empty) { fallback in
                    EVP_Digest(input.baseAddress ?? fallback, input.count, output.baseAddress, &length, md, nil)
                }
            }
        }
        // SHA-1 and SHA-256 over a memory buffer cannot fail short of allocation failure.
        precondition(ok == 1 && Int(length) == N, "\(CryptoError.current("EVP_Digest"))")
    }
}

/// Cryptographically secure random bytes (OpenSSL's RAND_bytes, seeded from the kernel).
public enum Random {
    /// `count` random bytes.
    public static func bytes(count: Int) throws(CryptoError) -> [UInt8] {
        precondition(count >= 0, "a negative byte count")
        var out = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return out }
        let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, CInt($0.count)) }
        guard ok == 1 else { throw CryptoError.current("RAND_bytes") }
        return out
    }
}
