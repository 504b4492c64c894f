import TestSupport
import Testing
import TMMProtocol

@Suite("Port plan", .tags(.unit))
struct PortPlanTests {
    private func resolve(busy: Set<UInt16>, configuration: PortPlan.Configuration = .init()) throws -> PortAssignment? {
        try PortPlan.resolve(configuration: configuration) { !busy.contains($0) }
    }

    @Test func servers() {
        #expect(TMMServer.allCases.map(\.defaultPort) == [9635, 9636, 9637, 9638, 9639, 9640])
        #expect(
            TMMServer.allCases.map(\.registrationKey) == [
                "locationPort", "locationSecurePort", "apiPort", "apiSecurePort",
                "locationV2Port", "locationV2SecurePort",
            ])
        for server in TMMServer.allCases { #expect(PortAssignment.defaults[server] == server.defaultPort) }
    }

    @Test func allFree() throws {
        #expect(try resolve(busy: []) == .defaults)
    }

    @Test func apiBusyFallsBackTo9650() throws {
        var expected = PortAssignment.defaults
        expected.api = 9650
        #expect(try resolve(busy: [9637]) == expected)
    }

    @Test func apiAnd9650BusyFallsBackTo9651() throws {
        var expected = PortAssignment.defaults
        expected.api = 9651
        #expect(try resolve(busy: [9637, 9650]) == expected)
    }

    @Test func severalBusy() throws {
        // Three defaults and two fallback ports busy: each server takes the next free port, never one
        // another server holds.
        let result = try #require(try resolve(busy: [9635, 9637, 9640, 9650, 9652]))
        #expect(
            result
                == PortAssignment(
                    location: 9651, locationSecure: 9636, api: 9653, apiSecure: 9638,
                    locationV2: 9639, locationV2Secure: 9654))
        #expect(Set(TMMServer.allCases.map { result[$0] }).count == 6)
    }

    @Test func allDefaultsBusy() throws {
        let busy = Set<UInt16>(9635...9640)
        #expect(
            try resolve(busy: busy)
                == PortAssignment(
                    location: 9650, locationSecure: 9651, api: 9652, apiSecure: 9653,
                    locationV2: 9654, locationV2Secure: 9655))
    }

    @Test func fallbackSkipsOtherServersBasePorts() throws {
        // A custom base port inside the fallback range is reserved for its server.
        var base = PortAssignment.defaults
        base.locationV2Secure = 9650
        let configuration = PortPlan.Configuration(basePorts: base)
        var expected = base
        expected.location = 9651
        #expect(try resolve(busy: [9635], configuration: configuration) == expected)
    }

    @Test func exhaustedRange() throws {
        let configuration = PortPlan.Configuration(fallbackStart: 9650, fallbackEnd: 9651)
        #expect(try resolve(busy: [9635, 9636, 9637], configuration: configuration) == nil)
        var plan = try PortPlan(configuration: configuration)
        #expect(plan.failed(.location) == 9650)
        #expect(plan.failed(.location) == 9651)
        #expect(plan.failed(.location) == nil)
        #expect(plan.candidate(for: .location) == nil)
        #expect(plan.assignment == nil)
    }

    @Test func fallbackEndAtPortMaximum() throws {
        let configuration = PortPlan.Configuration(fallbackStart: 65535, fallbackEnd: 65535)
        var plan = try PortPlan(configuration: configuration)
        #expect(plan.failed(.api) == 65535)
        #expect(plan.failed(.api) == nil)
    }

    @Test func stepwiseAndStable() throws {
        var plan = try PortPlan()
        #expect(plan.candidate(for: .api) == 9637)
        #expect(plan.failed(.api) == 9650)
        // Interleaved: another server failing now skips the port api is trying.
        #expect(plan.failed(.location) == 9651)
        plan.bound(.api)
        #expect(plan.isBound(.api))
        #expect(plan.failed(.api) == 9650)  // ignored once bound
        #expect(plan.candidate(for: .api) == 9650)
        #expect(plan.failed(.location) == 9652)
        plan.bound(.location)
        #expect(plan.assignment == nil)
        for server in [TMMServer.locationSecure, .apiSecure, .locationV2, .locationV2Secure] { plan.bound(server) }
        var expected = PortAssignment.defaults
        expected.api = 9650
        expected.location = 9652
        #expect(plan.assignment == expected)
        plan.bound(.api)
        #expect(plan.assignment == expected)
    }

    @Test func configurationErrors() {
        var base = PortAssignment.defaults
        base.apiSecure = 9637
        #expect(throws: PortPlanError.duplicateBasePort(9637)) { try PortPlan(configuration: .init(basePorts: base)) }
        base = .defaults
        base.location = 0
        #expect(throws: PortPlanError.zeroPort("locationPort")) { try PortPlan(configuration: .init(basePorts: base)) }
        #expect(throws: PortPlanError.zeroPort("fallback start")) {
            try PortPlan(configuration: .init(fallbackStart: 0))
        }
        #expect(throws: PortPlanError.emptyFallbackRange(start: 9700, end: 9650)) {
            try PortPlan(configuration: .init(fallbackStart: 9700, fallbackEnd: 9650))
        }
    }

    @Test func testPortsForParallelBridges() throws {
        // Tests run many bridges at once: every port configurable.
        let base = PortAssignment(
            location: 20001, locationSecure: 20002, api: 20003, apiSecure: 20004, locationV2: 20005,
            locationV2Secure: 20006)
        let configuration = PortPlan.Configuration(basePorts: base, fallbackStart: 20100)
        var expected = base
        expected.apiSecure = 20100
        #expect(try resolve(busy: [20004], configuration: configuration) == expected)
    }
}
