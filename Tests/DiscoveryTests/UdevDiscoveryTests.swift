// UdevDiscovery against the real kernel: netlink uevents and sysfs, no hardware. ttyS0 is the one
// real tty here (spike.md Q2(a)); udevd does not run, so the kernel source is what works.
import Glibc
import Posix
import TestSupport
import Testing
@testable import Discovery

private let ttyS0UeventPath = "/sys/class/tty/ttyS0/uevent"
private let canTriggerUevent = getuid() == 0 && access(ttyS0UeventPath, W_OK) == 0
private let hasTTYS0 = access("/sys/class/tty/ttyS0", F_OK) == 0
/// Whether this process may listen to the kernel's uevents (a container may refuse the socket).
private let kernelMonitorWorks: Bool = {
    guard let context = try? UdevContext() else { return false }
    guard let monitor = try? UdevMonitor(context: context, source: .kernel) else { return false }
    do { try monitor.enableReceiving() } catch { return false }
    return true
}()
/// Set by the by-hand run with a private udevd (docs/discovery.md, "Exercised here").
private let udevdRunsForTest = getenv("TMM_TEST_UDEVD") != nil && canTriggerUevent

/// Reads events until `predicate` holds or `milliseconds` pass; returns the match and all events seen.
private func waitForEvent(
    _ inbox: Inbox<DiscoveryEvent>, milliseconds: Int64, _ predicate: (DiscoveryEvent) -> Bool
) -> (match: DiscoveryEvent?, seen: [DiscoveryEvent]) {
    let deadline = monotonicNanoseconds() + milliseconds * 1_000_000
    var seen: [DiscoveryEvent] = []
    while true {
        let left = (deadline - monotonicNanoseconds()) / 1_000_000
        guard left > 0 else { return (nil, seen) }
        for event in inbox.wait(milliseconds: Int32(left)) {
            seen.append(event)
            if predicate(event) { return (event, seen) }
        }
    }
}

private func isEnumerated(_ event: DiscoveryEvent) -> Bool {
    if case .enumerated = event { return true }
    return false
}

private func writeUevent(_ action: String) throws(Errno) {
    let descriptor = try FileDescriptor.open(ttyS0UeventPath, O_WRONLY)
    try descriptor.writeAll(action + "\n")
}

@Suite("UdevDiscovery on the real kernel", .tags(.integration), .serialized)
struct UdevDiscoveryTests {
    @Test(
        "kernel uevent monitor receives a real change event for ttyS0",
        .enabled(if: canTriggerUevent, "needs root and a writable /sys/class/tty/ttyS0/uevent"))
    func kernelMonitorSeesRealChangeEvent() throws {
        let inbox = try Inbox<DiscoveryEvent>(capacity: 256)
        let discovery = UdevDiscovery(inbox: inbox, options: .init(source: .fixed(.kernel)))
        try discovery.start()
        defer { discovery.stop() }
        let ready = waitForEvent(inbox, milliseconds: 2000, isEnumerated)
        try #require(ready.match != nil, "no enumeration within 2 s: \(ready.seen)")
        #expect(ready.seen.contains(.monitorStarted(.kernel)))

        try writeUevent("change")
        let started = monotonicNanoseconds()
        let result = waitForEvent(inbox, milliseconds: 2000) { event in
            if case .uevent(let device) = event { return device.sysname == "ttyS0" && device.action == .change }
            return false
        }
        guard case .uevent(let device)? = result.match else {
            Issue.record("no change event for ttyS0 within 2 s; saw \(result.seen)")
            return
        }
        #expect(device.subsystem == "tty")
        #expect(device.devnode == "/dev/ttyS0")
        #expect(device.major == 4 && device.minor == 64)
        #expect(device.sequenceNumber != nil)
        #expect(device.devpath.hasSuffix("/tty/ttyS0"))
        #expect(!device.isInitialized, "no udevd here: the kernel source delivers uninitialised devices")
        #expect(monotonicNanoseconds() - started < 2_000_000_000)
        // And the inventory ignores it, saying why.
        var inventory = ReceiverInventory()
        guard case .ignored(_, let classification)? = inventory.apply(.uevent(device)).first else {
            Issue.record("ttyS0 should be ignored")
            return
        }
        #expect(classification.verdict == .notReceiver)
    }

