// `tmm-bridge run`: the daemon. Reads the configuration (file, then command line), binds the
// six TMM servers, starts the receiver side and serves until SIGINT or SIGTERM; SIGHUP reloads.
import Bridge
import BridgeCore
import Discovery
import GPSD
import Glibc
import InputLoop
import Logging
import Posix

struct RunCommand: Equatable {
    /// The configuration file given with --config (nil: the default path, if it exists).
    var configFile: String?
    /// Options from the command line, in order (names without `--`; nil value for a flag).
    var settings: [Setting] = []

    struct Setting: Equatable {
        var name: String
        var value: String?
    }

    /// Read when no --config is given and the file exists: `tmm-bridge.conf` in systemd's
    /// `$CONFIGURATION_DIRECTORY` (the unit's `ConfigurationDirectory=`, its first entry) when set,
    /// else `/etc/tmm-bridge/tmm-bridge.conf`.
    static var defaultConfigFile: String {
        defaultConfigFile(configurationDirectory: CurrentProcess.environment("CONFIGURATION_DIRECTORY"))
    }

    /// The file name used in every configuration directory.
    static let configFileName = "tmm-bridge.conf"
    /// Without systemd's `$CONFIGURATION_DIRECTORY`.
    static let fallbackConfigFile = "/etc/tmm-bridge/" + configFileName

    /// `defaultConfigFile` for a given `$CONFIGURATION_DIRECTORY` (nil: unset). systemd sets a
    /// colon-separated list when the unit names several directories; the first is ours.
    static func defaultConfigFile(configurationDirectory: String?) -> String {
        guard let first = configurationDirectory?.split(separator: ":").first, !first.isEmpty else {
            return fallbackConfigFile
        }
        return String(first) + "/" + configFileName
    }

    static let synopsis =
        "       tmm-bridge run [--config FILE] [--device PATH]... [--demo | --replay FILE] [OPTION]..."

    /// The description before the option list (the man page lists the options apart).
    static let summaryIntroduction = """
        run      Serve TMM clients: WebSocket V1 and V2, the REST API and registration, from the
                 receivers udev finds (or --device PATH) read through gpsd. Options (each also
                 works as 'name = value' in the --config file, default \(fallbackConfigFile),
                 or tmm-bridge.conf in $CONFIGURATION_DIRECTORY when systemd sets it):
        """

    static var summary: String {
        var text = summaryIntroduction
        for option in BridgeConfiguration.options {
            let flag = "--\(option.name)" + (option.valueName.map { " \($0)" } ?? "")
            let padded = flag.count < 34 ? flag + String(repeating: " ", count: 34 - flag.count) : flag + "  "
            text += "\n           \(padded)\(option.help)"
        }
        text += "\n           --no-discovery                    same as --discovery no"
        return text
    }

