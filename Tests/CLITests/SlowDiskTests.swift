// REST settings writes on a slow disk (an SD card: ~20 ms an fsync), seen from outside: the real
// daemon with every fsync it makes delayed by an LD_PRELOAD shim built here with cc, a burst of
// PUTs from a real HTTP client, and a registration in the middle of the burst.
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

@Suite(
    "Settings writes on a slow disk", .tags(.integration),
    .enabled(
        if: EndToEnd.isAvailable, "needs gpsd, curl and /usr/bin/python3 with websockets (scripts/install-deps.sh)"),
    .enabled(if: findExecutable("cc") != nil, "needs cc to build the slow-fsync shim"))
struct SlowDiskTests {
    /// Every fsync (and fdatasync) of the process waits `TMM_TEST_FSYNC_DELAY_MS` first, as a slow
    /// card would make it wait.
    static let shimSource = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <stdlib.h>
        #include <time.h>

        static void slow_down(void) {
            const char *text = getenv("TMM_TEST_FSYNC_DELAY_MS");
            long milliseconds = text ? atol(text) : 20;
            struct timespec delay = { milliseconds / 1000, (milliseconds % 1000) * 1000000L };
            while (nanosleep(&delay, &delay) != 0) {}
        }

        int fsync(int fd) {
            static int (*real)(int);
            if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
            slow_down();
            return real(fd);
        }

        int fdatasync(int fd) {
            static int (*real)(int);
            if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
            slow_down();
            return real(fd);
        }
        """

    /// Builds the shim into `directory`; its path.
    static func buildShim(in directory: String) throws -> String {
        let source = directory + "/slow-fsync.c"
        let library = directory + "/slow-fsync.so"
        try Data(shimSource.utf8).write(to: URL(fileURLWithPath: source))
        let built = try runTool(
            try #require(findExecutable("cc")), ["-shared", "-fPIC", "-O2", "-o", library, source, "-ldl"])
        try #require(built.status == 0, "cc: \(built.output)")
        return library
    }

    static let client = "5f0c1a2b-3c4d-4e5f-8a9b-0000000051a0"
    static let latecomer = "5f0c1a2b-3c4d-4e5f-8a9b-0000000051a1"

    /// `tmm-bridge open` of `id` (iOS style), its exit status and output.
    static func register(_ id: String, runtime: String) throws -> (status: Int32?, output: String) {
        let url =
            "tmmregister://?" + Data(#"{"application_id":"\#(id)","returl":"app://r"}"#.utf8).base64EncodedString()
        return try runTool(try bridgeBinary().path, ["open", url, "--print", "--runtime-dir", runtime])
    }

    /// The antenna as `settings.json` holds it.
    static func fileAntenna(_ path: String) -> (height: Double, applied: Bool)? {
        guard let data = FileManager.default.contents(atPath: path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let antenna = object["antenna"] as? [String: Any],
            let height = (antenna["measuredHeight"] as? NSNumber)?.doubleValue,
            let applied = antenna["isAntennaHeightApplied"] as? Bool
        else { return nil }
        return (height, applied)
    }

    /// Before: one worker job per PUT behind a queue of 1,024. At 20 ms an fsync (two per write)
    /// the burst filled it; the newest PUTs were answered 200 and then dropped ("the daemon is
    /// stopping"), the file kept an older height than the one served, and the registration sat
    /// behind ~1,000 writes (40 s) until `open` gave up. Now the writes coalesce to the latest
    /// settings on a thread of their own.
    @Test func everyAnsweredSettingReachesTheFileAndARegistrationDoesNotWaitBehindThem() throws {
        let directory = try EndToEnd.makeDirectory("slow-disk")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let shim = try Self.buildShim(in: directory)
        var setup = BridgeDaemon.Setup(name: "slow-disk", directory: directory, ports: try PortSet.pick())
        setup.registration = "open"
        setup.environment = ["LD_PRELOAD": shim, "TMM_TEST_FSYNC_DELAY_MS": "20"]
        let daemon = try BridgeDaemon(setup)
        // (Read to the end: /proc files have no size, and a sized read stops at the first page.)
        let maps = String(
            decoding: FileHandle(forReadingAtPath: "/proc/\(daemon.pid)/maps")?.readDataToEndOfFile() ?? Data(),
            as: UTF8.self)
        try #require(maps.contains(shim), "the daemon runs with the slow-fsync shim")

        let first = try Self.register(Self.client, runtime: setup.runtimeDirectory)
        try #require(first.status == 0, "\(first.output)\n\(daemon.log)")
        let apiPort = try #require(daemon.ports["apiPort"])

        // 3,000 PUTs as fast as one keep-alive connection takes them, each a different height;
        // the 750th starts a registration of another app from a second thread.
        let burster = PythonTools.command(
            "peers.antenna_burst",
            [
                String(apiPort), Self.client, try bridgeBinary().path,
                setup.runtimeDirectory, Self.latecomer,
            ])
        let burst = try runTool(burster.executable, burster.arguments, seconds: 120)
        try #require(burst.status == 0, "\(burst.output)\n\(daemon.log)")
        let line = try #require(burst.output.split(separator: "\n").last)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let statuses = try #require(summary["statuses"] as? [String: Int])
        let last = try #require(summary["last"] as? [String: Any])
        let lastHeight = try #require((last["measuredHeight"] as? NSNumber)?.doubleValue)
        let lastApplied = try #require(last["isAntennaHeightApplied"] as? Bool)
        let registration = try #require(summary["registration"] as? [String: Any])
        let registrationSeconds = try #require((registration["seconds"] as? NSNumber)?.doubleValue)
        print(
            "slow disk: 3000 PUTs in \(summary["seconds"] ?? "?") s; "
                + "registration during the burst took \(registrationSeconds) s"
        )

        #expect(statuses == ["200": 3000], "\(statuses)")
        #expect(
            registration["status"] as? Int == 0 && registrationSeconds < 5,
            "a registration waits for its own write, not for the settings: \(registration)\n\(daemon.log)")
        // The file catches up with the last answered settings (one write in progress, then the
        // latest), and the server serves the same.
        let settingsPath = setup.stateDirectory + "/settings.json"
        #expect(
            waitUntil(10) { Self.fileAntenna(settingsPath).map { $0 == (lastHeight, lastApplied) } ?? false },
            """
            settings.json \(String(describing: Self.fileAntenna(settingsPath))), \
            last answered \(lastHeight) \(lastApplied)
            """
        )
        let served = try #require(summary["served"] as? [String: Any])
        #expect(
            (served["measuredHeight"] as? NSNumber)?.doubleValue == lastHeight
                && served["isAntennaHeightApplied"] as? Bool == lastApplied, "served \(served), last answered \(last)")
        #expect(!daemon.log.contains("cannot save"), "\(daemon.log)")
        daemon.stopAndExpectCleanExit()
        #expect(Self.fileAntenna(settingsPath).map { $0 == (lastHeight, lastApplied) } ?? false)
    }
}
