// Real-broker fixtures for the fleet publishing tests (MQTT): Debian's mosquitto on loopback with
// persistence, a password file and a TLS listener with a CA the fixture makes (MosquittoBroker),
// stopped and started again on the same port; an independent subscriber (mosquitto_sub,
// MQTTSubscriber); and a hostile broker (tmmtools/peers/hostile_mqtt_broker.py, HostileMQTTBroker).
//
// Children are started with posix_spawn, every descriptor above 2 closed in them, and reaped here
// (not Foundation's `Process`: see Tests/CLITests/EndToEndSupport.swift, `Spawned`). Every wait is
// a condition with a deadline (Waiting.swift). Ports come from below the kernel's ephemeral range,
// so neither another test's `freeLoopbackPort()` nor a client's source port takes a broker's port
// while it is down for an outage.
import Foundation
import Glibc
import Synchronization

/// A fixture could not do its part; the text says what, with the tool's output.
public struct MosquittoFixtureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A short-lived tool's end (mosquitto_pub, openssl): its exit status, nil when it was killed at
/// its time limit or by a signal, and its standard output and error together.
public struct MQTTToolRun: Sendable, CustomStringConvertible {
    public let status: Int32?
    public let output: String
    public var description: String { "exit status \(status.map(String.init) ?? "none (killed)"): \(output)" }

    /// Runs `executable` with `arguments` to its end, killed after `timeout`.
    public static func run(
        _ executable: String, _ arguments: [String], timeout: Duration = .seconds(20)
    ) throws -> MQTTToolRun {
        let child = try SpawnedChild(executable, arguments)
        guard case .exited(let status) = child.wait(timeout: timeout) else {
            child.killAndReap()
            return MQTTToolRun(status: nil, output: child.output.text)
        }
        return MQTTToolRun(status: status, output: child.output.text)
    }
}

// MARK: - The real broker

/// Debian's mosquitto (2.0) on 127.0.0.1 for one test: its own directory (configuration,
/// persistence, log, password file, certificates) and ports, so tests run in parallel.
///
///     let broker = try MosquittoBroker(users: ["fleet": "secret"], tls: true)
///     try broker.start()
///     let subscriber = try MQTTSubscriber(broker: broker, topic: "tmm/#", user: "fleet", password: "secret")
///     broker.stop()          // an outage: the port refuses; the persistence file is written
///     try broker.start()     // the same port, the same retained messages and sessions
///
/// `stop()` is SIGTERM (mosquitto saves its database); `kill()` is SIGKILL (a crash: what changed
/// since the last save, at start or at the last stop, is lost). Stopped and its directory removed
/// when released.
public final class MosquittoBroker: Sendable {
    public static let executable = "/usr/sbin/mosquitto"

