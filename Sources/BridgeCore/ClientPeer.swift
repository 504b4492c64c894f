/// Who is behind a client connection, for the shares one client must not exceed however many
/// connections it opens (the Access Code V2 replay ledger and RSA decryptions). A local user can
/// send from any 127.x.y.z address and any port, but not under another uid, so a connection
/// from this machine counts as its user's; one from the network as its address's, an IPv6
/// address by its /64 (a host is given a whole prefix and picks addresses in it at will).
///
/// The executor finds out (Bridge: the kernel's socket table names the owner of the client's
/// end of a connection made on this machine); here is only what the answer means.
public enum ClientPeer: Hashable, Sendable, CustomStringConvertible {
    /// A socket of this machine owned by this uid (not root).
    case localUser(UInt32)
    /// A client of this machine the kernel names no user for: root's own, or one whose socket
    /// was closed before it was looked up (the kernel reports such a socket as root's). They
    /// share one peer: closing early buys a client one more share, not a fresh one each time.
    case localUnattributed
    /// From the network: an IPv4 address (mapped, `::ffff:a.b.c.d`) or an IPv6 /64, as the 16
    /// bytes' two big-endian halves.
    case network(UInt64, UInt64)

    /// A client on this machine (loopback, or another of its addresses): not from the network.
    public var isThisMachine: Bool { if case .network = self { false } else { true } }

    /// The peer of a connection whose client end the kernel says `owner` owns (nil: not a
    /// socket of this machine, so a client on the network at `address`: 16 bytes, IPv4
    /// mapped) and `isLoopback` (an address of this machine the kernel no longer lists).
    public init(owner: UInt32?, address: [UInt8], isLoopback: Bool) {
        if let owner {
            self = owner == 0 ? .localUnattributed : .localUser(owner)
        } else if isLoopback || address.count != 16 {
            self = .localUnattributed
        } else {
            var high: UInt64 = 0, low: UInt64 = 0
            for byte in address[0..<8] { high = high << 8 | UInt64(byte) }
            for byte in address[8..<16] { low = low << 8 | UInt64(byte) }
            // An IPv4 address is the host; an IPv6 address is its /64.
            let isMappedIPv4 = high == 0 && low >> 32 == 0xFFFF
            self = .network(high, isMappedIPv4 ? low : 0)
        }
    }

    public var description: String {
        switch self {
        case .localUser(let uid): "local user uid \(uid)"
        case .localUnattributed: "a local client of root's or already closed"
        case .network(let high, let low):
            if high == 0 && low >> 32 == 0xFFFF {
                "\(low >> 24 & 0xFF).\(low >> 16 & 0xFF).\(low >> 8 & 0xFF).\(low & 0xFF)"
            } else {
                (0..<4).map { String(high >> (48 - 16 * UInt64($0)) & 0xFFFF, radix: 16) }.joined(separator: ":")
                    + "::/64"
            }
        }
    }
}
