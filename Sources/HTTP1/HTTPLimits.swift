/// Every limit the HTTP/1.1 parser enforces, with its reason. Each is checked while scanning,
/// before anything is stored, and each has a test at exactly the limit and one over it.
public enum HTTPLimits {
    /// Bytes in a request head: request line, field lines and the empty line that ends the head
    /// (and any empty lines before the request line). 8 KiB is the default of nginx
    /// (`large_client_header_buffers`), Node.js and Go's `DefaultMaxHeaderBytes` range; TMM clients
    /// send heads of 200 to 600 bytes, a browser with cookies stays well under it. It also keeps
    /// every offset of the head within a `UInt16`. Over it: 431.
    public static let maxHeadBytes = 8 * 1024

    /// Field lines in a request head. Browsers send about 15 to 20 (a CORS preflight included),
    /// the .NET, OkHttp and URLSession clients fewer than 10; 64 is picohttpparser's own test
    /// size and sizes the inline field table (`HTTPRequestHead` stores 64 entries of 8 bytes, no
    /// heap). Over it: 431.
    public static let maxFieldCount = 64

    /// Bytes in a request-target. The longest TMM target is `/api/v1/positionStream?format=locationV2`
    /// (40 bytes); 2 KiB leaves room for tools that append query strings and stays far below
    /// `maxHeadBytes`, so a long target gets its own status. Over it: 414.
    public static let maxTargetLength = 2 * 1024

    /// Bytes in a method token. The longest registered method (`UPDATEREDIRECTREF`) has 17; we
    /// implement 4 (GET, PUT, OPTIONS, HEAD). Over it: 501, as RFC 9112 §3 suggests.
    public static let maxMethodLength = 32

    /// Bytes in a request body, declared (`Content-Length`) or decoded (chunked). TMM request
    /// bodies are small JSON objects (`{"isConnected":true}`, a correction-source record with an
    /// NTRIP host and credentials: under 1 KiB); 64 KiB leaves a wide margin. Over it: 413.
    public static let maxBodyBytes = 64 * 1024

    /// Bytes in one chunk-size line of a chunked body, chunk extensions included (without the line
    /// end). The size of a 64 KiB chunk takes 5 hex digits; clients send no extensions. RFC 9112
    /// §7.1.1 asks servers to limit extensions. Over it: 400.
    public static let maxChunkLineBytes = 256

    /// Bytes in the trailer section of a chunked body (its field lines and the final empty line).
    /// Trailers are parsed and discarded; clients of TMM send none. Over it: 431.
    public static let maxTrailerBytes = 4 * 1024
}
