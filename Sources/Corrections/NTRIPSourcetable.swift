import ByteCoding

// A caster's sourcetable, read only for what the client reports: the mount points it offers.
//
// A caster sends it instead of a stream when the mount point asked for does not exist (or is down):
// `STR;MOUNT;IDENTIFIER;FORMAT;...` lines, with `CAS;` and `NET;` lines among them, ending with
// `ENDSOURCETABLE` (NTRIP 1.0 and 2.0 alike). Other lines (the header lines that follow an NTRIP 1.0
// `SOURCETABLE 200 OK`) are skipped, as gpsd's net_ntrip.c skips them.
//
// Bounded: `maximumBytes` of table in all (a large public caster's table is 200 to 400 KiB), a line
// is kept up to `maximumLineBytes` (the mount point is its second field), at most
// `maximumMountPoints` names are kept, each quoted (`Redaction`) and cut to `maximumNameLength`.

/// Reads a sourcetable body from bytes in any chunking, collecting the `STR` mount points.
public struct NTRIPSourcetable: Sendable {
    /// The most bytes of table read; past it the table counts as ended.
    public static let maximumBytes = 512 * 1024
    /// The most bytes of one line kept (the rest of a longer line is read and dropped).
    public static let maximumLineBytes = 1024
    /// The most mount point names kept.
    public static let maximumMountPoints = 4096
    /// The longest mount point name kept.
    public static let maximumNameLength = 64

    /// The `STR` records' mount points, in the table's order.
    public private(set) var mountPoints: [String] = []
    /// Bytes of table read.
    public private(set) var count = 0
    /// True once `ENDSOURCETABLE`, the declared length or `maximumBytes` was reached.
    public private(set) var isComplete = false
    /// The body's length when the answer declared one (`Content-Length`).
    private let declaredLength: Int?
    /// How names are quoted.
    private let redaction: Redaction

    private var line: [UInt8] = []

    private static let streamRecord = Array("STR;".utf8)
    private static let end = Array("ENDSOURCETABLE".utf8)

    /// A reader for a table of `declaredLength` bytes (nil: until `ENDSOURCETABLE` or the end),
    /// quoting names through `redaction`.
    public init(declaredLength: Int? = nil, redaction: Redaction = .none) {
        self.declaredLength = declaredLength
        self.redaction = redaction
        isComplete = declaredLength == 0
    }

    /// Reads the next part of the table. Once `isComplete`, further bytes are ignored.
    /// - Returns: the bytes of `bytes` that belong to the table.
    @discardableResult
    public mutating func read(_ bytes: Span<UInt8>) -> Int {
        var i = 0
        while i < bytes.count && !isComplete {
            let c = bytes[i]
            i += 1
            count += 1
            if c == ASCII.lf {
                endLine()
            } else if line.count < Self.maximumLineBytes {
                line.append(c)
            }
            if count >= min(declaredLength ?? Self.maximumBytes, Self.maximumBytes) {
                // The last line may lack its line end.
                endLine()
                isComplete = true
            }
        }
        return i
    }

    /// The table ended with the connection: a last line without line end still counts.
    public mutating func finish() {
        guard !isComplete else { return }
        endLine()
        isComplete = true
    }

    private mutating func endLine() {
        defer { line.removeAll(keepingCapacity: true) }
        if line.last == ASCII.cr { line.removeLast() }
        if line.starts(with: Self.end) {
            isComplete = true
            return
        }
        guard line.starts(with: Self.streamRecord), mountPoints.count < Self.maximumMountPoints else { return }
        let name = line[Self.streamRecord.count...].prefix { $0 != ASCII.semicolon }
        guard !name.isEmpty else { return }
        mountPoints.append(redaction.quoted(name, limit: Self.maximumNameLength))
    }
}
