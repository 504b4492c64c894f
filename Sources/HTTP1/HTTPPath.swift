import ByteCoding

/// A path normalised for routing, and the matcher the REST routes use.
///
/// TMM clients send both `/api/v1/receiver` and `/api/v1/receiver/` (the web sample adds the
/// slash), and TMM-API.md §4.1 suggests matching case-insensitively. Normalisation:
/// 1. one trailing `/` is dropped (`/` itself stays `/`; an empty path becomes `/`);
/// 2. `%XX` of an unreserved character (RFC 3986 §2.3: letters, digits, `-._~`) is decoded, since
///    it means the same as the character (§6.2.2.2); other escapes stay escaped, so `%2F` is never
///    a segment separator;
/// 3. ASCII letters are lower-cased (escapes included: `%2F` and `%2f` are equal).
///
/// Dot segments (`/a/../b`) are not resolved: such a path matches no route and gets 404. The
/// routes are fixed strings and no path ever reaches the file system.
public struct HTTPPath: Sendable, Hashable, CustomStringConvertible {
    /// The normalised bytes (ASCII).
    public let normalized: [UInt8]

    /// Normalises a route written in code, e.g. `HTTPPath("/api/v1/positionStream")`.
    public init(_ path: String) {
        let bytes = Array(path.utf8)
        self.init(normalizing: bytes.span)
    }

    /// Normalises a path as sent (`HTTPRequestHead.path(in:)`).
    public init(normalizing raw: Span<UInt8>) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count + 1)
        Self.normalize(raw) { byte in
            bytes.append(byte)
            return true
        }
        normalized = bytes
    }

    /// Whether `raw` (a path as sent) normalises to this path. Allocates nothing.
    public func matches(_ raw: Span<UInt8>) -> Bool {
        var index = 0
        let complete = Self.normalize(raw) { byte in
            guard index < normalized.count, normalized[index] == byte else { return false }
            index += 1
            return true
        }
        return complete && index == normalized.count
    }

    /// The normalised path as a String.
    public var description: String { String(decoding: normalized, as: UTF8.self) }

    /// Emits the normalised bytes of `raw` to `emit` until it returns false; returns whether every
    /// byte was emitted.
    @discardableResult
    static func normalize(_ raw: Span<UInt8>, _ emit: (UInt8) -> Bool) -> Bool {
        var end = raw.count
        if end > 1 && raw[end - 1] == ASCII.slash { end -= 1 }
        if end == 0 { return emit(ASCII.slash) }
        var i = 0
        while i < end {
            let c = raw[i]
            if c == ASCII.percent, i + 2 < end, let decoded = Hex.byte(high: raw[i + 1], low: raw[i + 2]) {
                if ASCII.isUnreserved(decoded) {
                    guard emit(ASCII.lowercased(decoded)) else { return false }
                } else {
                    guard emit(ASCII.percent), emit(ASCII.lowercased(raw[i + 1])), emit(ASCII.lowercased(raw[i + 2]))
                    else { return false }
                }
                i += 3
            } else {
                guard emit(ASCII.lowercased(c)) else { return false }
                i += 1
            }
        }
        return true
    }
}
