extension Unicode.Scalar {
    /// Whether a terminal, a log reader or a line-oriented parser acts on this character rather
    /// than showing it: C0 controls but tab, DEL, C1 controls (U+0085 NEL is a line break to some
    /// readers), the line and paragraph separators U+2028/U+2029 (line breaks to JavaScript and
    /// some editors), and the bidirectional formatting characters U+200E/F, U+202A-U+202E and
    /// U+2066-U+2069, which make text read differently from what it holds (U+202E turns
    /// `gnp.exe` into what looks like `exe.png`).
    ///
    /// The one definition for log lines (escaped) and values another party stores in the daemon
    /// (refused).
    public var isTextControl: Bool {
        switch value {
        case 0x09: false
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
