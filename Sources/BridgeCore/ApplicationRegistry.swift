import FoundationEssentials
import TMMProtocol

// The applications that registered (TMM-API.md §3.1: Register "adds the Application ID to TMM's
// client-application registry. This is what makes Access Code V1 work").
//
// The registry and its file's schema, pure: the server (Sources/Bridge/Registrations) reads and
// writes `<state-dir>/registry.json`, mode 0600, replaced atomically before the registration is
// answered: an app that was told `OK` is on disk, whatever happens next, and a kill at any moment
// leaves the old file or the new one. The file is JSON so an operator can read it and remove an
// entry by hand (with the daemon stopped):
//
//   {"format":"tmm-bridge registry","version":1,
//    "applications":[{"applicationId":"12345678-...","registeredAt":"2026-12-01T07:41:42Z"}]}

/// Registered application IDs, and the file they are kept in as bytes.
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

    /// Why a registry file's bytes are not a registry, or a registration does not fit.
    public enum Refusal: Error, Sendable, Equatable {
        /// Not what the bridge writes (the reason says what is wrong).
        case invalid(reason: String)
        /// Registering would exceed `max-registered-apps`.
        case full(maximum: Int)
    }

    /// Where the registry is kept (the server's I/O writes it there).
    public let path: String
    /// Registered applications in registration order.
    public private(set) var entries: [Entry] = []
    /// Their IDs, parsed once (every authenticated request looks at them).
    public private(set) var applicationIDs: [GUID] = []
    private var index: [GUID: Int] = [:]

    /// An empty registry kept at `path`.
    public init(path: String) {
        self.path = path
    }

    /// The registry a file's bytes hold.
    public static func parse(_ bytes: [UInt8], path: String) -> Result<ApplicationRegistry, Refusal> {
        var registry = ApplicationRegistry(path: path)
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: Data(bytes))
        } catch {
            return .failure(.invalid(reason: "not the expected JSON: \(error)"))
        }
        guard file.format == format else { return .failure(.invalid(reason: "format is '\(file.format)'")) }
        guard file.version == version else {
            return .failure(.invalid(reason: "version \(file.version); this build reads version \(version)"))
        }
        for entry in file.applications {
            guard let id = GUID(entry.applicationId) else {
                return .failure(.invalid(reason: "'\(entry.applicationId)' is not a GUID"))
            }
            guard registry.index[id] == nil else { return .failure(.invalid(reason: "\(id) is listed twice")) }
            registry.index[id] = registry.entries.count
            registry.entries.append(Entry(applicationId: id.canonical, registeredAt: entry.registeredAt))
            registry.applicationIDs.append(id)
        }
        return .success(registry)
    }

    public func contains(_ id: GUID) -> Bool { index[id] != nil }

    /// The registry with `id` added, not yet saved; nil when `id` is registered already. A new
    /// id is refused with `.full` when `maximum` applications are registered already (every
    /// registered id costs a digest per second and a line in the file, which is read whole at
    /// start-up). The daemon saves it on its worker thread and makes it current once the file
    /// is written, so the io thread never waits and an app is told `OK` only once its id is on
    /// disk.
    public func registering(_ id: GUID, unixSeconds: Int64, maximum: Int = .max) throws(Refusal) -> ApplicationRegistry?
    {
        guard index[id] == nil else { return nil }
        guard entries.count < maximum else { throw .full(maximum: maximum) }
        var next = self
        next.index[id] = next.entries.count
        next.entries.append(
            Entry(applicationId: id.canonical, registeredAt: AccessCodeV1.timestamp(unixSeconds: unixSeconds)))
        next.applicationIDs.append(id)
        return next
    }

    /// The file's bytes: pretty-printed JSON with sorted keys and a final newline.
    public func fileBytes() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            return Array(try encoder.encode(File(format: Self.format, version: Self.version, applications: entries)))
                + [0x0A]
        } catch {
            preconditionFailure("registry entries always encode: \(error)")
        }
    }
}
