import ByteCoding

/// A GUID (Application ID) in the 8-4-4-4-12 hex form, e.g. `12345678-1234-1234-1234-123456789abc`.
///
/// Parsing is case-insensitive and strict about the shape (36 characters, hyphens at 8, 13, 18 and
/// 23, hex digits elsewhere; no braces, no spaces). The stored form is canonical lower-case, which is
/// also what Access Code V1 hashes (§4.2), so equal GUIDs compare and hash equal whatever the case
/// they were written in.
public struct GUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The canonical lower-case text.
    public let canonical: String

    /// Parses `text`; nil unless it is an 8-4-4-4-12 hex GUID.
    public init?(_ text: some StringProtocol) {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(36)
        var index = 0
        for c in utf8 {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard c == UInt8(ascii: "-") else { return nil }
                out.append(c)
            } else {
                guard Hex.isDigit(c) else { return nil }
                out.append(ASCII.lowercased(c))
            }
            index += 1
        }
        canonical = String(decoding: out, as: UTF8.self)
    }

    public var description: String { canonical }

    /// The nil UUID, 00000000-0000-0000-0000-000000000000 (RFC 9562 §5.9): what an unset id
    /// field holds, never an application's id. It is refused wherever an application is named:
    /// registration requests, Access Code V2 claims, `allow-app-id`, and the registration policy
    /// (so no code of it is accepted even from a registry that holds it).
    public var isNil: Bool { canonical == "00000000-0000-0000-0000-000000000000" }

    /// Why the nil UUID is refused, in every refusal that names it.
    public static let nilRefusal =
        "00000000-0000-0000-0000-000000000000 (the nil UUID) is not an application id: use the application's own GUID"

    public static func < (lhs: GUID, rhs: GUID) -> Bool { lhs.canonical < rhs.canonical }
}
