// `tmm-bridge open URL`: the Linux side of TMM's registration hand-off. A client app "opens" a
// `tmmregister://?…` or `trimblemobilemanager://request/tmmRegister?…` URL (xdg-open, through the
// desktop file that registers us for those schemes); this command hands it to the running
// daemon over its control socket and opens the reply URL the daemon built, which carries the
// registration result and the ports back to the app.
import Bridge
import BridgeCore
import Glibc
import Logging
import Posix
import TMMProtocol

struct OpenCommand: Equatable {
    var url: String
    var printOnly = false
    var daemon = ControlSocketChoice()

    static let synopsis = "       tmm-bridge open URL [--print] [--runtime-dir DIR | --control PATH]"
    static let summary = """
        open     Hand a registration URL (tmmregister://?<base64 JSON>, tmmsocketserverport://?…, or
                 trimblemobilemanager://request/tmmRegister?applicationId=…&callback=…) to the running
                 daemon and open the reply URL with xdg-open (--print: print it instead). The daemon
                 is found at DIR/control.sock (default: the runtime directory run uses).
        """

    static func parse(_ arguments: ArraySlice<String>) throws(UsageError) -> OpenCommand {
        var url: String?
        var command = OpenCommand(url: "")
        var rest = arguments
        while let argument = rest.popFirst() {
            if try command.daemon.parse(argument, &rest) { continue }
            switch argument {
            case "--print": command.printOnly = true
            default:
                guard !argument.hasPrefix("--") else { throw UsageError(message: "open: unknown option '\(argument)'") }
                guard url == nil else { throw UsageError(message: "open takes one URL, got '\(argument)' too") }
                url = argument
            }
        }
        guard let url else { throw UsageError(message: "open needs a URL") }
        command.url = url
        return command
    }

    func run() -> Int32 {
        // A daemon that dies mid-request must give EPIPE (reported below), not a silent SIGPIPE death.
        signal(SIGPIPE, SIG_IGN)
        let socket = daemon.path
        // Checked here too, before the daemon is asked: a return URL this command would never open
        // (file:, javascript:, ...) is refused with the parser's own message.
        let request: RegistrationRequest
        do {
            request = try RegistrationURL.parse(url)
        } catch {
            log("cannot answer this URL: \(error)", level: .error)
            return ExitCode.failure
        }
        let reply: ControlProtocol.Reply
        do {
            reply = try ControlProtocol.open(url, socketPath: socket)
        } catch {
            log(error.message, level: .error)
            return ExitCode.failure
        }
        switch reply {
        case .error(let message):
            log(message, level: .error)
            return ExitCode.failure
        case .status:
            log("the daemon at \(socket) answered the registration request with a status document")
            return ExitCode.failure
        case .ok(let result, let replyURL):
            if result != "OK" && result != "-" {
                log("registration refused: \(result) (the reply tells the application so)", level: .warning)
            }
            // Only ever the app's own return URL: whatever the daemon says, nothing else is opened.
            guard replyURL.hasPrefix(request.returnURL + "?") || replyURL.hasPrefix(request.returnURL + "&") else {
                log(
                    "the daemon's reply does not go to the request's return URL \(request.returnURL); "
                        + "not opened: \(replyURL.prefix(200))",
                    level: .error)
                return ExitCode.failure
            }
            if printOnly {
                Output.standard(replyURL + "\n")
                return ExitCode.ok
            }
            return openWithXDG(replyURL)
        }
    }

    /// Runs `xdg-open URL` and waits for it.
    private func openWithXDG(_ url: String) -> Int32 {
        guard let xdgOpen = findExecutable("xdg-open") else {
            log(
                "xdg-open is not installed (apt-get install xdg-utils), so the reply cannot be opened; it is:",
                level: .error)
            Output.standard(url + "\n")
            return ExitCode.failure
        }
        do {
            let child = try ChildProcess(executable: xdgOpen, arguments: [url], logDescriptor: nil)
            let ended = child.wait()
            guard case .exited(0) = ended else {
                log("xdg-open \(ended) while opening the reply URL: \(url)", level: .error)
                return ExitCode.failure
            }
            return ExitCode.ok
        } catch {
            log("cannot run xdg-open: \(error)", level: .error)
            return ExitCode.failure
        }
    }
}
