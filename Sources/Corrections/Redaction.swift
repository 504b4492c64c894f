import ByteCoding

// Text from outside (a caster's status line or sourcetable, the executor's error) goes into states
// and log lines, which operators, REST clients and /events see. Two rules make it fit: only
// printable ASCII of a bounded length (a caster's bytes must not reach a terminal or a JSON string
// raw), and never the password. A caster could echo the request, so the password and the Base64
// credentials are blanked, and blanked before the text is cut: cutting first could leave a
// password's first half in view.

/// Makes outside text safe to show: secrets blanked, then printable ASCII, cut to a length.
public struct Redaction: Sendable, Equatable {
    /// What replaces a secret.
    public static let mask = "***"
    /// The longest text kept; a longer one is cut and ends in `...`.
    public static let quotedLength = 80

    /// The byte strings never to show (empty ones are dropped).
    let secrets: [[UInt8]]

    /// Nothing to hide: only sanitises.
    public static let none = Redaction(secrets: [])

    public init(secrets: [String]) {
        // Longest first: a password can be part of the Base64 credentials ("u:pw" is "dTpwdw=="),
        // and blanking it first would leave the rest of them in view.
        self.secrets = secrets.map { Array($0.utf8) }.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
    }

    /// What a session with `source` must hide: its password and its Base64 credentials.
    public init(hidingCredentialsOf source: NTRIPSource) {
        self.init(secrets: [source.password, NTRIPRequest.basicCredentials(for: source)].compactMap { $0 })
    }

    /// `bytes` with every secret replaced by `mask`, every byte that is not printable ASCII by `?`,
    /// and cut to `limit` characters.
    public func quoted(_ bytes: some Collection<UInt8>, limit: Int = quotedLength) -> String {
        var text = Array(bytes)
        for secret in secrets { text = Self.replacing(secret, in: text) }
        var out: [UInt8] = []
        for c in text.prefix(limit) { out.append(ASCII.isPrintable(c) ? c : ASCII.question) }
        if text.count > limit { out += Array("...".utf8) }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` as `quoted(_:)` makes bytes.
    public func quoted(_ text: String, limit: Int = quotedLength) -> String {
        quoted(Array(text.utf8), limit: limit)
    }

    private static func replacing(_ secret: [UInt8], in text: [UInt8]) -> [UInt8] {
        guard text.count >= secret.count else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var i = 0
        while i < text.count {
            if i + secret.count <= text.count && text[i..<(i + secret.count)].elementsEqual(secret) {
                out += Array(mask.utf8)
                i += secret.count
            } else {
                out.append(text[i])
                i += 1
            }
        }
        return out
    }
}
