import BridgeCore
import Posix

// The antenna and correction settings REST reads and changes (BridgeCore's DeviceSettings),
// served from memory and kept in `<state-dir>/settings.json` by a writer thread of their own.

/// The settings in force and their file. Loop-confined.
final class DeviceSettingsStore {
    /// What REST answers with and the location messages use (the antenna height).
    private(set) var settings: DeviceSettings
    /// Writes `settings.json` on a thread of its own, coalesced to the latest settings: a burst
    /// of PUTs never queues behind registrations nor makes them wait.
    private let writer: LatestValueWriter<DeviceSettings>
    private let log: Logger

    /// The settings as loaded at start-up (`DeviceSettings.load`); starts the writer, which
    /// posts how each write went to `results`.
    init(
        _ loaded: DeviceSettings, stateDirectory: String, results: Inbox<WorkerResult>, log: Logger
    )
        throws(BridgeServerError)
    {
        self.log = log
        settings = loaded
        let path = stateDirectory + "/" + DeviceSettings.fileName
        do {
            writer = try LatestValueWriter(name: "settings-writer") { settings in
                var failure: String?
                do { try AtomicFile.write(settings.fileBytes(), to: path, mode: 0o600) } catch { failure = "\(error)" }
                results.post(.settingsSaved(failure: failure))
            }
        } catch {
            throw .eventLoop(error)
        }
    }

    /// REST changed the settings: served from memory at once (the client's 200 says these
    /// settings), written to disk by the writer. Every PUT's settings are the whole state, so
    /// the writer keeps only the latest: what a client was answered is on disk unless a later
    /// PUT replaced it, however slow the disk; it refuses only once the server stopped serving,
    /// which no request can see.
    func save(_ next: DeviceSettings) {
        settings = next
        if !writer.submit(next) { log.error("cannot save the settings: the settings writer has stopped") }
    }

    /// The writer reported a write.
    func saved(failure: String?) {
        if let failure { log.error("cannot save the settings: \(failure) (they apply until the daemon stops)") }
    }

    /// The latest settings are written before the daemon exits.
    func stop() {
        writer.stop()
    }
}

@available(*, unavailable, message: "it belongs to the io thread")
extension DeviceSettingsStore: Sendable {}

extension DeviceSettings {
    /// `<state directory>/settings.json`, or the defaults when it does not exist yet. Only the
    /// daemon's own file (`FileTrust`, as the registry).
    static func load(stateDirectory: String, alsoOwnedBy dropUser: UserID?) throws(BridgeServerError) -> DeviceSettings
    {
        let path = stateDirectory + "/" + fileName
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, limit: 1 << 20, trusting: .ours(mode: 0o600, alsoOwnedBy: dropUser))
        } catch {
            throw .settings(path, "\(error)")
        }
        guard let bytes else { return DeviceSettings() }
        switch parseFile(bytes) {
        case .success(let settings): return settings
        case .failure(let failure):
            throw .settings(path, "\(failure.message) (fix or remove it; REST writes it as JSON)")
        }
    }
}
