// The per-client policies, on their own: the failed-access-code budget and the refused-origin log.
import BridgeCore
import TestSupport
import Testing

private let second: Int64 = 1_000_000_000

@Suite("Client policies", .tags(.unit))
struct ClientPoliciesTests {
    /// Four failures are answered at once; then one answer per second, each waiting until its
    /// token is earned; a client that stops failing for long enough gets its burst back.
    @Test func failedAccessCodesGetABurstThenOneASecond() {
        var budget = AuthenticationBudget()
        for _ in 0..<AuthenticationBudget.burst { #expect(budget.spend(now: 0) == 0) }
        #expect(budget.spend(now: 0) == second)
        #expect(budget.spend(now: 0) == 2 * second, "the next waits for the token after")
        #expect(budget.spend(now: 10 * second) == 0, "tokens were earned meanwhile")
        var rested = AuthenticationBudget()
        for _ in 0..<AuthenticationBudget.burst { _ = rested.spend(now: 0) }
        for _ in 0..<AuthenticationBudget.burst { #expect(rested.spend(now: 100 * second) == 0) }
    }

    /// The bucket under both budgets (failed codes; a TLS client's KeyUpdates): its own burst.
    @Test func aRateBudgetHasItsOwnBurst() {
        var budget = RateBudget(burst: 8, refillInterval: second)
        for _ in 0..<8 { #expect(budget.spend(now: 5 * second) == 0) }
        #expect(budget.spend(now: 5 * second) == second)
        #expect(budget.spend(now: 7 * second) == 0, "one earned a second")
    }

    @Test func aClientThatFailsNowAndThenIsNeverSlowed() {
        var budget = AuthenticationBudget()
        for i in 0..<100 { #expect(budget.spend(now: Int64(i) * second) == 0) }
    }

    /// Each distinct origin is logged once per window, up to the limit; beyond it only the first
    /// refusal and every thousandth; a new window starts over.
    @Test func refusedOriginsAreLoggedSparingly() {
        var log = RefusedOriginLog()
        var count = 0
        func refuse(_ origin: String, at now: Int64) -> Bool {
            count += 1
            return log.shouldLog(origin, count: count, now: now)
        }
        #expect(refuse("https://a.example", at: 0), "the first refusal")
        #expect(!refuse("https://a.example", at: 1), "the same origin again")
        for i in 1..<RefusedOriginLog.distinctPerWindow {
            #expect(refuse("https://\(i).example", at: 2), "distinct origin \(i)")
        }
        for i in 0..<(998 - RefusedOriginLog.distinctPerWindow - 1) {
            #expect(!refuse("https://new\(i).example", at: 3), "past the limit")
        }
        #expect(count == 998)
        #expect(!refuse("https://x.example", at: 3))
        #expect(refuse("https://y.example", at: 3), "the thousandth")
        #expect(refuse("https://a.example", at: RefusedOriginLog.window), "a new window")
    }

    @Test func originsAreLoggedPrintableAndShort() {
        #expect(RefusedOriginLog.printable("https://a.example\r\nforged: line") == "https://a.example??forged: line")
        let long = String(repeating: "a", count: 500)
        #expect(
            RefusedOriginLog.printable(long) == String(repeating: "a", count: RefusedOriginLog.maxLoggedLength) + "...")
        #expect(RefusedOriginLog.printable("caf\u{E9}") == "caf??")
    }
}
