// `tmm-bridge bluetooth`: usage errors exit 64 with the reason; on a kernel without Bluetooth every
// subcommand exits 1 with the "no Bluetooth RFCOMM support" message. (Live binds: hwtests/bluetooth.md.)
import Foundation
import Glibc
import TestSupport
import Testing

/// True when this kernel has no AF_BLUETOOTH (socket(31, SOCK_RAW, BTPROTO_RFCOMM=3) → EAFNOSUPPORT).
private let noBluetooth: Bool = {
    let fd = socket(AF_BLUETOOTH, CInt(SOCK_RAW.rawValue), 3)
    if fd >= 0 { close(fd); return false }
    return errno == EAFNOSUPPORT
}()

@Suite("tmm-bridge bluetooth", .tags(.integration))
struct BluetoothCommandTests {
    static let usageErrors: [([String], String)] = [
        (["bluetooth"], "bluetooth needs a command: bind, unbind or list"),
        (["bluetooth", "frob"], "unknown bluetooth command 'frob'"),
        (["bluetooth", "bind"], "bluetooth bind needs the receiver's ADDRESS"),
        (["bluetooth", "bind", "00-07-80-AB-CD-EF"], "uses '-' between groups; write it with ':'"),
        (["bluetooth", "bind", "00:07:80:AB:CD"], "has 5 groups, not 6"),
        (["bluetooth", "bind", "00:07:80:AB:CD:EF", "00:07:80:AB:CD:F0"], "takes one ADDRESS"),
        (
            ["bluetooth", "bind", "00:07:80:AB:CD:EF", "--channel", "0"],
            "--channel must be an RFCOMM channel from 1 to 30, not '0'"
        ),
        (
            ["bluetooth", "bind", "00:07:80:AB:CD:EF", "--channel=31"],
            "--channel must be an RFCOMM channel from 1 to 30"
        ),
        (["bluetooth", "bind", "00:07:80:AB:CD:EF", "--channel"], "--channel needs a value"),
        (["bluetooth", "bind", "00:07:80:AB:CD:EF", "--device", "256"], "--device must be a number from 0 to 255"),
        (["bluetooth", "bind", "00:07:80:AB:CD:EF", "--device", "1", "--device", "2"], "--device given twice"),
        (["bluetooth", "bind", "00:07:80:AB:CD:EF", "--speed", "9600"], "unknown option '--speed'"),
        (["bluetooth", "unbind", "00:07:80:AB:CD:EF"], "bluetooth unbind takes no ADDRESS"),
        (["bluetooth", "unbind", "--channel", "1"], "bluetooth unbind takes no --channel"),
        (["bluetooth", "list", "--device", "0"], "bluetooth list takes no --device"),
        (["bluetooth", "list", "extra"], "bluetooth list takes no arguments"),
    ]

    @Test(arguments: usageErrors)
    func usageErrorsExit64WithTheReason(_ arguments: [String], _ message: String) throws {
        let run = try runBridge(arguments)
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(run.stderr.contains("tmm-bridge bluetooth bind ADDRESS"), "the usage text follows")
    }

    @Test func helpPrintsTheBluetoothUsage() throws {
        let run = try runBridge(["bluetooth", "--help"])
        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("usage: tmm-bridge bluetooth bind ADDRESS [--channel N] [--device N]"))
    }

    static let failing: [([String], String)] = [
        (["bluetooth", "bind", "00:07:80:ab:cd:ef"], "cannot bind rfcomm0 to 00:07:80:AB:CD:EF channel 1"),
        (
            ["bluetooth", "bind", "00:07:80:AB:CD:EF", "--channel", "3", "--device", "rfcomm2"],
            "cannot bind rfcomm2 to 00:07:80:AB:CD:EF channel 3"
        ),
        (["bluetooth", "unbind", "--device=4"], "cannot release rfcomm4"),
        (["bluetooth", "list"], "cannot list rfcomm devices"),
    ]

    @Test(.enabled(if: noBluetooth, "this kernel has Bluetooth; see hwtests/bluetooth.md"), arguments: failing)
    func withoutBluetoothEveryCommandFailsClearly(_ arguments: [String], _ what: String) throws {
        let run = try runBridge(arguments)
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("tmm-bridge bluetooth: \(what): "), "\(run.stderr)")
        #expect(run.stderr.contains("this kernel has no Bluetooth RFCOMM support (CONFIG_BT_RFCOMM)"))
        #expect(!run.stderr.contains("usage:"), "a system failure is not a usage error")
    }
}