    @Test(
        "with udevd running, the automatic source is udev and events carry udev's properties",
        .enabled(if: udevdRunsForTest, "run by hand with a private udevd and TMM_TEST_UDEVD=1 (docs/discovery.md)"))
    func udevSourceWithUdevd() throws {
        let inbox = try Inbox<DiscoveryEvent>(capacity: 256)
        let discovery = UdevDiscovery(inbox: inbox)
        try discovery.start()
        defer { discovery.stop() }
        let ready = waitForEvent(inbox, milliseconds: 2000, isEnumerated)
        #expect(ready.seen.first == .monitorStarted(.udev), "\(ready.seen)")
        try writeUevent("change")
        let result = waitForEvent(inbox, milliseconds: 2000) { event in
            if case .uevent(let device) = event { return device.sysname == "ttyS0" && device.action == .change }
            return false
        }
        guard case .uevent(let device)? = result.match else {
            Issue.record("no change event for ttyS0 from udevd within 2 s; saw \(result.seen)")
            return
        }
        print(
            "udev-source event: \(device) initialized=\(device.isInitialized) "
                + "ID_*=\(device.udevProperties) links=\(device.devlinks)"
        )
        #expect(device.isInitialized, "udevd processed it before re-broadcasting")
        #expect(device.devnode == "/dev/ttyS0")
    }

