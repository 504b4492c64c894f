// The real RFCOMM ioctl path on this machine. On a kernel without Bluetooth (CONFIG_BT unset, as
// on the CI and development machines) every call must fail cleanly with EAFNOSUPPORT and the
// message naming CONFIG_BT_RFCOMM, without leaking the control socket. Arguments out of range
// are refused before any system call, everywhere. The live bind on a Bluetooth bench is in
// hwtests/bluetooth.md.
import CRFCOMM
import Discovery
import Glibc
import Input
import Posix
import TestSupport
import Testing

/// True when this kernel has no AF_BLUETOOTH at all (or not in this network namespace).
let kernelLacksBluetooth: Bool = {
    let fd = socket(AF_BLUETOOTH, CInt(SOCK_RAW.rawValue), CInt(CRFCOMM_BTPROTO_RFCOMM))
    if fd >= 0 {
        close(fd)
        return false
    }
    return errno == EAFNOSUPPORT
}()

@Suite("RFCOMM ioctls on this machine", .tags(.integration))
struct BluetoothRFCOMMLiveTests {
    static let address = try! BluetoothAddress(parsing: "00:07:80:AB:CD:EF")

    @Test(.enabled(if: kernelLacksBluetooth, "this kernel has Bluetooth; the live checks are in hwtests/bluetooth.md"))
    func bindFailsWithNoBluetoothSupport() {
        do {
            try RFCOMM.bind(device: 0, address: Self.address, channel: 1)
            Issue.record("bind succeeded on a kernel without Bluetooth")
        } catch {
            #expect(error.errno == Errno(rawValue: EAFNOSUPPORT))
            #expect(
                error == .system(.bind(device: 0, address: Self.address, channel: 1), Errno(rawValue: EAFNOSUPPORT)))
            #expect(error.description.hasPrefix("cannot bind rfcomm0 to 00:07:80:AB:CD:EF channel 1: "))
            #expect(error.description.contains("this kernel has no Bluetooth RFCOMM support (CONFIG_BT_RFCOMM)"))
            #expect(!error.isRetryable)
        }
    }

    @Test(.enabled(if: kernelLacksBluetooth, "this kernel has Bluetooth; the live checks are in hwtests/bluetooth.md"))
    func releaseListAndInfoFailTheSameWay() {
        let expected = Errno(rawValue: EAFNOSUPPORT)
        #expect(throws: RFCOMMError.system(.release(device: 3), expected)) { try RFCOMM.release(device: 3) }
        #expect(throws: RFCOMMError.system(.list, expected)) { try RFCOMM.list() }
        #expect(throws: RFCOMMError.system(.info(device: 0), expected)) { try RFCOMM.info(device: 0) }
    }

    /// Other suites open and close files in parallel, so one call's count is noisy: 200 failed
    /// calls that each leaked would add 200 descriptors.
    @Test(.enabled(if: kernelLacksBluetooth, "this kernel has Bluetooth; the live checks are in hwtests/bluetooth.md"))
    func failedCallsLeakNoDescriptors() {
        let before = openDescriptorCount()
        for _ in 0..<200 {
            _ = try? RFCOMM.bind(device: 0, address: Self.address, channel: 1)
            _ = try? RFCOMM.list()
        }
        #expect(openDescriptorCount() - before < 50)
    }

    @Test func argumentsOutOfRangeAreRefusedBeforeAnySystemCall() {
        #expect(throws: RFCOMMError.invalidChannel(0)) { try RFCOMM.bind(device: 0, address: Self.address, channel: 0) }
        #expect(throws: RFCOMMError.invalidChannel(31)) {
            try RFCOMM.bind(device: 0, address: Self.address, channel: 31)
        }
        #expect(throws: RFCOMMError.invalidDevice(256)) { try RFCOMM.bind(device: 256, address: Self.address) }
        #expect(throws: RFCOMMError.invalidDevice(-1)) { try RFCOMM.release(device: -1) }
        #expect(RFCOMMError.invalidChannel(31).description.contains("channels are 1 to 30"))
        #expect(RFCOMMError.invalidDevice(256).description.contains("use 0 to 255"))
    }

    @Test func messagesNameTheFix() {
        let bind = RFCOMMOperation.bind(device: 2, address: Self.address, channel: 1)
        let cases: [(RFCOMMOperation, CInt, String)] = [
            (bind, EADDRINUSE, "rfcomm2 is already bound; release it with 'tmm-bridge bluetooth unbind --device 2'"),
            (bind, EPERM, "needs CAP_NET_ADMIN (run as root"),
            (bind, EACCES, "needs CAP_NET_ADMIN (run as root"),
            (bind, EPROTONOSUPPORT, "modprobe rfcomm"),
            (bind, EOPNOTSUPP, "CONFIG_BT_RFCOMM_TTY"),
            (bind, EBUSY, "already uses channel 1 of 00:07:80:AB:CD:EF"),
            (.release(device: 5), ENODEV, "cannot release rfcomm5: rfcomm5 is not bound"),
            (.list, EAFNOSUPPORT, "cannot list rfcomm devices: this kernel has no Bluetooth RFCOMM support"),
            (.list, EIO, "cannot list rfcomm devices: Input/output error (errno 5)"),
        ]
        for (operation, code, phrase) in cases {
            let error = RFCOMMError.system(operation, Errno(rawValue: code))
            #expect(error.description.contains(phrase), "\(error.description)")
        }
    }

    @Test func kernelStatesHaveBlueZWords() {
        #expect(
            (1...9).map { RFCOMMState(rawValue: $0).description }
                == [
                    "connected", "clean", "bound", "listening", "connecting", "connecting", "config", "disconnecting",
                    "closed",
                ])
        #expect(RFCOMMState(rawValue: 42) == .unknown(42))
    }
}
