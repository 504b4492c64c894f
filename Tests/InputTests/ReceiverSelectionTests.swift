// Which receiver TMM clients are served (ReceiverSelection); the `prefer` option that steers it is
// read by BridgeCore (BridgeCoreTests/PreferOptionTests).
import TestSupport
import Testing

@testable import Input

private typealias Candidate = ReceiverSelection.Candidate

private func choose(_ candidates: [Candidate], current: String? = nil, prefer: [ReceiverPreference] = []) -> String? {
    ReceiverSelection.choose(among: candidates, current: current, preferences: prefer)
}

private let usb = Candidate(path: "/dev/ttyUSB0", serialNumber: "5432A", order: 0, isDelivering: true)
private let acm = Candidate(path: "/dev/ttyACM0", serialNumber: "6110B", order: 1, isDelivering: true)
private let rfcomm = Candidate(path: "/dev/rfcomm0", order: 2, isDelivering: true)

private func silent(_ candidate: Candidate) -> Candidate {
    var copy = candidate
    copy.isDelivering = false
    return copy
}

@Suite("ReceiverSelection: which receiver is served", .tags(.unit))
struct ReceiverSelectionTests {
    @Test func withoutPreferenceTheFirstOpenedIsServedAndKept() {
        #expect(choose([]) == nil)
        #expect(choose([acm, usb]) == usb.path, "the earliest opened, whatever the list order")
        #expect(choose([usb, acm], current: acm.path) == acm.path, "no switching between equals")
        #expect(choose([silent(usb), acm]) == acm.path, "one that delivers beats an earlier silent one")
    }

    @Test func theServedOneGoingAwayFailsOverToTheNextInOpeningOrder() {
        #expect(choose([acm, rfcomm], current: usb.path) == acm.path, "usb closed")
        #expect(choose([silent(usb), acm, rfcomm], current: usb.path) == acm.path, "usb silent")
        #expect(choose([usb, acm, rfcomm], current: acm.path) == acm.path, "usb back: acm keeps serving")
    }

    @Test func nothingDeliveringKeepsTheCurrentOneElseTheFirstOpen() {
        #expect(choose([silent(usb), silent(acm)], current: acm.path) == acm.path)
        #expect(choose([silent(usb), silent(acm)]) == usb.path)
        #expect(
            choose([silent(acm), silent(usb)], prefer: [.serialNumber("6110B")]) == acm.path,
            "a preferred one open but silent is named before the others")
    }

    @Test func preferencesWinInTheirOrderOnceTheReceiverDelivers() {
        let prefer: [ReceiverPreference] = [.path("/dev/rfcomm0"), .serialNumber("6110B")]
        #expect(choose([usb, acm, rfcomm], current: usb.path, prefer: prefer) == rfcomm.path)
        #expect(
            choose([usb, acm, silent(rfcomm)], current: rfcomm.path, prefer: prefer) == acm.path,
            "the first preference silent: the second")
        #expect(
            choose([usb, silent(acm)], current: usb.path, prefer: prefer) == usb.path,
            "preferred ones not delivering yet: the current one stays")
        #expect(
            choose([usb, acm], current: usb.path, prefer: prefer) == acm.path,
            "a preferred receiver that comes back and delivers takes over again")
        #expect(
            choose([usb, acm], current: acm.path, prefer: [.serialNumber("nope"), .path("/dev/nope")]) == acm.path)
    }
}
