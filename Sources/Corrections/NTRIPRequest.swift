import ByteCoding

// The client's request, in the two dialects casters speak.
//
// NTRIP 2.0 (RTCM 10410.1) is HTTP/1.1: `GET /MOUNT HTTP/1.1` with `Host`, `Ntrip-Version:
// Ntrip/2.0`, `User-Agent` (which must start with "NTRIP"), Basic `Authorization` and `Connection:
// close`, the header set the standard's own example and pygnssutils send. NTRIP 1.0 is the older
// Icecast-style dialect: `GET /MOUNT HTTP/1.0`, `User-Agent` and `Authorization`, as RTKLIB's
// stream.c sends it; `Host` is added because HTTP/1.0 allows it and virtual-hosted casters need it.
// A Rev 2 caster must also serve Rev 1 clients, so falling back to Rev 1 is never a dead end.

/// Which NTRIP dialect a request speaks.
public enum NTRIPRevision: Int, Sendable, Equatable {
    case version1 = 1
    case version2 = 2
}

/// Builds the request bytes a session sends when its connection opens.
public enum NTRIPRequest {
    /// The request for `source` in `revision`'s dialect, ending with the empty line.
    public static func bytes(for source: NTRIPSource, userAgent: String, revision: NTRIPRevision) -> [UInt8] {
        var text = "GET /" + NTRIPSource.pathEncoded(source.mountPoint)
        text += revision == .version2 ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n"
        text += "Host: " + hostField(for: source) + "\r\n"
        if revision == .version2 { text += "Ntrip-Version: Ntrip/2.0\r\n" }
        text += "User-Agent: " + fieldValue(userAgent) + "\r\n"
        if let credentials = basicCredentials(for: source) { text += "Authorization: Basic " + credentials + "\r\n" }
        text += "Connection: close\r\n\r\n"
        return Array(text.utf8)
    }

    /// The Base64 of `user:password` (RFC 7617), or nil when the source has no user.
    public static func basicCredentials(for source: NTRIPSource) -> String? {
        guard let user = source.user else { return nil }
        return Base64.encode(user + ":" + (source.password ?? ""))
    }

    /// `Host`'s value (RFC 9110 §7.2): the host, with the port unless it is the scheme's default
    /// (443 for TLS, 80 without). NTRIP's 2101 is no HTTP default, so it is written.
    static func hostField(for source: NTRIPSource) -> String {
        let defaultPort: UInt16 = source.usesTLS ? 443 : 80
        return source.hostForURL + (source.port == defaultPort ? "" : ":" + String(source.port))
    }

    /// `text` without the bytes a field value may not hold (controls, DEL): a configured user agent
    /// cannot end the field or inject another.
    static func fieldValue(_ text: String) -> String {
        String(decoding: text.utf8.filter { !ASCII.isControl($0) }, as: UTF8.self)
    }
}
