"""The processes of one hardware-in-the-loop run: a gpsd, the bridge, and the virtual receiver.

`Bench` owns a scratch folder and starts, kills and restarts gpsd and tmm-bridge the way a box
would (systemd restarts a killed gpsd; an operator restarts the daemon). The virtual target runs
in its own network namespace (hwtest.py re-executes itself under `unshare --net`), so TMM's own
ports (9635-9640) and gpsd's 2947 are free and nothing on the machine can talk to it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

from tmmtools import checkout, polling
from tmmtools.client import tmmclient  # the sample apps' behaviour, shared with the end-to-end tests

ROOT = checkout.ROOT
# The hardware-in-the-loop suite's data: scenarios/ and reports/ (hwtests/README.md).
HWTESTS = checkout.path("hwtests")

TMM_PORTS = {"locationPort": 9635, "locationSecurePort": 9636, "apiPort": 9637, "apiSecurePort": 9638,
             "locationV2Port": 9639, "locationV2SecurePort": 9640}
PORT_OPTIONS = {"locationPort": "location-port", "locationSecurePort": "location-secure-port",
                "apiPort": "api-port", "apiSecurePort": "api-secure-port",
                "locationV2Port": "location-v2-port", "locationV2SecurePort": "location-v2-secure-port"}
GPSD_PORT = 2947
GPSD = "/usr/sbin/gpsd"


class BenchError(Exception):
    pass


# The harness's waits: polling.wait_until failing with BenchError, which its scenarios catch.
# wait_for(condition, seconds, what=..., interval=...).
wait_for = functools.partial(polling.wait_until, error=BenchError)


def bridge_binary() -> str:
    """The static release build when it exists (what ships), else the debug build."""
    for candidate in (os.environ.get("TMM_BRIDGE"), os.path.join(ROOT, ".build/static/release/tmm-bridge"),
                      os.path.join(ROOT, ".build/release/tmm-bridge"), os.path.join(ROOT, ".build/debug/tmm-bridge")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise BenchError("no tmm-bridge binary: run `make build` (or set TMM_BRIDGE=/path/to/tmm-bridge)")


def gpsd_release(binary: str = GPSD) -> str | None:
    """The release of the gpsd the bench runs (`gpsd -V`: "/usr/sbin/gpsd: 3.22 (revision 3.22)" →
    "3.22"), None when it cannot be told; a watch's VERSION object says the same of a running gpsd."""
    try:
        completed = subprocess.run([binary, "-V"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"gpsd:\s+(\S+)", completed.stdout + completed.stderr)
    return found.group(1) if found else None


def stop_process(process: subprocess.Popen, seconds: float = 20, sig=signal.SIGTERM) -> int:
    """`sig`, then SIGKILL if it is still running after `seconds`; its exit status."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


@contextlib.contextmanager
def running_bench(out: str, **options):
    """A Bench with gpsd and the bridge started; closed (logs copied to `out`) on the way out."""
    bench = Bench(**options)
    try:
        bench.start_gpsd()
        bench.start_bridge()
        yield bench
    finally:
        bench.close(out)


def answers(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def process_status(pid: int) -> dict:
    """Descriptors, threads and resident memory (KiB) of a process, from /proc."""
    status = {}
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key in ("Threads", "VmRSS"):
                    status[key] = int(value.split()[0])
        status["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        pass
    return {"fds": status.get("fds"), "threads": status.get("Threads"), "rss_kib": status.get("VmRSS")}


class Bench:
    def __init__(self, registration: str = "open", allowed_ids=(), extra_arguments=(), keep=False,
                 gpsd_readonly: bool = True):
        self.scratch = tempfile.mkdtemp(prefix="tmm-hwtest-")
        os.chmod(self.scratch, 0o755)
        self.state_dir = os.path.join(self.scratch, "state")
        self.runtime_dir = os.path.join(self.scratch, "run")
        self.gpsd_control = os.path.join(self.scratch, "gpsd.sock")
        self.registration = registration
        self.allowed_ids = list(allowed_ids)
        self.extra_arguments = list(extra_arguments)
        self.keep = keep
        # gpsd -b: it never writes to a receiver. Corrections scenarios may need it to (the bridge
        # may hand RTCM to gpsd for the device: gpsd refuses that to a read-only device).
        self.gpsd_readonly = gpsd_readonly
        self.bridge_path = bridge_binary()
        self.gpsd = None
        self.bridge = None
        self.bridge_log = os.path.join(self.scratch, "bridge.log")
        self.gpsd_log = os.path.join(self.scratch, "gpsd.log")
        self.devices: list[str] = []  # devices handed to gpsd, re-added after a gpsd restart
        self.on_close: list = []  # stops what runs against this bench (the simulator)

    # --- the context the end-to-end scripts (tmmtools/endtoend) take --------------------------------
    def context(self) -> dict:
        return {"bridge": self.bridge_path, "runtimeDir": self.runtime_dir, "stateDir": self.state_dir,
                "host": "127.0.0.1", "ports": dict(TMM_PORTS), "allowedIds": self.allowed_ids}

    # --- gpsd ------------------------------------------------------------------------------------
    def start_gpsd(self):
        if answers(GPSD_PORT):
            raise BenchError(f"port {GPSD_PORT} is in use (a system gpsd?): stop it first "
                             "(systemctl stop gpsd.socket gpsd.service)")
        if os.path.exists(self.gpsd_control):
            os.unlink(self.gpsd_control)
        log = open(self.gpsd_log, "ab")
        # -N foreground, -n poll without a client, -b read-only (never probe the receiver; not for
        # a bench with gpsd_readonly=False), -G no: listen on loopback only (the namespace's).
        self.gpsd = subprocess.Popen([GPSD, "-N", "-n", *(["-b"] if self.gpsd_readonly else []), "-S", str(GPSD_PORT),
                                      "-F", self.gpsd_control],
                                     stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        wait_for(lambda: answers(GPSD_PORT) and os.path.exists(self.gpsd_control), 10, what="gpsd to listen")
        # gpsd (started as root) makes its control socket root's, mode 0755; the bridge drops root
        # (to nobody) and must be able to write it for every hand-off, as it can write
        # /run/gpsd.sock or its private gpsd's: it refuses to start otherwise (exit 77).
        os.chmod(self.gpsd_control, 0o666)
        for device in self.devices:
            self.gpsd_command("+" + device)

    def gpsd_command(self, command: str) -> str:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(3)
            sock.connect(self.gpsd_control)
            sock.sendall(command.encode() + b"\n")
            return sock.recv(64).decode(errors="replace").strip()

    def gpsd_alive(self) -> bool:
        return self.gpsd is not None and self.gpsd.poll() is None

    def kill_gpsd(self):
        if self.gpsd_alive():
            self.gpsd.kill()
            self.gpsd.wait()

    # --- the bridge ------------------------------------------------------------------------------
    def bridge_arguments(self) -> list[str]:
        arguments = [self.bridge_path, "run", "--no-discovery", "--registration", self.registration,
                     "--state-dir", self.state_dir, "--runtime-dir", self.runtime_dir,
                     "--listen", "127.0.0.1", "--gpsd", f"127.0.0.1:{GPSD_PORT}", "--gpsd-control", self.gpsd_control]
        for key, option in PORT_OPTIONS.items():
            arguments += [f"--{option}", str(TMM_PORTS[key])]
        for application_id in self.allowed_ids:
            arguments += ["--allow-app-id", application_id]
        if os.geteuid() == 0:
            # Always the same user after the drop, whether or not a tmm-bridge user exists (the
            # .deb's package test makes one and removes it; a restart must not change users).
            arguments += ["--user", "nobody"]
        return arguments + self.extra_arguments

    def start_bridge(self) -> float:
        """Starts the daemon; returns the seconds until every port answered."""
        busy = [port for port in TMM_PORTS.values() if answers(port)]
        if busy:
            raise BenchError(f"TMM ports {busy} are in use (the tmm-bridge service, or TMM?): stop it first "
                             "(systemctl stop tmm-bridge.service)")
        started = time.monotonic()
        log = open(self.bridge_log, "ab")
        self.bridge = subprocess.Popen(self.bridge_arguments(), stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        log.close()

        def ready():
            if self.bridge.poll() is not None:
                raise BenchError(f"tmm-bridge exited with {self.bridge.returncode}; see {self.bridge_log}:\n"
                                 + self.tail(self.bridge_log))
            return all(answers(port) for port in TMM_PORTS.values())
        wait_for(ready, 30, what="tmm-bridge's ports")
        return time.monotonic() - started

    def stop_bridge(self, sig=signal.SIGTERM) -> int | None:
        if self.bridge is None:
            return None
        code = stop_process(self.bridge, 20, sig)
        self.bridge = None
        return code

    def bridge_status(self) -> dict:
        return process_status(self.bridge.pid) if self.bridge else {}

    def register(self, application_id: str) -> dict:
        """Registers as the iOS sample does (tmmregister://?<Base64 JSON>); returns the reply."""
        returl = "tmmhwtest://response/register"
        url = tmmclient.ios_register_url(tmmclient.ios_register_json(application_id, returl))
        result = tmmclient.tmm_open(self.context(), url)
        if result.status != 0:
            raise BenchError(f"registration of {application_id} failed: {result!r}")
        return tmmclient.decode_ios_reply(result.reply, returl)

    @staticmethod
    def tail(path: str, lines: int = 20) -> str:
        try:
            with open(path, errors="replace") as handle:
                return "".join(handle.readlines()[-lines:])
        except OSError:
            return ""

    def close(self, report_dir: str | None = None):
        for stop in self.on_close:
            stop()
        self.stop_bridge()
        self.kill_gpsd()
        if report_dir:
            for log in (self.bridge_log, self.gpsd_log):
                if os.path.exists(log):
                    shutil.copy(log, report_dir)
        if not self.keep:
            shutil.rmtree(self.scratch, ignore_errors=True)


class Simulator:
    """tmm-sim as a child process: its console lines (plugs, actions) are read as they come."""

    def __init__(self, scenario_path: str, bench: Bench, out_dir: str, speed: float = 1.0, seed=None, hold=True,
                 duration=None):
        self.timeline_path = os.path.join(out_dir, "timeline.jsonl")
        self.nmea_path = os.path.join(out_dir, "receiver.nmea")
        self.received_path = os.path.join(out_dir, "receiver-input.bin")  # what gpsd and the bridge wrote to it
        arguments = checkout.module_command("sim", scenario_path, "--timeline", self.timeline_path,
                                            "--out", self.nmea_path, "--received", self.received_path,
                                            "--gpsd-control", bench.gpsd_control,
                                            "--speed", str(speed))
        if bench.gpsd:
            arguments += ["--gpsd-pid", str(bench.gpsd.pid)]
        if seed is not None:
            arguments += ["--seed", str(seed)]
        if duration is not None:
            arguments += ["--duration", str(duration)]
        if hold:
            arguments.append("--hold")
        self.bench = bench
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, text=True)
        self.events: list[dict] = []
        # A thread reads the console lines as they come, stamped on arrival (select() on a
        # buffered pipe would miss lines already read into the buffer).
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self._lines.put((time.time(), line))
        self._lines.put((time.time(), None))

    def next_event(self, timeout: float = 60) -> dict:
        try:
            arrived, line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise BenchError(f"tmm-sim said nothing for {timeout:g} s") from None
        if line is None:
            raise BenchError(f"tmm-sim exited ({self.process.wait()})")
        event = json.loads(line)
        event["wall"] = arrived
        self.events.append(event)
        if event.get("event") == "plugged":
            self.bench.devices = [event["device"]]
        return event

    def run_to_end(self, on_event=lambda event: None, timeout: float = 600) -> dict:
        end = time.monotonic() + timeout
        while True:
            event = self.next_event(max(1, end - time.monotonic()))
            on_event(event)
            if event.get("event") == "done":
                return event

    def stop(self):
        stop_process(self.process, 10)
