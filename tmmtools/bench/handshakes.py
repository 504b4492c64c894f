"""TLS handshakes per second against `tmm-bridge run`, by an independent client, against
`openssl s_server` with the same P-256 certificate in the same run.

Starts the real daemon (`--demo` receiver, its own CA in a scratch state directory) and an
`openssl s_server -www` serving the daemon's own server certificate, key and CA (so both sides do
the same P-256 signature and send the same chain), then runs `openssl s_time` against the
daemon's apiSecurePort and the s_server in alternating pairs (ABBA) for each mode:

- full TLS 1.3 handshakes (`-new`), full TLS 1.2 handshakes (`-new -tls1_2`);
- resumed TLS 1.2 (`-reuse -tls1_2`: session id), resumed TLS 1.3 (`-reuse -www /`: s_time gets
  the session ticket only if it reads, so this mode also sends a GET and reads the reply).

One s_time at a time, sequential connections: the rate is what one client gets, with client and
server sharing the machine's cores. Per run: connections / wall seconds (measured here; s_time's
own "connections/user sec" divides by the client's user CPU, not by time), and the server's CPU
per handshake (utime + stime from /proc over the run). Reported: medians, and the median of the
per-pair ratios bridge / s_server.

    /usr/bin/python3 -m tmmtools.bench.handshakes --bridge .build/release/tmm-bridge --pairs 3 --time 5
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from tmmtools import polling
from tmmtools.client import tmmclient  # free_ports, shared with the end-to-end scripts

MODES = [
    ("full TLS 1.3", ["-new"]),
    ("full TLS 1.2", ["-new", "-tls1_2"]),
    ("resumed TLS 1.2 (session id)", ["-reuse", "-tls1_2"]),
    ("resumed TLS 1.3 (ticket, + GET /)", ["-reuse", "-www", "/"]),
]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def answers(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def wait_for_port(port, seconds=20):
    if not polling.wait_until(lambda: answers(port), seconds, 0.05):
        raise SystemExit(f"handshakes: nothing listens on {port}")


def s_time(port, flags, seconds, server_pid):
    """One s_time run: (connections per wall second, server CPU ms per connection, resumed share)."""
    cpu_before = cpu_seconds(server_pid)
    begin = time.monotonic()
    run = subprocess.run(["openssl", "s_time", "-connect", f"127.0.0.1:{port}", *flags, "-time", str(seconds)],
                         capture_output=True, text=True)
    wall = time.monotonic() - begin
    cpu = cpu_seconds(server_pid) - cpu_before
    connections = None
    for line in run.stdout.splitlines():
        if "connections in" in line and "real seconds" in line:
            connections = int(line.split()[0])
    if connections is None or connections == 0:
        raise SystemExit(f"handshakes: s_time {' '.join(flags)} on {port} failed:\n{run.stdout[-500:]}{run.stderr[-500:]}")
    # The progress line: '*' per new session, 'r' per resumed one. The -reuse runs start with
    # one full handshake (not counted by s_time's -reuse total, nor here).
    marks = "".join(line for line in run.stdout.splitlines() if set(line) <= set("*r") and line)
    resumed = marks.count("r") / len(marks) if marks else float("nan")
    return connections / wall, cpu * 1000 / connections, resumed


def median(values):
    return statistics.median(values) if values else float("nan")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bridge", default=".build/release/tmm-bridge")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--time", type=int, default=5, help="seconds per s_time run")
    args = parser.parse_args()

    scratch = tempfile.mkdtemp(prefix="tmm-handshakes-")
    os.chmod(scratch, 0o755)  # the daemon drops to its user, who must reach its directories
    ports = tmmclient.free_ports(8)
    log = open(os.path.join(scratch, "daemon.log"), "w")
    daemon = subprocess.Popen(
        [args.bridge, "run", "--demo", "--registration", "open", "--no-discovery",
         "--listen", "127.0.0.1", "--state-dir", scratch + "/state", "--runtime-dir", scratch + "/run",
         "--location-port", str(ports[0]), "--location-secure-port", str(ports[1]),
         "--api-port", str(ports[2]), "--api-secure-port", str(ports[3]),
         "--location-v2-port", str(ports[4]), "--location-v2-secure-port", str(ports[5]),
         "--fallback-port-start", str(ports[6])],
        stdout=log, stderr=subprocess.STDOUT)
    server = None
    rows = {}
    try:
        wait_for_port(ports[3])
        tls = os.path.join(scratch, "state", "tls")
        server_log = open(os.path.join(scratch, "s_server.log"), "w")
        server = subprocess.Popen(
            ["openssl", "s_server", "-accept", f"127.0.0.1:{ports[7]}", "-cert", tls + "/server.pem",
             "-key", tls + "/server.key", "-cert_chain", tls + "/ca.pem", "-www", "-quiet"],
            stdout=server_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_for_port(ports[7])
        sides = {"bridge": (ports[3], daemon.pid), "s_server": (ports[7], server.pid)}
        for name, flags in MODES:
            rows[name] = {"bridge": [], "s_server": []}
            for pair in range(args.pairs):
                order = ["bridge", "s_server"] if pair % 2 == 0 else ["s_server", "bridge"]
                for side in order:
                    port, pid = sides[side]
                    rows[name][side].append(s_time(port, flags, args.time, pid))
                print(f"handshakes: {name}, pair {pair + 1}/{args.pairs}: "
                      + ", ".join(f"{side} {rows[name][side][-1][0]:.0f}/s {rows[name][side][-1][1]:.2f} ms CPU"
                                  for side in ("bridge", "s_server")), flush=True)
        if daemon.poll() is not None:
            raise SystemExit("handshakes: the daemon ended during the run:\n"
                             + open(os.path.join(scratch, "daemon.log")).read()[-2000:])
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
        daemon.terminate()
        daemon.wait(timeout=10)
        log.close()

    print()
    print(f"openssl s_time, {args.time} s per run, {args.pairs} alternating pairs; medians; "
          "ratio = median of per-pair bridge / s_server")
    print()
    print("| mode | bridge handshakes/s | s_server handshakes/s | bridge / s_server | bridge CPU ms/handshake "
          "| s_server CPU ms/handshake | resumed share (bridge) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    results = []
    for name, _ in MODES:
        bridge, baseline = rows[name]["bridge"], rows[name]["s_server"]
        ratio = median([b[0] / s[0] for b, s in zip(bridge, baseline)])
        cells = [name, f"{median([b[0] for b in bridge]):.0f}", f"{median([s[0] for s in baseline]):.0f}",
                 f"{ratio:.2f}x", f"{median([b[1] for b in bridge]):.2f}", f"{median([s[1] for s in baseline]):.2f}",
                 f"{median([b[2] for b in bridge]) * 100:.0f}%"]
        print("| " + " | ".join(cells) + " |")
        key = name.split(" (")[0].replace(" ", "_").replace(".", "")
        results.append(f"{key}_bridge_per_s={median([b[0] for b in bridge]):.0f} "
                       f"{key}_s_server_per_s={median([s[0] for s in baseline]):.0f} {key}_ratio={ratio:.2f}")
    print("RESULT handshakes " + " ".join(results))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
