// What `tmm-bridge run` prints on a terminal before its live status line (`make run`): where the
// six servers are and commands to paste into another terminal to try them. Only on a terminal
// (StatusLine exists then): a daemon's standard output read by a program stays empty.
import Bridge
import BridgeCore
import TMMProtocol

enum RunBanner {
    /// The banner for `ports`; `program` is how this binary was started (pasteable from the same
    /// directory), `runtimeDirectory` is added to the client commands when it is not their default.
    static func text(
        ports: PortAssignment, configuration: BridgeConfiguration, program: String, runtimeDirectory: String?
    ) -> String {
        let host = "localhost"
        let runtime = runtimeDirectory.map { " --runtime-dir \($0)" } ?? ""
        var lines = [
            "tmm-bridge serves TMM clients (Ctrl-C stops it):",
            "  WebSocket V1  ws://\(host):\(ports.location)/             wss://\(host):\(ports.locationSecure)/",
            "  REST          http://\(host):\(ports.api)/api/v1/tmmInfo   "
                + "https://\(host):\(ports.apiSecure)/api/v1/tmmInfo",
            "  WebSocket V2  ws://\(host):\(ports.locationV2)/locationV2   "
                + "wss://\(host):\(ports.locationV2Secure)/locationV2",
        ]
        if configuration.dashboard.isOn {
            lines.append(
                "  Dashboard     http://\(host):\(ports.api)/                  https://\(host):\(ports.apiSecure)/"
                    + "   (open it in a browser)")
            for entry in configuration.dashboard.listen {
                lines.append(
                    "                http://\(entry)/   (dashboard-listen: other machines give dashboard-token)")
            }
        }
        lines += [
            "Try it from another terminal:",
            "  \(program) status\(runtime)",
        ]
        if configuration.registration == .open {
            lines.append(
                "  \(program) open \"tmmregister://?$(printf "
                    + "'{\"application_id\":\"12345678-1234-1234-1234-123456789abc\",\"returl\":\"myapp://r\"}' "
                    + "| base64 -w0)\" --print\(runtime)"
            )
        }
        lines += [
            "  /usr/bin/python3 -m websockets ws://\(host):\(ports.locationV2)/locationV2"
                + (configuration.registration == .open ? "   # after the registration above" : ""),
            "  /usr/bin/python3 -m websockets ws://\(host):\(ports.location)/",
            "  curl http://\(host):\(ports.api)/api/v1/tmmInfo",
            "",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}
