/// One entry of the `prefer` option: a receiver named by its device path (anything starting with
/// `/`, compared with the path gpsd reads and, for a symlink such as `/dev/gnss/...`, with the
/// path it resolves to) or by its serial number (anything else, compared exactly with the serial
/// number discovery read from the device).
public enum ReceiverPreference: Sendable, Equatable, CustomStringConvertible {
    case path(String)
    case serialNumber(String)

    /// Parses one entry; nil for an empty one or one with control characters or quotes.
    public init?(_ text: Substring) {
        guard !text.isEmpty, !text.contains(where: { $0.isASCII && ($0.asciiValue! < 0x20 || $0 == "\"") }) else {
            return nil
        }
        self = text.hasPrefix("/") ? .path(String(text)) : .serialNumber(String(text))
    }

    public var description: String {
        switch self {
        case .path(let path): path
        case .serialNumber(let serial): "serial \(serial)"
        }
    }
}

/// Which of the receivers present TMM clients are served (docs/input.md, "Several receivers").
///
/// Pure: the receivers gpsd has open, what is known about them and the current choice in, the
/// choice out. `InputTracker` asks again after every event that can change the answer.
public enum ReceiverSelection {
    /// What the rule needs to know about one receiver gpsd has open.
    public struct Candidate: Sendable, Equatable {
        public var path: String
        /// Its serial number, when discovery read one.
        public var serialNumber: String?
        /// When gpsd opened it, relative to the others (smaller: earlier).
        public var order: Int
        /// It has delivered an epoch and has not gone quiet since.
        public var isDelivering: Bool

        public init(path: String, serialNumber: String? = nil, order: Int, isDelivering: Bool) {
            self.path = path
            self.serialNumber = serialNumber
            self.order = order
            self.isDelivering = isDelivering
        }

        func matches(_ preference: ReceiverPreference) -> Bool {
            switch preference {
            case .path(let wanted): path == wanted
            case .serialNumber(let wanted): serialNumber == wanted
            }
        }
    }

    /// The receiver to serve:
    /// 1. the receiver matching the earliest `preferences` entry among those delivering epochs
    ///    (a preferred receiver that comes back takes over again once it delivers);
    /// 2. else the current one while it delivers (no switching between equals);
    /// 3. else the earliest-opened receiver that delivers (failover);
    /// 4. else, nothing delivering: the current one if still open (its loss stays reported as
    ///    it is), else the earliest preferred one open, else the earliest open;
    /// 5. nil when gpsd has nothing open.
    public static func choose(
        among candidates: [Candidate], current: String?,
        preferences: [ReceiverPreference]
    ) -> String? {
        let byOrder = candidates.sorted { $0.order < $1.order }
        let delivering = byOrder.filter(\.isDelivering)
        for preference in preferences {
            if let match = delivering.first(where: { $0.matches(preference) }) { return match.path }
        }
        if let current, delivering.contains(where: { $0.path == current }) { return current }
        if let first = delivering.first { return first.path }
        if let current, byOrder.contains(where: { $0.path == current }) { return current }
        for preference in preferences {
            if let match = byOrder.first(where: { $0.matches(preference) }) { return match.path }
        }
        return byOrder.first?.path
    }
}
