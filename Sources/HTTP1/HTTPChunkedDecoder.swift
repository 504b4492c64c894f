import ByteCoding

// Incremental decoder of the chunked transfer coding (RFC 9112 §7.1), for request bodies.
//
// Why chunked is supported rather than refused with 411: .NET's `JsonContent` (what
// `HttpClient.PutAsJsonAsync` sends) cannot compute its length and goes out chunked
// (dotnet/runtime#49357, #70793), and the MAUI TMM samples are .NET. The other TMM clients
// (browsers, OkHttp, URLSession, curl) send `Content-Length`.
//
// A state machine over bytes in any chunking: feed what arrived, it appends the chunk data to the
// caller's array and returns how many bytes it consumed (all of them until the message ends).
// Line ends are CRLF or a bare LF, as in the head. Chunk extensions are checked for forbidden bytes
// and ignored ("A recipient MUST ignore unrecognized chunk extensions"); trailer fields are
// checked like header fields and discarded (RFC 9112 §7.1.2 lets a recipient discard them).

/// Decodes a chunked request body, chunk by chunk, in whatever pieces the bytes arrive.
public struct HTTPChunkedDecoder: Sendable, Equatable {
    enum State: Sendable, Equatable {
        /// Reading the hexadecimal chunk size.
        case size
        /// After the size: optional whitespace, then `;` and extensions, up to the line end.
        case extensions(afterSemicolon: Bool)
        /// A CR ended the size line; LF must follow.
        case sizeLineFeed
        /// Inside chunk data: this many bytes to go.
        case data(remaining: Int)
        /// After chunk data: CRLF (or LF) must follow.
        case dataEnd
        /// After chunk data and a CR: LF must follow.
        case dataLineFeed
        /// At the start of a trailer line (or of the final empty line).
        case trailerLineStart
        /// Inside a trailer field name.
        case trailerName
        /// Inside a trailer field value.
        case trailerValue
        /// A CR ended a trailer line; LF must follow.
        case trailerLineFeed
        /// A CR started the final empty line; LF must follow.
        case finalLineFeed
        /// The body is complete.
        case done
    }

    var state = State.size
    var chunkSize = 0
    var sizeDigits = 0
    var lineBytes = 0
    var trailerBytes = 0
    /// Decoded body bytes so far.
    public private(set) var decodedCount = 0
    /// The most body bytes the decoder accepts, all chunks together.
    let maximumBodyBytes: Int
    /// The largest chunk the decoder accepts.
    let maximumChunkBytes: Int

    /// A decoder for a request body: at most `HTTPLimits.maxBodyBytes`, all chunks together.
    public init() {
        maximumBodyBytes = HTTPLimits.maxBodyBytes
        maximumChunkBytes = HTTPLimits.maxBodyBytes
    }

    /// A decoder for a body that never ends, such as an NTRIP caster's RTCM stream: no limit on the
    /// whole, but each chunk's declared size is still capped, so that a size line such as
    /// `FFFFFFFFFFFFFFFFFFFF` fails at its fifth or so digit instead of overflowing or asking the
    /// caller to reserve that much. The caller passes an empty array to each `decode` and takes the
    /// bytes out, so memory stays within one chunk.
    public init(streamWithMaximumChunkBytes maximumChunkBytes: Int) {
        // The size is accumulated a hex digit at a time and checked after each: one digit past the
        // limit must still fit an Int.
        precondition(maximumChunkBytes > 0 && maximumChunkBytes <= Int.max >> 4, "chunk limit \(maximumChunkBytes)")
        maximumBodyBytes = Int.max
        self.maximumChunkBytes = maximumChunkBytes
    }

    /// True once the last chunk and the trailer section have been read.
    public var isComplete: Bool { state == .done }

