import BridgeCore
import FoundationEssentials
import Posix
import TMMProtocol

// The applications that registered (TMM-API.md §3.1: Register "adds the Application ID to TMM's
// client-application registry. This is what makes Access Code V1 work").
//
// Kept in `<state-dir>/registry.json`, mode 0600, replaced atomically (AtomicFile) before the
// registration is answered: an app that was told `OK` is on disk, whatever happens next, and a
// kill at any moment leaves the old file or the new one. The file is JSON so an operator can
// read it and remove an entry by hand (with the daemon stopped):
//
//   {"format":"tmm-bridge registry","version":1,
//    "applications":[{"applicationId":"12345678-...","registeredAt":"2026-12-01T07:41:42Z"}]}

/// Registered application IDs and their persistence.
public struct ApplicationRegistry: Sendable {
    /// The file's `format` member, so a wrong file is recognised as such.
    public static let format = "tmm-bridge registry"
    /// The schema version this build reads and writes.
    public static let version = 1
    /// The file name inside the state directory.
    public static let fileName = "registry.json"

    /// One registered application.
    public struct Entry: Sendable, Equatable, Codable {
        public var applicationId: String
        /// When it first registered (ISO 8601 UTC).
        public var registeredAt: String
    }

    private struct File: Codable {
        var format: String
        var version: Int
        var applications: [Entry]
    }

    /// Why the registry cannot be read or written.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        case io(AtomicFile.Failure)
        case invalid(path: String, reason: String)
        /// `register` would exceed `max-registered-apps`.
        case full(maximum: Int)

        public var description: String {
            switch self {
            case .io(let failure): "registry: \(failure)"
            case .invalid(let path, let reason):
                "registry \(path) is not a valid tmm-bridge registry (\(reason)); fix it, or move it away to start with no registered applications"
            case .full(let maximum):
                "the registry is full (\(maximum) applications, max-registered-apps): remove unused entries with the daemon stopped, or raise max-registered-apps"
            }
        }
    }

    /// The registry file's path.
    public let path: String
    /// Registered applications in registration order.
    public private(set) var entries: [Entry] = []
    /// Their IDs, parsed once (every authenticated request looks at them).
    public private(set) var applicationIDs: [GUID] = []
    private var index: [GUID: Int] = [:]

    /// The registry at `path` (empty when the file does not exist yet). Only the daemon's own
    /// file is read (`FileTrust`: this user's or `dropUser`'s, who writes it after a root
    /// daemon's drop): one another user planted would register that user's ids.
    public static func load(path: String, alsoOwnedBy dropUser: UserID? = nil) throws(Failure) -> ApplicationRegistry {
        var registry = ApplicationRegistry(path: path)
        let bytes: [UInt8]?
        do { bytes = try AtomicFile.read(path, trusting: .ours(mode: 0o600, alsoOwnedBy: dropUser)) } catch { throw .io(error) }
        guard let bytes else { return registry }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: Data(bytes))
        } catch {
            throw .invalid(path: path, reason: "not the expected JSON: \(error)")
        }
        guard file.format == format else { throw .invalid(path: path, reason: "format is '\(file.format)'") }
        guard file.version == version else {
            throw .invalid(path: path, reason: "version \(file.version); this build reads version \(version)")
        }
        for entry in file.applications {
            guard let id = GUID(entry.applicationId) else {
                throw .invalid(path: path, reason: "'\(entry.applicationId)' is not a GUID")
            }
            guard registry.index[id] == nil else { throw .invalid(path: path, reason: "\(id) is listed twice") }
            registry.index[id] = registry.entries.count
            registry.entries.append(Entry(applicationId: id.canonical, registeredAt: entry.registeredAt))
            registry.applicationIDs.append(id)
        }
        return registry
    }

    private init(path: String) {
        self.path = path
    }

    public func contains(_ id: GUID) -> Bool { index[id] != nil }

    /// Registers `id` (a no-op if it already is) and writes the file before returning; on a write
    /// failure nothing changes, in memory or on disk. A new id is refused with `.full` when
    /// `maximum` applications are registered already (every registered id costs a digest per
    /// second and a line in the file, which is read whole at start-up).
    /// - Returns: true when `id` is new.
    @discardableResult
    public mutating func register(_ id: GUID, unixSeconds: Int64, maximum: Int = .max) throws(Failure) -> Bool {
        guard let next = try registering(id, unixSeconds: unixSeconds, maximum: maximum) else { return false }
        try next.save()
        self = next
        return true
    }

    /// The registry with `id` added, not yet saved; nil when `id` is registered already. The
    /// daemon saves it on its worker thread (`save` waits for the disk) and makes it current
    /// once the file is written, so the io thread never waits and an app is told `OK` only
    /// once its id is on disk. Throws `.full` as `register` does.
    public func registering(_ id: GUID, unixSeconds: Int64, maximum: Int = .max) throws(Failure) -> ApplicationRegistry? {
        guard index[id] == nil else { return nil }
        guard entries.count < maximum else { throw .full(maximum: maximum) }
        var next = self
        next.index[id] = next.entries.count
        next.entries.append(Entry(applicationId: id.canonical, registeredAt: AccessCodeV1.timestamp(unixSeconds: unixSeconds)))
        next.applicationIDs.append(id)
        return next
    }

    /// Writes the file (atomically, mode 0600).
    public func save() throws(Failure) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(File(format: Self.format, version: Self.version, applications: entries))
        } catch {
            preconditionFailure("registry entries always encode: \(error)")
        }
        do { try AtomicFile.write(Array(data) + [0x0A], to: path, mode: 0o600) } catch { throw .io(error) }
    }
}
