"""REST latency while local clients flood the bridge with Access Code V2 codes to decrypt.

Each code that the bridge has not seen is an RSA-2048 private-key operation (about 0.4 ms of CPU)
on the thread that serves every client. A connection gets 4 refused codes at once before its
401s are held (`AuthenticationBudget`), so a flooder sends 4 codes, reconnects and sends 4 more.
The codes are 256 bytes beginning with 0x00 (so below the modulus: every one costs the whole
decryption) and random otherwise (so none is in the replay ledger).

Starts the real `tmm-bridge run` (no receiver: REST does not need one) on free loopback ports,
keeps one probe connection that sends `GET /api/v1/publicKey` (no code needed) every
--probe-interval ms, and records each answer's latency: first for --quiet seconds alone, then for
--seconds while --flooders processes flood the API port. Prints per phase the probe's p50, p95
and max, the codes the flooders got answered, and the daemon's CPU. `--without-codes` floods
with the same requests without a code: what the connections and 401s cost without any RSA.

    /usr/bin/python3 -m tmmtools.bench.decrypt_flood --bridge .build/release/tmm-bridge
"""

import argparse
import base64
import multiprocessing
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

PORT_OPTIONS = ["--location-port", "--location-secure-port", "--api-port", "--api-secure-port",
                "--location-v2-port", "--location-v2-secure-port"]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def read_responses(sock, count):
    """Reads until `count` status lines arrived (the 401s are small), or the server closed."""
    seen = b""
    while seen.count(b"HTTP/1.1 ") < count:
        chunk = sock.recv(65536)
        if not chunk:
            break
        seen += chunk
    return seen.count(b"HTTP/1.1 ")


def flooder(port, until, answered, with_codes):
    """Connects, sends 4 codes, reads the 4 answers, reconnects; until the monotonic `until`.
    Without codes: the same requests with no `Authorization` (refused without any decryption,
    before and after: the cost of the connections and 401s alone)."""
    done = 0
    while time.monotonic() < until:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            continue
        with sock:
            requests = b""
            for _ in range(4):
                code = base64.b64encode(b"\x00" + os.urandom(255)).decode("ascii")
                authorization = f"Authorization: AccessCodeV2 {code}\r\n" if with_codes else ""
                requests += (f"GET /api/v1/receiver HTTP/1.1\r\nHost: localhost\r\n"
                             f"{authorization}\r\n").encode("ascii")
            try:
                sock.sendall(requests)
                done += read_responses(sock, 4)
            except OSError:
                pass
    with answered.get_lock():
        answered.value += done


def probe(port, seconds, interval):
    """Latencies (ms) of GET /api/v1/publicKey on one keep-alive connection, one every `interval` s."""
    latencies = []
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    request = b"GET /api/v1/publicKey HTTP/1.1\r\nHost: localhost\r\n\r\n"
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.monotonic()
        sock.sendall(request)
        buffer = b""
        while True:
            buffer += sock.recv(65536)
            head, sep, body = buffer.partition(b"\r\n\r\n")
            if sep:
                length = int([line.split(b":", 1)[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:")][0])
                if len(body) >= length:
                    break
        latencies.append((time.monotonic() - started) * 1000)
        time.sleep(max(0.0, interval - (time.monotonic() - started)))
    sock.close()
    return latencies


def summary(latencies):
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {statistics.median(ordered):.2f} ms, p95 {p95:.2f} ms, max {ordered[-1]:.2f} ms ({len(ordered)} requests)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bridge", default=".build/debug/tmm-bridge")
    parser.add_argument("--flooders", type=int, default=4)
    parser.add_argument("--quiet", type=float, default=5)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--probe-interval", type=float, default=10, help="milliseconds between probe requests")
    parser.add_argument("--without-codes", action="store_true",
                        help="flood with requests that carry no code (the floor: connections and 401s, no RSA)")
    args = parser.parse_args()

    base = tempfile.mkdtemp(prefix="tmm-decrypt-flood-")
    ports = tmmclient.free_ports(6)
    command = [args.bridge, "run", "--registration", "open", "--listen", "127.0.0.1", "--no-discovery",
               "--gpsd", "127.0.0.1:1", "--state-dir", base + "/state", "--runtime-dir", base + "/run"]
    for option, port in zip(PORT_OPTIONS, ports):
        command += [option, str(port)]
    log = open(base + "/stderr", "w+")
    daemon = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
    try:
        api = ports[2]
        if not polling.wait_until(lambda: b"ready" in open(base + "/stderr", "rb").read(), seconds=30):
            raise SystemExit("decrypt_flood: the daemon did not get ready:\n" + open(base + "/stderr").read())
        interval = args.probe_interval / 1000
        cpu = cpu_seconds(daemon.pid)
        quiet = probe(api, args.quiet, interval)
        quiet_cpu = cpu_seconds(daemon.pid) - cpu
        print(f"alone:            {summary(quiet)}; daemon CPU {quiet_cpu / args.quiet * 100:.0f}%")

        answered = multiprocessing.Value("q", 0)
        until = time.monotonic() + args.seconds + 1
        flooders = [multiprocessing.Process(target=flooder, args=(api, until, answered, not args.without_codes))
                    for _ in range(args.flooders)]
        for process in flooders:
            process.start()
        time.sleep(0.5)  # the flood under way before the probe starts
        cpu = cpu_seconds(daemon.pid)
        flooded = probe(api, args.seconds, interval)
        flooded_cpu = cpu_seconds(daemon.pid) - cpu
        for process in flooders:
            process.join()
        what = "requests without a code" if args.without_codes else "codes"
        print(f"under the flood:  {summary(flooded)}; daemon CPU {flooded_cpu / args.seconds * 100:.0f}%; "
              f"{args.flooders} flooders got {answered.value / (args.seconds + 1):.0f} {what}/s answered")
        print(f"RESULT decrypt_flood p50_alone_ms={statistics.median(quiet):.2f} "
              f"p50_flood_ms={statistics.median(flooded):.2f} codes_per_s={answered.value / (args.seconds + 1):.0f}")
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
        log.close()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