    /// Decodes as much of `input` as belongs to the body, appending chunk data to `body`.
    ///
    /// - Returns: the bytes of `input` consumed: all of them while the body is incomplete; up to and
    ///   including the final empty line once it completes (the rest is the next request).
    /// - Throws: `.contentTooLarge` as soon as a chunk size would take the body past
    ///   `HTTPLimits.maxBodyBytes` (for a stream: as soon as one chunk's size passes its limit), and
    ///   the framing rule a byte broke otherwise.
    public mutating func decode(_ input: Span<UInt8>, into body: inout [UInt8]) throws(HTTPRequestError) -> Int {
        var i = 0
        while i < input.count {
            let c = input[i]
            switch state {
            case .done:
                return i
            case .size:
                if let digit = Hex.value(c) {
                    chunkSize = chunkSize << 4 | Int(digit)  // at most maximumChunkBytes * 16: no overflow
                    sizeDigits += 1
                    guard chunkSize <= maximumChunkBytes, chunkSize <= maximumBodyBytes - decodedCount else {
                        throw .contentTooLarge
                    }
                    try countLineByte()
                    i += 1
                } else {
                    guard sizeDigits > 0 else { throw .invalidChunkSize }
                    state = .extensions(afterSemicolon: false)  // look at `c` again there
                }
            case .extensions(let afterSemicolon):
                if c == ASCII.cr {
                    state = .sizeLineFeed
                } else if c == ASCII.lf {
                    endSizeLine()
                } else if !afterSemicolon {
                    // chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )
                    if c == ASCII.semicolon {
                        state = .extensions(afterSemicolon: true)
                    } else if !ASCII.isBlank(c) {
                        throw .invalidChunkSize
                    }
                    try countLineByte()
                } else {
                    guard ASCII.isFieldValueChar(c) else { throw .invalidChunkSize }
                    try countLineByte()
                }
                i += 1
            case .sizeLineFeed:
                guard c == ASCII.lf else { throw .bareCarriageReturn }
                endSizeLine()
                i += 1
            case .data(let remaining):
                let n = min(remaining, input.count - i)
                body.reserveCapacity(body.count + remaining)
                for j in i..<(i + n) { body.append(input[j]) }
                i += n
                decodedCount += n
                state = n == remaining ? .dataEnd : .data(remaining: remaining - n)
            case .dataEnd:
                if c == ASCII.cr {
                    state = .dataLineFeed
                } else if c == ASCII.lf {
                    state = .size
                } else {
                    throw .chunkDataNotTerminated
                }
                i += 1
            case .dataLineFeed:
                guard c == ASCII.lf else { throw .bareCarriageReturn }
                state = .size
                i += 1
            case .trailerLineStart:
                try countTrailerByte()
                if c == ASCII.cr {
                    state = .finalLineFeed
                } else if c == ASCII.lf {
                    state = .done
                } else if ASCII.isBlank(c) {
                    throw .obsoleteLineFolding
                } else if ASCII.isTokenChar(c) {
                    state = .trailerName
                } else {
                    throw .fieldNameNotToken
                }
                i += 1
            case .trailerName:
                try countTrailerByte()
                if c == ASCII.colon {
                    state = .trailerValue
                } else if ASCII.isBlank(c) {
                    throw .whitespaceBeforeColon
                } else if c == ASCII.cr || c == ASCII.lf {
                    throw .missingColon
                } else if !ASCII.isTokenChar(c) {
                    throw .fieldNameNotToken
                }
                i += 1
            case .trailerValue:
                try countTrailerByte()
                if c == ASCII.cr {
                    state = .trailerLineFeed
                } else if c == ASCII.lf {
                    state = .trailerLineStart
                } else if !ASCII.isFieldValueChar(c) {
                    throw .fieldValueCharacterNotAllowed
                }
                i += 1
            case .trailerLineFeed:
                try countTrailerByte()
                guard c == ASCII.lf else { throw .bareCarriageReturn }
                state = .trailerLineStart
                i += 1
            case .finalLineFeed:
                try countTrailerByte()
                guard c == ASCII.lf else { throw .bareCarriageReturn }
                state = .done
                i += 1
            }
        }
        return i
    }

    private mutating func countLineByte() throws(HTTPRequestError) {
        lineBytes += 1
        guard lineBytes <= HTTPLimits.maxChunkLineBytes else { throw .chunkLineTooLong }
    }

    private mutating func countTrailerByte() throws(HTTPRequestError) {
        trailerBytes += 1
        guard trailerBytes <= HTTPLimits.maxTrailerBytes else { throw .headerSectionTooLarge }
    }

    /// The size line ended: chunk data follows, or the last chunk (size 0) and the trailer section.
    private mutating func endSizeLine() {
        state = chunkSize == 0 ? .trailerLineStart : .data(remaining: chunkSize)
        chunkSize = 0
        sizeDigits = 0
        lineBytes = 0
    }
}
