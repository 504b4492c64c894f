import CLinux
import Glibc

// Giving up root after start-up (`tmm-bridge run` started as root: it needs root only to bind
// what it binds at start, and CAP_NET_ADMIN for rfcomm). The set*id calls and capset are in
// CLinux (`clinux_drop_privileges`); this is their Swift side, with the account look-ups and the
// checks that the drop took.

/// A user and group to run as, looked up by name.
public struct Credentials: Sendable, Equatable {
    public var user: String
    public var uid: uid_t
    public var group: String
    public var gid: gid_t

    public init(user: String, uid: uid_t, group: String, gid: gid_t) {
        self.user = user
        self.uid = uid
        self.group = group
        self.gid = gid
    }

    /// `user`'s uid and primary gid, or nil when there is no such user.
    public static func user(named name: String) -> (uid: uid_t, gid: gid_t)? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &found) == 0, found != nil else { return nil }
        return (entry.pw_uid, entry.pw_gid)
    }

    /// `group`'s gid, or nil when there is no such group.
    public static func group(named name: String) -> gid_t? {
        var entry = Glibc.group()
        var found: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 65_536)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &found) == 0, found != nil else { return nil }
        return entry.gr_gid
    }

    /// The name of user `uid`, or nil when it has none.
    public static func userName(_ uid: uid_t) -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &found) == 0, found != nil, let name = entry.pw_name else {
            return nil
        }
        return String(cString: name)
    }

    /// The name of group `gid`, or nil when it has none.
    public static func groupName(_ gid: gid_t) -> String? {
        var entry = Glibc.group()
        var found: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 65_536)
        guard getgrgid_r(gid, &entry, &buffer, buffer.count, &found) == 0, found != nil, let name = entry.gr_name else {
            return nil
        }
        return String(cString: name)
    }
}

/// What the drop did not manage; the process must not go on (it may be half-dropped).
public struct PrivilegeDropError: Error, Sendable, CustomStringConvertible {
    public var step: String
    public var errno: Errno?
    public var description: String { errno.map { "\(step): \($0)" } ?? step }
}

/// Capabilities as `clinux_capabilities` reports them for the calling thread.
public struct CapabilitySets: Sendable, Equatable {
    public var effective: UInt64
    public var permitted: UInt64

    /// CAP_NET_ADMIN alone: what RFCOMMCREATEDEV and RFCOMMRELEASEDEV need.
    public static var netAdmin: UInt64 { clinux_cap_net_admin_mask() }

    public static func current() throws(Errno) -> CapabilitySets {
        var effective: UInt64 = 0
        var permitted: UInt64 = 0
        let error = clinux_capabilities(&effective, &permitted)
        guard error == 0 else { throw Errno(rawValue: error) }
        return CapabilitySets(effective: effective, permitted: permitted)
    }
}

/// Switches the whole process to `credentials` (supplementary groups: just its group), keeping
/// `keep` (a capability mask, `CapabilitySets.netAdmin` or 0) on the calling thread only, then
/// proves it: real and effective ids are the target's, root cannot be taken back, the calling
/// thread's capabilities are exactly `keep`, and the process is still not dumpable (the uid
/// change reset that to `fs.suid_dumpable`, 2 on some systems: it is set again).
public func dropPrivileges(to credentials: Credentials, keeping keep: UInt64) throws(PrivilegeDropError) {
    var step: UnsafePointer<CChar>?
    let error = clinux_drop_privileges(credentials.uid, credentials.gid, keep, &step)
    guard error == 0 else {
        throw PrivilegeDropError(step: step.map { String(cString: $0) } ?? "drop", errno: Errno(rawValue: error))
    }
    do { try CurrentProcess.forbidCoreDumps() } catch {
        throw PrivilegeDropError(step: "prctl(PR_SET_DUMPABLE, 0)", errno: error)
    }
    guard !CurrentProcess.isDumpable else {
        throw PrivilegeDropError(step: "checking the drop: the process is dumpable")
    }
    guard getuid() == credentials.uid, geteuid() == credentials.uid, getgid() == credentials.gid,
        getegid() == credentials.gid
    else {
        throw PrivilegeDropError(step: "checking the ids (uid \(getuid())/\(geteuid()), gid \(getgid())/\(getegid()))")
    }
    if credentials.uid != 0 && setuid(0) == 0 {
        throw PrivilegeDropError(step: "checking the drop: setuid(0) succeeded")
    }
    let sets: CapabilitySets
    do { sets = try CapabilitySets.current() } catch {
        throw PrivilegeDropError(step: "capget", errno: error)
    }
    guard sets == CapabilitySets(effective: keep, permitted: keep) else {
        throw PrivilegeDropError(
            step: "checking the capabilities (effective \(sets.effective), permitted \(sets.permitted), wanted \(keep))"
        )
    }
}

/// Gives `path` to `uid`:`gid` (lchown: a symlink is not followed, and sockets, which cannot be
/// opened, are covered too; a missing path is skipped), so what the daemon created as root in
/// its own directories stays usable after the drop.
public func handOver(_ path: String, to uid: uid_t, _ gid: gid_t) throws(AtomicFile.Failure) {
    do {
        _ = try valueOrErrno { lchown(path, uid, gid) }
    } catch {
        if error == .noSuchFileOrDirectory { return }
        throw AtomicFile.Failure(operation: "chown", path: path, errno: error)
    }
}
