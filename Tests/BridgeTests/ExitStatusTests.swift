// Start-up errors are typed and carry their exit status (docs/configuration.md: 0 ok, 64 usage,
// 78 bad configuration, 71 failed privilege drop, 73 a directory the dropped user cannot write,
// 1 anything else). One row per case that decides
// the status, with the message an operator reads.
import Bridge
import BridgeCore
import GPSD
import InputLoop
import Posix
import TMMProtocol
import TestSupport
import Testing

@Suite("Exit statuses of start-up errors", .tags(.unit))
struct ExitStatusTests {
    @Test func statusesAreTheDocumentedNumbers() {
        #expect(ExitStatus.ok.rawValue == 0)
        #expect(ExitStatus.failure.rawValue == 1)
        #expect(ExitStatus.usage.rawValue == 64)
        #expect(ExitStatus.unavailable.rawValue == 69)
        #expect(ExitStatus.noPermission.rawValue == 77)
        #expect(ExitStatus.privilegeDropFailed.rawValue == 71)
        #expect(ExitStatus.cannotCreate.rawValue == 73)
        #expect(ExitStatus.badConfiguration.rawValue == 78)
    }

    @Test func portBindingErrors() {
        let unavailable = ListenerError(operation: "bind", endpoint: "[::5]:9635", errno: .addressNotAvailable)
        let denied = ListenerError(operation: "bind", endpoint: "127.0.0.1:80", errno: .permissionDenied)
        #expect(PortBindingError.cannotListen(unavailable).exitStatus == .badConfiguration)
        #expect(PortBindingError.cannotListen(denied).exitStatus == .failure)
        #expect(PortBindingError.cannotListen(denied).description.hasPrefix("cannot listen: bind 127.0.0.1:80: "))
        #expect(PortBindingError.badPortPlan("ports overlap").exitStatus == .badConfiguration)
        let none = PortBindingError.noFreePort(server: .location, fallbackStart: 9650)
        #expect(none.exitStatus == .failure)
        #expect(none.description == "no free port for locationPort: 9635 and every port from 9650 up are taken")
        #expect(BridgeServerError.ports(.cannotListen(unavailable)).exitStatus == .badConfiguration)
        #expect(BridgeServerError.ports(none).description == none.description)
    }

    @Test func receiverInputErrors() {
        #expect(ReceiverInputError.replayMissing(path: "/x.log").exitStatus == .badConfiguration)
        #expect(ReceiverInputError.replayMissing(path: "/x.log").description == "replay: /x.log does not exist")
        #expect(ReceiverInputError.replayNotText(path: "/x.log").exitStatus == .badConfiguration)
        let untrusted = ReceiverInputError.untrustedGPSD(host: "127.0.0.1", port: 2947, verdict: "owned by uid 1000")
        #expect(untrusted.exitStatus == .badConfiguration)
        #expect(untrusted.description.hasPrefix("refusing the configured gpsd at 127.0.0.1:2947: owned by uid 1000."))
        let noGPSD = ReceiverInputError.privateGPSD(.gpsdNotInstalled)
        #expect(noGPSD.exitStatus == .failure)
        #expect(
            noGPSD.description
                == """
                a private gpsd could not start: gpsd is not installed (apt-get install gpsd); \
                it is needed when no gpsd runs
                """
        )
        #expect(ReceiverInputError.gpsdThread(.wouldBlock).exitStatus == .failure)
    }

    @Test func serverErrors() {
        #expect(BridgeServerError.alreadyRunning(controlSocket: "/run/x.sock").exitStatus == .failure)
        #expect(BridgeServerError.stateDirectory("/var/lib/x", "owned by uid 5").exitStatus == .badConfiguration)
        #expect(
            BridgeServerError.stateDirectory("/var/lib/x", "owned by uid 5").description
                == "state directory /var/lib/x: owned by uid 5")
        #expect(BridgeServerError.eventLoopWait(.badFileDescriptor).exitStatus == .failure)
        #expect(BridgeServerError.eventLoopWait(.badFileDescriptor).description.hasPrefix("epoll_wait failed: "))
    }
}
