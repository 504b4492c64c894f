// packaging/debian/postinst, run for real (`sh postinst configure`) without touching this
// machine: in a private mount namespace whose /etc/passwd, /etc/group and /etc/login.defs are
// temporary files bound over the real ones, so `getent` (the script's own look-up) sees the
// accounts each case needs; every command that would change the system (adduser, addgroup,
// chown, chmod, udevadm, deb-systemd-helper, deb-systemd-invoke, systemctl, modprobe,
// dpkg-statoverride) is a stub earlier in PATH that records its arguments.
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

@Suite(
    "postinst: the service account", .tags(.integration),
    .enabled(
        if: geteuid() == 0 && findExecutable("unshare") != nil && access("/etc/login.defs", F_OK) == 0,
        "needs root and unshare (util-linux) for a private mount namespace"))
struct PostinstTests {
    static let script = Fixtures.repositoryRoot + "/packaging/debian/postinst"
    static let stubs = [
        "adduser", "addgroup", "chown", "chmod", "udevadm", "deb-systemd-helper", "deb-systemd-invoke",
        "systemctl", "modprobe", "dpkg-statoverride",
    ]

    struct Outcome {
        var status: Int32?
        var output: String
        /// The stubbed commands the script ran, one line each: name and arguments.
        var commands: [String]
    }

    /// Runs `postinst configure` with `account` (a passwd line for tmm-bridge, or nil for none)
    /// and `loginDefs` as /etc/login.defs (nil: this machine's).
    static func configure(account: String?, loginDefs: String? = nil) throws -> Outcome {
        let directory = try EndToEnd.makeDirectory("postinst")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var passwd = try String(contentsOfFile: "/etc/passwd", encoding: .utf8)
        var group = try String(contentsOfFile: "/etc/group", encoding: .utf8)
        // Whatever this machine has, the case decides whether tmm-bridge exists.
        passwd = passwd.split(separator: "\n").filter { !$0.hasPrefix("tmm-bridge:") }.joined(separator: "\n") + "\n"
        group = group.split(separator: "\n").filter { !$0.hasPrefix("tmm-bridge:") }.joined(separator: "\n") + "\n"
        if let account {
            passwd += account + "\n"
            group += "tmm-bridge:x:\(account.split(separator: ":")[3]):\n"
        }
        try Data(passwd.utf8).write(to: URL(fileURLWithPath: directory + "/passwd"))
        try Data(group.utf8).write(to: URL(fileURLWithPath: directory + "/group"))
        let defs = try loginDefs ?? String(contentsOfFile: "/etc/login.defs", encoding: .utf8)
        try Data(defs.utf8).write(to: URL(fileURLWithPath: directory + "/login.defs"))
        let bin = directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        let log = directory + "/commands.log"
        for name in stubs {
            // `deb-systemd-helper --quiet was-enabled` answers "no", as on a first installation.
            let stub =
                "#!/bin/sh\necho \"\(name) $*\" >> \(log)\n"
                + (name == "deb-systemd-helper" ? "[ \"$1\" = --quiet ] && exit 1\n" : "") + "exit 0\n"
            try Data(stub.utf8).write(to: URL(fileURLWithPath: bin + "/" + name))
            chmod(bin + "/" + name, 0o755)
        }
        let run = try runTool(
            try #require(findExecutable("unshare")),
            [
                "--mount", "--propagation", "private", "/bin/sh", "-c",
                """
                set -e
                mount --bind "$1/passwd" /etc/passwd
                mount --bind "$1/group" /etc/group
                mount --bind "$1/login.defs" /etc/login.defs
                PATH="$1/bin:$PATH" exec /bin/sh "$2" configure
                """, "sh", directory, script,
            ])
        let commands =
            (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
        return Outcome(status: run.status, output: run.output, commands: commands)
    }

    /// Before, an existing `tmm-bridge` account was taken whatever it was: a person's login
    /// (uid 1001) became the service's user, with the daemon's keys and registered ids.
    @Test func aLoginAccountNamedTmmBridgeIsRefused() throws {
        let outcome = try Self.configure(account: "tmm-bridge:x:1001:1001:Tom M. Bridge:/home/tmm-bridge:/bin/bash")
        #expect(outcome.status != 0, "\(outcome.output)")
        #expect(
            outcome.output.contains(
                "tmm-bridge: the existing account tmm-bridge has uid 1001, "
                    + "which is not a system account (system uids end at 999"
            ),
            "\(outcome.output)")
        #expect(outcome.output.contains("dpkg --configure tmm-bridge"), "\(outcome.output)")
        #expect(outcome.commands.isEmpty, "nothing done: \(outcome.commands)")
    }

    @Test func theLimitComesFromLoginDefs() throws {
        let defs = "UID_MIN 1000\nSYS_UID_MAX 499\n"
        let refused = try Self.configure(
            account: "tmm-bridge:x:600:600::/nonexistent:/usr/sbin/nologin", loginDefs: defs)
        #expect(
            refused.status != 0 && refused.output.contains("has uid 600") && refused.output.contains("end at 499"),
            "\(refused.output)")
        // Without SYS_UID_MAX, system uids end below UID_MIN.
        let below = try Self.configure(
            account: "tmm-bridge:x:600:600::/nonexistent:/usr/sbin/nologin", loginDefs: "UID_MIN 500\n")
        #expect(below.status != 0 && below.output.contains("end at 499"), "\(below.output)")
        let accepted = try Self.configure(
            account: "tmm-bridge:x:450:450::/nonexistent:/usr/sbin/nologin", loginDefs: defs)
        #expect(accepted.status == 0, "\(accepted.output)")
    }

    @Test func rootByAnotherNameIsRefused() throws {
        let outcome = try Self.configure(account: "tmm-bridge:x:0:0::/root:/bin/sh")
        #expect(outcome.status != 0 && outcome.output.contains("has uid 0"), "\(outcome.output)")
    }

    @Test func aSystemAccountIsKeptAndTheRestRuns() throws {
        let outcome = try Self.configure(
            account: "tmm-bridge:x:120:120:tmm-bridge daemon:/nonexistent:/usr/sbin/nologin")
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(
            !outcome.commands.contains { $0.hasPrefix("adduser") || $0.hasPrefix("addgroup") }, "\(outcome.commands)")
        #expect(outcome.commands.contains("deb-systemd-helper update-state tmm-bridge.service"), "\(outcome.commands)")
    }

    @Test func noAccountMakesASystemOne() throws {
        let outcome = try Self.configure(account: nil)
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(outcome.commands.first?.hasPrefix("adduser --quiet --system --group") == true, "\(outcome.commands)")
    }
}