    /// mosquitto, its clients (mosquitto_sub, mosquitto_pub, mosquitto_passwd) and openssl are
    /// installed (Debian's mosquitto, mosquitto-clients, openssl).
    public static let isAvailable: Bool = {
        let clients = ["/usr/bin/mosquitto_sub", "/usr/bin/mosquitto_pub", "/usr/bin/mosquitto_passwd"]
        let tools = [executable, "/usr/bin/openssl", "/usr/bin/stdbuf"] + clients
        return tools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// The plain listener's port on 127.0.0.1.
    public let port: UInt16
    /// The TLS listener's port (nil without `tls`).
    public let tlsPort: UInt16?
    /// The broker's own directory: mosquitto.conf, mosquitto.db, mosquitto.log, passwd, the PEM files.
    public let directory: String
    /// The logins the broker accepts (empty: anonymous clients are allowed).
    public let users: [String: String]
    /// The test CA's certificate (PEM), which signed the server's and the client's (nil without `tls`).
    public let caFile: String?
    /// A client certificate and key signed by the same CA, CN `tmm-test-client` (nil without `tls`).
    public let clientCertFile: String?
    public let clientKeyFile: String?
    /// Whether the TLS listener asks for a client certificate and refuses a client without one.
    public let requireClientCertificate: Bool

    public var configFile: String { directory + "/mosquitto.conf" }
    public var logFile: String { directory + "/mosquitto.log" }
    public var persistenceFile: String { directory + "/mosquitto.db" }
    /// mosquitto's log so far, every run since the fixture was made (for a failing test's message).
    public var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    private let child = Mutex<SpawnedChild?>(nil)

    /// Picks the ports and writes the configuration (and with `users` the password file, with
    /// `tls` the CA, server and client certificates); `start()` starts it.
    public init(users: [String: String] = [:], tls: Bool = false, requireClientCertificate: Bool = false) throws {
        self.users = users
        self.requireClientCertificate = requireClientCertificate
        directory = try makeFixtureDirectory("mosquitto")
        port = try LoopbackPorts.pick()
        tlsPort = tls ? try LoopbackPorts.pick() : nil
        if tls {
            try makeCertificates(in: directory)
            caFile = directory + "/ca.crt"
            clientCertFile = directory + "/client.crt"
            clientKeyFile = directory + "/client.key"
        } else {
            (caFile, clientCertFile, clientKeyFile) = (nil, nil, nil)
        }
        if !users.isEmpty {
            // mosquitto_passwd -b adds to an existing file (-c would make it, for one user only).
            guard FileManager.default.createFile(atPath: passwordFile, contents: Data()) else {
                throw MosquittoFixtureError("cannot create \(passwordFile)")
            }
        }
        for (user, password) in users.sorted(by: { $0.key < $1.key }) {
            let made = try MQTTToolRun.run("/usr/bin/mosquitto_passwd", ["-b", passwordFile, user, password])
            guard made.status == 0 else { throw MosquittoFixtureError("mosquitto_passwd \(user): \(made)") }
        }
        try configuration.write(toFile: configFile, atomically: true, encoding: .utf8)
    }

    deinit {
        stop()
        LoopbackPorts.release([port] + (tlsPort.map { [$0] } ?? []))
        try? FileManager.default.removeItem(atPath: directory)
    }

    private var passwordFile: String { directory + "/passwd" }

    /// mosquitto.conf. `user root`: started as root, mosquitto otherwise drops to the user
    /// `mosquitto`, who cannot read this directory (as any other user it keeps its own).
    private var configuration: String {
        var lines = [
            "# MosquittoBroker (Tests/Support/TestSupport/MosquittoBroker.swift): one test's broker",
            "user root",
            "allow_anonymous \(users.isEmpty)",
            "persistence true",
            "persistence_location \(directory)/",
            "persistence_file mosquitto.db",
            "log_dest file \(logFile)",
            "log_type error", "log_type warning", "log_type notice", "log_type information",
            "log_timestamp_format %Y-%m-%dT%H:%M:%S",
            "listener \(port) 127.0.0.1",
        ]
        if !users.isEmpty { lines.insert("password_file \(passwordFile)", at: 3) }
        if let tlsPort {
            lines += [
                "listener \(tlsPort) 127.0.0.1", "cafile \(directory)/ca.crt", "certfile \(directory)/server.crt",
                "keyfile \(directory)/server.key", "require_certificate \(requireClientCertificate)",
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `mqtt://127.0.0.1:PORT`.
    public var url: String { "mqtt://127.0.0.1:\(port)" }

    /// `mqtt://user:password@127.0.0.1:PORT`, or with `tls` `mqtts://…:TLSPORT` (user and password
    /// percent-encoded; either may be nil).
    public func url(user: String? = nil, password: String? = nil, tls: Bool = false) -> String {
        var login = ""
        if let user {
            login = user.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? user
            if let password {
                login += ":" + (password.addingPercentEncoding(withAllowedCharacters: .urlPasswordAllowed) ?? password)
            }
            login += "@"
        }
        return (tls ? "mqtts://" : "mqtt://") + login + "127.0.0.1:\(tls ? tlsPort ?? 0 : port)"
    }

    /// Whether its mosquitto runs (started and not ended).
    public var isRunning: Bool { child.withLock { $0?.hasEnded == false } }

    /// The pid of the running mosquitto.
    public var pid: pid_t? { child.withLock { $0?.hasEnded == false ? $0?.pid : nil } }

    /// Starts mosquitto and returns when it is running (it logged so) and its ports accept TCP
    /// connections; throws, with its log, when it ends or is not ready within `timeout`.
    public func start(timeout: Duration = .seconds(15)) throws {
        let runningBefore = runningLines()
        let started: SpawnedChild = try child.withLock { child in
            if let child, !child.hasEnded { return child }
            let output = directory + "/mosquitto.out"
            child = try SpawnedChild(Self.executable, ["-c", configFile], outputFile: output)
            return child!
        }
        let ports = [port] + (tlsPort.map { [$0] } ?? [])
        let ready = waitUntil(timeout: timeout, pollInterval: .milliseconds(10)) {
            started.hasEnded || (runningLines() > runningBefore && ports.allSatisfy(Self.acceptsConnection(port:)))
        }
        if started.hasEnded || !ready {
            stop()
            let output = (try? String(contentsOfFile: directory + "/mosquitto.out", encoding: .utf8)) ?? ""
            throw MosquittoFixtureError(
                "mosquitto on \(ports) \(ready ? "ended" : "not ready after \(timeout)"): \(output)\nlog:\n\(log)")
        }
    }

    /// SIGTERM and waits for its end (mosquitto writes its persistence file first): the ports
    /// refuse connections once it returns. SIGKILL after `timeout`.
    public func stop(timeout: Duration = .seconds(10)) {
        guard
            let running = child.withLock({ child in
                defer { child = nil }; return child
            })
        else { return }
        running.signal(SIGTERM)
        if running.wait(timeout: timeout) == nil { running.killAndReap() }
    }

    /// SIGKILL and waits for its end: a crash, nothing saved.
    public func kill() {
        child.withLock { child in
            defer { child = nil }; return child
        }?.killAndReap()
    }

    /// `stop()` then `start()`, on the same ports.
    public func restart() throws {
        stop()
        try start()
    }

    /// The lines mosquitto logs once its listeners are open.
    private func runningLines() -> Int {
        log.split(separator: "\n").count { $0.contains("mosquitto version") && $0.hasSuffix(" running") }
    }

    /// The arguments of mosquitto_pub and mosquitto_sub that reach this broker: `-h 127.0.0.1 -p PORT`,
    /// the login, and with `tls` the TLS port and `--cafile` (with `clientCertificate` also `--cert`
    /// and `--key`).
    public func clientArguments(
        user: String? = nil, password: String? = nil, tls: Bool = false, clientCertificate: Bool = false
    ) -> [String] {
        var arguments = ["-h", "127.0.0.1", "-p", String(tls ? tlsPort ?? 0 : port)]
        if let user { arguments += ["-u", user] }
        if let password { arguments += ["-P", password] }
        if tls, let caFile { arguments += ["--cafile", caFile] }
        if tls, clientCertificate, let clientCertFile, let clientKeyFile {
            arguments += ["--cert", clientCertFile, "--key", clientKeyFile]
        }
        return arguments
    }

    /// Publishes one message with mosquitto_pub (an independent client): status 0 when the broker
    /// took it (for QoS 1, it acknowledged it); mosquitto_pub's status 5 is "not authorised".
    public func publish(
        topic: String, payload: String, qos: Int = 1, retain: Bool = false, user: String? = nil,
        password: String? = nil, tls: Bool = false, clientCertificate: Bool = false
    ) throws -> MQTTToolRun {
        let login = clientArguments(user: user, password: password, tls: tls, clientCertificate: clientCertificate)
        let arguments = login + ["-t", topic, "-m", payload, "-q", String(qos)] + (retain ? ["-r"] : [])
        return try MQTTToolRun.run("/usr/bin/mosquitto_pub", arguments)
    }
}

// MARK: - The independent subscriber

/// mosquitto_sub subscribed to one topic filter (QoS 1), its messages collected as they come:
/// the other side of what the daemon publishes. With `clientID` its session is persistent
/// (`-c -i ID`): the broker queues QoS 1 messages while it is stopped, and a new subscriber with
/// the same id gets them. It reconnects by itself after a broker outage (`subscriptions` counts).
public final class MQTTSubscriber: Sendable {
    /// One message: its topic, whether it was delivered as retained (a retained message sent on
    /// subscribing; a live one is never flagged), and its payload (one line: JSON).
    public struct Message: Sendable, Equatable {
        public let topic: String
        public let retained: Bool
        public let payload: String
    }

    public let topic: String
    public let clientID: String?
    private let child: SpawnedChild

    /// Starts mosquitto_sub and, with `waitForSubscription`, returns once the broker acknowledged
    /// the subscription (throws when it ends first, e.g. refused, or after 10 s).
    public init(
        broker: MosquittoBroker, topic: String = "#", user: String? = nil, password: String? = nil,
        clientID: String? = nil, tls: Bool = false, clientCertificate: Bool = false, qos: Int = 1,
        waitForSubscription: Bool = true
    ) throws {
        self.topic = topic
        self.clientID = clientID
        let session = clientID.map { ["-c", "-i", $0] } ?? ["-i", "tmm-sub-\(UInt32.random(in: 0...UInt32.max))"]
        let arguments =
            ["-d"]
            + broker.clientArguments(user: user, password: password, tls: tls, clientCertificate: clientCertificate)
            + ["-t", topic, "-q", String(qos), "-F", "%r\\t%t\\t%p"] + session
        // stdbuf -oL: mosquitto_sub flushes its standard output only after a message, so its
        // `-d` lines (the SUBACK this waits for) would otherwise stay in its buffer until one comes.
        child = try SpawnedChild("/usr/bin/stdbuf", ["-oL", "/usr/bin/mosquitto_sub"] + arguments)
        if waitForSubscription && !waitUntilSubscribed(timeout: .seconds(10)) {
            stop()
            throw MosquittoFixtureError(
                "mosquitto_sub \(arguments.joined(separator: " ")) did not subscribe: \(output)")
        }
    }

    deinit { child.killAndReap() }

    /// mosquitto_sub's output so far: its debug lines (`-d`) and the messages, `RETAINED\tTOPIC\tPAYLOAD`.
    public var output: String { child.output.text }

    public var isRunning: Bool { !child.hasEnded }

    private var lines: [Substring] {
        let text = output
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if !text.hasSuffix("\n") { lines.removeLast() }  // a line still being written
        return lines
    }

    /// Every message so far, in order.
    public var allMessages: [Message] {
        lines.compactMap { line in
            let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[0] == "0" || fields[0] == "1" else { return nil }
            return Message(topic: String(fields[1]), retained: fields[0] == "1", payload: String(fields[2]))
        }
    }

    /// The messages on `topic` so far, in order.
    public func messages(topic: String) -> [(retained: Bool, payload: String)] {
        allMessages.filter { $0.topic == topic }.map { ($0.retained, $0.payload) }
    }

    /// Waits until `count` messages (or more) on `topic` have come; whether they did in time.
    public func waitFor(count: Int, topic: String, timeout: Duration = .seconds(10)) -> Bool {
        waitUntil(timeout: timeout, pollInterval: .milliseconds(10)) { messages(topic: topic).count >= count }
    }

    /// The subscriptions the broker acknowledged: 1 after the first connection, one more after
    /// each reconnection (mosquitto_sub subscribes again on every CONNACK).
    public var subscriptions: Int { lines.count { $0.hasPrefix("Subscribed (mid: ") } }

    /// Waits until `subscriptions` reaches `count`; false when mosquitto_sub ended or time ran out.
    public func waitUntilSubscribed(count: Int = 1, timeout: Duration = .seconds(10)) -> Bool {
        waitUntil(timeout: timeout, pollInterval: .milliseconds(10)) { subscriptions >= count || child.hasEnded }
            && subscriptions >= count
    }

    /// SIGTERM and waits for its end (SIGKILL after 5 s). Its persistent session stays on the broker.
    public func stop() {
        child.signal(SIGTERM)
        if child.wait(timeout: .seconds(5)) == nil { child.killAndReap() }
    }

    /// The retained message on `topic` (one-shot mosquitto_sub `-C 1 -W 2 --retained-only`), nil
    /// when there is none (it waits the 2 s for one).
    public static func retained(
        broker: MosquittoBroker, topic: String, user: String? = nil, password: String? = nil, tls: Bool = false
    ) throws -> String? {
        let arguments =
            broker.clientArguments(user: user, password: password, tls: tls)
            + ["-t", topic, "-C", "1", "-W", "2", "--retained-only", "-F", "%p"]
        let run = try MQTTToolRun.run("/usr/bin/mosquitto_sub", arguments)
        switch run.status {
        case 0: return run.output.hasSuffix("\n") ? String(run.output.dropLast()) : run.output
        case 27: return nil  // -W: timed out, no retained message
        default: throw MosquittoFixtureError("mosquitto_sub --retained-only \(topic): \(run)")
        }
    }
}

// MARK: - The hostile broker

/// tmmtools/peers/hostile_mqtt_broker.py on a free loopback port: a broker that answers CONNECT
/// with garbage, sends a 256 MB PUBLISH slowly, never acknowledges, refuses the login, stays
/// silent or closes at once (its docstring). Stopped (SIGTERM) when released.
public final class HostileMQTTBroker: Sendable {
    public enum Mode: String, Sendable, CaseIterable {
        case garbage
        case hugePacket = "huge-packet"
        case neverAck = "never-ack"
        case refuse
        case silent
        case closeAtOnce = "close-at-once"
    }

    public let mode: Mode
    public let port: UInt16
    private let child: SpawnedChild

    /// Starts the peer (`--mode`, `--port 0`, `arguments` after them, e.g. `--pong`) and reads its port.
    public init(mode: Mode, arguments: [String] = []) throws {
        self.mode = mode
        let (executable, command) = PythonTools.command(
            "peers.hostile_mqtt_broker", ["--mode", mode.rawValue, "--port", "0"] + arguments)
        let child = try SpawnedChild(executable, command)
        self.child = child
        var port: UInt16?
        _ = waitUntil(timeout: .seconds(15), pollInterval: .milliseconds(10)) {
            let text = child.output.text
            if let end = text.firstIndex(of: "\n"), text.hasPrefix("PORT ") {
                port = UInt16(text[text.index(text.startIndex, offsetBy: 5)..<end])
            }
            return port != nil || child.hasEnded
        }
        guard let port else {
            child.killAndReap()
            throw MosquittoFixtureError(
                "hostile_mqtt_broker --mode \(mode.rawValue) gave no port: \(child.output.text)")
        }
        self.port = port
    }

    deinit { stop() }

    /// `mqtt://127.0.0.1:PORT`.
    public var url: String { "mqtt://127.0.0.1:\(port)" }

    public var isRunning: Bool { !child.hasEnded }

    /// Its output: `PORT N`, then its JSON lines (connection, connect, sent, packet, closed, and
    /// after `stop()` the summary).
    public var output: String { child.output.text }

    /// Its JSON lines so far, parsed, optionally only those of one `event` ("connection",
    /// "connect", "sent", "packet", "closed", "summary").
    public func records(event: String? = nil) -> [[String: Any]] {
        output.split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }.filter { event == nil || $0["event"] as? String == event }
    }

    /// The connections it accepted so far.
    public var connections: Int { records(event: "connection").count }

    /// The summary it printed on SIGTERM (`connections`, `bytes_received`, `packets`), after `stop()`.
    public var summary: [String: Any]? { records(event: "summary").last }

    /// SIGTERM and waits for its end and its summary (SIGKILL after 10 s).
    public func stop() {
        child.signal(SIGTERM)
        if child.wait(timeout: .seconds(10)) == nil { child.killAndReap() }
    }
}

// MARK: - Certificates

/// The test CA, the server's certificate (CN 127.0.0.1, SAN IP 127.0.0.1 and DNS localhost) and a
/// client certificate (CN tmm-test-client), P-256 keys, made with openssl in `directory`.
private func makeCertificates(in directory: String) throws {
    let files = [
        "ca.cnf": """
        [req]
        distinguished_name = dn
        prompt = no
        x509_extensions = ca
        [dn]
        CN = tmm-bridge test CA
        [ca]
        basicConstraints = critical,CA:TRUE
        keyUsage = critical,keyCertSign,cRLSign
        subjectKeyIdentifier = hash

        """,
        "leaf.cnf": """
        [server]
        basicConstraints = CA:FALSE
        keyUsage = critical,digitalSignature,keyEncipherment
        extendedKeyUsage = serverAuth
        subjectAltName = IP:127.0.0.1,DNS:localhost
        [client]
        basicConstraints = CA:FALSE
        keyUsage = critical,digitalSignature,keyEncipherment
        extendedKeyUsage = clientAuth

        """,
    ]
    for (name, text) in files { try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8) }
    let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    try openssl(["req", "-x509"] + key + ["-config", "ca.cnf", "-keyout", "ca.key", "-out", "ca.crt", "-days", "7"])
    for (name, commonName) in [("server", "127.0.0.1"), ("client", "tmm-test-client")] {
        try openssl(
            ["req", "-new"] + key + ["-subj", "/CN=\(commonName)", "-keyout", name + ".key", "-out", name + ".csr"])
        try openssl([
            "x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-CAserial", "ca.srl", "-out", name + ".crt", "-days", "7", "-extfile", "leaf.cnf", "-extensions", name,
        ])
    }

    func openssl(_ arguments: [String]) throws {
        // Relative names: openssl runs in `directory` through env's --chdir.
        let run = try MQTTToolRun.run("/usr/bin/env", ["--chdir=" + directory, "/usr/bin/openssl"] + arguments)
        guard run.status == 0 else {
            throw MosquittoFixtureError("openssl \(arguments.joined(separator: " ")): \(run)")
        }
    }
}

// MARK: - Directories and ports

/// A fresh private directory (0700) under the temporary directory.
private func makeFixtureDirectory(_ name: String) throws -> String {
    let path = NSTemporaryDirectory() + "tmm-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return path
}

/// Loopback ports for brokers: random ones below the kernel's ephemeral range (which bind(0) and
/// clients' source ports use), free when picked, never the same twice at once in this process.
enum LoopbackPorts {
    private static let handedOut = Mutex<Set<UInt16>>([])

    /// The ephemeral range's first port (ip_local_port_range), 32768 when unreadable.
    private static let ephemeralLow: Int = {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        return text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) } ?? 32768
    }()

    static func pick() throws -> UInt16 {
        let range = ephemeralLow > 11_000 ? 10_000..<ephemeralLow : 1_024..<ephemeralLow
        for _ in 0..<1_000 {
            let port = UInt16(Int.random(in: range))
            let taken = handedOut.withLock { ports in
                guard !ports.contains(port), canBind(port: port) else { return false }
                ports.insert(port)
                return true
            }
            if taken { return port }
        }
        throw MosquittoFixtureError("no free loopback port in \(range)")
    }

    static func release(_ ports: [UInt16]) {
        handedOut.withLock { for port in ports { $0.remove(port) } }
    }
}

private func loopbackAddress(_ port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
}

/// Whether 127.0.0.1:`port` can be bound now without SO_REUSEADDR (nothing listens on it, no
/// connection of it lingers).
private func canBind(port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopbackAddress(port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

extension MosquittoBroker {
    /// Whether something accepts TCP connections on 127.0.0.1:`port` now.
    public static func acceptsConnection(port: UInt16) -> Bool { TestSupport.acceptsConnection(port: port) }
}

private func acceptsConnection(port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopbackAddress(port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    } == 0
}
