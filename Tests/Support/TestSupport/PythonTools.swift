// The Python tools the tests run: modules of the `tmmtools` package at the checkout's root
// (tmmtools/README.md). Every one starts the same way, as the Makefile and the tools themselves
// start them (tmmtools/checkout.py): `python3 -m tmmtools.<module>` with PYTHONPATH set to the
// checkout, so nothing depends on the test's working directory and no script edits sys.path.
import Foundation

public enum PythonTools {
    /// Debian's interpreter: python3-websockets, -cryptography and -gps load only there.
    public static let python = "/usr/bin/python3"

    /// The command that runs the module `tmmtools.<module>` (e.g. "client.tlsflood",
    /// "peers.ws_handshakes") with `arguments`: `/usr/bin/env PYTHONPATH=<checkout>
    /// /usr/bin/python3 -B -u -m tmmtools.<module> ...` (-B: no __pycache__ in the checkout;
    /// -u: output line by line as it is printed). `env` execs Python in its own process, so the
    /// pid is Python's; a wrapper such as setpriv goes in front of the whole command.
    public static func command(
        _ module: String, _ arguments: [String] = []
    ) -> (executable: String, arguments: [String]) {
        (
            "/usr/bin/env",
            ["PYTHONPATH=" + Fixtures.repositoryRoot, python, "-B", "-u", "-m", "tmmtools." + module] + arguments
        )
    }

    /// `command` as one argument vector, executable first (for a wrapper's arguments).
    public static func argv(_ module: String, _ arguments: [String] = []) -> [String] {
        let (executable, rest) = command(module, arguments)
        return [executable] + rest
    }
}
