import ByteCoding

/// Access Code V1 (§4.2): `Authorization: Basic <code>` where
/// `code = Base64(SHA-256(UTF-8(lowercase(applicationId) + ts)))` and `ts` is the UTC second as
/// `yyyy-MM-ddTHH:mm:ssZ`.
///
/// Pure: the SHA-256 function is injected (OpenSSL in the platform tier, a reference
/// implementation in tests), so this module stays stdlib-only.
public enum AccessCodeV1 {
    /// A SHA-256 function: the 32-byte digest of the bytes.
    public typealias SHA256 = (Span<UInt8>) -> InlineArray<32, UInt8>

    /// Length of every code (Base64 of 32 bytes, padded).
    public static let codeLength = 44

    /// How many seconds either side of `now` `verify` accepts (now-1, now, now+1).
    public static let skewSeconds: Int64 = 1

    /// Days since 1970-01-01 to a proleptic Gregorian civil date (H. Hinnant's algorithm).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The days since 1970-01-01 of a proleptic Gregorian civil date (the inverse of `civil`).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The UTC second a `yyyy-MM-ddTHH:mm:ssZ` timestamp names, nil for any other text (a real
    /// calendar date, hours 0-23, minutes and seconds 0-59; no fraction, no offset).
    static func unixSeconds(timestamp text: ArraySlice<UInt8>) -> Int64? {
        guard text.count == 20 else { return nil }
        let bytes = Array(text)
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                guard ASCII.isDigit(bytes[index]) else { return nil }
                value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            }
            return value
        }
        let separators: [(Int, Character)] = [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "Z")]
        for (index, separator) in separators where bytes[index] != separator.asciiValue! { return nil }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), day >= 1, hour < 24, minute < 60, second < 60
        else { return nil }
        let days = days(fromCivil: year, month, day)
        // 31 February and friends come back as another date.
        guard civil(fromDays: days) == (year, month, day) else { return nil }
        return days * 86_400 + hour * 3_600 + minute * 60 + second
    }

    /// Appends `value` in decimal, zero-padded to `width` digits (value must be non-negative).
    static func appendDigits(_ value: Int64, width: Int, to out: inout [UInt8]) {
        var digits: [UInt8] = []
        var v = value
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(v % 10))
            v /= 10
        } while v > 0
        while digits.count < width { digits.append(UInt8(ascii: "0")) }
        out.append(contentsOf: digits.reversed())
    }

    /// The timestamp bytes of `unixSeconds` (years 0...9999; others are clamped to that range).
    static func timestampBytes(unixSeconds: Int64) -> [UInt8] {
        // 0000-01-01T00:00:00Z ... 9999-12-31T23:59:59Z.
        let seconds = min(max(unixSeconds, -62_167_219_200), 253_402_300_799)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let date = civil(fromDays: days)
        var out: [UInt8] = []
        out.reserveCapacity(20)
        appendDigits(date.year, width: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(date.month, width: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(date.day, width: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3600, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, width: 2, to: &out)
        out.append(UInt8(ascii: "Z"))
        return out
    }

    /// `yyyy-MM-ddTHH:mm:ssZ` for the UTC second `unixSeconds` (e.g. `2024-02-22T18:00:00Z`).
    public static func timestamp(unixSeconds: Int64) -> String {
        String(decoding: timestampBytes(unixSeconds: unixSeconds), as: UTF8.self)
    }

    /// The code bytes (44 ASCII bytes) for `applicationID` (lower-cased here) at `unixSeconds`.
    static func codeBytes(applicationID: String, unixSeconds: Int64, sha256: SHA256) -> [UInt8] {
        var text = Array(applicationID.lowercased().utf8)
        text.append(contentsOf: timestampBytes(unixSeconds: unixSeconds))
        let digest = sha256(text.span)
        var raw: [UInt8] = []
        raw.reserveCapacity(32)
        for i in 0..<32 { raw.append(digest[i]) }
        return Base64.encodeToBytes(raw.span)
    }

    /// The access code for `applicationID` at the UTC second `unixSeconds`.
    public static func code(applicationID: String, unixSeconds: Int64, sha256: SHA256) -> String {
        String(
            decoding: codeBytes(applicationID: applicationID, unixSeconds: unixSeconds, sha256: sha256), as: UTF8.self)
    }

    /// The code of an `Authorization` header value `Basic <code>` (scheme case-insensitive, spaces
    /// or tabs around the code ignored); nil for any other scheme or an empty code.
    public static func presentedCode(headerValue: some StringProtocol) -> [UInt8]? {
        AuthorizationHeader.credentials(headerValue, scheme: "basic")
    }

    /// Compares two byte strings in time that depends only on their lengths.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<a.count { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    /// The SHA-256 digest an application's code encodes: `idBytes` (the canonical lower-case ID
    /// as UTF-8) followed by `timestamp` (from `timestampBytes(unixSeconds:)`). The server's code
    /// table keys on this, so it hashes each ID once per second and never Base64-encodes.
    public static func digest(idBytes: [UInt8], timestamp: [UInt8], sha256: SHA256) -> InlineArray<32, UInt8> {
        var text = idBytes
        text.append(contentsOf: timestamp)
        return sha256(text.span)
    }

    /// `timestampBytes` for callers outside the module (the server's code table).
    public static func timestampUTF8(unixSeconds: Int64) -> [UInt8] { timestampBytes(unixSeconds: unixSeconds) }

    /// The digest a presented `Basic <code>` header carries, or nil when the code is not exactly
    /// the 44-character padded Base64 of 32 bytes that `code(applicationID:unixSeconds:sha256:)`
    /// produces. Exactness matters: even strict Base64 decoding ignores non-zero pad bits, and a
    /// lookup by digest must accept no code that the byte-wise comparison of `verify` would
    /// refuse, so the decoded bytes are re-encoded and compared.
    public static func presentedDigest(headerValue: some StringProtocol) -> [UInt8]? {
        guard let presented = presentedCode(headerValue: headerValue), presented.count == codeLength,
            let raw = Base64.decode(presented.span), raw.count == 32,
            Base64.encodeToBytes(raw.span) == presented
        else { return nil }
        return raw
    }

    /// Checks an `Authorization` header value against every registered application ID for the
    /// seconds `now - 1`, `now` and `now + 1`, and returns the matching ID (nil: answer 401).
    ///
    /// Every candidate code is computed and compared in constant time, without stopping at the first
    /// match, so the time taken does not depend on which ID (if any) matched or where the codes differ.
    public static func verify(
        headerValue: some StringProtocol, registeredIDs: some Sequence<GUID>, now: Int64,
        sha256: SHA256
    ) -> GUID? {
        guard let presented = presentedCode(headerValue: headerValue), presented.count == codeLength else { return nil }
        var match: GUID?
        for id in registeredIDs {
            for offset in -skewSeconds...skewSeconds {
                let (second, overflow) = now.addingReportingOverflow(offset)
                if overflow { continue }
                let expected = codeBytes(applicationID: id.canonical, unixSeconds: second, sha256: sha256)
                if constantTimeEqual(presented, expected) && match == nil { match = id }
            }
        }
        return match
    }
}