    @Test(
        "a netlink overflow (ENOBUFS) is reported and followed by a re-scan",
        .enabled(if: canTriggerUevent, "needs root and a writable /sys/class/tty/ttyS0/uevent"))
    func overflowTriggersResynchronization() throws {
        // The smallest socket buffer the kernel allows, then a burst of real uevents.
        let inbox = try Inbox<DiscoveryEvent>(capacity: 10_000)
        let discovery = UdevDiscovery(inbox: inbox, options: .init(source: .fixed(.kernel), receiveBufferBytes: 1))
        try discovery.start()
        defer { discovery.stop() }
        try #require(waitForEvent(inbox, milliseconds: 2000, isEnumerated).match != nil)
        let descriptor = try FileDescriptor.open(ttyS0UeventPath, O_WRONLY)
        // Bursts of 2000 until the reader falls behind: on an idle machine the first burst does
        // it; under load the reader may keep up for a while.
        var seen: [DiscoveryEvent] = []
        var rescan: [DeviceProperties]?
        var bursts = 0
        while rescan == nil && bursts < 10 {
            bursts += 1
            for _ in 0..<2000 { try descriptor.writeAll("change\n") }
            let result = waitForEvent(inbox, milliseconds: 1000) { event in
                if case .enumerated(_, .resynchronization) = event { return true }
                return false
            }
            seen += result.seen
            if case .enumerated(let devices, _)? = result.match { rescan = devices }
        }
        guard let rescan else {
            Issue.record(
                "no re-scan after \(bursts) bursts of 2000 uevents into a minimal buffer; saw \(seen.count) events")
            return
        }
        #expect(rescan.contains { $0.sysname == "ttyS0" })
        #expect(
            seen.contains { event in
                if case .problem(let error) = event { return error.errno?.rawValue == ENOBUFS }
                return false
            })
    }

    @Test(
        "enumeration returns ttyS0 with its sysfs properties",
        .enabled(if: hasTTYS0, "needs /sys/class/tty/ttyS0"))
    func enumerationFindsTTYS0() throws {
        let inbox = try Inbox<DiscoveryEvent>(capacity: 16)
        let discovery = UdevDiscovery(inbox: inbox, options: .init(source: .fixed(.kernel)))
        try discovery.start()
        defer { discovery.stop() }
        let result = waitForEvent(inbox, milliseconds: 2000, isEnumerated)
        guard case .enumerated(let devices, let reason)? = result.match else {
            Issue.record("no enumeration within 2 s: \(result.seen)")
            return
        }
        #expect(reason == .startup)
        let ttyS0 = try #require(devices.first { $0.sysname == "ttyS0" }, "\(devices.map(\.sysname))")
        #expect(ttyS0.action == nil)
        #expect(ttyS0.subsystem == "tty")
        #expect(ttyS0.devnode == "/dev/ttyS0")
        #expect(ttyS0.major == 4 && ttyS0.minor == 64)
        #expect(ttyS0.devpath.hasSuffix("/tty/ttyS0") && !ttyS0.devpath.hasPrefix("/devices/virtual/"))
        #expect(ttyS0.vendorID == nil && ttyS0.serialNumber == nil, "no USB parent")
        #expect(ttyS0.udevProperties.isEmpty, "no udev database without udevd")
        // Virtual consoles are left out by default.
        #expect(!devices.contains { $0.sysname == "tty0" || $0.sysname == "ptmx" })
    }

    @Test("virtual ttys are included on request", .enabled(if: hasTTYS0, "needs sysfs ttys"))
    func virtualTTYsOnRequest() throws {
        let inbox = try Inbox<DiscoveryEvent>(capacity: 16)
        let discovery = UdevDiscovery(inbox: inbox, options: .init(source: .fixed(.kernel), includeVirtualTTYs: true))
        try discovery.start()
        defer { discovery.stop() }
        guard case .enumerated(let devices, _)? = waitForEvent(inbox, milliseconds: 2000, isEnumerated).match else {
            Issue.record("no enumeration")
            return
        }
        #expect(devices.contains { $0.sysname == "tty0" })
    }

    @Test("the udev source starts without udevd (and simply receives nothing)")
    func udevSourceStartsWithoutUdevd() throws {
        let inbox = try Inbox<DiscoveryEvent>(capacity: 16)
        let discovery = UdevDiscovery(inbox: inbox, options: .init(source: .fixed(.udev)))
        try discovery.start()
        let result = waitForEvent(inbox, milliseconds: 2000, isEnumerated)
        #expect(result.seen.first == .monitorStarted(.udev), "\(result.seen)")
        #expect(result.match != nil)
        discovery.stop()
        #expect(waitForEvent(inbox, milliseconds: 1000) { $0 == .stopped }.match == .stopped)
    }

    @Test func automaticSourceFollowsUdevdsControlSocket() throws {
        #expect(UdevDiscovery.Options(udevControlPath: "/nonexistent/udev/control").resolvedSource == .kernel)
        let path = "/tmp/tmm-discovery-test-control-\(getpid())"
        let descriptor = try FileDescriptor.open(path, O_CREAT | O_WRONLY, mode: 0o600)
        descriptor.close()
        defer { unlink(path) }
        #expect(UdevDiscovery.Options(udevControlPath: path).resolvedSource == .udev)
    }

    @Test("stop() joins promptly, twice is harmless, and .stopped is the last event")
    func stopIsPromptAndIdempotent() throws {
        let inbox = try Inbox<DiscoveryEvent>(capacity: 64)
        let discovery = UdevDiscovery(inbox: inbox, options: .init(source: .fixed(.kernel)))
        try discovery.start()
        try discovery.start()  // already running: no second thread
        _ = waitForEvent(inbox, milliseconds: 2000, isEnumerated)
        let before = monotonicNanoseconds()
        discovery.stop()
        #expect(monotonicNanoseconds() - before < 500_000_000, "stop must not wait for a poll timeout")
        discovery.stop()
        let tail = inbox.drain()
        #expect(tail.last == .stopped && tail.filter { $0 == .stopped }.count == 1, "\(tail)")
        // Restartable.
        try discovery.start()
        #expect(waitForEvent(inbox, milliseconds: 2000, isEnumerated).match != nil)
        discovery.stop()
    }

    @Test("stop() right after start(), while the thread still sets up, ends it (the stop is not lost)")
    func stopBeforeTheThreadsLoopRuns() throws {
        let inbox = try Inbox<DiscoveryEvent>(capacity: 64)
        let discovery = UdevDiscovery(inbox: inbox, options: .init(source: .fixed(.kernel)))
        for cycle in 0..<10 {
            try discovery.start()
            // stop() joins the thread: from another thread, so a lost stop fails here instead of
            // hanging the suite.
            let stopped = try Inbox<Bool>(capacity: 1)
            let stopper = try OSThread(name: "stopper") {
                discovery.stop()
                stopped.post(true)
            }
            try #require(stopped.wait(milliseconds: 5000) == [true], "cycle \(cycle): stop() did not return")
            stopper.join()
            let events = inbox.drain()
            #expect(events.last == .stopped && events.filter { $0 == .stopped }.count == 1, "cycle \(cycle): \(events)")
        }
    }

    @Test("no descriptor leak across start/stop cycles")
    func noDescriptorLeak() throws {
        let inbox = try Inbox<DiscoveryEvent>(capacity: 64)
        let cycles = 10
        // A leak would be the monitor socket or the thread's loop (epoll, timerfd, stop eventfd).
        let left = try descriptorsLeft {
            for _ in 0..<cycles {
                let discovery = UdevDiscovery(inbox: inbox, options: .init(source: .fixed(.kernel)))
                try discovery.start()
                _ = waitForEvent(inbox, milliseconds: 2000, isEnumerated)
                discovery.stop()
                _ = inbox.drain()
            }
        }
        #expect(left.isEmpty, "descriptors left open: \(left)")
    }

    @Test("a closed inbox ends the thread", .enabled(if: kernelMonitorWorks, "needs a kernel uevent netlink socket"))
    func closedInboxEndsTheThread() throws {
        // With an open inbox the thread starts its monitor and then stays, waiting for uevents:
        // ending is not what it does anyway (and no monitor failure ends it below).
        let open = try Inbox<DiscoveryEvent>(capacity: 16)
        let running = UdevDiscovery(inbox: open, options: .init(source: .fixed(.kernel)))
        try running.start()
        defer { running.stop() }
        let ready = waitForEvent(open, milliseconds: 2000, isEnumerated)
        try #require(ready.match != nil && ready.seen.contains(.monitorStarted(.kernel)), "\(ready.seen)")
        #expect(!running.threadHasEnded, "the thread ended with its inbox open")

        // With the inbox closed, its first post fails and the thread returns on its own. stop()
        // would end it too, so it is not called until this has been seen.
        let inbox = try Inbox<DiscoveryEvent>(capacity: 4)
        inbox.close()
        let discovery = UdevDiscovery(inbox: inbox, options: .init(source: .fixed(.kernel)))
        try discovery.start()
        defer { discovery.stop() }
        #expect(
            waitUntil(timeout: .seconds(5)) { discovery.threadHasEnded },
            "the udev thread kept running with its inbox closed")
    }
}

