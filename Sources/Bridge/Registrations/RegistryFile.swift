import BridgeCore
import Posix
import TMMProtocol

// The registry's file I/O (its schema is BridgeCore's ApplicationRegistry): read at start-up,
// written atomically (AtomicFile, mode 0600) on the server's worker before a registration is
// answered.

extension ApplicationRegistry {
    /// Why the registry cannot be read or written.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        case io(AtomicFile.Failure)
        case invalid(path: String, reason: String)
        /// `register` would exceed `max-registered-apps`.
        case full(maximum: Int)

        init(_ refusal: Refusal, path: String) {
            switch refusal {
            case .invalid(let reason): self = .invalid(path: path, reason: reason)
            case .full(let maximum): self = .full(maximum: maximum)
            }
        }

        public var description: String {
            switch self {
            case .io(let failure): "registry: \(failure)"
            case .invalid(let path, let reason):
                "registry \(path) is not a valid tmm-bridge registry (\(reason)); "
                    + "fix it, or move it away to start with no registered applications"
            case .full(let maximum):
                "the registry is full (\(maximum) applications, max-registered-apps): "
                    + "remove unused entries with the daemon stopped, or raise max-registered-apps"
            }
        }
    }

    /// The registry at `path` (empty when the file does not exist yet). Only the daemon's own
    /// file is read (`FileTrust`: this user's or `dropUser`'s, who writes it after a root
    /// daemon's drop): one another user planted would register that user's ids.
    public static func load(path: String, alsoOwnedBy dropUser: UserID? = nil) throws(Failure) -> ApplicationRegistry {
        let bytes: [UInt8]?
        do { bytes = try AtomicFile.read(path, trusting: .ours(mode: 0o600, alsoOwnedBy: dropUser)) } catch {
            throw .io(error)
        }
        guard let bytes else { return ApplicationRegistry(path: path) }
        switch parse(bytes, path: path) {
        case .success(let registry): return registry
        case .failure(let refusal): throw Failure(refusal, path: path)
        }
    }

    /// Registers `id` (a no-op if it already is) and writes the file before returning; on a write
    /// failure nothing changes, in memory or on disk. Refused with `.full` as `registering` is.
    /// - Returns: true when `id` is new.
    @discardableResult
    public mutating func register(_ id: GUID, unixSeconds: Int64, maximum: Int = .max) throws(Failure) -> Bool {
        let next: ApplicationRegistry?
        do { next = try registering(id, unixSeconds: unixSeconds, maximum: maximum) } catch {
            throw Failure(error, path: path)
        }
        guard let next else { return false }
        try next.save()
        self = next
        return true
    }

    /// Writes the file (atomically, mode 0600).
    public func save() throws(Failure) {
        do { try AtomicFile.write(fileBytes(), to: path, mode: 0o600) } catch { throw .io(error) }
    }
}
