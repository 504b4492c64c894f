import ByteCoding

// Accessors of a parsed head. Each takes back the bytes the head was parsed from (the same span,
// or any span holding the request at the same indices) and returns views into them; only the
// `String` conveniences copy.

extension HTTPRequestHead {
    /// The method's bytes (useful for `.other`).
    @_lifetime(copy bytes)
    public func method(in bytes: Span<UInt8>) -> Span<UInt8> {
        bytes.extracting(methodRange)
    }

    /// The whole request-target as sent (percent-encoded).
    @_lifetime(copy bytes)
    public func target(in bytes: Span<UInt8>) -> Span<UInt8> {
        bytes.extracting(targetRange)
    }

    /// The path as sent (percent-encoded): `/api/v1/receiver/` for `/api/v1/receiver/?x=1`;
    /// the part after the authority in absolute-form, `*` in asterisk-form, empty in authority-form.
    @_lifetime(copy bytes)
    public func path(in bytes: Span<UInt8>) -> Span<UInt8> {
        bytes.extracting(pathRange)
    }

    /// The query after `?` as sent (percent-encoded; possibly empty), or nil without a `?`.
    @_lifetime(copy bytes)
    public func query(in bytes: Span<UInt8>) -> Span<UInt8>? {
        guard let range = queryRange else { return nil }
        return bytes.extracting(range)
    }

    /// The name of field line `index` (0 ..< `fieldCount`), as sent.
    @_lifetime(copy bytes)
    public func name(at index: Int, in bytes: Span<UInt8>) -> Span<UInt8> {
        precondition(index >= 0 && index < fieldCount, "field index \(index) out of 0..<\(fieldCount)")
        return bytes.extracting(nameRange(index))
    }

    /// The value of field line `index`, without leading and trailing whitespace.
    @_lifetime(copy bytes)
    public func value(at index: Int, in bytes: Span<UInt8>) -> Span<UInt8> {
        precondition(index >= 0 && index < fieldCount, "field index \(index) out of 0..<\(fieldCount)")
        return bytes.extracting(valueRange(index))
    }

    /// The index of the first field line at or after `from` whose name is `name`, compared
    /// case-insensitively (RFC 9110 §5.1); nil if there is none.
    public func index(of name: String, from: Int = 0, in bytes: Span<UInt8>) -> Int? {
        var index = max(0, from)
        while index < fieldCount {
            if ASCII.equalsIgnoringCase(bytes, nameRange(index), name) { return index }
            index += 1
        }
        return nil
    }

    /// The value of the first field named `name` (case-insensitive), or nil.
    @_lifetime(copy bytes)
    public func value(of name: String, in bytes: Span<UInt8>) -> Span<UInt8>? {
        guard let index = index(of: name, in: bytes) else { return nil }
        return bytes.extracting(valueRange(index))
    }

    /// The value of the first field named `name` as a `String` (bytes that are not UTF-8 become
    /// U+FFFD), or nil.
    public func string(of name: String, in bytes: Span<UInt8>) -> String? {
        guard let index = index(of: name, in: bytes) else { return nil }
        return makeString(bytes, valueRange(index))
    }

    /// How many field lines are named `name` (case-insensitive).
    public func count(of name: String, in bytes: Span<UInt8>) -> Int {
        var count = 0
        for index in 0..<fieldCount where ASCII.equalsIgnoringCase(bytes, nameRange(index), name) { count += 1 }
        return count
    }

    /// Whether the comma-separated lists of every field named `name` hold `token`, both compared
    /// case-insensitively: `listContains("upgrade", inField: "Connection", in: bytes)`.
    public func listContains(_ token: String, inField name: String, in bytes: Span<UInt8>) -> Bool {
        for index in 0..<fieldCount where ASCII.equalsIgnoringCase(bytes, nameRange(index), name) {
            let value = valueRange(index)
            var cursor = value.lowerBound
            while let element = nextListElement(bytes, &cursor, value.upperBound) {
                if ASCII.equalsIgnoringCase(bytes, element, token) { return true }
            }
        }
        return false
    }

    /// The path normalised for routing (`HTTPPath`): `/API/v1/Receiver/` gives `/api/v1/receiver`.
    public func normalizedPath(in bytes: Span<UInt8>) -> String {
        HTTPPath(normalizing: bytes.extracting(pathRange)).description
    }

    /// Whether the path matches `route` ignoring case and one trailing slash (TMM-API.md §4.1).
    public func pathMatches(_ route: HTTPPath, in bytes: Span<UInt8>) -> Bool {
        route.matches(bytes.extracting(pathRange))
    }

    /// The decoded value of the first query parameter named `key` (`HTTPQuery.value(of:in:)`),
    /// or nil: `queryValue("format", in: bytes)` is `"locationV2"` for `?format=locationV2`.
    public func queryValue(_ key: String, in bytes: Span<UInt8>) -> String? {
        guard let range = queryRange else { return nil }
        return HTTPQuery.string(of: key, in: bytes.extracting(range))
    }
}

/// `bytes[range]` as a String; invalid UTF-8 becomes U+FFFD.
func makeString(_ bytes: Span<UInt8>, _ range: Range<Int>) -> String {
    var copy: [UInt8] = []
    copy.reserveCapacity(range.count)
    for i in range { copy.append(bytes[i]) }
    return String(decoding: copy, as: UTF8.self)
}
