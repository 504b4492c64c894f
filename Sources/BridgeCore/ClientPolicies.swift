// Per-client policies the server applies, kept apart from its sockets: pure, tested on their own.

/// A token bucket: `burst` tokens at once, then one more per `refillInterval`; it starts full, and
/// a full bucket gains nothing while it waits. `take` spends a token only if one is there;
/// `spend` always spends and says how long the spend waits (a reservation on the next token).
/// The one bucket of the server's budgets: failed codes, KeyUpdates, Access Code V2's
/// decryptions and auto-registrations.
public struct RateBudget: Sendable, Equatable {
    public let burst: Int
    public let refillInterval: Int64
    var tokens: Int
    var refilledAt: Int64 = 0

    public init(burst: Int, refillInterval: Int64) {
        self.burst = max(1, burst)
        self.refillInterval = max(1, refillInterval)
        tokens = self.burst
    }

    /// `perSecond` tokens a second, and a burst of one second's worth.
    public init(perSecond: Int) {
        self.init(burst: perSecond, refillInterval: 1_000_000_000 / Int64(max(1, perSecond)))
    }

    /// Takes a token and returns how long its spend waits: 0 while tokens are left; else until
    /// the next token is earned, which this spend then uses up (so a client that keeps spending
    /// gets one spend per `refillInterval`, not two).
    public mutating func spend(now: Int64) -> Int64 {
        credit(now: now)
        if tokens > 0 {
            tokens -= 1
            return 0
        }
        refilledAt += refillInterval
        return refilledAt - now
    }

    /// Takes a token if one is left at `now`.
    public mutating func take(now: Int64) -> Bool {
        credit(now: now)
        guard tokens > 0 else { return false }
        tokens -= 1
        return true
    }

    /// Tokens that could be taken at `now`.
    public func available(now: Int64) -> Int {
        var copy = self
        copy.credit(now: now)
        return copy.tokens
    }

    private mutating func credit(now: Int64) {
        if tokens == burst { refilledAt = now }
        let earned = max(0, (now - refilledAt) / refillInterval)
        if earned > 0 {
            tokens = min(burst, tokens + Int(clamping: earned))
            refilledAt += earned * refillInterval
        }
    }
}

/// Failed access codes a connection may send before each further failure is answered late:
/// a burst for clients whose clock or registration is off, then one per `refillInterval`.
/// A token bucket, so a client that fails now and then is never slowed.
public struct AuthenticationBudget: Sendable {
    public static let burst = 4
    public static let refillInterval: Int64 = 1_000_000_000
    var bucket = RateBudget(burst: burst, refillInterval: refillInterval)

    public init() {}

    /// Takes a token for a failure and returns how long its answer waits (`RateBudget.spend`).
    public mutating func spend(now: Int64) -> Int64 { bucket.spend(now: now) }
}

/// Which refused origins are logged: each distinct one the first time it is refused in a window,
/// up to `distinctPerWindow` of them, and every thousandth refusal with the count (as refused
/// connections are). A client sending a new made-up origin each time thus adds at most
/// `distinctPerWindow` lines a window, plus one per thousand refusals.
public struct RefusedOriginLog: Sendable {
    public static let window: Int64 = 600_000_000_000
    public static let distinctPerWindow = 16
    /// The longest origin text logged (a field value may be kilobytes).
    public static let maxLoggedLength = 100
    private var windowStart: Int64?
    private var logged: Set<String> = []

    public init() {}

    /// Whether the `count`-th refusal so far, of `origin` (as `printable` shows it), is logged.
    public mutating func shouldLog(_ origin: String, count: Int, now: Int64) -> Bool {
        if windowStart.map({ now - $0 >= Self.window }) ?? true {
            windowStart = now
            logged.removeAll(keepingCapacity: true)
        }
        let isNew = logged.count < Self.distinctPerWindow && logged.insert(origin).inserted
        return isNew || count == 1 || count % 1000 == 0
    }

    /// `sent` as a log line may carry it: printable ASCII (anything else becomes `?`, so a field
    /// cannot forge log output), cut after `maxLoggedLength` bytes.
    public static func printable(_ sent: String) -> String {
        var bytes: [UInt8] = []
        for byte in sent.utf8.prefix(maxLoggedLength) {
            bytes.append(byte >= 0x20 && byte < 0x7F ? byte : UInt8(ascii: "?"))
        }
        return String(decoding: bytes, as: UTF8.self) + (sent.utf8.count > maxLoggedLength ? "..." : "")
    }
}
