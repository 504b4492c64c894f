import Glibc
import Posix
import Synchronization

/// Which gpsd the bridge may read: one whose socket belongs to root, to the `gpsd` user or to
/// the bridge's own user. Anything else on the port (another local user's program, say one
/// that bound it while a gpsd restarted) would feed every TMM client its positions.
///
/// The owner is read for the connection itself (`tcpPeerOwner`): the server-side row of
/// /proc/net/tcp for our very connection, so there is no gap between checking and reading.
/// A gpsd on another machine cannot be checked this way; it is the network's to trust.
public enum GPSDTrust {
    /// The bridge's own user as it started (-1: the effective user, whatever it is now). A root
    /// bridge pins root here before it drops privileges, so that its trust does not widen to the
    /// user it becomes: that may be `nobody`, which unrelated programs share. Its private gpsd
    /// needs no such trust: the listener gpsd serves is the bridge's, bound as root.
    private static let ownUser = Atomic<Int64>(-1)

    /// Pins the current effective user as the bridge's own (before a privilege drop).
    public static func pinOwnUser() { ownUser.store(Int64(geteuid()), ordering: .relaxed) }

    /// What the check found.
    public enum Verdict: Sendable, Equatable, CustomStringConvertible {
        case trusted(uid: uid_t)
        case untrusted(uid: uid_t)
        /// Not on this machine: not checked.
        case remote
        /// The other end vanished before it could be checked.
        case unknown
        /// Nothing answers there.
        case unreachable(String)

        public var isUsable: Bool {
            switch self {
            case .trusted, .remote: true
            case .untrusted, .unknown, .unreachable: false
            }
        }

        public var description: String {
            switch self {
            case .trusted(let uid): "its socket belongs to \(userName(uid))"
            case .untrusted(let uid):
                "its socket belongs to \(userName(uid)), not to root, the gpsd user or the bridge's own user"
            case .remote: "it is on another machine (not checked)"
            case .unknown: "its socket vanished before its owner could be checked"
            case .unreachable(let reason): "nothing answers (\(reason))"
            }
        }
    }

    /// Root, the `gpsd` user (what gpsd drops to), and the bridge's own user (`pinOwnUser`).
    public static var trustedOwners: Set<uid_t> {
        let pinned = ownUser.load(ordering: .relaxed)
        var owners: Set<uid_t> = [0, pinned >= 0 ? uid_t(pinned) : geteuid()]
        if let gpsd = Credentials.user(named: "gpsd") { owners.insert(gpsd.uid) }
        return owners
    }

    /// Checks the server end of connected socket `descriptor`; `alsoTrusted` is one more owner
    /// accepted for this connection (the user the bridge's private gpsd runs as).
    public static func check(connected descriptor: CInt, alsoTrusted: uid_t? = nil) -> Verdict {
        let owner: TCPPeerOwner
        do { owner = try tcpPeerOwner(of: descriptor) } catch { return .unknown }
        switch owner {
        case .local(let uid):
            return trustedOwners.contains(uid) || uid == alsoTrusted ? .trusted(uid: uid) : .untrusted(uid: uid)
        case .remote: return .remote
        case .unknown: return .unknown
        }
    }

    /// Connects to the gpsd at `host:port` (as the session would) and checks it.
    public static func probe(host: String, port: UInt16) -> Verdict {
        let connection: GPSDConnection
        do { connection = try GPSDConnection(host: host, port: port) } catch { return .unreachable(error.description) }
        return check(connected: connection.descriptor)
    }

    /// "uid 65534 (nobody)".
    public static func userName(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return "uid \(uid) (\(String(cString: name)))"
    }
}