    static func parse(_ arguments: ArraySlice<String>) throws(UsageError) -> RunCommand {
        var command = RunCommand()
        var rest = arguments
        var scratch = BridgeConfiguration()
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("--") else { throw UsageError(message: "run: unexpected argument '\(argument)'") }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if name == "config" {
                guard let path = value ?? rest.popFirst() else { throw UsageError(message: "--config needs a FILE") }
                command.configFile = path
                continue
            }
            if name == "no-discovery" {
                guard value == nil else { throw UsageError(message: "--no-discovery takes no value") }
                name = "discovery"
                value = "no"
            }
            guard let option = BridgeConfiguration.option(named: name) else {
                throw UsageError(message: "run: unknown option '--\(name)'")
            }
            if value == nil && option.valueName != nil {
                guard let next = rest.popFirst(), !next.hasPrefix("--") else {
                    throw UsageError(message: "--\(name) needs a value (\(option.valueName ?? ""))")
                }
                value = next
            }
            // Checked now, so a bad value is a usage error (64) before anything starts.
            do { try scratch.apply(name, value) } catch { throw UsageError(message: "--\(error.message)") }
            command.settings.append(Setting(name: name, value: value))
        }
        return command
    }

    /// The configuration: defaults, then the file, then the command line (a repeatable option on
    /// the command line replaces the file's values).
    func configuration() throws(ConfigurationError) -> BridgeConfiguration {
        var configuration = BridgeConfiguration()
        let defaultPath = Self.defaultConfigFile
        let path = configFile ?? (access(defaultPath, F_OK) == 0 ? defaultPath : nil)
        if let path {
            let bytes: [UInt8]?
            do { bytes = try AtomicFile.read(path, limit: 1 << 20) } catch {
                throw ConfigurationError(message: "cannot read the configuration file: \(error)")
            }
            guard let bytes else { throw ConfigurationError(message: "configuration file \(path) does not exist") }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw ConfigurationError(message: "configuration file \(path) is not UTF-8 text")
            }
            try ConfigurationFile.apply(try ConfigurationFile.parse(text, path: path), path: path, to: &configuration)
        }
        var replaced: Set<String> = []
        for setting in settings {
            if BridgeConfiguration.option(named: setting.name)?.repeatable == true,
                replaced.insert(setting.name).inserted
            {
                configuration.clear(setting.name)
            }
            try configuration.apply(setting.name, setting.value)
        }
        try configuration.validate()
        return configuration
    }

    func run() -> Int32 {
        do {
            try serve()
            return ExitStatus.ok.rawValue
        } catch {
            // The one place a failure becomes an exit status.
            log(error.description, level: .error)
            return error.exitStatus.rawValue
        }
    }

    /// Starts everything and serves until a stop signal.
    private func serve() throws(RunError) {
        let configuration: BridgeConfiguration
        do {
            configuration = try self.configuration()
        } catch {
            throw .configuration("\(error)")
        }
        logger.level = configuration.logLevel
        if CurrentProcess.isDumpable {
            log(
                "warning: the process is dumpable (prctl PR_SET_DUMPABLE failed): a core dump would hold its keys",
                level: .warning)
        }
        // Resolved before anything starts: an unknown user is a configuration error, not a
        // daemon half started as root.
        let dropTo: Credentials?
        do { dropTo = try Self.credentials(for: configuration) } catch {
            throw .configuration(error.description)
        }
        if dropTo != nil { GPSDTrust.pinOwnUser() }
        // Signals are read from a signalfd in the loop: block them before any thread starts.
        do { try SignalDescriptor.block(BridgeServer.handledSignals) } catch {
            throw .signals(error)
        }
        signal(SIGPIPE, SIG_IGN)
        let descriptors = raiseOpenFileLimit()
        if descriptors < 2 * configuration.limits.maxConnections {
            log(
                "note: the open-file limit is \(descriptors); "
                    + "max-connections \(configuration.limits.maxConnections) needs more (LimitNOFILE=)",
                level: .warning)
        }

        let runtime = configuration.runtimeDirectory ?? defaultRuntimeDirectory()
        var environment = BridgeServer.Environment(
            stateDirectory: configuration.stateDirectory ?? defaultStateDirectory(), runtimeDirectory: runtime,
            version: BridgeVersion.current)
        environment.dropUser = dropTo?.uid
        // On a terminal (`make run`), a live status line; log lines (stderr, the same terminal)
        // erase it, are written, and it is drawn again below them.
        let statusLine = StatusLine()
        environment.statusLine = statusLine
        if let statusLine { logger.surroundWrites { write in statusLine.printing(write) } }
        // SIGHUP reads the file and the command line again, as above (on the server's worker).
        environment.reloadConfiguration = { [self] in
            Result { () throws(ConfigurationError) -> BridgeConfiguration in try self.configuration() }
        }
        var options = ReceiverInput.Options(runtimeDirectory: runtime)
        options.dropTo = dropTo.map { (uid: $0.uid, gid: $0.gid) }
        options.devices = configuration.devices
        options.preferredReceivers = configuration.preferredReceivers
        options.bluetooth = Self.bluetoothBindings(configuration)
        options.gpsd = configuration.gpsd
        options.gpsdControlSocket = configuration.gpsdControlSocket
        options.discovery = configuration.discovery
        options.privateGPSDReadOnly = configuration.gpsdReadOnly
        options.replay = configuration.replay
        options.demoCapture = DemoCapture.text.description

        // Connected now, while the socket (root's, perhaps) can still be reached: every
        // notification, those after the privilege drop too, goes through this connection.
        _ = try? SDNotify.connect()

        let input: ReceiverInput
        do {
            input = try ReceiverInput(options: options, log: logger)
        } catch {
            throw .inputSetup(error)
        }
        // Which gpsd, and so which control socket: the server's corrections writer is given it.
        do {
            try input.chooseGPSD()
        } catch {
            throw .input(error)
        }
        let server: BridgeServer
        do {
            server = try BridgeServer(configuration: configuration, environment: environment, input: input, log: logger)
        } catch {
            throw .server(error)
        }
        do {
            try input.start()
        } catch {
            throw .input(error)
        }
        if let dropTo {
            do {
                try Self.drop(
                    to: dropTo, configuration: configuration, environment: environment,
                    gpsdFiles: input.privateGPSDFiles)
            } catch {
                input.stop()
                throw .privilegeDrop(user: dropTo.user, group: dropTo.group, "\(error)")
            }
            do {
                try Self.checkWritable(environment: environment, as: dropTo)
                try Self.checkGPSDControl(input.controlSocket, as: dropTo)
            } catch {
                input.stop()
                throw error
            }
        }
        if statusLine != nil {
            Output.standard(
                RunBanner.text(
                    ports: server.ports, configuration: configuration,
                    program: CommandLine.arguments.first ?? "tmm-bridge",
                    runtimeDirectory: runtime == defaultRuntimeDirectory() ? nil : runtime))
        }
        do {
            try server.run()
        } catch {
            input.stop()
            throw .server(error)
        }
    }

    /// Why `run` ended early; each case carries its exit status (docs/configuration.md).
    enum RunError: ExitStatusError {
        /// The configuration file, options or account are wrong (78).
        case configuration(String)
        /// The stop signals cannot be blocked (1).
        case signals(Errno)
        /// The receiver input's inbox cannot be made (1).
        case inputSetup(Errno)
        /// The servers did not start or stopped serving (78 or 1, as the error says).
        case server(BridgeServerError)
        /// The receiver input did not start (78 or 1, as the error says).
        case input(ReceiverInputError)
        /// Started as root, the drop to the configured account failed (71).
        case privilegeDrop(user: String, group: String, String)
        /// After the drop, the user cannot write a directory the daemon writes while it runs (73).
        case unwritableDirectory(kind: String, path: String, user: String, uid: UserID, Errno)
        /// After the drop, the user cannot use the configured gpsd control socket (77).
        case unusableGPSDControl(path: String, user: String, uid: UserID, Errno)

        var exitStatus: ExitStatus {
            switch self {
            case .configuration: .badConfiguration
            case .signals, .inputSetup: .failure
            case .server(let error): error.exitStatus
            case .input(let error): error.exitStatus
            case .privilegeDrop: .privilegeDropFailed
            case .unwritableDirectory: .cannotCreate
            case .unusableGPSDControl: .noPermission
            }
        }

        var description: String {
            switch self {
            case .configuration(let reason): "configuration: \(reason)"
            case .signals(let error): "cannot block signals: \(error)"
            case .inputSetup(let error): "cannot set up the receiver input: \(error)"
            case .server(let error): error.description
            case .input(let error): error.description
            case .privilegeDrop(let user, let group, let reason):
                "cannot drop privileges to user \(user) group \(group): \(reason)"
            case .unwritableDirectory(let kind, let path, let user, let uid, let error):
                "\(kind) directory \(path) is not writable by user \(user) (uid \(uid)) "
                    + "after the privilege drop (\(error)): it must be able to enter every parent directory (x) "
                    + "and write this one, on a file system mounted read-write; "
                    + "fix them, or set \(kind)-dir to a directory of its own"
            case .unusableGPSDControl(let path, let user, let uid, let error):
                "gpsd's control socket \(path) cannot be written by user \(user) (uid \(uid)) "
                    + "after the privilege drop (\(error)): receivers could not be handed to gpsd; "
                    + "give the user write access (gpsd's -G option, or its group), "
                    + "or leave out gpsd-control to use the bridge's own gpsd"
            }
        }
    }

    // MARK: - Privileges

    /// Why the configured account cannot be used (exit 78).
    struct AccountError: Error, CustomStringConvertible {
        var description: String
    }

    /// Whom to become after start-up: nil when not started as root (nothing to drop; a
    /// configured `user` is then noted and ignored) or when `user = root` asks to stay root.
    /// Defaults: user `tmm-bridge` if it exists, else `nobody`; group `dialout` if it exists
    /// (serial receivers are root:dialout 0660), else the user's primary group.
    static func credentials(for configuration: BridgeConfiguration) throws(AccountError) -> Credentials? {
        guard geteuid() == 0 else {
            if let user = configuration.user, Credentials.user(named: user)?.uid != geteuid() {
                log("note: not started as root, so user = \(user) does not apply")
            }
            return nil
        }
        let user = configuration.user ?? (Credentials.user(named: "tmm-bridge") != nil ? "tmm-bridge" : "nobody")
        guard user != "root" else {
            log("staying root (user = root): every thread keeps every capability", level: .warning)
            return nil
        }
        guard let account = Credentials.user(named: user) else {
            throw AccountError(
                description: "user '\(user)' does not exist: create it (adduser --system \(user)) or set user = NAME")
        }
        guard account.uid != 0 else {
            throw AccountError(
                description: "user '\(user)' has uid 0: that is root by another name; set user = root to stay root")
        }
        let group: String
        let gid: gid_t
        if let name = configuration.group {
            guard let found = Credentials.group(named: name) else {
                throw AccountError(
                    description:
                        "group '\(name)' does not exist: create it (addgroup --system \(name)) or set group = NAME")
            }
            (group, gid) = (name, found)
        } else if let dialout = Credentials.group(named: "dialout") {
            (group, gid) = ("dialout", dialout)
        } else {
            (group, gid) = ("\(account.gid)", account.gid)
        }
        return Credentials(user: user, uid: account.uid, group: group, gid: gid)
    }

    /// After the drop: the user must be able to make files in the state directory (registry and
    /// settings writes) and the runtime directory (gpsd's record and log when it restarts). Owning
    /// them is not enough: a parent it cannot enter (a state-dir inside root's 0700 home) or a
    /// read-only mount made every registration fail while the daemon looked healthy. Checked
    /// with the user's own ids, so the kernel answers as it will for each write.
    static func checkWritable(environment: BridgeServer.Environment, as credentials: Credentials) throws(RunError) {
        for (kind, path) in [("state", environment.stateDirectory), ("runtime", environment.runtimeDirectory)] {
            do { try CurrentProcess.checkCanCreateFiles(in: path) } catch {
                throw .unwritableDirectory(kind: kind, path: path, user: credentials.user, uid: credentials.uid, error)
            }
        }
    }

    /// After the drop: the gpsd control socket receivers are handed through (the private gpsd's,
    /// handed over; a configured or system gpsd's) must be writable by the user, as connecting to
    /// it needs. Before, the first hand-off ran on the input's thread and
    /// raced the drop: it worked when it came first, and every later one (a receiver plugged in,
    /// gpsd restarted) failed while the daemon looked healthy.
    static func checkGPSDControl(_ path: String?, as credentials: Credentials) throws(RunError) {
        guard let path else { return }
        do { try CurrentProcess.checkCanWrite(path) } catch {
            throw .unusableGPSDControl(path: path, user: credentials.user, uid: credentials.uid, error)
        }
    }

    /// Bluetooth receivers are configured: a `bluetooth` line, or a `device` that is an rfcomm
    /// tty. Binding one again
    /// after its link drops (RFCOMMCREATEDEV) needs CAP_NET_ADMIN.
    static func needsBluetooth(_ configuration: BridgeConfiguration) -> Bool {
        !configuration.bluetoothReceivers.isEmpty
            || configuration.devices.contains { RFCOMMTTY.deviceNumber(fromName: $0) != nil }
    }

    /// The `bluetooth` lines as the rfcomm bindings the input side keeps.
    static func bluetoothBindings(_ configuration: BridgeConfiguration) -> [RFCOMMBinding] {
        configuration.bluetoothReceivers.withTTYNumbers.map { setting, rfcomm in
            RFCOMMBinding(device: rfcomm, address: setting.address, channel: setting.channel)
        }
    }

    /// Hands what start-up created as root to the target user, then drops to it, and says so.
    /// Listeners, the private gpsd's sockets and the control socket are bound already; gpsd runs
    /// as the target user already (ReceiverInput.Options.dropTo). gpsd's control socket is handed
    /// over (the bridge connects to it to hand gpsd receivers); the bridge's own control socket
    /// keeps root's ownership: its mode decides who may register, and that is not the target
    /// user's to widen.
    static func drop(
        to credentials: Credentials, configuration: BridgeConfiguration,
        environment: BridgeServer.Environment, gpsdFiles: [String]
    ) throws {
        // The directories are the daemon's own (makeDirectories made them or checked they are
        // root's or this user's), so they become the user's, as systemd's StateDirectory= and
        // RuntimeDirectory= make them; so do the files it rewrites while it runs.
        for path in [
            environment.stateDirectory, environment.stateDirectory + "/" + ApplicationRegistry.fileName,
            environment.stateDirectory + "/" + DeviceSettings.fileName, environment.runtimeDirectory,
        ] + gpsdFiles {
            try handOver(path, to: credentials.uid, credentials.gid)
        }
        let bluetooth = needsBluetooth(configuration)
        try dropPrivileges(to: credentials, keeping: bluetooth ? CapabilitySets.netAdmin : 0)
        log(
            "dropped privileges to user \(credentials.user) (uid \(credentials.uid)) "
                + "group \(credentials.group) (gid \(credentials.gid))"
                + (bluetooth ? ", kept CAP_NET_ADMIN for Bluetooth (rfcomm)" : ", no capabilities kept"), level: .notice
        )
    }
}
