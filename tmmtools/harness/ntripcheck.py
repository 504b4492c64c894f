"""The corrections chain without the bridge: a caster → RTKLIB's NTRIP client (str2str) → tmm-sim's
pty → its RTK fix. Proves the casters, the RTCM generator and the simulator's corrections input
before the bridge's NTRIP client exists, and is what the bridge must do in their place.

  /usr/bin/python3 -m tmmtools.harness.ntripcheck [--caster str2str|test-caster] [--via tty|gpsd]
      [--kill-at S --restart-at S] [--duration S] [--out DIR]

Starts the caster of --caster (tmmtools/harness/corrections.py: str2str, NTRIP Rev 1, or the test
caster), tmm-sim playing one `quality = "corrections"` phase (float 2 s after the first frame,
fixed 3 s later, float at an age over 3 s, autonomous 3 s later), and str2str's NTRIP client
(`str2str -in ntrip://rover:secret@127.0.0.1:PORT/RTCM3 -r 1000 -out ...`) writing what it gets:
--via tty to the pty itself (`-out file:///dev/pts/N`), --via gpsd through a private gpsd (not
read-only) that has the pty open, with gpsd's control command `&/dev/pts/N=<hex>` (how the bridge
can hand RTCM to a device gpsd holds). --kill-at / --restart-at kill the caster (SIGKILL) and
start it again on the same port. Prints a line per check (the receiver read valid frames of the
caster's station, none damaged; went RTK fixed; fell back after the kill; fixed again after the
restart) and exits 0 when all passed. Needs str2str (Debian's rtklib) and, --via gpsd, gpsd.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

from tmmtools import checkout, polling
from tmmtools.harness import verify
from tmmtools.harness.corrections import make_caster
from tmmtools.harness.verify import Check
from tmmtools.peers.str2str_caster import STR2STR, free_port
from tmmtools.sim.scenario import load

GPSD = "/usr/sbin/gpsd"
STATION_ID = 2345
LIMITS = {"float-after": 2, "fixed-after": 3, "age-limit": 3, "autonomous-after": 3}


def write_scenario(path: str, caster: str, duration: float, kill_at, restart_at):
    """A Trimble at 2 Hz in one corrections phase, with the caster events asked for."""
    events = [("caster-kill", kill_at), ("caster-restart", restart_at)]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f'name = "ntripcheck"\nduration = {duration}\nrate = 2\nstart-time = "2026-12-02T10:00:00Z"\n'
                     '[position]\nlatitude = 39.90\nlongitude = -105.11\nheight = 1650.0\n'
                     '[receiver]\nvendor = "trimble"\nmodel = "R12i"\ntalkers = ["GP", "GL"]\n'
                     '[[phase]]\nat = 0\nquality = "corrections"\nsatellites = 20\n'
                     + "".join(f"{key} = {value}\n" for key, value in LIMITS.items())
                     + "".join(f'[[event]]\nat = {at}\nkind = "{kind}"\n' for kind, at in events if at is not None)
                     + f'[corrections]\ncaster = "{caster}"\nstation-id = {STATION_ID}\n')


class GpsdForwarder:
    """A private gpsd that may write to devices, and a thread that hands every chunk a process
    prints to one device through gpsd's control socket (`&DEVICE=HEX`, answered OK or ERROR)."""

    def __init__(self, scratch: str, log_path: str):
        self.control = os.path.join(scratch, "gpsd.sock")
        self.port = free_port()
        self.log = open(log_path, "wb")
        self.gpsd = subprocess.Popen([GPSD, "-N", "-n", "-S", str(self.port), "-F", self.control],
                                     stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        polling.wait_until(lambda: os.path.exists(self.control), 10, what="gpsd's control socket")
        self.answers: dict[str, int] = {}

    def command(self, text: str) -> str:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(3)
            sock.connect(self.control)
            sock.sendall(text.encode() + b"\n")
            return sock.recv(64).decode(errors="replace").strip()

    def forward(self, stream, device: str):
        def run():
            try:
                while chunk := stream.read1(2048):
                    answer = self.command(f"&{device}={chunk.hex()}")
                    self.answers[answer] = self.answers.get(answer, 0) + 1
            except (OSError, ValueError):  # the client stopped, gpsd went away
                pass
        threading.Thread(target=run, daemon=True).start()

    def close(self):
        self.gpsd.terminate()
        self.gpsd.wait(10)
        self.log.close()


def client_command(port: int, device: str | None) -> list[str]:
    """str2str as an NTRIP client reconnecting every second, to `device` (None: standard output)."""
    command = [STR2STR, "-in", f"ntrip://rover:secret@127.0.0.1:{port}/RTCM3", "-r", "1000"]
    return command + (["-out", f"file://{device}"] if device else [])


def play(caster_kind: str, out: str, via: str = "tty", duration: float = 25, kill_at=9, restart_at=16):
    """The chain played once; (timeline, the simulator's console events, caster actions [(kind, wall)])."""
    os.makedirs(out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="tmm-ntripcheck-")
    scenario_path = os.path.join(out, "chain.toml")
    write_scenario(scenario_path, caster_kind, duration, kill_at, restart_at)
    caster = make_caster(load(scenario_path).corrections, out).start()
    gpsd = GpsdForwarder(scratch, os.path.join(out, "gpsd.log")) if via == "gpsd" else None
    arguments = checkout.module_command("sim", scenario_path, "--timeline", os.path.join(out, "timeline.jsonl"),
                                        "--out", os.path.join(out, "receiver.nmea"),
                                        "--received", os.path.join(out, "receiver-input.bin"))
    simulator = subprocess.Popen(arguments + (["--gpsd-control", gpsd.control] if gpsd else []),
                                 stdout=subprocess.PIPE, text=True)
    client = None
    events, actions = [], []
    try:
        plugged = json.loads(simulator.stdout.readline())
        device = plugged["device"]
        with open(os.path.join(out, "str2str-client.log"), "wb") as log:
            client = subprocess.Popen(client_command(caster.port, None if gpsd else device), stderr=log,
                                      stdout=subprocess.PIPE if gpsd else log, stdin=subprocess.DEVNULL)
        if gpsd:
            gpsd.forward(client.stdout, device)
        for line in simulator.stdout:
            event = json.loads(line)
            events.append(event)
            if event.get("action") == "caster-kill":
                caster.kill()
            elif event.get("action") == "caster-restart":
                caster.start()
            if event.get("action"):
                actions.append((event["action"], time.time()))
            if event.get("event") == "done":
                break
        if gpsd:
            events.append({"event": "gpsd-forwarded", "answers": gpsd.answers})
    finally:
        for process in (client, simulator):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(10)
            if process is not None and process.stdout:
                process.stdout.close()
        caster.stop()
        if gpsd:
            gpsd.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return verify.load_timeline(os.path.join(out, "timeline.jsonl")), events, actions


def checks(timeline, events: list, actions: list) -> list:
    """The receiver read the caster's frames and its fix followed them."""
    done = next((e for e in events if e.get("event") == "done"), {})
    got = done.get("received", {})
    truths = [t for t in timeline.truths if "utc" in t]
    qualities = verify.collapse(t["quality"] for t in truths)
    result = [Check(f"the receiver read valid RTCM 3 of station {STATION_ID} through the NTRIP client, none damaged",
                    bool(got.get("frames")) and got.get("damaged") == 0 and got.get("station") == STATION_ID,
                    f"{got.get('frames')} frames, {got.get('damaged')} damaged, {got.get('other_bytes')} other bytes, "
                    f"messages {got.get('messages')}")]
    kill = next((wall for kind, wall in actions if kind == "caster-kill"), None)
    restart = next((wall for kind, wall in actions if kind == "caster-restart"), None)
    before = [t for t in truths if kill is None or t["wall"] < kill]
    result.append(Check("the receiver went RTK fixed", any(t["quality"] == "fixed" for t in before), f"{qualities}"))
    fixed = [t for t in before if t["quality"] == "fixed"]
    result.append(Check("while fixed, the GGA's age of corrections under 1.5 s and the station's id",
                        bool(fixed) and all(t["diff_age"] < 1.5 and t["station"] == STATION_ID for t in fixed),
                        f"largest age {max((t['diff_age'] for t in fixed), default=None)}"))
    if kill is not None:
        after = [t["quality"] for t in truths if kill <= t["wall"] < (restart or float("inf"))]
        result.append(Check("after the caster was killed the fix fell back (float, then autonomous)",
                            "float" in after and "autonomous" in after, f"{verify.collapse(after)}"))
    if restart is not None:
        again = [t for t in truths if t["wall"] > restart and t["quality"] == "fixed"]
        result.append(Check("after the caster's restart the receiver is RTK fixed again", bool(again),
                            f"{again[0]['wall'] - restart:.1f} s after the restart" if again else "never"))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(prog="ntripcheck", description=__doc__.split("\n\n")[0])
    parser.add_argument("--caster", choices=("str2str", "test-caster"), default="str2str")
    parser.add_argument("--via", choices=("tty", "gpsd"), default="tty")
    parser.add_argument("--duration", type=float, default=25)
    parser.add_argument("--kill-at", type=float, default=9)
    parser.add_argument("--restart-at", type=float, default=16)
    parser.add_argument("--out", help="keep the timeline, logs and bytes here")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="tmm-ntripcheck-out-")
    timeline, events, actions = play(args.caster, out, args.via, args.duration, args.kill_at, args.restart_at)
    results = checks(timeline, events, actions)
    for check in results:
        print(f"{'ok' if check.passed else 'FAIL'}: {check.name}" + (f" — {check.detail}" if check.detail else ""))
    forwarded = next((e["answers"] for e in events if e.get("event") == "gpsd-forwarded"), None)
    if forwarded is not None:
        print(f"gpsd control answers to the & commands: {forwarded}")
    print(out)
    return 0 if all(c.passed for c in results) else 1


if __name__ == "__main__":
    sys.exit(main())