@Suite("udev property decoding", .tags(.unit))
struct UdevPropertyTests {
    @Test func encodedStringsAreDecoded() {
        #expect(DeviceProperties.decodeUdevEncoded(#"u-blox\x20GNSS\x20receiver"#) == "u-blox GNSS receiver")
        #expect(DeviceProperties.decodeUdevEncoded(#"a\x2"#) == #"a\x2"#)
        #expect(DeviceProperties.decodeUdevEncoded("plain") == "plain")
    }

    @Test func udevDatabaseFillsWhatSysfsLacks() {
        // A udev-source `remove`: sysfs is gone, the event still has usb_id's properties.
        var device = DeviceProperties(
            action: .remove, sysname: "ttyACM0", devnode: "/dev/ttyACM0",
            udevProperties: [
                "ID_USB_VENDOR_ID": "1546", "ID_USB_MODEL_ID": "01A8", "ID_USB_SERIAL_SHORT": "0123",
                "ID_USB_MODEL_ENC": #"u-blox\x20GNSS\x20receiver"#,
                "ID_VENDOR_ENC": #"u-blox\x20AG\x20-\x20www.u-blox.com"#,
                "ID_USB_INTERFACE_NUM": "00", "ID_USB_DRIVER": "cdc_acm",
            ])
        device.fillFromUdevDatabase()
        #expect(device.usbID == "1546:01a8")
        #expect(device.serialNumber == "0123")
        #expect(device.product == "u-blox GNSS receiver")
        #expect(device.manufacturer == "u-blox AG - www.u-blox.com")
        #expect(device.interfaceNumber == "00" && device.driver == "cdc_acm")
        #expect(ReceiverClassifier().classify(device).rule == "gpsd-ublox-8")
    }

    @Test func descriptionIsOneReadableLine() {
        let line = Recorded.event(Recorded.ubloxM8, .add).description
        #expect(line == #"add ttyACM0 (/dev/ttyACM0) usb 1546:01a8 "u-blox GNSS receiver" cdc_acm if 00"#)
    }

    @Test func errorsReadAsLogLines() {
        let error = DiscoveryError(
            operation: "udev_monitor_new_from_netlink(\"kernel\")", errno: Errno(rawValue: EPERM),
            hint: "netlink uevent sockets may be blocked")
        #expect(
            error.description
                == #"""
                discovery: udev_monitor_new_from_netlink("kernel") failed: Operation not permitted (errno 1); \#
                netlink uevent sockets may be blocked
                """#
        )
        var thrown: DiscoveryError?
        do { try udevCheck(-ENOBUFS, "x()") } catch { thrown = error }
        #expect(thrown?.errno == Errno(rawValue: ENOBUFS))
        #expect(throws: Never.self) { try udevCheck(0, "x()") }
    }
}
