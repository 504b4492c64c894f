"""RTKLIB's str2str as a real NTRIP Rev 1 caster, fed with tmmtools.peers.rtcm's station.

    python3 -m tmmtools.peers.str2str_caster [--port 0] [--mount RTCM3] [--user U --password P]
        [--station-id 1234] [--str2str /usr/bin/str2str]

prints `listening PORT` once str2str accepts connections, and runs until killed (SIGTERM stops both
processes). `Str2strCaster` is the same for Python callers (the hwtest runner's `caster-kill` and
`caster-restart` are its `kill()` and `start()`).

The command line (rtklib 2.4.3 b34, Debian 12's `rtklib` package), fed on its standard input:

    python3 -m tmmtools.peers.rtcm --realtime --station-id ID | str2str -out ntripc://USER:PASSWORD@:PORT/MOUNT

`ntripc://` is str2str's NTRIP caster output (Rev 1 only: it answers every request, Rev 2 ones
included, `ICY 200 OK` and the raw frames; a wrong or missing login `HTTP/1.0 401 Unauthorized`;
another path `SOURCETABLE 200 OK` with a STR line for the mount point). Without `-in`, str2str reads
its standard input. It listens on every address (0.0.0.0: str2str has no bind address), so the
port is taken free first; the runner's benches are in their own network namespace. Its client,
`str2str -in ntrip://USER:PASSWORD@127.0.0.1:PORT/MOUNT -out file://PATH`, is what
tmmtools/harness/ntripcheck.py uses to prove a caster before the bridge exists.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time

from tmmtools import checkout, polling

STR2STR = "/usr/bin/str2str"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def command(port: int, mount: str, user: str, password: str, str2str: str = STR2STR) -> list[str]:
    """str2str's command line: an NTRIP caster of `mount` on `port`, reading RTCM on its stdin."""
    login = f"{user}:{password}@" if user else ""
    return [str2str, "-out", f"ntripc://{login}:{port}/{mount}"]


class Str2strCaster:
    """str2str serving `mount` on `port` (0: a free one), fed by the RTCM generator through a pipe."""

    def __init__(self, port: int = 0, mount: str = "RTCM3", user: str = "rover", password: str = "secret",
                 station_id: int = 1234, log_path: str | None = None, str2str: str = STR2STR):
        self.port = port or free_port()
        self.mount, self.user, self.password = mount, user, password
        self.station_id = station_id
        self.log_path = log_path
        self.str2str = str2str
        self.feeder = self.caster = None
        self.starts = 0

    @staticmethod
    def available(str2str: str = STR2STR) -> bool:
        return os.access(str2str, os.X_OK)

    def command(self) -> list[str]:
        return command(self.port, self.mount, self.user, self.password, self.str2str)

    def start(self, seconds: float = 10) -> "Str2strCaster":
        """Starts the generator and str2str, and waits until str2str accepts connections."""
        if self.running():
            return self
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        try:
            self.feeder = subprocess.Popen(
                checkout.module_command("peers.rtcm", "--realtime", "--station-id", str(self.station_id)),
                stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
            self.caster = subprocess.Popen(self.command(), stdin=self.feeder.stdout, stdout=log, stderr=log)
        finally:
            if log is not subprocess.DEVNULL:
                log.close()
        self.feeder.stdout.close()  # str2str holds the pipe now: the generator sees it close with it
        self.starts += 1

        def listening():
            if self.caster.poll() is not None:
                raise polling.TimedOut(f"str2str exited with {self.caster.returncode}: {' '.join(self.command())}")
            return answers(self.port)
        polling.wait_until(listening, seconds, what=f"str2str to listen on port {self.port}")
        return self

    def running(self) -> bool:
        return self.caster is not None and self.caster.poll() is None

    def stop(self, sig: int = signal.SIGTERM):
        """Stops str2str (with `sig`: SIGKILL for a caster that dies) and its generator."""
        for process in (self.caster, self.feeder):
            if process is not None and process.poll() is None:
                process.send_signal(sig)
                try:
                    process.wait(5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.caster = self.feeder = None

    def kill(self):
        self.stop(signal.SIGKILL)


def main() -> int:
    parser = argparse.ArgumentParser(prog="str2str_caster", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="default: a free one")
    parser.add_argument("--mount", default="RTCM3")
    parser.add_argument("--user", default="rover")
    parser.add_argument("--password", default="secret")
    parser.add_argument("--station-id", type=int, default=1234)
    parser.add_argument("--log", help="str2str's and the generator's output (default: discarded)")
    parser.add_argument("--str2str", default=STR2STR)
    args = parser.parse_args()
    caster = Str2strCaster(args.port, args.mount, args.user, args.password, args.station_id, args.log, args.str2str)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    try:
        caster.start()
        print(f"listening {caster.port}", flush=True)
        while not stopping and caster.running():
            time.sleep(0.2)
    finally:
        caster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
