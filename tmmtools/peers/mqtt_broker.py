"""A real MQTT broker for the hardware-in-the-loop runs: Debian's mosquitto on loopback, with
persistence, stopped and restarted on the same port (the fleet publishing scenario, mqtt-outage).

    python3 -m tmmtools.peers.mqtt_broker [--port 0] [--user U --password P] [--dir DIR]
        [--mosquitto /usr/sbin/mosquitto]

prints `listening PORT` once mosquitto accepts connections, and runs until SIGTERM (which stops
mosquitto with SIGTERM too, so its persistence file is written). `MosquittoBroker` is the same for
Python callers (the runner's `broker-stop` and `broker-restart` are its `stop()` and `start()`).
The Swift tests' twin is Tests/Support/TestSupport/MosquittoBroker.swift; a broker that
misbehaves on purpose is tmmtools/peers/hostile_mqtt_broker.py.

The configuration, written to `mosquitto.conf` in its folder (a temporary one unless --dir):

    listener PORT 127.0.0.1        loopback only (the runner's bench is in its own network namespace)
    persistence true               sessions, their queued QoS 1 messages and retained messages
    persistence_location DIR/      survive a stop and start (mosquitto.db, saved on SIGTERM)
    user root                      run as root: no drop to the `mosquitto` user, which could not
                                   write the temporary folder (no effect when not started as root)
    allow_anonymous true           or, with a login, `allow_anonymous false` and a password_file
                                   made by mosquitto_passwd
    log_dest file DIR/mosquitto.log

The port is taken free first (mosquitto cannot report one it picked) and kept across restarts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from tmmtools import polling
from tmmtools.peers.str2str_caster import answers, free_port

MOSQUITTO = "/usr/sbin/mosquitto"
MOSQUITTO_PASSWD = "/usr/bin/mosquitto_passwd"


def configuration(port: int, directory: str, password_file: str | None = None) -> str:
    """mosquitto.conf's text: a loopback listener on `port`, persistence in `directory`."""
    lines = [f"listener {port} 127.0.0.1",
             "persistence true",
             f"persistence_location {directory.rstrip('/')}/",
             "autosave_interval 1",
             "user root",
             f"log_dest file {os.path.join(directory, 'mosquitto.log')}",
             "log_type all",
             "log_timestamp_format %Y-%m-%dT%H:%M:%S"]
    if password_file:
        lines += ["allow_anonymous false", f"password_file {password_file}"]
    else:
        lines.append("allow_anonymous true")
    return "\n".join(lines) + "\n"


class MosquittoBroker:
    """mosquitto on 127.0.0.1:`port` (0: a free one, kept across restarts), persistent, in
    `directory` (a temporary one, removed by `close`, unless given); with `user` and `password`,
    anonymous clients are refused."""

    def __init__(self, port: int = 0, directory: str | None = None, user: str | None = None,
                 password: str | None = None, mosquitto: str = MOSQUITTO):
        self.port = port or free_port()
        self.own_directory = directory is None
        self.directory = directory or tempfile.mkdtemp(prefix="tmm-mosquitto-")
        os.makedirs(self.directory, exist_ok=True)
        self.user, self.password = user, password
        self.mosquitto = mosquitto
        self.process: subprocess.Popen | None = None
        self.starts = 0
        self.stops: list[int] = []  # each stop's exit status
        self.config_path = os.path.join(self.directory, "mosquitto.conf")
        self.log_path = os.path.join(self.directory, "mosquitto.log")
        self.console_path = os.path.join(self.directory, "mosquitto.console")
        self._write_configuration()

    @staticmethod
    def available(mosquitto: str = MOSQUITTO) -> bool:
        return os.access(mosquitto, os.X_OK)

    def _write_configuration(self):
        password_file = None
        if self.user is not None:
            password_file = os.path.join(self.directory, "passwords")
            subprocess.run([MOSQUITTO_PASSWD, "-b", "-c", password_file, self.user, self.password or ""],
                           check=True, capture_output=True, timeout=10)
        with open(self.config_path, "w", encoding="utf-8") as handle:
            handle.write(configuration(self.port, self.directory, password_file))

    @property
    def url(self) -> str:
        """The bridge's `mqtt =` for this broker (with the login, when there is one)."""
        login = f"{self.user}:{self.password}@" if self.user is not None else ""
        return f"mqtt://{login}127.0.0.1:{self.port}"

    @property
    def persistence_file(self) -> str:
        return os.path.join(self.directory, "mosquitto.db")

    def start(self, seconds: float = 10) -> "MosquittoBroker":
        """Starts mosquitto (again, on the same port) and waits until it accepts connections."""
        if self.running():
            return self
        with open(self.console_path, "ab") as console:
            self.process = subprocess.Popen([self.mosquitto, "-c", self.config_path], stdout=console,
                                            stderr=console, stdin=subprocess.DEVNULL)
        self.starts += 1

        def listening():
            if self.process.poll() is not None:
                raise polling.TimedOut(f"mosquitto exited with {self.process.returncode}: {self.tail()}")
            return answers(self.port)
        polling.wait_until(listening, seconds, interval=0.05, what=f"mosquitto to listen on port {self.port}")
        return self

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, sig: int = signal.SIGTERM, seconds: float = 10) -> int | None:
        """Stops mosquitto: SIGTERM (the default) saves its persistence first; SIGKILL after
        `seconds`. Its exit status (None when it was not running)."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(seconds)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        code = self.process.returncode
        self.stops.append(code)
        self.process = None
        return code

    def kill(self) -> int | None:
        return self.stop(signal.SIGKILL)

    def tail(self, lines: int = 10) -> str:
        text = ""
        for path in (self.console_path, self.log_path):
            try:
                with open(path, errors="replace") as handle:
                    text += "".join(handle.readlines()[-lines:])
            except OSError:
                pass
        return text.strip()

    def keep_logs(self, out_dir: str):
        """Copies mosquitto's log and configuration into `out_dir` (a report folder)."""
        for path in (self.log_path, self.config_path, self.console_path):
            if os.path.exists(path):
                shutil.copy(path, out_dir)

    def close(self):
        """Stops it and removes its folder when it made it."""
        self.stop()
        if self.own_directory:
            shutil.rmtree(self.directory, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(prog="mqtt_broker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="default: a free one")
    parser.add_argument("--user", help="with --password: refuse anonymous clients")
    parser.add_argument("--password")
    parser.add_argument("--dir", help="configuration, persistence and log (default: a temporary folder, removed)")
    parser.add_argument("--mosquitto", default=MOSQUITTO)
    args = parser.parse_args()
    broker = MosquittoBroker(args.port, args.dir, args.user, args.password, args.mosquitto)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    try:
        broker.start()
        print(f"listening {broker.port}", flush=True)
        while not stopping and broker.running():
            time.sleep(0.2)
    finally:
        broker.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
